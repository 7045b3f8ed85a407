//! One audit entry: what the approval gate decided, and how the entry goes into the `audit`
//! table. Below both the log's reads (`audit.rs`) and the journal (`journal.rs`), which replays
//! entries with [`insert_audit`]; the log itself is described in the crate docs.

use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::{Clock, SystemClock};
use crate::error::Failure;
use crate::text::fold;

/// What the approval gate decided about a request.
///
/// Stored and serialized as the same snake_case word (`timed_out`), so a filter written
/// against the export matches the database too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum AuditDecision {
    /// Sent to the server.
    Allowed,
    /// Refused; not sent.
    Denied,
    /// Nobody answered in time; not sent.
    TimedOut,
    /// Withdrawn while it waited (the turn was stopped, the app quit); not sent.
    Cancelled,
}

impl AuditDecision {
    pub const ALL: [AuditDecision; 4] = [
        AuditDecision::Allowed,
        AuditDecision::Denied,
        AuditDecision::TimedOut,
        AuditDecision::Cancelled,
    ];

    /// The word stored in the database and written to JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditDecision::Allowed => "allowed",
            AuditDecision::Denied => "denied",
            AuditDecision::TimedOut => "timed_out",
            AuditDecision::Cancelled => "cancelled",
        }
    }

    pub(crate) fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == word)
    }
}

/// Who or what made the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The user, answering the prompt.
    User,
    /// A saved rule; [`AuditEntry::rule_id`] says which.
    Rule,
    /// No rule matched and the default policy applied.
    Default,
    /// The gate was paused, which decides every request the same way.
    Pause,
    /// Nobody answered in time.
    Timeout,
    /// Toolgate refused the request before any rule or person could decide it: the model named
    /// a tool that is not offered, or sent arguments that are not a JSON object.
    Toolgate,
    /// The rules left it to the user, but nobody could be asked (the CLI without a terminal).
    Unattended,
}

impl DecidedBy {
    pub const ALL: [DecidedBy; 7] = [
        DecidedBy::User,
        DecidedBy::Rule,
        DecidedBy::Default,
        DecidedBy::Pause,
        DecidedBy::Timeout,
        DecidedBy::Toolgate,
        DecidedBy::Unattended,
    ];

    /// The word stored in the database and written to JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::User => "user",
            DecidedBy::Rule => "rule",
            DecidedBy::Default => "default",
            DecidedBy::Pause => "pause",
            DecidedBy::Timeout => "timeout",
            DecidedBy::Toolgate => "toolgate",
            DecidedBy::Unattended => "unattended",
        }
    }

    pub(crate) fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == word)
    }
}

/// One request that passed the approval gate: the decision and, once the call returned, its
/// outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Unix milliseconds, when the decision was made.
    pub decided_at: i64,
    /// The conversation the request came from; `None` for calls made outside one (the CLI, by
    /// hand). May name a conversation that has since been deleted.
    pub conversation_id: Option<String>,
    /// The connected client that asked (its `clientInfo.name` or profile), for calls that came
    /// through the gateway; `None` for Toolgate's own chat and the CLI.
    #[serde(default)]
    pub client: Option<String>,
    pub server_id: String,
    /// The tool called, or for a request from a server its kind (`sampling/createMessage`, …).
    pub tool: String,
    /// The arguments as they reached the server (or would have): after any edit by the user.
    pub arguments: Value,
    /// What the model asked for, when the user edited it into [`arguments`](Self::arguments).
    pub original_arguments: Option<Value>,
    pub decision: AuditDecision,
    pub decided_by: DecidedBy,
    /// The rule that decided, when [`decided_by`](Self::decided_by) is [`DecidedBy::Rule`].
    pub rule_id: Option<String>,
    /// The user's or the rule's reason, if one was given.
    pub reason: Option<String>,
    /// How long the call took; `None` until it returned, and for calls that never ran.
    pub duration_ms: Option<u64>,
    /// The size of the result the server sent, if there was one.
    pub result_bytes: Option<u64>,
    /// The call failed (an error from the server or a tool result marked as an error).
    pub is_error: bool,
    /// What went wrong, when it did.
    pub error: Option<String>,
}

impl AuditEntry {
    /// A decision made now, by the system clock, with no conversation, rule, reason or outcome.
    pub fn new(
        server_id: impl Into<String>,
        tool: impl Into<String>,
        arguments: Value,
        decision: AuditDecision,
        decided_by: DecidedBy,
    ) -> Self {
        AuditEntry {
            decided_at: SystemClock.now_ms(),
            conversation_id: None,
            client: None,
            server_id: server_id.into(),
            tool: tool.into(),
            arguments,
            original_arguments: None,
            decision,
            decided_by,
            rule_id: None,
            reason: None,
            duration_ms: None,
            result_bytes: None,
            is_error: false,
            error: None,
        }
    }
}

/// Inserts one entry (with its journal key, if it has one); with `or_ignore`, an entry whose key
/// is already in the table is skipped. Returns how many rows were inserted.
pub(crate) fn insert_audit(
    conn: &rusqlite::Connection,
    entry: &AuditEntry,
    key: Option<&str>,
    or_ignore: bool,
) -> Result<usize, Failure> {
    // SQLite integers are i64; saturate, as `add_usage` does, rather than fail the call.
    let clamp = |n: Option<u64>| n.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    let verb = if or_ignore {
        "INSERT OR IGNORE"
    } else {
        "INSERT"
    };
    let inserted = conn
        .prepare_cached(&format!(
            "{verb} INTO audit (decided_at, conversation_id, server_id, tool, arguments,
                original_arguments, decision, decided_by, rule_id, reason, duration_ms,
                result_bytes, is_error, error, search_text, client, journal_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
        ))?
        .execute(params![
            entry.decided_at,
            entry.conversation_id,
            entry.server_id,
            entry.tool,
            entry.arguments.to_string(),
            entry.original_arguments.as_ref().map(Value::to_string),
            entry.decision.as_str(),
            entry.decided_by.as_str(),
            entry.rule_id,
            entry.reason,
            clamp(entry.duration_ms),
            clamp(entry.result_bytes),
            entry.is_error,
            entry.error,
            audit_search_text(entry),
            entry.client,
            key,
        ])?;
    Ok(inserted)
}

/// What the text filter looks in: every string, number and object key of both argument sets,
/// and the reason, one per line, folded. Not the JSON text, where `C:\Users` is `C:\\Users` and
/// a quote is `\"`: a search finds what the user saw, as typed.
///
/// Its output is stored (`audit.search_text`): a change to it needs a migration that computes
/// the column again, or old entries stop matching.
fn audit_search_text(entry: &AuditEntry) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => line(s, out),
            Value::Number(n) => line(&n.to_string(), out),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => {
                for (key, v) in map {
                    line(key, out);
                    walk(v, out);
                }
            }
            // "true" and "null" would match nearly every entry.
            Value::Bool(_) | Value::Null => {}
        }
    }
    // The line break keeps a search from matching across two values.
    fn line(s: &str, out: &mut String) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&fold(s));
    }
    let mut out = String::new();
    walk(&entry.arguments, &mut out);
    if let Some(original) = &entry.original_arguments {
        walk(original, &mut out);
    }
    if let Some(reason) = &entry.reason {
        line(reason, &mut out);
    }
    out
}
