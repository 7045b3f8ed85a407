//! Counters and a duration histogram, counted from the entries as this process first sends
//! them (never on a call's path), exported every [`INTERVAL`] by the SDK's periodic reader.
//!
//! - `toolgate.decisions` (counter): every entry, by `toolgate.decision`,
//!   `toolgate.decided_by`, `mcp.method.name` and `toolgate.server`;
//! - `toolgate.tool.calls` (counter): allowed calls that ran, by `gen_ai.tool.name`,
//!   `toolgate.server` and `error.type` when they failed;
//! - `mcp.client.operation.duration` (histogram, seconds, the MCP conventions' name): how long
//!   each call that ran took, with the same attributes.
//!
//! Metrics are a summary, not the record: they are cumulative for the life of a process and
//! an entry sent again after a restart is counted again. The audit itself is the log records.

use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use toolgate_history::{AuditDecision, AuditRow};

use crate::record::{kind, Kind};

/// How often the metrics are sent.
pub const INTERVAL: Duration = Duration::from_secs(30);

pub struct Instruments {
    decisions: Counter<u64>,
    calls: Counter<u64>,
    duration: Histogram<f64>,
}

impl Instruments {
    pub fn new(provider: &SdkMeterProvider) -> Self {
        let meter = provider.meter("toolgate");
        Instruments {
            decisions: meter
                .u64_counter("toolgate.decisions")
                .with_description("Requests decided at Toolgate's approval gate")
                .with_unit("{decision}")
                .build(),
            calls: meter
                .u64_counter("toolgate.tool.calls")
                .with_description("Tool calls that ran after they were allowed")
                .with_unit("{call}")
                .build(),
            duration: meter
                .f64_histogram("mcp.client.operation.duration")
                .with_description("How long each allowed MCP request took")
                .with_unit("s")
                .build(),
        }
    }

    pub fn count(&self, row: &AuditRow) {
        let entry = &row.entry;
        let method = match kind(row) {
            Kind::ServerRequest => entry.tool.clone(),
            Kind::ToolCall | Kind::ResultReview => "tools/call".to_owned(),
        };
        self.decisions.add(
            1,
            &[
                KeyValue::new("toolgate.decision", entry.decision.as_str()),
                KeyValue::new("toolgate.decided_by", entry.decided_by.as_str()),
                KeyValue::new("mcp.method.name", method.clone()),
                KeyValue::new("toolgate.server", entry.server_id.clone()),
            ],
        );
        let Some(millis) = entry.duration_ms else {
            return;
        };
        if entry.decision != AuditDecision::Allowed {
            return;
        }
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", method),
            KeyValue::new("toolgate.server", entry.server_id.clone()),
        ];
        if entry.is_error {
            attributes.push(KeyValue::new("error.type", "tool_error"));
        }
        if kind(row) == Kind::ToolCall {
            attributes.push(KeyValue::new("gen_ai.tool.name", entry.tool.clone()));
            self.calls.add(1, &attributes);
        }
        // Whole milliseconds as the audit keeps them.
        self.duration.record(millis as f64 / 1000.0, &attributes);
    }
}
