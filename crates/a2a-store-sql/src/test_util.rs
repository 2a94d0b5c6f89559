//! Databases for tests (feature `test-util`): a new SQLite file or a new PostgreSQL schema per
//! test, so tests run in parallel without sharing tables.

use crate::SqlTaskStore;

/// The URL of a new SQLite file in the temporary directory.
pub fn sqlite_url() -> String {
    let path = std::env::temp_dir().join(format!("a2a-store-test-{}.db", uuid::Uuid::new_v4()));
    format!("sqlite:{}", path.display())
}

/// A store on a new SQLite file.
pub async fn sqlite() -> SqlTaskStore {
    SqlTaskStore::connect(&sqlite_url())
        .await
        .expect("open SQLite store")
}

/// `A2A_TEST_POSTGRES_URL`, or `None`: printed as skipped, except under `CI=true`, where a
/// missing database fails the test (`.ci/run` sets the variable).
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

/// The URL of a new, empty schema of the test database (`None`: see [`postgres_url`]).
pub async fn postgres_schema_url() -> Option<String> {
    use sqlx::Connection;
    let url = postgres_url()?;
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&url)
        .await
        .expect("connect to A2A_TEST_POSTGRES_URL");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut conn)
        .await
        .expect("create a test schema");
    let sep = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{sep}options=-c%20search_path%3D{schema}"))
}

/// A store in a new schema of the test database.
pub async fn postgres() -> Option<SqlTaskStore> {
    let url = postgres_schema_url().await?;
    Some(
        SqlTaskStore::connect(&url)
            .await
            .expect("open PostgreSQL store"),
    )
}
