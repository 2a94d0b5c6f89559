//! On PostgreSQL, identifiers compare as bytes (collation `C`), whatever the database's own
//! collation: key comparisons do not go through a locale (the writer's backend spent 50.5
//! against 45.6 µs per blocking send under an ICU `en-US` database, measured once), and
//! listings order ties the way SQLite and the memory store do.
//!
//! The collation check fails without migration 6 on any database. A listing tells the two
//! apart only on a database whose own collation is not byte order, so the listing is also
//! made in a database of its own created with the ICU locale `en-US` (there, without the
//! migration, ties list as `Z B b a _x`).

use std::sync::Arc;

use a2a_runtime::store::{InMemoryTaskStore, TaskEvent, TaskQuery, TaskStore};
use a2a_types::{Task, TaskState};

/// Every column that holds an identifier or is compared as one.
const KEY_COLUMNS: [(&str, &str); 12] = [
    ("a2a_tasks", "agent_id"),
    ("a2a_tasks", "id"),
    ("a2a_tasks", "context_id"),
    ("a2a_tasks", "owner"),
    ("a2a_tasks", "principal"),
    ("a2a_task_events", "agent_id"),
    ("a2a_task_events", "task_id"),
    ("a2a_push_configs", "agent_id"),
    ("a2a_push_configs", "task_id"),
    ("a2a_push_configs", "config_id"),
    ("a2a_push_configs", "delivery_owner"),
    ("a2a_instances", "instance_id"),
];

/// Ids whose byte order differs from a natural-language order (case, punctuation).
const IDS: [&str; 5] = ["a", "B", "_x", "Z", "b"];

/// The ids of a listing of `IDS`, all stamped with the same status time: the order of the
/// ties is the order of the ids.
async fn listed(store: &dyn TaskStore) -> Vec<String> {
    let at = chrono::Utc::now();
    for id in IDS {
        let mut task = Task::new(id, "c", TaskState::Submitted);
        task.status.timestamp = Some(at);
        store
            .append(id, 0, vec![TaskEvent::Created(task)])
            .await
            .unwrap();
    }
    let mut query = TaskQuery::default();
    query.page_size = 2;
    let mut ids = Vec::new();
    // Page by page, so that the page token's comparison is in it too.
    loop {
        let page = store.list(&query).await.unwrap();
        ids.extend(page.tasks.into_iter().map(|t| t.id));
        if page.next_page_token.is_empty() {
            return ids;
        }
        query.page_token = Some(page.next_page_token);
    }
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test]
async fn identifiers_have_collation_c_and_list_in_byte_order() {
    let Some(url) = a2a_store_sql::test_util::postgres_schema_url().await else {
        return;
    };
    let store = a2a_store_sql::SqlTaskStore::connect(&url).await.unwrap();

    let mut conn = {
        use sqlx::Connection;
        sqlx::PgConnection::connect(&url).await.unwrap()
    };
    for (table, column) in KEY_COLUMNS {
        let collation: Option<String> = sqlx::query_scalar(
            "SELECT collation_name::text FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2",
        )
        .bind(table)
        .bind(column)
        .fetch_one(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{table}.{column}: {e}"));
        assert_eq!(collation.as_deref(), Some("C"), "{table}.{column}");
    }

    let mut expected: Vec<String> = IDS.iter().map(|s| s.to_string()).collect();
    // Newest first, ties by id, descending: as bytes.
    expected.sort_unstable_by(|a, b| b.as_bytes().cmp(a.as_bytes()));
    let memory: Arc<dyn TaskStore> = Arc::new(InMemoryTaskStore::default());
    assert_eq!(listed(&*memory).await, expected, "the memory store");
    assert_eq!(listed(&store.scoped("agent")).await, expected, "PostgreSQL");

    // The same in a database whose own collation is a natural-language one.
    let base = a2a_store_sql::test_util::postgres_url().expect("checked above");
    let database = format!("a2a_test_icu_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(&format!(
        "CREATE DATABASE {database} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'"
    ))
    .execute(&mut conn)
    .await
    .expect("create a database with the ICU collation en-US (PostgreSQL 15 or later, with ICU)");
    let icu_url = with_database(&base, &database);
    let icu_store = a2a_store_sql::SqlTaskStore::connect(&icu_url).await;
    let icu_listed = match &icu_store {
        Ok(s) => Some(listed(&s.scoped("agent")).await),
        Err(_) => None,
    };
    // Dropped before asserting, so that a failure leaves no database behind.
    drop(icu_store);
    sqlx::query(&format!("DROP DATABASE {database} WITH (FORCE)"))
        .execute(&mut conn)
        .await
        .expect("drop the ICU database");
    let icu_listed = icu_listed.expect("open a store in the ICU database");
    assert_eq!(icu_listed, expected, "PostgreSQL, ICU en-US database");
}

/// `url` naming `database` instead of its own (its query, if any, is dropped: the test
/// database's search path does not apply to another database).
fn with_database(url: &str, database: &str) -> String {
    let url = url.split('?').next().unwrap_or(url);
    let server = url.rsplit_once('/').map_or(url, |(server, _)| server);
    format!("{server}/{database}")
}
