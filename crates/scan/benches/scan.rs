//! Scanning a 100 kB tool result (the target: at most 1 ms): text with no secret (the common
//! case: one pass of the rule set's prefilter), and the same with a few secrets in it.

use criterion::{criterion_group, criterion_main, Criterion};
use toolgate_scan::Scanner;

fn text(with_secrets: bool) -> String {
    let line = "2026-11-26 12:00:01 INFO request handled path=/api/items id=8f14e45f status=200 in 12 ms\n";
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 100_000 {
        text.push_str(line);
        if with_secrets && i % 400 == 0 {
            text.push_str("token ghp_0123456789abcdefABCDEF0123456789abcd\n");
        }
        i += 1;
    }
    text
}

fn bench(c: &mut Criterion) {
    let scanner =
        Scanner::new().with_known([("MAIL_KEY".to_owned(), "a-value-toolgate-keeps".to_owned())]);
    let clean = text(false);
    let dirty = text(true);
    assert!(scanner.scan(&clean).is_empty());
    assert!(!scanner.scan(&dirty).is_empty());
    c.bench_function("scan 100 kB, no secret", |b| {
        b.iter(|| scanner.scan(&clean))
    });
    c.bench_function("scan 100 kB, some secrets", |b| {
        b.iter(|| scanner.redact(&dirty))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
