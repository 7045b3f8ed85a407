//! What the benchmarks in `benches/` share: medians and percentiles, and the summary row each
//! writes for `scripts/bench.sh`'s closing table.

use std::io::Write;
use std::time::Duration;

/// The variable naming the file where `scripts/bench.sh` collects the summary rows.
pub const SUMMARY_FILE: &str = "TOOLGATE_BENCH_SUMMARY";

/// The median of `times` (the upper one of an even count); zero for none.
pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// The `p`-th percentile (0–100) of `sorted`, by the nearest-rank method; zero for none.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Milliseconds, for tables.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One line of the closing table: a benchmark's headline figure, what it was compared with in the
/// same run and the ratio, and its target with whether it was met.
pub struct Summary<'a> {
    pub benchmark: &'a str,
    pub result: String,
    pub compared_with: String,
    pub ratio: String,
    pub target: &'a str,
    pub met: bool,
}

/// Appends `row` to the summary file when `scripts/bench.sh` named one; otherwise does nothing
/// (each benchmark prints its own table anyway).
pub fn summary(row: Summary<'_>) {
    let Some(path) = std::env::var_os(SUMMARY_FILE) else {
        return;
    };
    let line = format!(
        "| {} | {} | {} | {} | {} | {} |\n",
        row.benchmark,
        row.result,
        row.compared_with,
        row.ratio,
        row.target,
        if row.met { "met" } else { "**missed**" }
    );
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "could not write the summary to {}: {e}",
            path.to_string_lossy()
        );
    }
}
