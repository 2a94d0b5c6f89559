//! Databases for tests (feature `test-util`): a new SQLite file or a new PostgreSQL schema per
//! test, so tests run in parallel without sharing tables. Tests do not clean up after
//! themselves (a failing one leaves its data to look at); instead, each new database removes
//! those left by tests that started more than an hour ago.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::SqlTaskStore;

/// Test databases older than this are removed.
const LEFT_OVER: Duration = Duration::from_secs(3600);

/// The comment on every schema these helpers create: only schemas that carry it are ever
/// dropped (the database given may hold schemas of others with names like ours).
const SCHEMA_MARK: &str = "a2a-rs test schema";

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The URL of a new SQLite file in the temporary directory.
pub fn sqlite_url() -> String {
    let dir = std::env::temp_dir();
    remove_old_sqlite_files(&dir);
    let path = dir.join(format!("a2a-store-test-{}.db", uuid::Uuid::new_v4()));
    format!("sqlite:{}", path.display())
}

fn remove_old_sqlite_files(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > LEFT_OVER);
        if old
            && entry
                .file_name()
                .to_string_lossy()
                .starts_with("a2a-store-test-")
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
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
    // `t_{unix seconds}_{random}`: the age of a schema is in its name.
    let schema = format!("t_{}_{}", now_secs(), uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&url)
        .await
        .expect("connect to A2A_TEST_POSTGRES_URL");
    drop_old_schemas(&mut conn).await;
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut conn)
        .await
        .expect("create a test schema");
    // The mark by which later runs know the schema as theirs to drop.
    sqlx::query(&format!("COMMENT ON SCHEMA {schema} IS '{SCHEMA_MARK}'"))
        .execute(&mut conn)
        .await
        .expect("mark the test schema");
    let sep = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{sep}options=-c%20search_path%3D{schema}"))
}

/// The URL of a new schema of the test database holding what `script` makes, with every
/// `__SCHEMA__` in it naming that schema (a `pg_dump` of another schema, edited so); `None`:
/// see [`postgres_url`].
pub async fn postgres_schema_from(script: &str) -> Option<String> {
    use sqlx::Connection;
    let url = postgres_schema_url().await?;
    let schema = url
        .rsplit("search_path%3D")
        .next()
        .expect("a schema in the URL")
        .to_owned();
    let mut conn = sqlx::PgConnection::connect(&url)
        .await
        .expect("connect to A2A_TEST_POSTGRES_URL");
    sqlx::raw_sql(&script.replace("__SCHEMA__", &schema))
        .execute(&mut conn)
        .await
        .expect("load the script");
    Some(url)
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

/// Drops the test schemas these helpers made more than [`LEFT_OVER`] ago (marked with
/// [`SCHEMA_MARK`], named `t_{unix seconds}_{random}`). Failures are ignored: another test
/// may be dropping the same schema.
async fn drop_old_schemas(conn: &mut sqlx::PgConnection) {
    let Ok(names) = sqlx::query_scalar::<_, String>(
        "SELECT nspname::text FROM pg_namespace
         WHERE nspname LIKE 't\\_%' AND obj_description(oid, 'pg_namespace') = $1",
    )
    .bind(SCHEMA_MARK)
    .fetch_all(&mut *conn)
    .await
    else {
        return;
    };
    let cutoff = now_secs().saturating_sub(LEFT_OVER.as_secs());
    for name in names {
        let made = name
            .split('_')
            .nth(1)
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|_| name.split('_').count() == 3);
        if made.is_some_and(|t| t < cutoff) {
            let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE"))
                .execute(&mut *conn)
                .await;
        }
    }
}
