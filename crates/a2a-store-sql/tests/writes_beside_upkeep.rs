//! Appends never fail because the process's upkeep (heartbeats, lease sweeps, retention)
//! writes to the same SQLite file from another connection at the same time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use a2a_runtime::store::{TaskEvent, TaskStore};
use a2a_types::{Task, TaskState, TaskStatus, TaskStatusUpdateEvent};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_and_upkeep_share_the_file() {
    let db = a2a_store_sql::test_util::sqlite().await;
    let stop = Arc::new(AtomicBool::new(false));
    let upkeep = {
        let (db, stop) = (db.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                db.heartbeat().await.expect("heartbeat");
                db.abandoned(Duration::from_secs(60), 100)
                    .await
                    .expect("sweep");
                db.delete_finished(Duration::from_secs(3600), 100)
                    .await
                    .expect("retention");
            }
        })
    };
    let store = db.scoped("agent");
    let writers: Vec<_> = (0..16)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..40 {
                    let id = format!("w{w}-t{i}");
                    let created = TaskEvent::Created(Task::new(&id, "c", TaskState::Submitted));
                    store.append(&id, 0, vec![created]).await.expect("create");
                    let done =
                        TaskStatusUpdateEvent::new(&id, "c", TaskStatus::new(TaskState::Completed));
                    store
                        .append(&id, 1, vec![TaskEvent::Status(done)])
                        .await
                        .expect("complete");
                }
            })
        })
        .collect();
    for w in writers {
        w.await.expect("every append succeeded");
    }
    stop.store(true, Ordering::Relaxed);
    upkeep.await.expect("upkeep never failed");
}
