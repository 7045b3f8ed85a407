//! One audit entry as OpenTelemetry sees it: a span and a log record with the same attributes,
//! named by the GenAI and MCP semantic conventions where they have a name, and `toolgate.*`
//! where they do not. A pure mapping, so the same entry sent twice is the same data: its span's
//! trace and span ids are made from the entry's stable id, not drawn at random.
//!
//! | entry | span name | kind | conventions |
//! |---|---|---|---|
//! | a tool call | `execute_tool {tool}` | client | `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `mcp.method.name` = `tools/call` |
//! | a server's request (`sampling/createMessage`, `elicitation/create`) | the method | server | `mcp.method.name` |
//! | a result review (reason `result review: …`) | `review_result {tool}` | internal | `gen_ai.tool.name` |
//!
//! Every one carries `toolgate.audit.id` (`<history identity>-<audit id>`, the id a receiver
//! de-duplicates by), `toolgate.decision`, `toolgate.decided_by`, `toolgate.server`, and when
//! known `toolgate.rule.id`, `toolgate.client`, `toolgate.reason`, `gen_ai.conversation.id`,
//! `toolgate.result.bytes`, `error.type`. Arguments (`gen_ai.tool.call.arguments`) and the
//! error text (`toolgate.error`) only when the configuration includes them.

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, Severity};
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::logs::{SdkLogRecord, SdkLogger};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use toolgate_history::{AuditDecision, AuditRow};

/// The prefix of a result review's reason (`toolgate-agent`'s `review.rs`).
const REVIEW_PREFIX: &str = "result review:";
/// Arguments longer than this are cut (a collector's attribute limits are often smaller).
const MAX_ARGUMENTS: usize = 16 * 1024;

/// What kind of request an entry is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ToolCall,
    ServerRequest,
    ResultReview,
}

pub fn kind(row: &AuditRow) -> Kind {
    let entry = &row.entry;
    if entry
        .reason
        .as_deref()
        .is_some_and(|r| r.starts_with(REVIEW_PREFIX))
    {
        Kind::ResultReview
    } else if entry.tool.contains('/') {
        Kind::ServerRequest
    } else {
        Kind::ToolCall
    }
}

/// Turns rows into spans and log records for one history.
#[derive(Debug, Clone)]
pub struct Mapping {
    identity: String,
    bits: u128,
    pub include_arguments: bool,
    pub include_results: bool,
}

enum Val {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl Mapping {
    /// For the history whose [`identity`](toolgate_history::History::identity) is `identity`.
    pub fn new(identity: &str, include_arguments: bool, include_results: bool) -> Self {
        Mapping {
            identity: identity.to_owned(),
            bits: u128::from_str_radix(identity, 16).unwrap_or(0),
            include_arguments,
            include_results,
        }
    }

    /// The entry's id everywhere: `<history identity>-<audit id>`.
    pub fn stable_id(&self, row: &AuditRow) -> String {
        format!("{}-{}", self.identity, row.id)
    }

    fn ids(&self, row: &AuditRow) -> (TraceId, SpanId) {
        let id = u64::try_from(row.id).unwrap_or(0);
        let trace = (self.bits & !u128::from(u64::MAX)) | u128::from(id);
        let span = (id ^ (self.bits as u64)).max(1);
        (TraceId::from(trace), SpanId::from(span))
    }

    fn attributes(&self, row: &AuditRow) -> Vec<(&'static str, Val)> {
        let entry = &row.entry;
        let mut out = vec![
            ("toolgate.audit.id", Val::Str(self.stable_id(row))),
            ("toolgate.audit.seq", Val::Int(row.id)),
            (
                "toolgate.decision",
                Val::Str(entry.decision.as_str().into()),
            ),
            (
                "toolgate.decided_by",
                Val::Str(entry.decided_by.as_str().into()),
            ),
        ];
        // Empty for a call refused before it was resolved (a tool no server offers).
        if !entry.server_id.is_empty() {
            out.push(("toolgate.server", Val::Str(entry.server_id.clone())));
        }
        match kind(row) {
            Kind::ToolCall => {
                out.push(("gen_ai.operation.name", Val::Str("execute_tool".into())));
                out.push(("gen_ai.tool.name", Val::Str(entry.tool.clone())));
                out.push(("mcp.method.name", Val::Str("tools/call".into())));
            }
            Kind::ServerRequest => out.push(("mcp.method.name", Val::Str(entry.tool.clone()))),
            Kind::ResultReview => {
                out.push(("gen_ai.tool.name", Val::Str(entry.tool.clone())));
                out.push(("toolgate.result_review", Val::Bool(true)));
            }
        }
        let optional = [
            ("toolgate.rule.id", &entry.rule_id),
            ("toolgate.client", &entry.client),
            ("toolgate.reason", &entry.reason),
            ("gen_ai.conversation.id", &entry.conversation_id),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                out.push((key, Val::Str(value.clone())));
            }
        }
        if let Some(bytes) = entry.result_bytes {
            out.push((
                "toolgate.result.bytes",
                Val::Int(i64::try_from(bytes).unwrap_or(i64::MAX)),
            ));
        }
        if entry.decision == AuditDecision::Allowed && kind(row) != Kind::ResultReview {
            // An allowed call sent as it is, with no outcome: its process ended first.
            out.push(("toolgate.completed", Val::Bool(entry.duration_ms.is_some())));
        }
        if entry.is_error {
            out.push(("error.type", Val::Str("tool_error".into())));
        }
        if entry.original_arguments.is_some() {
            out.push(("toolgate.arguments.edited", Val::Bool(true)));
        }
        if self.include_arguments {
            let mut text = entry.arguments.to_string();
            if text.len() > MAX_ARGUMENTS {
                let mut cut = MAX_ARGUMENTS;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            out.push(("gen_ai.tool.call.arguments", Val::Str(text)));
        }
        if self.include_results {
            if let Some(error) = &entry.error {
                out.push(("toolgate.error", Val::Str(error.clone())));
            }
        }
        out
    }

    fn name(row: &AuditRow) -> String {
        match kind(row) {
            Kind::ToolCall => format!("execute_tool {}", row.entry.tool),
            Kind::ServerRequest => row.entry.tool.clone(),
            Kind::ResultReview => format!("review_result {}", row.entry.tool),
        }
    }

    /// The entry's span: from its decision to its end (as long as its call took).
    pub fn span(&self, row: &AuditRow, scope: &InstrumentationScope) -> SpanData {
        let entry = &row.entry;
        let (trace_id, span_id) = self.ids(row);
        let start = at(entry.decided_at);
        let end = start + Duration::from_millis(entry.duration_ms.unwrap_or(0));
        let attributes = self
            .attributes(row)
            .into_iter()
            .map(|(key, value)| KeyValue::new(key, span_value(value)))
            .collect();
        SpanData {
            span_context: SpanContext::new(
                trace_id,
                span_id,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: SpanId::INVALID,
            parent_span_is_remote: false,
            span_kind: match kind(row) {
                Kind::ToolCall => SpanKind::Client,
                Kind::ServerRequest => SpanKind::Server,
                Kind::ResultReview => SpanKind::Internal,
            },
            name: Cow::Owned(Self::name(row)),
            start_time: start,
            end_time: end,
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: if entry.is_error {
                Status::error("the call failed")
            } else {
                Status::Unset
            },
            instrumentation_scope: scope.clone(),
        }
    }

    /// The entry's log record, in its span's trace.
    pub fn log_record(&self, row: &AuditRow, logger: &SdkLogger) -> SdkLogRecord {
        let entry = &row.entry;
        let mut record = logger.create_log_record();
        record.set_event_name("toolgate.audit");
        record.set_timestamp(at(entry.decided_at));
        record.set_observed_timestamp(SystemTime::now());
        let (severity, text) = match (entry.decision, entry.is_error) {
            (AuditDecision::Allowed, false) => (Severity::Info, "INFO"),
            _ => (Severity::Warn, "WARN"),
        };
        record.set_severity_number(severity);
        record.set_severity_text(text);
        record.set_body(AnyValue::from(format!(
            "{} {} on {} ({})",
            entry.decision.as_str(),
            entry.tool,
            entry.server_id,
            entry.decided_by.as_str()
        )));
        let (trace_id, span_id) = self.ids(row);
        record.set_trace_context(trace_id, span_id, Some(TraceFlags::SAMPLED));
        for (key, value) in self.attributes(row) {
            record.add_attribute(key, log_value(value));
        }
        record
    }
}

fn at(unix_ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(unix_ms).unwrap_or(0))
}

fn span_value(value: Val) -> Value {
    match value {
        Val::Str(s) => Value::from(s),
        Val::Int(i) => Value::from(i),
        Val::Bool(b) => Value::from(b),
    }
}

fn log_value(value: Val) -> AnyValue {
    match value {
        Val::Str(s) => AnyValue::from(s),
        Val::Int(i) => AnyValue::from(i),
        Val::Bool(b) => AnyValue::from(b),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolgate_history::{AuditEntry, DecidedBy};

    use super::*;

    fn row(id: i64, tool: &str, decision: AuditDecision) -> AuditRow {
        let mut entry = AuditEntry::new(
            "files",
            tool,
            json!({"path": "/etc/passwd"}),
            decision,
            DecidedBy::Rule,
        );
        entry.decided_at = 1_700_000_000_000;
        entry.rule_id = Some("r1".into());
        AuditRow { id, entry }
    }

    fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    const IDENTITY: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn a_tool_call_is_an_execute_tool_span_with_the_decision_and_no_arguments() {
        let mapping = Mapping::new(IDENTITY, false, false);
        let mut call = row(7, "read_file", AuditDecision::Allowed);
        call.entry.duration_ms = Some(25);
        let span = mapping.span(&call, &InstrumentationScope::builder("t").build());
        assert_eq!(span.name, "execute_tool read_file");
        assert_eq!(span.span_kind, SpanKind::Client);
        assert_eq!(
            span.end_time.duration_since(span.start_time).unwrap(),
            Duration::from_millis(25)
        );
        let get = |k| attribute(&span, k).map(ToString::to_string);
        assert_eq!(
            get("gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(get("gen_ai.tool.name").as_deref(), Some("read_file"));
        assert_eq!(get("mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(get("toolgate.decision").as_deref(), Some("allowed"));
        assert_eq!(get("toolgate.decided_by").as_deref(), Some("rule"));
        assert_eq!(get("toolgate.rule.id").as_deref(), Some("r1"));
        assert_eq!(get("toolgate.audit.id"), Some(format!("{IDENTITY}-7")));
        assert!(
            get("gen_ai.tool.call.arguments").is_none(),
            "arguments are opt-in"
        );
        let with = Mapping::new(IDENTITY, true, false)
            .span(&call, &InstrumentationScope::builder("t").build());
        assert!(attribute(&with, "gen_ai.tool.call.arguments")
            .is_some_and(|v| v.to_string().contains("/etc/passwd")));
    }

    #[test]
    fn the_same_entry_always_has_the_same_ids_and_two_entries_never_share_one() {
        let mapping = Mapping::new(IDENTITY, false, false);
        let scope = InstrumentationScope::builder("t").build();
        let a = mapping.span(&row(1, "x", AuditDecision::Denied), &scope);
        let again = mapping.span(&row(1, "x", AuditDecision::Denied), &scope);
        let b = mapping.span(&row(2, "x", AuditDecision::Denied), &scope);
        assert_eq!(a.span_context, again.span_context);
        assert_ne!(a.span_context.trace_id(), b.span_context.trace_id());
        assert!(a.span_context.is_valid());
        let other = Mapping::new("ffffffffffffffff0123456789abcdef", false, false)
            .span(&row(1, "x", AuditDecision::Denied), &scope);
        assert_ne!(a.span_context.trace_id(), other.span_context.trace_id());
    }

    #[test]
    fn server_requests_and_result_reviews_are_named_for_what_they_are() {
        let mapping = Mapping::new(IDENTITY, false, false);
        let scope = InstrumentationScope::builder("t").build();
        let request = mapping.span(
            &row(3, "sampling/createMessage", AuditDecision::Denied),
            &scope,
        );
        assert_eq!(request.name, "sampling/createMessage");
        assert_eq!(request.span_kind, SpanKind::Server);
        assert_eq!(
            attribute(&request, "mcp.method.name")
                .map(ToString::to_string)
                .as_deref(),
            Some("sampling/createMessage")
        );
        assert!(attribute(&request, "gen_ai.operation.name").is_none());
        let mut review = row(4, "fetch", AuditDecision::Allowed);
        review.entry.reason = Some("result review: passed".into());
        let review = mapping.span(&review, &scope);
        assert_eq!(review.name, "review_result fetch");
        assert!(attribute(&review, "toolgate.completed").is_none());
    }
}
