//! `HttpProvider` against the scripted provider over real HTTP on 127.0.0.1, for both wire
//! formats: streaming replies with the provider quirks the loop must survive, typed errors,
//! cancellation, and model lists. The product code reaches the server only through its base URL.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolgate_llm::{
    presets, CancellationToken, ChatRequest, HttpProvider, LlmError, Message, Provider, Reply,
    StopReason, StreamDelta, ToolSpec,
};
use toolgate_tests::fixtures::{anthropic_stream as a, openai_stream as o};
use toolgate_tests::{Scripted, ScriptedProvider};

const ANTHROPIC_KEY: &str = "sk-ant-test-secret-key";
const OPENAI_KEY: &str = "sk-openai-test-secret";

fn request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: Some("be brief".into()),
        messages: vec![Message::User {
            text: "What's the weather in Paris and the time in Tokyo?".into(),
        }],
        tools: vec![std::sync::Arc::new(ToolSpec::new(
            "get_weather",
            "Weather for a place",
            json!({"type": "object", "properties": {"location": {"type": "string"}}}),
        ))],
        max_tokens: 256,
        cache: false,
        response_schema: None,
    }
}

async fn anthropic(replies: Vec<Scripted>) -> (ScriptedProvider, HttpProvider) {
    let server = ScriptedProvider::start(replies).await;
    let provider = server.anthropic_client(ANTHROPIC_KEY);
    (server, provider)
}

async fn openai(replies: Vec<Scripted>) -> (ScriptedProvider, HttpProvider) {
    let server = ScriptedProvider::start(replies).await;
    let provider = server.openai_client(OPENAI_KEY);
    (server, provider)
}

/// Streams one reply, returning it with every delta reported.
async fn stream(provider: &HttpProvider) -> (Result<Reply, LlmError>, Vec<StreamDelta>) {
    let deltas = Mutex::new(Vec::new());
    let on_delta = |d: StreamDelta| deltas.lock().expect("deltas").push(d);
    let result = provider
        .stream(&request(), &on_delta, &CancellationToken::new())
        .await;
    (result, deltas.into_inner().expect("deltas"))
}

fn streamed_text(deltas: &[StreamDelta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Text(t) => Some(t.as_str()),
            StreamDelta::ToolCallStarted { .. } => None,
        })
        .collect()
}

fn started(deltas: &[StreamDelta]) -> Vec<(usize, String, String)> {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::ToolCallStarted { index, id, name } => {
                Some((*index, id.clone(), name.clone()))
            }
            StreamDelta::Text(_) => None,
        })
        .collect()
}

fn events(parts: Vec<Vec<Value>>) -> Vec<Value> {
    parts.into_iter().flatten().collect()
}

// ---- Anthropic ----

#[tokio::test]
async fn anthropic_streams_text_and_several_tool_use_blocks() {
    let script = events(vec![
        vec![a::message_start(472), a::ping()],
        a::text_block(0, &["I'll check ", "both."]),
        a::tool_use_block(
            1,
            "toolu_01",
            "get_weather",
            &["{\"location\":", " \"Paris\"}"],
        ),
        a::tool_use_block(2, "toolu_02", "get_time", &["{\"tz\": \"Asia/Tokyo\"}"]),
        a::end("tool_use", 89),
    ]);
    let (server, provider) = anthropic(vec![Scripted::stream(script)]).await;
    let (reply, deltas) = stream(&provider).await;
    let reply = reply.expect("streamed reply");
    assert_eq!(reply.text, "I'll check both.");
    assert_eq!(streamed_text(&deltas), reply.text);
    assert_eq!(
        started(&deltas),
        vec![
            (0, "toolu_01".into(), "get_weather".into()),
            (1, "toolu_02".into(), "get_time".into())
        ]
    );
    assert_eq!(reply.tool_calls[0].arguments, json!({"location": "Paris"}));
    assert_eq!(reply.tool_calls[1].arguments, json!({"tz": "Asia/Tokyo"}));
    assert_eq!(reply.stop, StopReason::ToolUse);
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (472, 89)
    );

    let sent = server.received();
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].body["stream"], true);
    assert_eq!(sent[0].headers["x-api-key"], ANTHROPIC_KEY);
    assert_eq!(sent[0].headers["anthropic-version"], "2023-06-01");
    assert!(sent[0].body.get("stream_options").is_none());
}

#[tokio::test]
async fn anthropic_empty_text_beside_tool_use_is_no_text() {
    let script = events(vec![
        vec![a::message_start(10)],
        a::text_block(0, &[""]),
        a::tool_use_block(1, "toolu_01", "get_weather", &["{}"]),
        a::end("tool_use", 5),
    ]);
    let (_server, provider) = anthropic(vec![Scripted::stream(script)]).await;
    let (reply, deltas) = stream(&provider).await;
    let reply = reply.expect("streamed reply");
    assert_eq!(reply.text, "");
    assert_eq!(streamed_text(&deltas), "");
    assert_eq!(reply.tool_calls.len(), 1);
}

#[tokio::test]
async fn anthropic_reply_with_neither_text_nor_calls_is_a_clear_error() {
    let script = events(vec![vec![a::message_start(10)], a::end("end_turn", 1)]);
    let (_server, provider) = anthropic(vec![Scripted::stream(script)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    assert_eq!(
        err,
        LlmError::Empty {
            stop: StopReason::EndTurn
        }
    );
    assert!(
        err.to_string().contains("neither text nor a tool call"),
        "{err}"
    );
}

#[tokio::test]
async fn anthropic_arguments_that_are_not_json_are_kept_as_a_string() {
    let script = events(vec![
        vec![a::message_start(10)],
        a::tool_use_block(0, "toolu_01", "get_weather", &["{\"location\": \"Par"]),
        a::end("tool_use", 5),
    ]);
    let (_server, provider) = anthropic(vec![Scripted::stream(script)]).await;
    let reply = stream(&provider).await.0.expect("streamed reply");
    assert_eq!(reply.tool_calls[0].arguments, json!("{\"location\": \"Par"));
}

#[tokio::test]
async fn anthropic_error_event_mid_stream_is_typed() {
    let mut script = events(vec![vec![a::message_start(10)], a::text_block(0, &["Hel"])]);
    script.push(a::error("overloaded_error", "Overloaded"));
    let (_server, provider) = anthropic(vec![Scripted::stream(script)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    assert_eq!(err, LlmError::Overloaded { status: 529 });
    assert!(err.is_retryable());
}

#[tokio::test]
async fn anthropic_429_carries_retry_after() {
    let body = json!({"type": "error", "error": {"type": "rate_limit_error",
        "message": "Number of request tokens has exceeded your per-minute rate limit"}});
    let (_server, provider) = anthropic(vec![
        Scripted::status(429, body).with_header("retry-after", "7")
    ])
    .await;
    let err = stream(&provider).await.0.unwrap_err();
    assert!(matches!(err, LlmError::RateLimited { .. }), "{err}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));
    assert!(err.is_retryable());
}

#[tokio::test]
async fn anthropic_401_points_to_the_key_setting_and_never_shows_the_key() {
    // A provider (or proxy) that echoes the key back must not get it into the message.
    let body = json!({"type": "error", "error": {"type": "authentication_error",
        "message": format!("invalid x-api-key: {ANTHROPIC_KEY}")}});
    let (_server, provider) = anthropic(vec![Scripted::status(401, body)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{text}");
    assert!(text.contains("Settings → Provider"), "{text}");
    assert!(!text.contains(ANTHROPIC_KEY), "{text}");
    assert!(!format!("{err:?}").contains(ANTHROPIC_KEY));
}

#[tokio::test]
async fn anthropic_prompt_too_long_is_context_too_long() {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "prompt is too long: 208310 tokens > 200000 maximum"}});
    let (_server, provider) = anthropic(vec![Scripted::status(400, body)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    assert!(matches!(err, LlmError::ContextTooLong(_)), "{err}");
}

#[tokio::test]
async fn anthropic_cancel_mid_stream_returns_promptly() {
    let script = events(vec![vec![a::message_start(10)], a::text_block(0, &["Hel"])]);
    let (_server, provider) = anthropic(vec![Scripted::stream(script).stalling()]).await;
    assert_cancels_promptly(&provider).await;
}

#[tokio::test]
async fn anthropic_lists_models() {
    let (server, provider) = anthropic(vec![]).await;
    server.set_models(&["claude-sonnet-4-5", "claude-haiku-4-5"]);
    let models = provider.list_models().await.expect("models");
    assert_eq!(models, ["claude-sonnet-4-5", "claude-haiku-4-5"]);
    let sent = server.received();
    assert_eq!(sent[0].path, "/v1/models");
    assert_eq!(sent[0].headers["x-api-key"], ANTHROPIC_KEY);
}

#[tokio::test]
async fn a_stream_cut_off_before_message_stop_is_a_network_error() {
    let script = events(vec![vec![a::message_start(10)], a::text_block(0, &["Hel"])]);
    let (_server, provider) = anthropic(vec![Scripted::stream(script)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    assert!(
        matches!(&err, LlmError::Network { detail, .. } if detail.contains("before the reply was complete")),
        "{err}"
    );
}

// ---- OpenAI Chat Completions ----

#[tokio::test]
async fn openai_streams_text_and_several_parallel_tool_calls() {
    let script = vec![
        o::role(0, Some("")),
        o::content(0, "Checking"),
        o::content(0, " both."),
        o::tool_call_start(0, 0, "call_1", "get_weather"),
        o::tool_call_arguments(0, 0, "{\"location\""),
        o::tool_call_start(0, 1, "call_2", "get_time"),
        o::tool_call_arguments(0, 1, "{\"tz\": \"Asia/Tokyo\"}"),
        o::tool_call_arguments(0, 0, ": \"Paris\"}"),
        o::tool_call_start(0, 2, "call_3", "get_weather"),
        o::tool_call_arguments(0, 2, "{\"location\": \"Oslo\"}"),
        o::finish(0, "tool_calls"),
        o::usage(82, 17),
    ];
    let (server, provider) = openai(vec![Scripted::stream(script)]).await;
    let (reply, deltas) = stream(&provider).await;
    let reply = reply.expect("streamed reply");
    assert_eq!(reply.text, "Checking both.");
    assert_eq!(streamed_text(&deltas), reply.text);
    assert_eq!(
        started(&deltas),
        vec![
            (0, "call_1".into(), "get_weather".into()),
            (1, "call_2".into(), "get_time".into()),
            (2, "call_3".into(), "get_weather".into())
        ]
    );
    let args: Vec<&Value> = reply.tool_calls.iter().map(|c| &c.arguments).collect();
    assert_eq!(
        args,
        [
            &json!({"location": "Paris"}),
            &json!({"tz": "Asia/Tokyo"}),
            &json!({"location": "Oslo"})
        ]
    );
    assert_eq!(reply.stop, StopReason::ToolUse);
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (82, 17)
    );

    let sent = server.received();
    assert_eq!(sent[0].path, "/v1/chat/completions");
    assert_eq!(sent[0].body["stream"], true);
    assert_eq!(
        sent[0].headers["authorization"],
        format!("Bearer {OPENAI_KEY}")
    );
    assert!(
        sent[0].body.get("stream_options").is_none(),
        "an unknown endpoint is not sent optional fields"
    );
}

#[tokio::test]
async fn openai_preset_that_supports_it_asks_for_stream_usage() {
    let server = ScriptedProvider::start(vec![Scripted::stream(o::text(&["Hi"]))]).await;
    let preset = presets::by_id("openai").expect("preset");
    let provider =
        HttpProvider::for_preset(preset, server.openai_base_url(), OPENAI_KEY).expect("provider");
    let reply = stream(&provider).await.0.expect("streamed reply");
    assert_eq!(reply.usage.output_tokens, 12);
    assert_eq!(
        server.received()[0].body["stream_options"],
        json!({"include_usage": true})
    );
}

#[tokio::test]
async fn openai_tool_calls_spread_over_several_choices_are_merged() {
    let script = vec![
        o::role(0, Some("")),
        o::content(0, "Let me check"),
        o::finish(0, "stop"),
        o::role(1, Some("")),
        o::tool_call_start(1, 0, "call_a", "get_weather"),
        o::tool_call_arguments(1, 0, "{\"location\": \"Paris\"}"),
        o::finish(1, "tool_calls"),
    ];
    let (_server, provider) = openai(vec![Scripted::stream(script)]).await;
    let reply = stream(&provider).await.0.expect("streamed reply");
    assert_eq!(reply.text, "Let me check");
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].id, "call_a");
    assert_eq!(reply.stop, StopReason::ToolUse);
}

#[tokio::test]
async fn openai_null_content_beside_tool_calls() {
    // DeepSeek's shape: `content: null` on every chunk of a tool-call reply.
    let script = vec![
        o::role(0, None),
        o::tool_call_start(0, 0, "call_1", "get_weather"),
        o::tool_call_arguments(0, 0, "{\"location\": \"Paris\"}"),
        o::finish(0, "tool_calls"),
    ];
    let (_server, provider) = openai(vec![Scripted::stream(script)]).await;
    let (reply, deltas) = stream(&provider).await;
    let reply = reply.expect("streamed reply");
    assert_eq!(reply.text, "");
    assert_eq!(streamed_text(&deltas), "");
    assert_eq!(reply.tool_calls[0].arguments, json!({"location": "Paris"}));
}

#[tokio::test]
async fn openai_empty_text_beside_tool_calls() {
    let script = vec![
        o::role(0, Some("")),
        o::content(0, ""),
        o::tool_call_start(0, 0, "call_1", "get_weather"),
        o::finish(0, "tool_calls"),
    ];
    let (_server, provider) = openai(vec![Scripted::stream(script)]).await;
    let reply = stream(&provider).await.0.expect("streamed reply");
    assert_eq!(reply.text, "");
    assert_eq!(reply.tool_calls[0].arguments, json!({}));
}

#[tokio::test]
async fn openai_reply_with_neither_text_nor_calls_is_a_clear_error() {
    let script = vec![o::role(0, None), o::finish(0, "stop")];
    let (_server, provider) = openai(vec![Scripted::stream(script)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    assert!(matches!(err, LlmError::Empty { .. }), "{err}");
    assert!(
        err.to_string().contains("neither text nor a tool call"),
        "{err}"
    );
}

#[tokio::test]
async fn openai_arguments_that_are_not_json_are_kept_as_a_string() {
    let script = vec![
        o::tool_call_start(0, 0, "call_1", "get_weather"),
        o::tool_call_arguments(0, 0, "{location: Paris"),
        o::finish(0, "tool_calls"),
    ];
    let (_server, provider) = openai(vec![Scripted::stream(script)]).await;
    let reply = stream(&provider).await.0.expect("streamed reply");
    assert_eq!(reply.tool_calls[0].arguments, json!("{location: Paris"));
}

#[tokio::test]
async fn openai_429_with_an_http_date_retry_after() {
    let body = json!({"error": {"message": "Rate limit reached for requests",
        "type": "requests", "param": null, "code": "rate_limit_exceeded"}});
    let when = httpdate_in(Duration::from_secs(120));
    let (_server, provider) = openai(vec![
        Scripted::status(429, body).with_header("retry-after", &when)
    ])
    .await;
    let err = stream(&provider).await.0.unwrap_err();
    let wait = err.retry_after().expect("retry-after parsed");
    assert!(
        wait > Duration::from_secs(100) && wait <= Duration::from_secs(120),
        "{wait:?}"
    );
}

#[tokio::test]
async fn openai_401_points_to_the_key_setting() {
    let body = json!({"error": {"message": "Incorrect API key provided: sk-opena***cret.",
        "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
    let (_server, provider) = openai(vec![Scripted::status(401, body)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err}");
    assert!(err.to_string().contains("Settings → Provider"), "{err}");
    assert!(!err.to_string().contains(OPENAI_KEY));
}

#[tokio::test]
async fn openai_context_length_exceeded_is_context_too_long() {
    let body = json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}});
    let (_server, provider) = openai(vec![Scripted::status(400, body)]).await;
    let err = stream(&provider).await.0.unwrap_err();
    assert!(matches!(err, LlmError::ContextTooLong(_)), "{err}");
}

#[tokio::test]
async fn openai_cancel_mid_stream_returns_promptly() {
    let script = vec![o::role(0, Some("")), o::content(0, "Hel")];
    let (_server, provider) = openai(vec![Scripted::stream(script).stalling()]).await;
    assert_cancels_promptly(&provider).await;
}

#[tokio::test]
async fn openai_malformed_chunk_says_what_was_wrong() {
    let (_server, provider) = openai(vec![Scripted::raw_stream(
        "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Hi\"}}]}\n\ndata: {oops\n\n",
    )])
    .await;
    let err = stream(&provider).await.0.unwrap_err();
    assert!(
        matches!(&err, LlmError::Malformed(m) if m.contains("{oops")),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_and_answers_json_still_works() {
    let (_server, provider) = openai(vec![Scripted::ok(toolgate_tests::fixtures::openai::text(
        "Hello in one piece",
    ))])
    .await;
    let (reply, deltas) = stream(&provider).await;
    assert_eq!(reply.expect("reply").text, "Hello in one piece");
    assert_eq!(streamed_text(&deltas), "Hello in one piece");
}

#[tokio::test]
async fn openai_lists_models() {
    let (server, provider) = openai(vec![]).await;
    server.set_models(&["gpt-4.1", "gpt-4.1-mini"]);
    let models = provider.list_models().await.expect("models");
    assert_eq!(models, ["gpt-4.1", "gpt-4.1-mini"]);
    assert_eq!(server.received()[0].path, "/v1/models");
}

#[tokio::test]
async fn complete_still_works_without_streaming() {
    let (server, provider) = openai(vec![Scripted::ok(toolgate_tests::fixtures::openai::text(
        "plain",
    ))])
    .await;
    let reply = provider.complete(&request()).await.expect("reply");
    assert_eq!(reply.text, "plain");
    assert!(server.received()[0].body.get("stream").is_none());
}

// ---- helpers ----

/// Cancels on the first delta and checks the stream call returns `Cancelled` at once, although
/// the server holds the stream open.
async fn assert_cancels_promptly(provider: &HttpProvider) {
    let cancel = CancellationToken::new();
    let seen = Mutex::new(Vec::new());
    let on_delta = |d: StreamDelta| {
        seen.lock().expect("seen").push(d);
        cancel.cancel();
    };
    let started = Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        provider.stream(&request(), &on_delta, &cancel),
    )
    .await
    .expect("stream returned before the stall ended");
    assert_eq!(result, Err(LlmError::Cancelled));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        seen.into_inner().expect("seen"),
        vec![StreamDelta::Text("Hel".into())]
    );
}

fn httpdate_in(delay: Duration) -> String {
    httpdate::fmt_http_date(std::time::SystemTime::now() + delay)
}
