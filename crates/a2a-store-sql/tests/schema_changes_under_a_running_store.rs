//! A store keeps working when another process changes the type of columns it reads (a
//! newer replica migrating the schema during a rolling upgrade): PostgreSQL refuses the
//! statements it prepared before (`cached plan must not change result type`), and the
//! store prepares them again, in its writer and in its readers, without failing a call.

mod common;

use std::time::Duration;

use a2a_runtime::store::{TaskQuery, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{TaskPushNotificationConfig, TaskState};
use common::{created, status};
use sqlx::Connection;

/// A change of the collation of columns read back, as migration 6 made for identifiers.
/// Identifiers have collation `C` since then, so the change is to `POSIX`: another collation
/// to PostgreSQL, hence another result type.
const CHANGE: &str = "
    ALTER TABLE a2a_tasks ALTER COLUMN id TYPE TEXT COLLATE \"POSIX\";
    ALTER TABLE a2a_task_events ALTER COLUMN event TYPE TEXT COLLATE \"POSIX\";
    ALTER TABLE a2a_push_configs ALTER COLUMN config TYPE TEXT COLLATE \"POSIX\";
    ALTER TABLE a2a_push_configs ALTER COLUMN agent_id TYPE TEXT COLLATE \"POSIX\";";

/// A read a running replica makes.
#[derive(Debug, Clone, Copy)]
enum Read {
    Get,
    List,
    Events,
    PushConfigs,
    Abandoned,
    OrphanedPush,
    IdleInterrupted,
}

const READS: [Read; 7] = [
    Read::Get,
    Read::List,
    Read::Events,
    Read::PushConfigs,
    Read::Abandoned,
    Read::OrphanedPush,
    Read::IdleInterrupted,
];

/// Runs `read` on `db`'s agent, whose tasks are `tasks`, and checks what it finds.
async fn read(read: Read, db: &SqlTaskStore, tasks: &[&str]) {
    let store = db.scoped("agent");
    match read {
        Read::Get => {
            for id in tasks {
                let snap = store
                    .get(id, None)
                    .await
                    .expect("get")
                    .expect("the task exists");
                assert_eq!(snap.task.id, *id);
            }
        }
        Read::List => {
            let mut q = TaskQuery::default();
            q.page_size = 10;
            let page = store.list(&q).await.expect("list");
            assert_eq!(page.total_size, tasks.len());
            assert_eq!(page.tasks.len(), tasks.len());
        }
        Read::Events => {
            let events = store.events_after(tasks[0], 0).await.expect("events");
            assert!(!events.is_empty());
        }
        Read::PushConfigs => {
            let configs = store.push_configs(tasks[0]).await.expect("push configs");
            assert_eq!(configs.len(), 1);
        }
        Read::Abandoned => {
            db.abandoned(Duration::from_secs(3600), 10)
                .await
                .expect("abandoned");
        }
        Read::OrphanedPush => {
            db.orphaned_push(Duration::from_secs(3600), &["agent"], 10)
                .await
                .expect("orphaned push");
        }
        Read::IdleInterrupted => {
            db.idle_interrupted(Duration::from_secs(3600), 10)
                .await
                .expect("idle interrupted");
        }
    }
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test]
async fn statements_prepared_before_a_column_type_change_are_prepared_again() {
    let Some(url) = a2a_store_sql::test_util::postgres_schema_url().await else {
        return;
    };
    let db = SqlTaskStore::connect(&url).await.unwrap();
    let store = db.scoped("agent");
    store.append("a", 0, vec![created("a")]).await.unwrap();
    store.append("b", 0, vec![created("b")]).await.unwrap();
    let mut config = TaskPushNotificationConfig::default();
    config.id = Some("hook".to_owned());
    config.task_id = Some("a".to_owned());
    config.url = "https://example.com/hook".to_owned();
    store.put_push_config("a", &config).await.unwrap();
    // Another replica, whose writer reads the position of a task it did not write.
    let other = SqlTaskStore::connect(&url).await.unwrap().scoped("agent");
    other
        .append("b", 1, vec![status("b", TaskState::Working)])
        .await
        .unwrap();
    // A replica per read, each having prepared every read on three connections at once:
    // the first statement each runs after the change is its own read's, and its retry
    // would find two more stale connections in the pool were they not closed.
    let mut readers = Vec::new();
    for r in READS {
        let replica = SqlTaskStore::connect(&url).await.unwrap();
        for each in READS {
            let tasks = ["a", "b"];
            tokio::join!(
                read(each, &replica, &tasks),
                read(each, &replica, &tasks),
                read(each, &replica, &tasks)
            );
        }
        readers.push((r, replica));
    }

    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(CHANGE).execute(&mut admin).await.unwrap();

    // The other writer: the position it reads first, then its round.
    let updated = other
        .append("a", 1, vec![status("a", TaskState::InputRequired)])
        .await
        .expect("an update of a task another replica wrote, after the change");
    assert_eq!(updated.last().map(|r| r.seq), Some(2));
    // This writer: its round, then the position it reads back on a conflict.
    store
        .append("c", 0, vec![created("c")])
        .await
        .expect("a new task after the change");
    let stale = store
        .append("b", 1, vec![status("b", TaskState::Completed)])
        .await
        .unwrap_err();
    assert!(
        matches!(
            stale,
            a2a_runtime::store::StoreError::Conflict { actual: 2, .. }
        ),
        "{stale:?}"
    );
    for (r, replica) in &readers {
        read(*r, replica, &["a", "b", "c"]).await;
    }
    for r in READS {
        read(r, &db, &["a", "b", "c"]).await;
    }
    let a = store.get("a", None).await.unwrap().unwrap();
    assert_eq!(a.task.status.state, TaskState::InputRequired);
}
