//! A process never takes its own tasks for abandoned, even when it could not write its
//! heartbeat for longer than the lease expiry (on a full disk, reads still work while writes
//! fail): it has not stopped, and its runtime deals with its own tasks. Another process on
//! the same database does find them, as it must when this one has crashed.

use std::time::{Duration, Instant};

use a2a_runtime::store::{TaskEvent, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{Task, TaskState};

async fn own_tasks_are_not_abandoned(url: &str) {
    let this = SqlTaskStore::connect(url)
        .await
        .expect("open this process's store");
    let other = SqlTaskStore::connect(url)
        .await
        .expect("open another process's store");
    // `this` never beats, as when every heartbeat write failed.
    let created = TaskEvent::Created(Task::new("t-running", "c", TaskState::Working));
    this.scoped("agent")
        .append("t-running", 0, vec![created])
        .await
        .expect("create");
    let ids = |found: Vec<a2a_store_sql::AbandonedTask>| {
        found.into_iter().map(|t| t.task_id).collect::<Vec<_>>()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = ids(other.abandoned(Duration::ZERO, 10).await.expect("sweep"));
        if seen.contains(&"t-running".to_owned()) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "another process never found the silent process's task: {seen:?}"
        );
        tokio::task::yield_now().await;
    }
    let own = ids(this.abandoned(Duration::ZERO, 10).await.expect("sweep"));
    assert!(
        own.is_empty(),
        "a process took its own running task for abandoned: {own:?}"
    );
}

#[tokio::test]
async fn sqlite() {
    own_tasks_are_not_abandoned(&a2a_store_sql::test_util::sqlite_url()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(url) = a2a_store_sql::test_util::postgres_schema_url().await {
        own_tasks_are_not_abandoned(&url).await;
    }
}
