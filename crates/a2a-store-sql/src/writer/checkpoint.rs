//! WAL checkpoints for the SQLite writer, on a thread of their own.
//!
//! A checkpoint copies the pages of the write-ahead log into the database file and syncs
//! both. SQLite's default has the connection that commits do it, every 1 000 frames or so:
//! for the store's single writer, that was a fifth of its time, mostly `fsync`, while the
//! callers of the next batch waited. Here the writer's connection never checkpoints by itself
//! (`wal_autocheckpoint=0`), and a second connection on a thread of its own does the work.
//!
//! SQLite starts the log over only when a checkpoint has copied every frame and the writer
//! then begins a transaction. A checkpointer beside a writer that commits every few hundred
//! microseconds never quite catches up, and the log would grow without end. So a round goes:
//! 1. after about [`FRAMES_PER_ROUND`] frames the writer wakes the checkpointer (or, if
//!    anything was committed, after [`IDLE_ROUND`]);
//! 2. the checkpointer copies in passes (`PRAGMA wal_checkpoint(PASSIVE)`, which waits for
//!    no one) until a pass finds few new frames;
//! 3. after its next batch, the writer checkpoints what is left (the frames committed during
//!    the last pass: a small copy, a small `fsync`), so that its next commit starts the log
//!    over. A reader may still hold a snapshot in the log, which stops both; so the writer
//!    tries again after each batch until it sees the log started over (as SQLite's own
//!    checkpoints try again after every commit).
//!
//! If the checkpointer falls behind or fails at run time, the writer does the same by itself
//! every [`WRITER_FALLBACK`] frames: the log stays bounded either way. While the writer has a
//! round to finish, the checkpointer starts no pass, and past [`WRITER_FALLBACK`] the writer
//! waits for the pass under way to end rather than write on beside it. (If its connection
//! cannot be opened, the store does not open.)
//!
//! Readers that overlap one another, so that one of them nearly always holds a snapshot in
//! the log, would stop all of that for as long as they keep coming (SQLite's own checkpoints
//! too): the log grew past the size of everything written through it. So once the log holds
//! [`WAIT_FOR_READERS`] frames, the writer's turn waits for the readers
//! (`PRAGMA wal_checkpoint(RESTART)`): it waits for the readers of older snapshots, copies
//! every frame, then waits until no reader uses the log (readers that begin after the copy
//! read the database file). It holds the write lock meanwhile, so appends and the pool's
//! writes wait too: at most [`RESTART_WAIT`], shorter than their own busy timeout.
//!
//! A reader can outlast that wait without being slow itself: its rows go to an async task
//! through a small channel, and while the runtime is busy (decoding other large tasks, say)
//! the connection waits with its snapshot held. So after a wait that timed out, the writer
//! tries again once the log has grown by [`FIRST_RETRY_STEP`] frames, and each wait that
//! times out in a row doubles that step: a reader that never ends costs a wait at 32, 40,
//! 56, 88 MiB…, not one after every batch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::DbError;

/// Frames written to the log (as estimated) between two rounds: about 4 MiB, SQLite's own
/// interval between checkpoints.
const FRAMES_PER_ROUND: u64 = 1024;

/// The frames a commit writes besides its events' pages: at least one per B-tree it touches
/// (the task table and its indexes, the event table). A low estimate: 14 were measured for a
/// commit of five sends, so a round is about 1 800 frames under that load (rounds of 4 096
/// estimated frames measured the same).
const FRAMES_PER_COMMIT: u64 = 8;

/// SQLite's page size (the default), which is the size of a frame's page.
const PAGE: usize = 4096;

/// Longest the checkpointer sleeps while anything was committed: with fewer writes than
/// [`FRAMES_PER_ROUND`] a second, the log is still copied and synced (under `synchronous =
/// NORMAL`, that is when commits become durable against a power cut).
const IDLE_ROUND: Duration = Duration::from_secs(1);

/// A pass that had at most this many frames to copy has nearly caught up.
const NEARLY_CAUGHT_UP: i64 = 64;

/// Most passes in one round.
const MAX_PASSES: u32 = 4;

/// Frames (as estimated, high: see [`Checkpointer::committed`]) after which the writer
/// finishes a round by itself, whether or not the checkpointer began one.
const WRITER_FALLBACK: u64 = 8 * FRAMES_PER_ROUND;

/// Frames in the log (counted by SQLite, not estimated) from which the writer's turn waits
/// for the readers that keep it from starting over: 32 MiB of pages (33.75 MB of file).
/// Without readers in the way the log stays well below (7–19 MB measured under load).
const WAIT_FOR_READERS: i64 = 8192;

/// Longest the writer waits for readers: well below the 5 s busy timeout of the pool's
/// connections, whose writes (the heartbeat, retention) wait behind it for the write lock.
const RESTART_WAIT: Duration = Duration::from_secs(1);

/// How often the writer, waiting for a pass of the checkpointer to end, tries again.
const PASS_POLL: Duration = Duration::from_millis(1);

/// Frames the log grows by after a wait for readers timed out before the writer waits again
/// (8 MiB of pages). Doubled after each wait that times out in a row. Doubling from the log's
/// size instead (a wait at 32, then 64 MiB) let one busy second double the log: that was seen
/// under a test's three readers of 8 MiB tasks on a loaded 2-core machine.
const FIRST_RETRY_STEP: i64 = WAIT_FOR_READERS / 4;

/// What the writer and the checkpointer share.
#[derive(Debug, Default)]
struct Shared {
    /// Something was committed since the checkpointer's last round.
    dirty: AtomicBool,
    /// The checkpointer's round is over: the writer finishes it.
    finish: AtomicBool,
    /// The writer is gone: the checkpointer stops.
    closed: AtomicBool,
    /// The writer has a round to finish: the checkpointer starts no pass meanwhile, so that
    /// the writer's checkpoint finds the lock free after the pass under way (if any).
    writer_turn: AtomicBool,
}

/// The writer's side of its checkpointer.
pub(super) struct Checkpointer {
    shared: Arc<Shared>,
    thread: Thread,
    /// Frames written to the log since the checkpointer was last woken, as estimated.
    since_wake: u64,
    /// Where the writer's part of a round stands.
    turn: Turn,
    /// Frames written since the log last started over, as estimated.
    since_finish: u64,
    /// Frames in the log from which the writer waits for readers: [`WAIT_FOR_READERS`], or
    /// after readers outlasted [`RESTART_WAIT`], the log's size then plus `retry_step`.
    wait_at: i64,
    /// Frames the log grows by before the writer waits again after readers outlast the next
    /// wait: [`FIRST_RETRY_STEP`], doubled after each wait that times out, so that a reader
    /// that never ends does not stop the writer after every batch.
    retry_step: i64,
}

/// The writer's part of a round: it checkpoints after each batch until it sees the log
/// started over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// No round to finish.
    Idle,
    /// Frames are left to copy.
    Copying,
    /// Every frame was copied when the log held this many: the next commit starts it over,
    /// unless a reader still holds a snapshot in it then.
    Copied(i64),
    /// The same, and the writer committed since: a log no longer than this is a new one.
    CommittedAfter(i64),
}

impl Checkpointer {
    /// Opens the checkpointer's connection to the database file at `path` and starts its
    /// thread.
    pub(super) fn start(path: &str) -> Result<Self, DbError> {
        let conn = Connection::open(path)?;
        conn.execute_batch(crate::SQLITE_PRAGMAS)?;
        let shared = Arc::new(Shared::default());
        let thread = std::thread::Builder::new()
            .name("a2a-sqlite-checkpointer".into())
            .spawn({
                let shared = shared.clone();
                move || run(&conn, &shared)
            })?
            .thread()
            .clone();
        Ok(Self {
            shared,
            thread,
            since_wake: 0,
            turn: Turn::Idle,
            since_finish: 0,
            wait_at: WAIT_FOR_READERS,
            retry_step: FIRST_RETRY_STEP,
        })
    }

    /// The writer committed a transaction that wrote `rows` (events and tasks) with `bytes`
    /// of events.
    pub(super) fn committed(&mut self, bytes: usize, rows: usize) {
        if let Turn::Copied(log) = self.turn {
            self.turn = Turn::CommittedAfter(log);
        }
        let pages = (bytes / PAGE) as u64;
        self.since_wake += FRAMES_PER_COMMIT + pages;
        // The fallback bounds the log, so it counts high: a page more for each row, as rows
        // of different tasks sit on pages of their own, and a large event's last page is
        // partly its own. Counted like `since_wake`, the real log of 8 KiB events held 1.4
        // to 2.2 times the estimate when the fallback came.
        self.since_finish += FRAMES_PER_COMMIT + pages + rows as u64;
        self.shared.dirty.store(true, Ordering::Relaxed);
    }

    /// The writer's turn, between two batches, on its connection `conn`: finishes the
    /// checkpointer's round, and wakes it for the next one.
    pub(super) fn between_batches(&mut self, conn: &Connection) {
        let finish = self.shared.finish.swap(false, Ordering::Acquire);
        if self.turn == Turn::Idle && (finish || self.since_finish >= WRITER_FALLBACK) {
            self.turn = Turn::Copying;
            self.shared.writer_turn.store(true, Ordering::Release);
        }
        if self.turn != Turn::Idle {
            self.take_turn(conn);
        }
        if self.since_wake >= FRAMES_PER_ROUND {
            self.since_wake = 0;
            self.thread.unpark();
        }
    }

    /// Checkpoints on the writer's connection `conn`, and says what that shows.
    fn take_turn(&mut self, conn: &Connection) {
        match self.writer_pass(conn) {
            // Another checkpoint holds the lock (the checkpointer, or a pooled connection that
            // committed): it said nothing of the log. Tried again after the next batch.
            Ok(pass) if pass.busy => {}
            // Not a WAL database (SQLite could not switch it): nothing to finish.
            Ok(pass) if pass.log < 0 => self.turn = Turn::Idle,
            // Wholly copied, then a commit, and now a log no longer than it was: a new log, so
            // the round is done. (If that commit wrote more frames than the whole log held,
            // the new log goes unnoticed, and the writer goes on checkpointing after each
            // batch until a smaller one.)
            Ok(pass) if matches!(self.turn, Turn::CommittedAfter(before) if pass.log <= before) => {
                self.round_done();
            }
            Ok(pass) if pass.complete() => self.turn = Turn::Copied(pass.log),
            // Readers have held snapshots in the log for too long: wait for them.
            Ok(pass) if pass.log >= self.wait_at => self.wait_for_readers(conn, pass.log),
            // A reader holds an older snapshot: tried again after the next batch.
            Ok(_) => self.turn = Turn::Copying,
            // Given up until the next round, so as to say it once a round.
            Err(e) => {
                tracing::warn!(error = %e, "the task store's WAL checkpoint failed");
                self.round_done();
            }
        }
    }

    /// A passive checkpoint on the writer's connection `conn`. Once the log has outgrown
    /// [`WRITER_FALLBACK`], a pass of the checkpointer that holds the lock is waited for (up
    /// to [`RESTART_WAIT`], polling: SQLite's busy handler does not wait for that lock, and
    /// the holder may be a pooled connection's checkpoint, which signals nothing): the writer
    /// adds nothing to the log meanwhile, and that is what bounds the log when the writer
    /// outpaces the passes. Without the wait, one pass of 126 ms let the log grow from 11 000
    /// to 18 000 frames (75 MB) while the writer found the lock taken after every batch.
    fn writer_pass(&self, conn: &Connection) -> rusqlite::Result<Pass> {
        let mut pass = passive(conn)?;
        if pass.busy && self.since_finish >= WRITER_FALLBACK {
            let deadline = Instant::now() + RESTART_WAIT;
            while pass.busy && Instant::now() < deadline {
                std::thread::sleep(PASS_POLL);
                pass = passive(conn)?;
            }
        }
        Ok(pass)
    }

    /// Copies every frame of a log of `log` frames and waits (up to [`RESTART_WAIT`]) until
    /// no reader uses the log: the writer's next commit starts it over.
    fn wait_for_readers(&mut self, conn: &Connection, log: i64) {
        let waited = conn
            .busy_timeout(RESTART_WAIT)
            .and_then(|()| checkpoint(conn, "PRAGMA wal_checkpoint(RESTART)"));
        if let Err(e) = conn.busy_timeout(crate::SQLITE_BUSY_TIMEOUT) {
            tracing::warn!(error = %e, "cannot restore the task store writer's busy timeout");
        }
        match waited {
            Ok(pass) if !pass.busy => self.round_done(),
            // Another checkpoint holds the lock: tried again after the next batch.
            Ok(pass) if pass.log < 0 => self.turn = Turn::Copying,
            // A reader (or a pooled writer) outlasted the wait.
            Ok(_) => {
                tracing::warn!(
                    frames = log,
                    retry_after = self.retry_step,
                    "readers (or a pooled writer) kept the task store's WAL from starting over; trying again once it grows by `retry_after` frames"
                );
                self.wait_at = log.saturating_add(self.retry_step);
                self.retry_step = self.retry_step.saturating_mul(2);
                self.turn = Turn::Copying;
            }
            Err(e) => {
                tracing::warn!(error = %e, "the task store's WAL checkpoint failed");
                self.round_done();
            }
        }
    }

    fn round_done(&mut self) {
        self.shared.writer_turn.store(false, Ordering::Release);
        self.turn = Turn::Idle;
        self.since_finish = 0;
        self.wait_at = WAIT_FOR_READERS;
        self.retry_step = FIRST_RETRY_STEP;
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// The checkpointer's thread: a round whenever it is woken, or a second went by, with
/// anything committed.
fn run(conn: &Connection, shared: &Shared) {
    let mut failures = 0u64;
    loop {
        std::thread::park_timeout(IDLE_ROUND);
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        // The writer finishes a round first (what was committed stays to be copied).
        if shared.writer_turn.load(Ordering::Acquire) {
            continue;
        }
        if !shared.dirty.swap(false, Ordering::Relaxed) {
            continue;
        }
        match round(conn, shared) {
            Ok(()) => shared.finish.store(true, Ordering::Release),
            Err(e) => {
                // The first failure, then one line in a hundred: the writer falls back to
                // checkpointing by itself meanwhile.
                if failures.is_multiple_of(100) {
                    tracing::warn!(error = %e, failures, "the task store's WAL checkpointer failed");
                }
                failures += 1;
            }
        }
    }
}

/// Passes until one had few frames to copy, or the writer has a round to finish.
fn round(conn: &Connection, shared: &Shared) -> rusqlite::Result<()> {
    let mut copied_to = None;
    for _ in 0..MAX_PASSES {
        // A writer that outpaces the passes (it took its turn after [`WRITER_FALLBACK`]
        // frames) would otherwise find the lock taken by the next pass after every batch,
        // while the log grew: 84 and 98 MB were seen where 8 MB is usual.
        if shared.writer_turn.load(Ordering::Acquire) {
            return Ok(());
        }
        let pass = passive(conn)?;
        if pass.busy || pass.log < 0 {
            // Another checkpoint is running (the writer's turn, or a pooled connection's), or
            // this is not a WAL database.
            return Ok(());
        }
        if let Some(before) = copied_to {
            // A smaller log than was copied before: the writer started it over meanwhile.
            let to_copy = if pass.log >= before {
                pass.log - before
            } else {
                pass.log
            };
            if to_copy <= NEARLY_CAUGHT_UP {
                break;
            }
        }
        copied_to = Some(pass.copied);
    }
    Ok(())
}

/// What one `PRAGMA wal_checkpoint` did.
#[derive(Debug, Clone, Copy)]
struct Pass {
    /// Another checkpoint was running (then `log` and `copied` are -1). Readers do not make
    /// a passive checkpoint busy; they stop it short of the frames they may still read. A
    /// `RESTART` is also busy when readers (or a writer) outlasted [`RESTART_WAIT`].
    busy: bool,
    /// Frames in the log (-1 if the database is not in WAL mode, or busy).
    log: i64,
    /// Frames copied into the database, this pass and before.
    copied: i64,
}

impl Pass {
    /// Every frame of the log is in the database file.
    fn complete(self) -> bool {
        !self.busy && self.log == self.copied
    }
}

fn passive(conn: &Connection) -> rusqlite::Result<Pass> {
    checkpoint(conn, "PRAGMA wal_checkpoint(PASSIVE)")
}

/// Runs `pragma`, a `PRAGMA wal_checkpoint(…)`.
fn checkpoint(conn: &Connection, pragma: &str) -> rusqlite::Result<Pass> {
    let mut stmt = conn.prepare_cached(pragma)?;
    stmt.query_row([], |r| {
        Ok(Pass {
            busy: r.get::<_, i64>(0)? != 0,
            log: r.get(1)?,
            copied: r.get(2)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// The most frames the log at `wal` held: its file is never made shorter.
    fn frames(wal: &str) -> i64 {
        const HEADER: u64 = 32;
        const FRAME_HEADER: u64 = 24;
        let len = std::fs::metadata(wal).map_or(0, |m| m.len());
        (len.saturating_sub(HEADER) / (PAGE as u64 + FRAME_HEADER)) as i64
    }

    /// A reader that never ends its snapshot: the writer waits for it at 32 MiB, then again
    /// 8 MiB later (not first at 64 MiB, and not after every batch).
    #[test]
    fn after_readers_outlast_a_wait_the_writer_waits_again_a_step_later() {
        let file = std::env::temp_dir().join(format!("a2a-checkpoint-{}.db", uuid::Uuid::new_v4()));
        let path = file.to_str().expect("a UTF-8 path").to_owned();
        let wal = format!("{path}-wal");
        let writer = Connection::open(&path).unwrap();
        writer.execute_batch(crate::SQLITE_PRAGMAS).unwrap();
        writer
            .execute_batch("PRAGMA wal_autocheckpoint=0; CREATE TABLE t (body BLOB);")
            .unwrap();
        let mut checkpoints = Checkpointer::start(&path).unwrap();
        let reader = Connection::open(&path).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        let rows: i64 = reader
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0);

        let body = vec![0u8; 16 * 1024];
        let mut waits = Vec::new();
        while frames(&wal) < 3 * WAIT_FOR_READERS / 2 {
            writer.execute_batch("BEGIN").unwrap();
            for _ in 0..16 {
                writer
                    .prepare_cached("INSERT INTO t (body) VALUES (?1)")
                    .unwrap()
                    .execute([&body])
                    .unwrap();
            }
            writer.execute_batch("COMMIT").unwrap();
            checkpoints.committed(16 * body.len(), 16);
            let log = frames(&wal);
            let began = Instant::now();
            checkpoints.between_batches(&writer);
            if began.elapsed() >= RESTART_WAIT / 2 {
                waits.push(log);
            }
        }
        reader.execute_batch("COMMIT").unwrap();
        drop(checkpoints);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }

        // A batch writes about 70 frames; the writer may find the checkpointer's pass in the
        // way and wait after the next batch instead.
        const SLACK: i64 = 512;
        assert_eq!(waits.len(), 2, "waited at {waits:?} frames");
        assert!(
            (WAIT_FOR_READERS..WAIT_FOR_READERS + SLACK).contains(&waits[0]),
            "first wait at {} frames",
            waits[0]
        );
        let again = waits[0] + FIRST_RETRY_STEP;
        assert!(
            (again..again + SLACK).contains(&waits[1]),
            "second wait at {} frames, the first at {}",
            waits[1],
            waits[0]
        );
    }
}
