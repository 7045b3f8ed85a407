//! What each provider format is sent: tool schemas as the server wrote them wherever that
//! provider takes them, changed only where it needs it; and a structured answer asked for in
//! the provider's own way. The scripted provider refuses what the real API refuses
//! (`toolgate_tests::wire`), so a schema sent wrongly fails the turn here as it would there.

use std::sync::Arc;

use serde_json::{json, Value};
use toolgate_agent::{Agent, AgentError, AgentParts, Gate, ToolTarget, TurnOptions};
use toolgate_llm::HttpProvider;
use toolgate_mcp::ServerManager;
use toolgate_settings::Transport;
use toolgate_tests::{fault_server, fixtures, Scripted, ScriptedProvider};

async fn servers() -> Arc<ServerManager> {
    let mut config = fault_server("f", "ok");
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("FAULT_RICH_SCHEMA".into(), "1".into());
    }
    let servers = ServerManager::new(Default::default());
    servers.start_all(&[config]).await;
    servers
}

fn written() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"id": {"type": "string"}, "path": {"type": "string"},
                       "opts": {"$ref": "#/$defs/opts"}},
        "$defs": {"opts": {"type": "object", "properties": {"deep": {"type": "boolean"}},
                           "additionalProperties": false}},
        "additionalProperties": false
    })
}

/// The schema sent for `tool` in a recorded request body of either format.
fn sent(body: &Value, tool: &str) -> Value {
    body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == tool || t["function"]["name"] == tool)
        .map(|t| {
            if t.get("input_schema").is_some() {
                t["input_schema"].clone()
            } else {
                t["function"]["parameters"].clone()
            }
        })
        .unwrap_or_else(|| panic!("{tool} was not sent: {body}"))
}

async fn one_turn(
    target: ToolTarget,
    client: &HttpProvider,
    options: &TurnOptions,
) -> Result<String, AgentError> {
    let servers = servers().await;
    let agent = Agent::new(AgentParts {
        tools: Default::default(),
        target,
        ..toolgate_tests::agent_parts(servers.clone(), Arc::new(Gate::default()))
    });
    let mut history = Vec::new();
    let result = agent
        .run_turn_with(client, "m", &mut history, "hello", options, &|_| {})
        .await;
    servers.stop_all().await;
    result
}

#[tokio::test]
async fn anthropic_gets_the_schemas_as_written_but_for_the_top_level_any_of() {
    let provider =
        ScriptedProvider::start(vec![Scripted::ok(fixtures::anthropic::text("hi"))]).await;
    let answer = one_turn(
        ToolTarget::Anthropic,
        &provider.anthropic_client("k"),
        &TurnOptions::default(),
    )
    .await
    .expect("the API took every schema");
    assert_eq!(answer, "hi");
    let body = &provider.received()[0].body;
    // `$schema`, `$defs`, `additionalProperties` kept; only the cross-field rule flattened
    // (its branches add no properties).
    assert_eq!(sent(body, "lookup"), written());
    // A schema without properties is taken as written.
    assert_eq!(sent(body, "crash"), json!({"type": "object"}));
    assert!(body.get("output_config").is_none());
}

#[tokio::test]
async fn openai_gets_them_as_written_with_properties_added_where_missing() {
    for target in [ToolTarget::OpenAi, ToolTarget::OpenAiCompatible] {
        let provider =
            ScriptedProvider::start(vec![Scripted::ok(fixtures::openai::text("hi"))]).await;
        one_turn(
            target,
            &provider.openai_client("k"),
            &TurnOptions::default(),
        )
        .await
        .expect("the API took every schema");
        let body = &provider.received()[0].body;
        assert_eq!(sent(body, "lookup"), written(), "{target:?}");
        assert_eq!(
            sent(body, "crash"),
            json!({"type": "object", "properties": {}}),
            "{target:?}"
        );
        assert!(body.get("response_format").is_none());
    }
}

fn answer_schema() -> Value {
    json!({"type": "object", "required": ["city", "days"], "additionalProperties": false,
           "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}}})
}

#[tokio::test]
async fn a_structured_answer_uses_each_providers_own_field_where_it_has_one() {
    let options = TurnOptions {
        answer_schema: Some(answer_schema()),
        ..TurnOptions::default()
    };
    let provider = ScriptedProvider::start(vec![Scripted::ok(fixtures::anthropic::text(
        r#"{"city": "Oslo", "days": 2}"#,
    ))])
    .await;
    let answer = one_turn(
        ToolTarget::Anthropic,
        &provider.anthropic_client("k"),
        &options,
    )
    .await
    .expect("answered");
    assert_eq!(answer, r#"{"city":"Oslo","days":2}"#);
    let body = &provider.received()[0].body;
    assert_eq!(
        body["output_config"],
        json!({"format": {"type": "json_schema", "schema": answer_schema()}})
    );
    assert!(!body["system"].to_string().contains("JSON Schema"));

    let provider = ScriptedProvider::start(vec![Scripted::ok(fixtures::openai::text(
        r#"{"city": "Oslo", "days": 2}"#,
    ))])
    .await;
    one_turn(ToolTarget::OpenAi, &provider.openai_client("k"), &options)
        .await
        .expect("answered");
    let body = &provider.received()[0].body;
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema",
               "json_schema": {"name": "answer", "schema": answer_schema(), "strict": false}})
    );
}

#[tokio::test]
async fn elsewhere_the_schema_is_asked_for_in_words_and_a_wrong_answer_repaired_once() {
    let options = TurnOptions {
        answer_schema: Some(answer_schema()),
        ..TurnOptions::default()
    };
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(fixtures::openai::text(r#"{"city": "Oslo", "days": 0}"#)),
        Scripted::ok(fixtures::openai::text(
            "```json\n{\"city\": \"Oslo\", \"days\": 2}\n```",
        )),
    ])
    .await;
    let answer = one_turn(
        ToolTarget::OpenAiCompatible,
        &provider.openai_client("k"),
        &options,
    )
    .await
    .expect("repaired");
    assert_eq!(answer, r#"{"city":"Oslo","days":2}"#);
    let sent = provider.received();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].body.get("response_format").is_none());
    let system = sent[0].body["messages"][0]["content"].to_string();
    assert!(
        system.contains("JSON Schema") && system.contains("minimum"),
        "{system}"
    );
    let repair = sent[1].body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("a last message")
        .clone();
    assert_eq!(repair["role"], "user");
    assert!(repair["content"].to_string().contains("/days"), "{repair}");

    // Wrong twice: the turn fails, saying why.
    let provider = ScriptedProvider::start(vec![
        Scripted::ok(fixtures::openai::text("Oslo, two days")),
        Scripted::ok(fixtures::openai::text(r#"{"city": "Oslo"}"#)),
    ])
    .await;
    let error = one_turn(
        ToolTarget::OpenAiCompatible,
        &provider.openai_client("k"),
        &options,
    )
    .await
    .expect_err("still invalid");
    assert!(
        matches!(&error, AgentError::InvalidAnswer(p) if p.iter().any(|p| p.contains("days"))),
        "{error}"
    );
}
