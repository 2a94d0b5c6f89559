//! The SQLite write-ahead log stays bounded under sustained writes: its checkpoints run on a
//! thread of their own, and the log must still start over (a checkpointer that never catches
//! up with the writer would let it grow without end). With readers too: a reader that holds
//! a snapshot keeps every checkpoint from copying past it, and readers that overlap one
//! another would keep the log from ever starting over, unless the writer waits for them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a_runtime::store::{TaskEvent, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{Artifact, Part, Task, TaskArtifactUpdateEvent, TaskState};

const WRITERS: usize = 16;
const APPENDS_PER_WRITER: usize = 1000;
/// Each append carries this much text: 16 × 1 000 × 8 KiB is 125 MiB of events.
const TEXT: usize = 8 * 1024;
/// The log's bound without readers, well below the 125 MiB that go through it: it measured
/// 9 to 29 MB in twenty runs (debug and release builds), and the writer's own fallback comes
/// at about 32 MiB of estimated frames, counted high. Before the fallback counted high and
/// waited for the checkpointer's pass under way, a writer that outpaced the passes let the
/// log reach 48 to 98 MB in a release build in four runs of ten (in debug builds too, once
/// events were encoded faster).
/// With readers, the writer waits for them once the log holds 32 MiB. A reader can outlast
/// that wait (on a loaded machine, a reader whose rows wait for the busy runtime to take them
/// holds its snapshot meanwhile), and then the writer waits again 8 MiB later: two waits in
/// a row timing out would fail this bound, as would a log that doubled after one.
const WAL_BOUND: u64 = 48 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wal_starts_over_under_sustained_writes() {
    let (largest, written) = write_through_the_log(0).await;
    assert!(
        largest < WAL_BOUND,
        "the log reached {largest} bytes with {written} bytes of events written through it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wal_starts_over_under_overlapping_readers() {
    let (largest, written) = write_through_the_log(3).await;
    assert!(
        largest < WAL_BOUND,
        "the log reached {largest} bytes with {written} bytes of events written through it, \
         beside readers"
    );
}

/// Writes 125 MiB of events while `readers` tasks read the written tasks back to back, and
/// checks they all went through into the database file. Returns the largest size of the log
/// and the bytes of events written.
async fn write_through_the_log(readers: usize) -> (u64, u64) {
    let url = a2a_store_sql::test_util::sqlite_url();
    let wal = format!("{}-wal", url.trim_start_matches("sqlite:"));
    let db = SqlTaskStore::connect(&url).await.expect("open");
    let store = db.scoped("agent");
    let text = "x".repeat(TEXT);
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (store, text) = (store.clone(), text.clone());
            tokio::spawn(async move {
                let id = format!("w{w}");
                let created = TaskEvent::Created(Task::new(&id, "c", TaskState::Working));
                store.append(&id, 0, vec![created]).await.expect("create");
                let mut slowest = Duration::ZERO;
                for i in 0..APPENDS_PER_WRITER {
                    let artifact = TaskArtifactUpdateEvent::new(
                        &id,
                        "c",
                        Artifact::new(format!("a{i}"), vec![Part::text(text.clone())]),
                        false,
                        true,
                    );
                    let event = TaskEvent::Artifact(artifact);
                    let began = Instant::now();
                    store
                        .append(&id, 1 + i as u64, vec![event])
                        .await
                        .expect("append");
                    slowest = slowest.max(began.elapsed());
                }
                slowest
            })
        })
        .collect();
    // Each reader reads whole tasks (up to 8 MiB of events each), one after another, so that
    // at nearly every moment one of them holds a snapshot.
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let reading: Vec<_> = (0..readers)
        .map(|r| {
            let (store, done, reads) = (store.clone(), done.clone(), reads.clone());
            tokio::spawn(async move {
                let mut w = r;
                while !done.load(Ordering::Relaxed) {
                    let id = format!("w{}", w % WRITERS);
                    store.get(&id, None).await.expect("read");
                    reads.fetch_add(1, Ordering::Relaxed);
                    w += 1;
                }
            })
        })
        .collect();
    let mut slowest = Duration::ZERO;
    for w in writers {
        slowest = slowest.max(w.await.expect("every append succeeded"));
    }
    done.store(true, Ordering::Relaxed);
    for r in reading {
        r.await.expect("every read succeeded");
    }
    if readers > 0 {
        assert!(reads.load(Ordering::Relaxed) > 0, "the readers read");
    }

    let written = (WRITERS * APPENDS_PER_WRITER * TEXT) as u64;
    // The file is never made shorter (the log starts over at its beginning), so its size is
    // the most the log ever held.
    let largest = std::fs::metadata(&wal).expect("the log").len();
    eprintln!(
        "readers: {readers} ({} reads), the log's largest size: {largest} bytes, the slowest append: {slowest:?}",
        reads.load(Ordering::Relaxed)
    );
    // Everything went through the log into the database file, which the shutdown checkpoint
    // empties the log into (trying again while the checkpointer is in a pass).
    assert!(db.checkpoint().await.expect("checkpoint"), "log emptied");
    let db_file = std::fs::metadata(url.trim_start_matches("sqlite:"))
        .unwrap()
        .len();
    assert!(db_file > written, "database file {db_file} bytes");
    let last = store.get("w0", None).await.unwrap().expect("w0");
    assert_eq!(last.seq, 1 + APPENDS_PER_WRITER as u64);
    (largest, written)
}
