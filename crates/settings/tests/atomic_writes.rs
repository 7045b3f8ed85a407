//! A writer killed at any moment never leaves a partial settings file, even with two writers.
//!
//! The test runs its own binary again as child processes (only the ignored test `writer_child`,
//! told what to do through environment variables). Each round starts two writers, as the app and
//! the CLI would be, that save successive versions of the settings as fast as they can; the
//! parent SIGKILLs both at random moments and then loads the file. It must hold exactly one
//! version, complete, from one writer: every version is self-consistent (its servers, their
//! names, arguments and timeouts all derive from its number) and versions differ in size, so a
//! partial or interleaved write could not pass for one.
//!
//! The randomness is a xorshift seeded from the clock; the seed is printed, and
//! `TOOLGATE_KILL_SEED=<seed>` replays a run.
// Unix sockets, modes, signals or /proc: this suite runs on Linux only (the Windows suite under
// Wine is `tests/tests/portable.rs`).
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use toolgate_settings::file::{load, save, Loaded};
use toolgate_settings::{ProviderKind, ProviderSettings, ServerConfig, Settings};

const PATH_VAR: &str = "TOOLGATE_SETTINGS_KILL_PATH";
const WRITER_VAR: &str = "TOOLGATE_SETTINGS_KILL_WRITER";
const START_VAR: &str = "TOOLGATE_SETTINGS_KILL_START";
const ROUNDS: u64 = 150;
const WRITERS: [&str; 2] = ["app", "cli"];
/// Version numbers of round `r` start at `r * ROUND_SPAN`: no child gets near the next round's.
const ROUND_SPAN: u64 = 1_000_000;

/// Version `n` of writer `writer`: its size and every field follow from `n`.
fn version(writer: &str, n: u64) -> Settings {
    let mut settings = Settings::first_run(ServerConfig::stdio("seed", "node", ["x"]));
    let count = 1 + n.wrapping_mul(2_654_435_761) % 120;
    settings.servers = (0..count)
        .map(|i| {
            let mut server = ServerConfig::stdio(
                format!("{writer}-v{n}-{i}"),
                "node",
                [
                    format!("v{n}"),
                    "x".repeat(usize::try_from(n % 64).unwrap_or(0)),
                ],
            );
            server.name = format!("v{n}");
            server.call_timeout_secs = 1 + n % 500;
            server.startup_timeout_secs = 1 + (n + i) % 1000;
            server
        })
        .collect();
    settings.provider = ProviderSettings {
        model: format!("{writer} v{n}"),
        ..ProviderSettings::defaults_for(ProviderKind::Openai)
    };
    settings
}

/// Which version `settings` claim to be, checked against that version in full.
fn identify(settings: &Settings) -> (String, u64) {
    let (writer, n) = settings
        .provider
        .model
        .split_once(" v")
        .expect("the model names the writer and version");
    let n: u64 = n.parse().expect("a version number");
    assert!(
        *settings == version(writer, n),
        "the file claims to be {writer} v{n} but differs from it"
    );
    (writer.to_owned(), n)
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A pause of up to `max_us` microseconds.
    fn pause(&mut self, max_us: u64) -> Duration {
        Duration::from_micros(self.next() % (max_us + 1))
    }
}

fn spawn_writer(path: &Path, writer: &str, start: u64) -> Child {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["writer_child", "--exact", "--ignored", "--nocapture"])
        .env(PATH_VAR, path)
        .env(WRITER_VAR, writer)
        .env(START_VAR, start.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a writer");
    // Wait until it is about to write, so the kill lands among its saves, not its start-up.
    let stdout = child.stdout.take().expect("child stdout");
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // `ends_with`: the test harness may print "test writer_child ... " on the same line.
        .any(|line| line.trim_end().ends_with("writing"));
    assert!(ready, "writer {writer} never started: {}", reap(child));
    child
}

/// Waits for a killed child; panics if it ended on its own (a failed save), with its stderr.
fn reap(mut child: Child) -> String {
    let status = child.wait().expect("wait for a writer");
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(9),
            "a writer ended on its own ({status}):\n{stderr}"
        );
    }
    stderr
}

#[cfg(unix)]
#[test]
fn killed_writers_never_leave_a_partial_file() {
    let seed = std::env::var("TOOLGATE_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    println!("seed {seed} (TOOLGATE_KILL_SEED={seed} replays this run)");
    let mut rng = XorShift(seed);

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("settings.json");
    save(&path, &version("app", 0)).expect("first save");

    let started = Instant::now();
    let mut last = ("app".to_owned(), 0);
    let (mut kills, mut changed) = (0, 0);
    for round in 1..=ROUNDS {
        let start = round * ROUND_SPAN;
        let mut children: Vec<Child> = WRITERS
            .iter()
            .map(|w| spawn_writer(&path, w, start))
            .collect();
        // Both run; each is killed at its own random moment, in a random order.
        if rng.next().is_multiple_of(2) {
            children.reverse();
        }
        for mut child in children {
            std::thread::sleep(rng.pause(6_000));
            child.kill().expect("SIGKILL a writer");
            reap(child);
            kills += 1;
        }

        let loaded = load(&path).expect("load after the kills");
        let Loaded::Found(settings) = &loaded else {
            panic!("round {round} (seed {seed}): the file is not one complete version: {loaded:?}");
        };
        let found = identify(settings);
        if found.1 < start {
            // Neither writer finished a save this round: the file is the one seen before.
            assert_eq!(found, last, "round {round} (seed {seed})");
        } else {
            changed += 1;
        }
        last = found;

        // Only the settings file and the temporary files of killed writers: nothing was set
        // aside as unreadable, and no temporary file sits where the settings are read from.
        for entry in std::fs::read_dir(dir.path()).expect("read dir") {
            let name = entry.expect("entry").file_name();
            let name = name.to_string_lossy();
            assert!(
                name == "settings.json" || name.starts_with(".settings.json.tmp-"),
                "round {round}: unexpected file {name}"
            );
        }
    }
    let leftovers = std::fs::read_dir(dir.path()).expect("read dir").count() - 1;
    println!(
        "{kills} kills in {:.1?}; the file changed in {changed} of {ROUNDS} rounds; \
         {leftovers} temporary files of killed writers left (never read)",
        started.elapsed()
    );
    assert!(kills >= 200);
    // The kills landed while the writers were saving, not only before they began: files
    // changed, and some writers died between writing their temporary file and renaming it.
    assert!(changed >= ROUNDS / 4, "only {changed} rounds saw a save");
    assert!(leftovers > 0, "no kill landed inside a save");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path)
        .expect("metadata")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// The child's half: saves versions `start`, `start + 1`, … until it is killed.
#[test]
#[ignore = "run by killed_writers_never_leave_a_partial_file as its child process"]
fn writer_child() {
    let (Some(path), Ok(writer), Some(start)) = (
        std::env::var_os(PATH_VAR),
        std::env::var(WRITER_VAR),
        std::env::var(START_VAR).ok().and_then(|s| s.parse().ok()),
    ) else {
        return;
    };
    println!("writing");
    for n in start.. {
        save(Path::new(&path), &version(&writer, n)).expect("child save");
    }
}
