//! Building a catalog of 1,000 tools from 20 servers: what every server start, stop or
//! list-changed notification costs.
//!
//! Run with `cargo bench -p toolgate-catalog`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use toolgate_catalog::{
    Catalog, CatalogSettings, NamingMode, Provider, ServerToolSettings, SourceServer, SourceTool,
};

/// 20 servers × 50 tools. Every server offers a few common names (`search`, `list`, …) so `auto`
/// has real collisions to settle; a few names are long or dotted; schemas are of typical size.
fn servers() -> Vec<SourceServer> {
    const COMMON: [&str; 5] = ["search", "list", "get", "create", "delete"];
    (0..20)
        .map(|s| SourceServer {
            id: format!("server-{s:02}"),
            name: format!("Server {s}"),
            enabled: true,
            tools: (0..50)
                .map(|t| {
                    let name = match t {
                        0..=4 => COMMON[t].to_owned(),
                        5 => format!("namespace.server{s}.{}", "very_long_segment_".repeat(5)),
                        6 => format!("files.read_{s}"),
                        _ => format!("tool_{s}_{t}"),
                    };
                    SourceTool {
                        name,
                        title: None,
                        description: "Does one thing to one resource and reports what it did. "
                            .repeat(3),
                        input_schema: json!({
                            "$schema": "http://json-schema.org/draft-07/schema#",
                            "type": "object",
                            "properties": {
                                "id": {"type": "string", "description": "The resource id"},
                                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                                "filter": {
                                    "type": "object",
                                    "additionalProperties": false,
                                    "properties": {"state": {"enum": ["open", "closed"]}}
                                }
                            },
                            "required": ["id"]
                        }),
                        annotations: Default::default(),
                    }
                })
                .collect(),
        })
        .collect()
}

fn settings(naming: NamingMode) -> CatalogSettings {
    let mut settings = CatalogSettings {
        naming,
        ..Default::default()
    };
    // A few servers with filters, as a user who trimmed their tool list would have.
    for s in (0..20).step_by(4) {
        settings.servers.insert(
            format!("server-{s:02}"),
            ServerToolSettings {
                exclude: vec!["*delete*".into(), "tool_*_4?".into()],
                disabled_tools: ["tool_0_10".to_owned()].into(),
                ..Default::default()
            },
        );
    }
    settings
}

fn bench(c: &mut Criterion) {
    let servers = servers();
    for (label, naming) in [("auto", NamingMode::Auto), ("always", NamingMode::Always)] {
        let settings = settings(naming);
        c.bench_function(&format!("build 1000 tools / 20 servers ({label})"), |b| {
            b.iter(|| Catalog::build(black_box(&servers), black_box(&settings)))
        });
    }
    let catalog = Catalog::build(&servers, &settings(NamingMode::Auto)).expect("builds");
    c.bench_function("budget (OpenAI)", |b| {
        b.iter(|| black_box(&catalog).budget(Provider::OpenAi))
    });
    c.bench_function("budget (Gemini, schemas rewritten)", |b| {
        b.iter(|| black_box(&catalog).budget(Provider::Gemini))
    });
    let names: Vec<String> = catalog
        .entries()
        .iter()
        .map(|e| e.model_name.clone())
        .collect();
    c.bench_function("resolve all names", |b| {
        b.iter(|| {
            names
                .iter()
                .filter(|n| black_box(&catalog).resolve(n).is_some())
                .count()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
