//! Stores for tests: a new SQLite file, or a new PostgreSQL schema, per test.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use a2a_server::store::TaskStore;
use a2a_store_sql::SqlTaskStore;

/// A store on a new SQLite file in the temporary directory.
pub async fn sqlite() -> SqlTaskStore {
    let path = std::env::temp_dir().join(format!("a2a-store-test-{}.db", uuid::Uuid::new_v4()));
    SqlTaskStore::connect(&format!("sqlite:{}", path.display()))
        .await
        .expect("open SQLite store")
}

/// The PostgreSQL URL of the test database, or `None` (printed as skipped; under `CI=true`
/// a missing database fails the test instead).
pub fn postgres_url() -> Option<String> {
    match std::env::var("A2A_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("A2A_TEST_POSTGRES_URL is not set, and CI=true: .ci/run sets it")
        }
        _ => {
            eprintln!("SKIPPED: A2A_TEST_POSTGRES_URL is not set (.ci/run sets it)");
            None
        }
    }
}

/// A store in a new schema of the test database, so tests run in parallel without sharing
/// tables.
pub async fn postgres() -> Option<SqlTaskStore> {
    let url = postgres_schema_url().await?;
    Some(
        SqlTaskStore::connect(&url)
            .await
            .expect("open PostgreSQL store"),
    )
}

/// The URL of a new, empty schema of the test database.
pub async fn postgres_schema_url() -> Option<String> {
    let url = postgres_url()?;
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut conn)
            .await
            .expect("create schema");
    }
    let sep = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{sep}options=-c%20search_path%3D{schema}"))
}

/// As a trait object.
pub fn dyn_store(s: SqlTaskStore) -> Arc<dyn TaskStore> {
    Arc::new(s)
}
