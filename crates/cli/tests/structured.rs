//! `toolgate run --schema FILE`: the answer is one JSON value valid against the schema, alone on
//! stdout, with the trace on stderr as always; Anthropic's structured output where the provider
//! has it, the schema asked for in words elsewhere, a wrong answer repaired once.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use toolgate_settings::{ProviderKind, ProviderSettings, Settings};
use toolgate_tests::{everything_server, fixtures, temp_dir, Scripted, ScriptedProvider, TestDir};

fn data_dir(tag: &str, provider: ProviderSettings) -> TestDir {
    let dir = temp_dir(&format!("cli-structured-{tag}"));
    let mut settings = Settings::first_run(everything_server("everything"));
    settings.provider = provider;
    toolgate_settings::file::save(&dir.join("settings.json"), &settings).expect("settings");
    std::fs::write(dir.join("answer.schema.json"), schema().to_string()).expect("schema file");
    dir
}

fn schema() -> Value {
    json!({"type": "object", "required": ["city", "days"],
           "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}}})
}

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env("ANTHROPIC_API_KEY", "sk-ant-cli-test")
        .env("OPENAI_API_KEY", "sk-openai-cli-test")
        .stdin(Stdio::null())
        .output()
        .expect("toolgate runs")
}

fn schema_arg(dir: &Path) -> String {
    dir.join("answer.schema.json")
        .to_string_lossy()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_alone_on_stdout_with_anthropics_structured_output() {
    let provider = ScriptedProvider::start(vec![Scripted::ok(fixtures::anthropic::text(
        r#"{"city": "Oslo", "days": 2}"#,
    ))])
    .await;
    let dir = data_dir(
        "anthropic",
        ProviderSettings {
            kind: ProviderKind::Anthropic,
            base_url: provider.anthropic_base_url(),
            model: "claude-test".into(),
        },
    );
    let out = toolgate(&dir, &["run", "Plan a trip", "--schema", &schema_arg(&dir)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"city\":\"Oslo\",\"days\":2}\n"
    );
    assert!(
        stderr.contains("0 tool call(s)"),
        "the trace is unchanged: {stderr}"
    );
    let body = &provider.received()[0].body;
    assert_eq!(body["output_config"]["format"]["schema"], schema());

    // With --json the report is as it always is; the answer is the value's JSON text.
    let provider_again = ScriptedProvider::start(vec![Scripted::ok(fixtures::anthropic::text(
        r#"{"city": "Oslo", "days": 2}"#,
    ))])
    .await;
    let dir = data_dir(
        "anthropic-json",
        ProviderSettings {
            kind: ProviderKind::Anthropic,
            base_url: provider_again.anthropic_base_url(),
            model: "claude-test".into(),
        },
    );
    let out = toolgate(
        &dir,
        &[
            "run",
            "Plan a trip",
            "--json",
            "--schema",
            &schema_arg(&dir),
        ],
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("a report");
    assert_eq!(report["answer"], r#"{"city":"Oslo","days":2}"#);
    assert_eq!(report["trace"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_without_structured_output_is_asked_in_words_and_repaired_once() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(fixtures::openai::text("Oslo, for two days.")),
        Scripted::ok(fixtures::openai::text(r#"{"city": "Oslo", "days": 2}"#)),
    ])
    .await;
    let dir = data_dir(
        "compatible",
        ProviderSettings {
            kind: ProviderKind::Openai,
            base_url: provider.openai_base_url(),
            model: "llama".into(),
        },
    );
    let out = toolgate(&dir, &["run", "Plan a trip", "--schema", &schema_arg(&dir)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The first, wrong answer never reached stdout.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"city\":\"Oslo\",\"days\":2}\n"
    );
    let sent = provider.received();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].body.get("response_format").is_none());
    assert!(sent[0].body["messages"][0]["content"]
        .to_string()
        .contains("JSON Schema"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_answer_twice_or_a_bad_schema_file_fails_saying_why() {
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(fixtures::anthropic::text(r#"{"city": "Oslo"}"#)),
        Scripted::ok(fixtures::anthropic::text(
            r#"{"city": "Oslo", "days": "two"}"#,
        )),
    ])
    .await;
    let settings = ProviderSettings {
        kind: ProviderKind::Anthropic,
        base_url: provider.anthropic_base_url(),
        model: "claude-test".into(),
    };
    let dir = data_dir("wrong", settings);
    let out = toolgate(&dir, &["run", "Plan a trip", "--schema", &schema_arg(&dir)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing invalid on stdout");
    assert!(
        stderr.contains("not a JSON value valid against the schema") && stderr.contains("/days"),
        "{stderr}"
    );

    std::fs::write(
        dir.join("bad.json"),
        r#"{"type": "object", "minimum": "one"}"#,
    )
    .unwrap();
    let bad = dir.join("bad.json").to_string_lossy().into_owned();
    let out = toolgate(&dir, &["run", "Plan a trip", "--schema", &bad]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--schema")
            && stderr.contains("bad.json")
            && stderr.contains("JSON Schema"),
        "{stderr}"
    );
    std::fs::write(dir.join("broken.json"), "{\"type\": ").unwrap();
    let broken = dir.join("broken.json").to_string_lossy().into_owned();
    let out = toolgate(&dir, &["run", "Plan a trip", "--schema", &broken]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not JSON (line 1"), "{stderr}");
    assert_eq!(
        provider.received().len(),
        2,
        "no model call for a bad schema"
    );
}
