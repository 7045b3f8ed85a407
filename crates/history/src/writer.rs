//! The writer thread: every change to the database is made here, many to a transaction.
//!
//! Callers queue a write and get a [`Pending`] back, which they await (async code: no async
//! worker ever blocks on SQLite) or [`Pending::wait`] for (sync code), or drop (the write still
//! happens; a failure is logged). The thread takes whatever is queued when it wakes, runs each
//! write in a savepoint of one `BEGIN IMMEDIATE … COMMIT` (a write that fails is rolled back
//! alone), and only then answers the callers: a write's answer means it is committed. This is
//! group commit: 32 calls deciding at once cost one commit, not 32.
//!
//! Commits run with `synchronous = NORMAL` in WAL mode: a commit has reached the operating system
//! when it returns, so a crash or SIGKILL of Toolgate loses nothing that was answered. The disk
//! itself is synced by a second thread ([`Syncer`]) shortly after each commit, off everyone's
//! path: a power cut or kernel crash can lose the commits of the last [`SYNC_INTERVAL`] and the
//! sync in progress, never more, and never leaves the file damaged (SQLite's WAL guarantees that
//! much at `NORMAL`).
//!
//! Reads keep their own connection (for a file; an in-memory database has only one), so a long
//! search never holds up a decision being written. A read first waits for the writes queued
//! before it ([`Progress::settle`]), so a caller always reads what it wrote.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::channel::oneshot;
use rusqlite::Connection;

use crate::error::Failure;
use crate::journal::Journal;
use crate::HistoryError;

/// How long after a commit the disk is synced at the latest (plus the sync itself).
pub const SYNC_INTERVAL: Duration = Duration::from_millis(50);
/// Writes taken into one transaction at most, so one batch never holds the lock for long.
const MAX_BATCH: usize = 512;
/// How long a write nobody waits for may sit in the queue before the writer commits it: the
/// writer is not woken for each (see [`Writer::write_lazily`]).
pub const LAZY_DELAY: Duration = Duration::from_millis(5);

/// One queued write: runs its statements (or, given no connection, does not run because the
/// transaction could not start) and says how to answer its caller once the batch's commit is
/// known.
pub(crate) struct Job {
    run: Run,
    /// Whether the write needs a savepoint of its own to be undone alone when it fails. A write
    /// of one statement does not: SQLite undoes a failed statement by itself. A savepoint per
    /// write also makes SQLite copy every page the write touches that the batch's earlier
    /// writes touched too: a quarter of an audit entry's CPU (BENCHMARKS §1).
    savepoint: bool,
}

pub(crate) struct Done {
    /// The write failed: it is undone (its savepoint rolled back, or its one statement undone
    /// by SQLite), the rest of the batch commits.
    failed: bool,
    /// Answers the caller, given the commit's outcome.
    answer: Answer,
}

type Answer = Box<dyn FnOnce(Result<(), &CommitError>) + Send>;

/// A job's statements: given no connection, it does not run (the transaction could not start).
type Run = Box<dyn FnOnce(Option<&Connection>) -> Done + Send>;

/// Why a batch's commit failed, given to each of its callers.
pub(crate) struct CommitError {
    error: rusqlite::Error,
}

impl CommitError {
    /// A copy for one caller (rusqlite's errors are not `Clone`).
    fn copy(&self) -> Failure {
        let error = match &self.error {
            rusqlite::Error::SqliteFailure(code, message) => {
                rusqlite::Error::SqliteFailure(*code, message.clone())
            }
            other => rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
                Some(other.to_string()),
            ),
        };
        Failure::Sqlite(error)
    }
}

/// A write queued on the writer thread. Await it, or [`Pending::wait`] for it, to know it is
/// committed; drop it to let it happen on its own (a failure is then logged).
#[must_use = "a write is only known to be committed once awaited or waited for"]
pub struct Pending<T> {
    answer: oneshot::Receiver<Result<T, HistoryError>>,
}

impl<T> Pending<T> {
    /// Blocks this thread until the write is committed (or failed). For sync code; async code
    /// awaits instead.
    pub fn wait(self) -> Result<T, HistoryError> {
        futures::executor::block_on(self)
    }
}

impl<T> std::future::Future for Pending<T> {
    type Output = Result<T, HistoryError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.answer)
            .poll(cx)
            .map(|answer| answer.unwrap_or_else(|_| Err(HistoryError::WriterStopped)))
    }
}

/// How far the writer has got, so reads can wait for the writes queued before them.
#[derive(Default)]
pub(crate) struct Progress {
    queued: AtomicU64,
    done: Mutex<(u64, bool)>,
    changed: Condvar,
}

impl Progress {
    /// Waits until every write queued before this call is committed (or the writer stopped).
    pub(crate) fn settle(&self) {
        let target = self.queued.load(Ordering::Acquire);
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        while done.0 < target && !done.1 {
            done = self
                .changed
                .wait(done)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn finished(&self, count: u64) {
        self.done.lock().unwrap_or_else(PoisonError::into_inner).0 += count;
        self.changed.notify_all();
    }

    fn stopped(&self) {
        self.done.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.changed.notify_all();
    }
}

/// The writer thread and its syncer, stopped (everything queued committed, the disk synced) on
/// drop.
pub(crate) struct Writer {
    /// Jobs; `None` tells an idle writer that lazy writes wait (see [`Writer::write_lazily`]).
    queue: Option<Sender<Option<Job>>>,
    /// Writes nobody waits for, taken by the writer when it wakes: at the latest
    /// [`LAZY_DELAY`] after the first, or with the next write someone waits for.
    lazy: Arc<Mutex<Vec<Job>>>,
    progress: Arc<Progress>,
    thread: Option<JoinHandle<()>>,
    /// Shared by every job, for the words of a failure.
    path: Arc<Path>,
    /// Removed once everything is committed, on drop.
    journal: Option<Arc<Journal>>,
}

impl Writer {
    /// Starts the thread on `conn` (shared with reads for an in-memory database). `path` is the
    /// database file, whose WAL the syncer syncs; `None` for an in-memory database.
    pub(crate) fn start(
        conn: Arc<Mutex<Connection>>,
        path: &Path,
        file: bool,
        journal: Option<Arc<Journal>>,
    ) -> Writer {
        let (queue, jobs) = std::sync::mpsc::channel::<Option<Job>>();
        let progress = Arc::new(Progress::default());
        let syncer = file.then(|| Syncer::start(wal_path(path), journal.clone()));
        let lazy: Arc<Mutex<Vec<Job>>> = Arc::default();
        let thread = {
            let (progress, lazy) = (progress.clone(), lazy.clone());
            std::thread::Builder::new()
                .name("toolgate-history-writer".into())
                .spawn(move || run(&conn, &jobs, &lazy, &progress, syncer))
                .map_err(|e| tracing::error!("could not start the history writer: {e}"))
                .ok()
        };
        if thread.is_none() {
            progress.stopped();
        }
        Writer {
            queue: thread.is_some().then_some(queue),
            lazy,
            progress,
            thread,
            path: Arc::from(path),
            journal,
        }
    }

    /// Waits until every write queued before this call is committed (or the writer stopped),
    /// waking the writer for the lazy ones rather than waiting for their timer.
    pub(crate) fn settle(&self) {
        if !lock(&self.lazy).is_empty() {
            self.wake();
        }
        self.progress.settle();
    }

    /// Wakes the writer to take a batch now: a job that runs no statement.
    fn wake(&self) {
        self.send(self.job(|_| Ok(()), |_| {}, None, false));
    }

    /// Queues `job`, counted for [`Progress::settle`].
    fn send(&self, job: Job) {
        self.progress.queued.fetch_add(1, Ordering::AcqRel);
        let sent = self.queue.as_ref().map(|q| q.send(Some(job)));
        if !matches!(sent, Some(Ok(()))) {
            // The thread is gone; an answer channel is dropped with the job.
            self.progress.finished(1);
        }
    }

    /// Queues `op`; its answer comes once the batch it lands in is committed.
    pub(crate) fn write<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, Failure> + Send + 'static,
    ) -> Pending<T> {
        self.write_then(op, |_| {})
    }

    /// [`Self::write`], calling `after` on the writer thread with whether `op` succeeded and was
    /// committed.
    pub(crate) fn write_then<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, Failure> + Send + 'static,
        after: impl FnOnce(bool) + Send + 'static,
    ) -> Pending<T> {
        let (tell, answer) = oneshot::channel();
        self.send(self.job(op, after, Some(tell), true));
        Pending { answer }
    }

    /// Queues a write nobody waits for without waking the writer for it: it is committed with
    /// the next batch, at the latest [`LAZY_DELAY`] later. For the writes of a call's path whose
    /// safety does not hang on the commit (an audit decision already in the journal, a
    /// completion): a wake-up per write cost more than the write. Only the first of a batch
    /// wakes an idle writer, and only to start the timer.
    ///
    /// `op` makes at most one change, in one statement, and fails only by that statement (or
    /// before it): it runs without a savepoint of its own ([`Job::savepoint`]).
    pub(crate) fn write_lazily(
        &self,
        op: impl FnOnce(&Connection) -> Result<(), Failure> + Send + 'static,
        after: impl FnOnce(bool) + Send + 'static,
    ) {
        // Nobody waits: no answer channel (a failure is logged).
        let job = self.job(op, after, None, false);
        if self.queue.is_none() {
            return;
        }
        self.progress.queued.fetch_add(1, Ordering::AcqRel);
        let backlog = {
            let mut lazy = lock(&self.lazy);
            lazy.push(job);
            lazy.len()
        };
        if backlog >= MAX_BATCH {
            // Enough for a batch: no reason to wait for the timer.
            self.wake();
        } else if backlog == 1 {
            // The first of a batch: the writer may be idle, blocked until something arrives,
            // and nothing else may come. Told, it starts the timer. (Before, such a write sat
            // uncommitted until the next write someone waited for, and a read settling
            // meanwhile could wait for it forever.)
            if let Some(queue) = &self.queue {
                let _ = queue.send(None);
            }
        }
    }

    /// A job for `op`, answering `tell` (when someone waits) once its batch is committed.
    fn job<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, Failure> + Send + 'static,
        after: impl FnOnce(bool) + Send + 'static,
        tell: Option<oneshot::Sender<Result<T, HistoryError>>>,
        savepoint: bool,
    ) -> Job {
        let path = self.path.clone();
        let run = Box::new(move |conn: Option<&Connection>| {
            let result = conn.map(op);
            Done {
                failed: !matches!(result, Some(Ok(_))),
                answer: Box::new(move |commit| {
                    let result = match (result, commit) {
                        (Some(Ok(value)), Ok(())) => Ok(value),
                        (Some(Err(e)), _) => Err(e.into_public(&path)),
                        (_, Err(e)) => Err(e.copy().into_public(&path)),
                        (None, Ok(())) => Err(HistoryError::WriterStopped),
                    };
                    after(result.is_ok());
                    let unseen = match tell {
                        Some(tell) => tell.send(result).err(),
                        None => Some(result),
                    };
                    if let Some(Err(e)) = unseen {
                        // Nobody waited: the failure would otherwise go unseen.
                        tracing::error!("a history write failed: {e}");
                    }
                }),
            }
        });
        Job { run, savepoint }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has committed what was queued.
        drop(self.queue.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(journal) = &self.journal {
            journal.remove();
        }
    }
}

fn wal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The writer's loop: a batch per wake-up (a write someone waits for, or the lazy writes'
/// timer), until the queue is closed and everything is committed.
fn run(
    conn: &Mutex<Connection>,
    jobs: &Receiver<Option<Job>>,
    lazy: &Mutex<Vec<Job>>,
    progress: &Progress,
    syncer: Option<Syncer>,
) {
    use std::sync::mpsc::RecvTimeoutError;
    let mut open = true;
    while open {
        // A closed queue gives an error once it is empty: commit what is left, then stop.
        let first = if lock(lazy).is_empty() {
            match jobs.recv() {
                Ok(Some(job)) => Some(job),
                // Lazy writes wait: their timer starts (the next round's wait).
                Ok(None) => continue,
                Err(_) => {
                    open = false;
                    None
                }
            }
        } else {
            match jobs.recv_timeout(LAZY_DELAY) {
                // A word about lazy writes the writer already has: take them now.
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    None
                }
            }
        };
        // The lazy writes first: each was queued before the wake-up that takes it.
        let mut batch = std::mem::take(&mut *lock(lazy));
        batch.extend(first);
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.extend(job),
                Err(_) => break,
            }
        }
        if batch.is_empty() {
            continue;
        }
        let count = batch.len() as u64;
        {
            let conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            commit_batch(&conn, batch);
        }
        if let Some(syncer) = &syncer {
            syncer.dirty();
        }
        progress.finished(count);
    }
    drop(syncer);
    progress.stopped();
}

/// Runs one batch in one transaction and answers each caller with the outcome.
fn commit_batch(conn: &Connection, batch: Vec<Job>) {
    let alone = batch.len() == 1;
    if let Err(error) = conn.execute_batch("BEGIN IMMEDIATE") {
        // Nothing runs: every write of the batch fails with the reason (another process held
        // the database past the busy timeout, the disk is full…).
        let error = CommitError { error };
        for job in batch {
            ((job.run)(None).answer)(Err(&error));
        }
        return;
    }
    let mut answers = Vec::with_capacity(batch.len());
    let mut any_failed = false;
    for Job { run, savepoint } in batch {
        // A savepoint for a write of several statements, so one that fails is undone alone; a
        // batch of one needs none.
        let savepoint = savepoint && !alone;
        if savepoint {
            let _ = conn.execute_batch("SAVEPOINT write");
        }
        let done = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(Some(conn))))
        {
            Ok(done) => Some(done),
            Err(_) => {
                tracing::error!("a history write panicked; it was rolled back");
                None
            }
        };
        let failed = done.as_ref().is_none_or(|d| d.failed);
        any_failed |= failed;
        if savepoint {
            if failed {
                let _ = conn.execute_batch("ROLLBACK TO write");
            }
            let _ = conn.execute_batch("RELEASE write");
        }
        if let Some(done) = done {
            answers.push(done.answer);
        }
    }
    // A batch of one that failed has no savepoint to undo it by: the whole transaction goes.
    let outcome = if alone && any_failed {
        conn.execute_batch("ROLLBACK")
    } else {
        conn.execute_batch("COMMIT")
    };
    let outcome = match outcome {
        Ok(()) => Ok(()),
        Err(error) => {
            // A failed COMMIT leaves the transaction open in some cases (SQLITE_BUSY).
            let _ = conn.execute_batch("ROLLBACK");
            Err(CommitError { error })
        }
    };
    for answer in answers {
        answer(outcome.as_ref().map(|_| ()));
    }
}

/// Syncs the WAL to disk soon after each commit, on its own thread.
struct Syncer {
    state: Arc<(Mutex<SyncState>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

/// What the syncer syncs: the WAL, and the audit journal with it.
struct Synced {
    wal: PathBuf,
    journal: Option<Arc<Journal>>,
}

#[derive(Default)]
struct SyncState {
    dirty: bool,
    stop: bool,
}

impl Syncer {
    fn start(wal: PathBuf, journal: Option<Arc<Journal>>) -> Syncer {
        let state = Arc::new((Mutex::new(SyncState::default()), Condvar::new()));
        let synced = Synced { wal, journal };
        let thread = {
            let state = state.clone();
            std::thread::Builder::new()
                .name("toolgate-history-sync".into())
                .spawn(move || sync_loop(&state, &synced))
                .map_err(|e| tracing::error!("could not start the history's disk sync: {e}"))
                .ok()
        };
        Syncer { state, thread }
    }

    fn dirty(&self) {
        let (lock, wake) = &*self.state;
        lock.lock().unwrap_or_else(PoisonError::into_inner).dirty = true;
        wake.notify_one();
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        let (lock, wake) = &*self.state;
        lock.lock().unwrap_or_else(PoisonError::into_inner).stop = true;
        wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn sync_loop(state: &(Mutex<SyncState>, Condvar), synced: &Synced) {
    // Kept open for the life of the database: SQLite puts no locks on the WAL file, and a file
    // we never close cannot release the locks SQLite holds on others (POSIX drops every lock a
    // process holds on a file when any of its descriptors to that file closes).
    let mut file: Option<File> = None;
    let (lock, wake) = state;
    loop {
        let stop = {
            let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
            while !s.dirty && !s.stop {
                s = wake.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
            let stop = s.stop;
            s.dirty = false;
            stop
        };
        if file.is_none() {
            // Opened for writing (nothing is written through it): Windows flushes a file only
            // through a handle that may write to it.
            file = std::fs::OpenOptions::new()
                .write(true)
                .open(&synced.wal)
                .ok();
        }
        if let Some(f) = &file {
            if let Err(e) = f.sync_data() {
                tracing::warn!("could not sync the history to disk: {e}");
            }
        }
        if let Some(journal) = &synced.journal {
            journal.sync();
        }
        if stop {
            return;
        }
        // Commits that land meanwhile wait for the next round: at most one sync per interval.
        let s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = wake.wait_timeout_while(s, SYNC_INTERVAL, |s| !s.stop);
    }
}
