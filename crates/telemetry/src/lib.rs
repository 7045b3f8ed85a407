//! The audit log streamed to an OpenTelemetry collector over OTLP/HTTP (protobuf), with nothing
//! lost.
//!
//! # Design choices
//!
//! - **Driven from the committed audit rows, not from in-memory events.** The history keeps,
//!   per destination, how far the collector has acknowledged (`toolgate-history`'s
//!   `export.rs`); the exporter reads the entries after that point, sends them, and moves the
//!   point only once the collector said yes. A collector down for an hour, or Toolgate killed in
//!   the middle of a batch, delays entries; it never loses them. Delivery is at least once: an
//!   entry sent but not yet recorded as acknowledged is sent again after a restart, with the
//!   same `toolgate.audit.id` (and the same trace and span ids), so a receiver can de-duplicate.
//! - **Nothing on a call's path.** The gated path writes the audit entry it always wrote; the
//!   exporter runs on a thread of its own, polling the table every [`POLL`] and batching up to
//!   [`BATCH`] entries per request, with a blocking HTTP client and its own backoff. The queue
//!   is the table itself, bounded by the disk.
//! - **Each entry is a log record and a span** (`record.rs`), named by the OpenTelemetry GenAI
//!   and MCP semantic conventions with Toolgate's decision beside them; counters and a
//!   duration histogram (`metrics.rs`) summarise them. Arguments and error texts are left out
//!   unless the configuration includes them.
//! - **The opentelemetry crates do the wire format.** Spans and log records are the SDK's own
//!   types, handed straight to `opentelemetry-otlp`'s exporters (whose result is the
//!   acknowledgement), not through the SDK's batch processors, which drop on overflow and
//!   report nothing back.
//! - **Configuration is one pure function** (`config.rs`): the organisation's endpoint wins and
//!   cannot be turned off, then the user's settings, then the `OTEL_EXPORTER_OTLP_*` variables.
//!   Headers are sent exactly as resolved (`client.rs`); `${secret:NAME}` values are filled in
//!   from the keychain on the exporter's thread and never logged.

mod client;
pub mod config;
mod cursor;
mod exporter;
mod metrics;
mod record;

pub use config::{resolve, ExportConfig, Resolution, Source};
pub use cursor::{Cursor, BATCH};
pub use exporter::{Exporter, Lookup, LookupFailed, Status, MAX_BACKOFF, POLL};
pub use record::Mapping;
