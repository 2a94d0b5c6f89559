//! Appends that arrive together are committed together, each judged on its own: a refused
//! append (stale sequence number, existing id) leaves the others of its batch written, and a
//! second process writing the same task is caught by the sequence check even when this
//! process's writer remembers an older position.

mod common;

use std::sync::Arc;

use a2a_runtime::store::{StoreError, TaskEvent, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{Artifact, Part, TaskArtifactUpdateEvent, TaskState};
use common::{created, status};

fn artifact(id: &str) -> TaskEvent {
    TaskEvent::Artifact(TaskArtifactUpdateEvent::new(
        id,
        "ctx",
        Artifact::new("a", vec![Part::text("x")]),
        false,
        true,
    ))
}

async fn second_process_is_caught(url: &str) {
    let a = SqlTaskStore::connect(url).await.unwrap();
    let b = SqlTaskStore::connect(url).await.unwrap();
    a.append("t", 0, vec![created("t")]).await.unwrap();
    a.append("t", 1, vec![status("t", TaskState::Working)])
        .await
        .unwrap();
    // B has never written the task: it reads where the log is, then appends.
    let r = b.append("t", 2, vec![artifact("t")]).await.unwrap();
    assert_eq!((r[0].seq, r[0].state), (3, TaskState::Working));
    // A remembers seq 2; the database says 3.
    match a
        .append("t", 2, vec![status("t", TaskState::Completed)])
        .await
    {
        Err(StoreError::Conflict {
            expected, actual, ..
        }) => assert_eq!((expected, actual), (2, 3)),
        other => panic!("expected a conflict, got {other:?}"),
    }
    let r = a
        .append("t", 3, vec![status("t", TaskState::Completed)])
        .await
        .unwrap();
    assert_eq!((r[0].seq, r[0].state), (4, TaskState::Completed));
    let snap = b.get("t", None).await.unwrap().unwrap();
    assert_eq!(snap.seq, 4);
    assert_eq!(snap.task.status.state, TaskState::Completed);
    assert_eq!(snap.task.artifacts.len(), 1);
    // An append to a task that does not exist, through a writer that never saw it.
    assert!(matches!(
        b.append("nope", 1, vec![artifact("nope")]).await,
        Err(StoreError::NotFound(_))
    ));
}

async fn batch_with_refusals(store: SqlTaskStore) {
    let store: Arc<dyn TaskStore> = Arc::new(store);
    store.append("dup", 0, vec![created("dup")]).await.unwrap();
    store
        .append("race", 0, vec![created("race")])
        .await
        .unwrap();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..64 {
        let s = store.clone();
        set.spawn(async move {
            let id = format!("new-{i}");
            let r = s
                .append(&id, 0, vec![created(&id), status(&id, TaskState::Working)])
                .await;
            ("new", r.map(|r| r.len()))
        });
    }
    for _ in 0..2 {
        let s = store.clone();
        set.spawn(async move {
            let r = s.append("dup", 0, vec![created("dup")]).await;
            ("dup", r.map(|r| r.len()))
        });
        let s = store.clone();
        set.spawn(async move {
            let r = s
                .append("race", 1, vec![status("race", TaskState::Working)])
                .await;
            ("race", r.map(|r| r.len()))
        });
    }
    let (mut new_ok, mut dup_refused, mut race_ok, mut race_conflict) = (0, 0, 0, 0);
    while let Some(joined) = set.join_next().await {
        match joined.unwrap() {
            ("new", Ok(2)) => new_ok += 1,
            ("dup", Err(StoreError::AlreadyExists(_))) => dup_refused += 1,
            ("race", Ok(1)) => race_ok += 1,
            ("race", Err(StoreError::Conflict { actual: 2, .. })) => race_conflict += 1,
            (what, other) => panic!("{what}: unexpected {other:?}"),
        }
    }
    assert_eq!((new_ok, dup_refused, race_ok, race_conflict), (64, 2, 1, 1));
    for i in 0..64 {
        let snap = store.get(&format!("new-{i}"), None).await.unwrap().unwrap();
        assert_eq!((snap.seq, snap.task.status.state), (2, TaskState::Working));
    }
    assert_eq!(store.get("dup", None).await.unwrap().unwrap().seq, 1);
    assert_eq!(store.get("race", None).await.unwrap().unwrap().seq, 2);
}

#[tokio::test]
async fn second_process_is_caught_sqlite() {
    second_process_is_caught(&a2a_store_sql::test_util::sqlite_url()).await;
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test]
async fn second_process_is_caught_postgres() {
    if let Some(url) = a2a_store_sql::test_util::postgres_schema_url().await {
        second_process_is_caught(&url).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_with_refusals_sqlite() {
    batch_with_refusals(a2a_store_sql::test_util::sqlite().await).await;
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_with_refusals_postgres() {
    if let Some(store) = a2a_store_sql::test_util::postgres().await {
        batch_with_refusals(store).await;
    }
}
