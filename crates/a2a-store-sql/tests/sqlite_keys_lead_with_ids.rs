//! On SQLite the keys looked up by equality lead with the task's or context's id, not the
//! agent's (migration 7): a database of the schema before keeps its tasks, events, owners and
//! listings through the change, and the store's lookups read the new keys.

mod common;

use std::sync::Arc;

use a2a_runtime::store::{TaskEvent, TaskQuery, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{Task, TaskState};
use common::status;

/// A SQLite database as migrations 1 to 6 left it: what a store of before 2026-12-06 made.
const SCHEMA_6: &str = "
    CREATE TABLE a2a_schema (version BIGINT PRIMARY KEY, applied_ms BIGINT NOT NULL);
    INSERT INTO a2a_schema VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0);
    CREATE TABLE a2a_tasks (
        agent_id TEXT NOT NULL, id TEXT NOT NULL, context_id TEXT NOT NULL, state BIGINT NOT NULL,
        status_ms BIGINT NOT NULL, seq BIGINT NOT NULL, created_ms BIGINT NOT NULL,
        updated_ms BIGINT NOT NULL, owner TEXT NOT NULL, principal TEXT,
        PRIMARY KEY (agent_id, id));
    CREATE INDEX a2a_tasks_by_state ON a2a_tasks (state, updated_ms);
    CREATE INDEX a2a_tasks_legacy_owner ON a2a_tasks (principal) WHERE principal LIKE 'legacy:%';
    CREATE INDEX a2a_tasks_by_status ON a2a_tasks (agent_id, status_ms, id);
    CREATE INDEX a2a_tasks_by_context ON a2a_tasks (agent_id, context_id, status_ms, id);
    CREATE INDEX a2a_tasks_by_principal ON a2a_tasks (agent_id, principal, status_ms, id)
        WHERE principal IS NOT NULL;
    CREATE TABLE a2a_instances (
        instance_id TEXT PRIMARY KEY, started_ms BIGINT NOT NULL, heartbeat_ms BIGINT NOT NULL);
    CREATE TABLE a2a_task_events (
        agent_id TEXT NOT NULL, task_id TEXT NOT NULL, seq BIGINT NOT NULL, state BIGINT NOT NULL,
        event TEXT NOT NULL, PRIMARY KEY (agent_id, task_id, seq));
    CREATE TABLE a2a_push_configs (
        agent_id TEXT NOT NULL, task_id TEXT NOT NULL, config_id TEXT NOT NULL,
        config TEXT NOT NULL, position BIGINT NOT NULL DEFAULT 0,
        delivered_seq BIGINT NOT NULL DEFAULT 0, delivery_owner TEXT NOT NULL DEFAULT '',
        claimed_ms BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (agent_id, task_id, config_id));";

const COLUMNS_TASKS: &str =
    "agent_id, id, context_id, state, status_ms, seq, created_ms, updated_ms, owner, principal";
const COLUMNS_EVENTS: &str = "agent_id, task_id, seq, state, event";

fn created(id: &str, context: &str) -> TaskEvent {
    TaskEvent::Created(Task::new(id, context, TaskState::Submitted))
}

/// Tasks of two agents in two contexts, one finished, one owned.
async fn fill(db: &SqlTaskStore) {
    for agent in ["agent", "other"] {
        let store = db.scoped(agent);
        store
            .append("t1", 0, vec![created("t1", "c1")])
            .await
            .unwrap();
        store
            .append(
                "t1",
                1,
                vec![
                    status("t1", TaskState::Working),
                    status("t1", TaskState::Completed),
                ],
            )
            .await
            .unwrap();
        store
            .append(
                "t2",
                0,
                vec![
                    created("t2", "c1"),
                    TaskEvent::Owner(Arc::from("token:alice")),
                ],
            )
            .await
            .unwrap();
        store
            .append("t3", 0, vec![created("t3", "c2")])
            .await
            .unwrap();
    }
}

/// What `store` answers about the tasks of [`fill`], as text to compare.
async fn reads(store: &dyn TaskStore) -> Vec<String> {
    let mut out = Vec::new();
    for id in ["t1", "t2", "t3"] {
        let snap = store.get(id, None).await.unwrap().expect("the task exists");
        out.push(serde_json::to_string(&snap.task).unwrap());
        out.push(format!("{:?}", snap.owner));
        for record in store.events_after(id, 0).await.unwrap() {
            out.push(format!(
                "{} {:?} {}",
                record.seq,
                record.state,
                a2a_runtime::store::codec::encode(&record.event).unwrap()
            ));
        }
    }
    let mut query = TaskQuery::default();
    query.page_size = 10;
    query.context_id = Some("c1".into());
    let page = store.list(&query).await.unwrap();
    out.push(format!("c1: {:?}", ids(&page.tasks)));
    query.context_id = None;
    query.owner = Some(Arc::from("token:alice"));
    let page = store.list(&query).await.unwrap();
    out.push(format!("alice: {:?}", ids(&page.tasks)));
    out
}

fn ids(tasks: &[Task]) -> Vec<&str> {
    tasks.iter().map(|t| t.id.as_str()).collect()
}

fn path_of(url: &str) -> &str {
    url.trim_start_matches("sqlite:")
}

#[tokio::test]
async fn a_database_of_the_schema_before_keeps_its_tasks_and_reads_the_new_keys() {
    // The tasks as a store of today writes them.
    let today_url = a2a_store_sql::test_util::sqlite_url();
    let today = SqlTaskStore::connect(&today_url).await.unwrap();
    fill(&today).await;

    // The same rows in a database of schema 6.
    let old_url = a2a_store_sql::test_util::sqlite_url();
    {
        let db = rusqlite::Connection::open(path_of(&old_url)).unwrap();
        db.execute_batch(SCHEMA_6).unwrap();
        db.execute("ATTACH DATABASE ?1 AS today", [path_of(&today_url)])
            .unwrap();
        let copied = db
            .execute(
                &format!(
                    "INSERT INTO a2a_tasks ({COLUMNS_TASKS}) SELECT {COLUMNS_TASKS} FROM today.a2a_tasks"
                ),
                [],
            )
            .unwrap();
        assert_eq!(copied, 6);
        let copied = db
            .execute(
                &format!(
                    "INSERT INTO a2a_task_events ({COLUMNS_EVENTS}) SELECT {COLUMNS_EVENTS} FROM today.a2a_task_events"
                ),
                [],
            )
            .unwrap();
        assert!(copied >= 10, "{copied} events");
    }

    // Opened by the store, it is migrated, and reads as the database it was copied from.
    let migrated = SqlTaskStore::connect(&old_url).await.unwrap();
    for agent in ["agent", "other"] {
        let expected = reads(&today.scoped(agent)).await;
        let found = reads(&migrated.scoped(agent)).await;
        assert_eq!(found, expected, "{agent}");
        assert!(
            expected
                .iter()
                .any(|r| r == "c1: [\"t2\", \"t1\"]" || r == "c1: [\"t1\", \"t2\"]")
        );
        assert!(
            expected.iter().any(|r| r == "alice: [\"t2\"]"),
            "{expected:?}"
        );
    }

    let db = rusqlite::Connection::open(path_of(&old_url)).unwrap();
    let version: i64 = db
        .query_row("SELECT MAX(version) FROM a2a_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 7);
    let sql = |name: &str| -> String {
        db.query_row(
            "SELECT sql FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    assert!(sql("a2a_tasks").contains("PRIMARY KEY (id, agent_id)"));
    assert!(sql("a2a_task_events").contains("PRIMARY KEY (task_id, agent_id, seq)"));
    assert!(sql("a2a_tasks_by_context").contains("(context_id, agent_id, status_ms, id)"));
    assert!(sql("a2a_tasks_by_status").contains("(agent_id, status_ms, id)"));
    assert!(sql("a2a_tasks_by_state").contains("(state, updated_ms)"));
    assert!(sql("a2a_tasks_by_principal").ends_with("WHERE principal IS NOT NULL"));
    assert!(sql("a2a_tasks_legacy_owner").ends_with("WHERE principal LIKE 'legacy:%'"));
    let copies: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%\\_7%' ESCAPE '\\'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(copies, 0, "a copy's table is left");

    // The writer's lookup of a task and the reader's of its events use the keys, unsorted.
    let args = ["agent", "t1", "0"];
    let lookup = common::query_plan(
        &db,
        "SELECT seq FROM a2a_tasks WHERE agent_id = ?1 AND id = ?2",
        &args,
    );
    assert!(lookup.contains("(id=? AND agent_id=?)"), "{lookup}");
    let log = common::query_plan(
        &db,
        "SELECT seq, state, event FROM a2a_task_events WHERE agent_id = ?1 AND task_id = ?2 AND seq > ?3 ORDER BY seq",
        &args,
    );
    assert!(
        log.contains("(task_id=? AND agent_id=? AND seq>?)") && !log.contains("TEMP B-TREE"),
        "{log}"
    );
    drop(db);

    // It takes writes: a task moved on, and a new one.
    let store = migrated.scoped("agent");
    store
        .append("t3", 1, vec![status("t3", TaskState::Working)])
        .await
        .unwrap();
    store
        .append("t4", 0, vec![created("t4", "c2")])
        .await
        .unwrap();
    let t3 = store.get("t3", None).await.unwrap().unwrap();
    assert_eq!(t3.task.status.state, TaskState::Working);
    let conflict = store
        .append("t3", 1, vec![status("t3", TaskState::Completed)])
        .await;
    assert!(conflict.is_err(), "a stale append was taken: {conflict:?}");
}
