//! The SQLite write-ahead log stays bounded under sustained writes: its checkpoints run on a
//! thread of their own, and the log must still start over (a checkpointer that never catches
//! up with the writer would let it grow without end).
//!
//! Without readers: a reader that holds a snapshot keeps any checkpoint, SQLite's own
//! included, from copying past it, and so the log from starting over, for as long as it
//! holds it (see docs/benchmarks.md).

use a2a_runtime::store::{TaskEvent, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{Artifact, Part, Task, TaskArtifactUpdateEvent, TaskState};

const WRITERS: usize = 16;
const APPENDS_PER_WRITER: usize = 1000;
/// Each append carries this much text: 16 × 1 000 × 8 KiB is 125 MiB of events.
const TEXT: usize = 8 * 1024;
/// The log's bound asserted, well below the 125 MiB that go through it: it measured 7 to
/// 10 MiB, and the writer's own fallback (should the checkpointer starve on a busy machine)
/// comes at about 34 MiB.
const WAL_BOUND: u64 = 48 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wal_starts_over_under_sustained_writes() {
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
                for i in 0..APPENDS_PER_WRITER {
                    let artifact = TaskArtifactUpdateEvent::new(
                        &id,
                        "c",
                        Artifact::new(format!("a{i}"), vec![Part::text(text.clone())]),
                        false,
                        true,
                    );
                    let event = TaskEvent::Artifact(artifact);
                    store
                        .append(&id, 1 + i as u64, vec![event])
                        .await
                        .expect("append");
                }
            })
        })
        .collect();
    for w in writers {
        w.await.expect("every append succeeded");
    }

    let written = (WRITERS * APPENDS_PER_WRITER * TEXT) as u64;
    // The file is never made shorter (the log starts over at its beginning), so its size is
    // the most the log ever held.
    let largest = std::fs::metadata(&wal).expect("the log").len();
    assert!(
        largest < WAL_BOUND,
        "the log reached {largest} bytes with {written} bytes of events written through it"
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
}
