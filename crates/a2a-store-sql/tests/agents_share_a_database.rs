//! The agents of one host share a database without seeing each other's tasks, and a store
//! reopened on the same file finds its tasks again.

use a2a_runtime::store::{TaskEvent, TaskQuery, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{Task, TaskState};

async fn create(store: &SqlTaskStore, id: &str) {
    store
        .append(
            id,
            0,
            vec![TaskEvent::Created(Task::new(id, "ctx", TaskState::Working))],
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn scopes_are_separate_and_survive_reopening() {
    let url = a2a_store_sql::test_util::sqlite_url();
    let db = SqlTaskStore::connect(&url).await.unwrap();
    let (echo, slow) = (db.scoped("echo"), db.scoped("slow"));
    create(&echo, "same-id").await;
    create(&slow, "same-id").await; // the same id in another agent is another task
    create(&slow, "only-slow").await;
    let mut q = TaskQuery::default();
    q.page_size = 10;
    assert_eq!(echo.list(&q).await.unwrap().total_size, 1);
    assert_eq!(slow.list(&q).await.unwrap().total_size, 2);
    assert!(echo.get("only-slow", None).await.unwrap().is_none());
    drop((db, echo, slow));

    // Reopened: everything is still there, migrations are not applied twice.
    let db = SqlTaskStore::connect(&url).await.unwrap();
    let slow = db.scoped("slow");
    let snap = slow.get("only-slow", None).await.unwrap().unwrap();
    assert_eq!(snap.seq, 1);
    assert_eq!(snap.task.status.state, TaskState::Working);
    assert_eq!(slow.list(&q).await.unwrap().total_size, 2);
    let _ = std::fs::remove_file(url.trim_start_matches("sqlite:"));
}

#[tokio::test]
async fn a_sqlite_url_without_a_file_is_refused() {
    for url in ["sqlite::memory:", "sqlite:", "sqlite:file:x.db?mode=memory"] {
        let err = SqlTaskStore::connect(url).await.unwrap_err();
        assert!(
            matches!(err, a2a_store_sql::SqlStoreError::SqliteWithoutFile(_)),
            "{url}: {err}"
        );
    }
}
