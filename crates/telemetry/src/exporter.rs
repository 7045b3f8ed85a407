//! The exporter's thread: reads committed audit entries after the destination's cursor, sends
//! them as log records and spans, and moves the cursor once the collector acknowledged them.
//!
//! It runs on a thread of its own with a blocking HTTP client, so nothing it does (encoding,
//! waiting for a slow collector, backing off from a dead one) runs on an async worker or on a
//! call's path; the gated path only writes the audit entry it always wrote. The queue is the
//! audit table itself: bounded by the disk, not by memory, and never dropping anything. Each
//! request carries at most [`BATCH`](crate::cursor::BATCH) entries.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use opentelemetry::logs::LoggerProvider as _;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::logs::{LogBatch, LogExporter as _, SdkLoggerProvider};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SpanExporter as _;
use opentelemetry_sdk::Resource;
use toolgate_history::History;

use crate::client::PinnedHeaders;
use crate::config::ExportConfig;
use crate::cursor::{Cursor, BATCH};
use crate::metrics::{Instruments, INTERVAL};
use crate::record::Mapping;

/// How often the audit is looked at for new entries while the collector keeps up.
pub const POLL: Duration = Duration::from_millis(250);
/// The longest wait between attempts while the collector cannot be reached.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How often a process that is not the sender asks again whether it may send.
const CLAIM_EVERY: Duration = Duration::from_secs(2);

/// Fills in one header value (`${secret:NAME}`, `${env:NAME}`); its error must name what is
/// missing, never a value.
pub type Lookup = Box<dyn Fn(&str) -> Result<String, LookupFailed> + Send>;

/// Why [`Lookup`] has no value for a header, in the words of whoever filled it in (the host
/// hands in its own reference lookup).
pub type LookupFailed = Box<dyn std::error::Error + Send + Sync>;

/// How export is going, for the doctor and the window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// This process sends to the destination (another Toolgate process on the same data
    /// folder may be doing it instead).
    pub sending: bool,
    /// When the collector last acknowledged a batch, in Unix milliseconds.
    pub last_success_ms: Option<i64>,
    /// Why the last attempt failed, when it did (no header values in it).
    pub last_error: Option<String>,
    /// Entries this process has had acknowledged.
    pub sent: u64,
}

enum Command {
    /// Send what is left until this moment, then stop.
    Stop(Instant),
}

/// A running exporter; stopped by [`Exporter::stop`] or, without waiting, on drop.
pub struct Exporter {
    config: ExportConfig,
    commands: Sender<Command>,
    status: Arc<Mutex<Status>>,
    done: Receiver<()>,
}

impl Exporter {
    /// Starts the exporter's thread for `config` on `history`.
    pub fn start(history: Arc<History>, config: ExportConfig, lookup: Lookup) -> Exporter {
        let (commands, orders) = mpsc::channel();
        let (finished, done) = mpsc::channel();
        let status = Arc::new(Mutex::new(Status::default()));
        let run = Run {
            history,
            config: config.clone(),
            orders,
            status: status.clone(),
            stop_at: None,
        };
        let spawned = std::thread::Builder::new()
            .name("toolgate-otlp".into())
            .spawn(move || {
                run.run(&lookup);
                let _ = finished.send(());
            });
        if let Err(e) = spawned {
            tracing::error!("could not start the audit exporter: {e}");
        }
        Exporter {
            config,
            commands,
            status,
            done,
        }
    }

    pub fn config(&self) -> &ExportConfig {
        &self.config
    }

    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sends what is committed and not yet acknowledged, for at most `grace`, then stops.
    /// Whatever is left goes at the next start.
    pub fn stop(self, grace: Duration) {
        let _ = self.commands.send(Command::Stop(Instant::now() + grace));
        // A request in flight may outlast the grace (its own timeout): not waited for.
        let _ = self.done.recv_timeout(grace + Duration::from_millis(200));
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Stop(Instant::now()));
    }
}

/// What the OTLP exporters need, made on the exporter's thread (the blocking HTTP client may
/// not be made on an async runtime).
struct Senders {
    logs: opentelemetry_otlp::LogExporter,
    spans: opentelemetry_otlp::SpanExporter,
    meters: SdkMeterProvider,
    instruments: Instruments,
    loggers: SdkLoggerProvider,
    scope: InstrumentationScope,
}

struct Run {
    history: Arc<History>,
    config: ExportConfig,
    orders: Receiver<Command>,
    status: Arc<Mutex<Status>>,
    stop_at: Option<Instant>,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Run {
    fn set(&self, change: impl FnOnce(&mut Status)) {
        change(&mut self.status.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// Waits `wait`, or less when told to stop; false once the stop's moment has passed.
    fn pause(&mut self, wait: Duration) -> bool {
        if let Some(at) = self.stop_at {
            return Instant::now() < at;
        }
        match self.orders.recv_timeout(wait) {
            Ok(Command::Stop(at)) => self.stop_at = Some(at),
            Err(RecvTimeoutError::Disconnected) => self.stop_at = Some(Instant::now()),
            Err(RecvTimeoutError::Timeout) => {}
        }
        self.stop_at.is_none_or(|at| Instant::now() < at)
    }

    fn run(mut self, lookup: &Lookup) {
        let dest = self.config.destination().to_owned();
        let mut backoff = Duration::from_secs(1);
        // Header values first: a keychain that is locked now may be open later.
        let senders = loop {
            match self.senders(lookup) {
                Ok(senders) => break senders,
                Err(problem) => {
                    tracing::warn!("the audit is not exported to {dest}: {problem}");
                    self.set(|s| s.last_error = Some(problem));
                    if self.stop_at.is_some() || !self.pause(MAX_BACKOFF) {
                        return;
                    }
                }
            }
        };
        let mapping = match self.history.identity() {
            Ok(identity) => Mapping::new(
                &identity,
                self.config.include_arguments,
                self.config.include_results,
            ),
            Err(e) => {
                tracing::error!("the audit cannot be exported: {e}");
                self.set(|s| s.last_error = Some(e.to_string()));
                return;
            }
        };
        let mut cursor = None;
        loop {
            if self.stop_at.is_some_and(|at| Instant::now() >= at) {
                break;
            }
            let Some(current) = cursor.as_mut() else {
                match self.history.claim_export(&dest).wait() {
                    Ok(Some(acknowledged)) => {
                        self.set(|s| s.sending = true);
                        cursor = Some(Cursor::new(acknowledged));
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!("audit export: {e}"),
                }
                if self.stop_at.is_some() || !self.pause(CLAIM_EVERY) {
                    break;
                }
                continue;
            };
            let batch = self
                .history
                .audit_by_ids(&current.to_recheck())
                .and_then(|rechecked| {
                    let fresh = self.history.audit_after(current.scanned(), BATCH)?;
                    Ok(current.batch(rechecked, fresh))
                });
            let batch = match batch {
                Ok(batch) => batch,
                Err(e) => {
                    tracing::error!("audit export could not read the audit log: {e}");
                    if !self.pause(MAX_BACKOFF) {
                        break;
                    }
                    continue;
                }
            };
            let (empty, full) = (batch.send.is_empty(), batch.full);
            let sent = batch.send.len();
            if !empty {
                if let Err(problem) = send(&senders, &mapping, &batch.send) {
                    let was_fine = self.status_error().is_none();
                    if was_fine {
                        tracing::warn!(
                            "the collector at {dest} did not take the audit ({problem}); \
                             retrying, nothing is lost"
                        );
                    }
                    self.set(|s| s.last_error = Some(problem));
                    if self.stop_at.is_some() || !self.pause(backoff) {
                        break;
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
                for row in &batch.send {
                    senders.instruments.count(&row.row);
                }
                if self.status_error().is_some() {
                    tracing::info!("the collector at {dest} takes the audit again");
                }
                backoff = Duration::from_secs(1);
            }
            if let Some(acknowledged) = current.commit(batch) {
                if let Err(e) = self.history.acknowledge_export(&dest, acknowledged).wait() {
                    tracing::warn!("audit export could not keep its place: {e}");
                }
            }
            if !empty {
                self.set(|s| {
                    s.last_error = None;
                    s.last_success_ms = Some(now_ms());
                    s.sent += sent as u64;
                });
            }
            if full {
                continue;
            }
            // Stopping: nothing left to send now, so done.
            if self.stop_at.is_some() || !self.pause(POLL) {
                break;
            }
        }
        if cursor.is_some() {
            let _ = self.history.release_export(&dest).wait();
        }
        if self.status_error().is_none() {
            // The last metrics, unless the collector is known to be away (this would wait).
            let _ = senders.meters.shutdown_with_timeout(Duration::from_secs(1));
        }
    }

    fn status_error(&self) -> Option<String> {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_error
            .clone()
    }

    fn senders(&self, lookup: &Lookup) -> Result<Senders, String> {
        let config = &self.config;
        let mut headers = Vec::with_capacity(config.headers.len());
        for (name, value) in &config.headers {
            let value = lookup(value).map_err(|why| format!("header '{name}': {why}"))?;
            headers.push((name.clone(), value));
        }
        let client = || PinnedHeaders::new(config.timeout, &headers).map_err(|e| e.to_string());
        let built = |e: opentelemetry_otlp::ExporterBuildError| e.to_string();
        let resource = Resource::builder()
            .with_service_name("toolgate")
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let mut logs = opentelemetry_otlp::LogExporter::builder()
            .with_http()
            .with_endpoint(config.logs_url.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(config.timeout)
            .with_http_client(client()?)
            .with_retry_policy(RetryPolicy::disabled())
            .build()
            .map_err(built)?;
        logs.set_resource(&resource);
        let mut spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(config.traces_url.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(config.timeout)
            .with_http_client(client()?)
            .with_retry_policy(RetryPolicy::disabled())
            .build()
            .map_err(built)?;
        spans.set_resource(&resource);
        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_endpoint(config.metrics_url.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(config.timeout)
            .with_http_client(client()?)
            .build()
            .map_err(built)?;
        let meters = SdkMeterProvider::builder()
            .with_resource(resource.clone())
            .with_reader(
                PeriodicReader::builder(metrics)
                    .with_interval(INTERVAL)
                    .build(),
            )
            .build();
        let instruments = Instruments::new(&meters);
        let loggers = SdkLoggerProvider::builder().with_resource(resource).build();
        let scope = InstrumentationScope::builder("toolgate")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        Ok(Senders {
            logs,
            spans,
            meters,
            instruments,
            loggers,
            scope,
        })
    }
}

/// One batch: the log records (the audit itself) first, then the spans; acknowledged only when
/// both were. A failure after the logs went sends them again (same ids).
fn send(
    senders: &Senders,
    mapping: &Mapping,
    rows: &[toolgate_history::ExportRow],
) -> Result<(), String> {
    let logger = senders.loggers.logger_with_scope(senders.scope.clone());
    let records: Vec<_> = rows
        .iter()
        .map(|r| mapping.log_record(&r.row, &logger))
        .collect();
    let pairs: Vec<_> = records.iter().map(|r| (r, &senders.scope)).collect();
    futures::executor::block_on(senders.logs.export(LogBatch::new(&pairs)))
        .map_err(|e| format!("logs: {e}"))?;
    let spans = rows
        .iter()
        .map(|r| mapping.span(&r.row, &senders.scope))
        .collect();
    futures::executor::block_on(senders.spans.export(spans)).map_err(|e| format!("traces: {e}"))
}
