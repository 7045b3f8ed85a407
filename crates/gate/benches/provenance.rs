//! What provenance adds to a call (issue 39's target: at most 10 µs a call for 100 kB of
//! conversation content seen), beside the same call in a conversation that has seen nothing,
//! in one run; and what reading 100 kB of a result into the index costs, once per result.

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use toolgate_gate::provenance::{decisive::decisive, Origin, Place, Provenance};

/// About 100 kB of other people's content: messages with addresses, IBANs, amounts and dates.
fn outside_text() -> String {
    let mut text = String::new();
    let mut i = 0u64;
    while text.len() < 100_000 {
        text.push_str(&format!(
            "- id: {i}\n  date: 2024-05-{:02}\n  sender: user{i}@mail.example\n  iban: DE{:020}\n  \
             amount: {}.50\n  subject: Lunch at Place {i}, see https://pay.example/r/{i}\n",
            i % 28 + 1,
            i * 7919,
            i % 300
        ));
        i += 1;
    }
    text
}

fn place() -> Place {
    Place {
        tool: "get_most_recent_transactions".into(),
        server: "bank".into(),
        call_id: "t3".into(),
        at: "/content/0/text".into(),
    }
}

fn schema() -> Value {
    json!({"recipient": {"type": "string"}, "amount": {"type": "number"},
           "subject": {"type": "string"}, "date": {"type": "string"}})
}

/// One call's questions: its decisive arguments, proven or not, and any outside-only value.
fn judge(p: &Provenance, properties: &Value, args: &Value) -> bool {
    let found = decisive(Some(properties), args);
    p.proven(&found).is_ok() && p.outside_only(args, &found).is_none()
}

fn bench(c: &mut Criterion) {
    let text = outside_text();
    let properties = schema();
    let user =
        "Please pay 120.00 to my landlord, IBAN GB29 NWBK 6016 1331 9268 19, for the rent of May.";
    let args = json!({"recipient": "GB29NWBK60161331926819", "amount": 120.0,
                      "subject": "Rent for May", "date": "2024-05-31"});

    let mut empty = Provenance::default();
    empty.observe(user, &Origin::User);
    let mut seen = Provenance::default();
    seen.observe(user, &Origin::User);
    seen.observe(&text, &Origin::Outside(place()));
    assert!(judge(&empty, &properties, &args) && judge(&seen, &properties, &args));

    c.bench_function("judge a call, nothing seen but the user's words", |b| {
        b.iter(|| judge(&empty, &properties, &args))
    });
    c.bench_function("judge a call, 100 kB of outside content seen", |b| {
        b.iter(|| judge(&seen, &properties, &args))
    });
    c.bench_function("read 100 kB of outside content into the index", |b| {
        b.iter(|| {
            let mut p = Provenance::default();
            p.observe(&text, &Origin::Outside(place()));
            p
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
