//! Owners stored before principals were qualified by their source.
//!
//! Up to schema version 3 a task's owner was a bare name (`alice`), whichever authenticator
//! vouched for it, so a JWT subject and a configured token of the same name met. Migration 4
//! marks those owners `legacy:alice`, which no caller matches; the host then maps each to the
//! principal its configuration vouches for (`token:alice`, `jwt:{iss}:alice`, …) with
//! [`SqlTaskStore::qualify_legacy_owners`], in the owner event and the `principal` column
//! alike. Owners it cannot map stay legacy, seen by no one, until a configuration maps them.

use a2a_runtime::store::{StoreError, TaskEvent, codec};
use sqlx::Row;

use crate::schema::LEGACY_OWNER;
use crate::{SqlTaskStore, backend};

/// What [`SqlTaskStore::qualify_legacy_owners`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LegacyOwners {
    /// Tasks whose owner now names its source.
    pub qualified: u64,
    /// Tasks whose owner the mapping did not know, still seen by no one.
    pub left: u64,
}

/// Tasks qualified per transaction.
const CHUNK: usize = 500;

impl SqlTaskStore {
    /// Qualifies the owners of tasks (of every agent) stored by a version that did not
    /// qualify principals: `qualify` gets each bare name and answers its qualified id
    /// (`Principal::id`), or `None` to leave it. Idempotent, and cheap when there is nothing
    /// left to do (one query of a partial index that holds only such tasks).
    pub async fn qualify_legacy_owners(
        &self,
        qualify: &(dyn Fn(&str) -> Option<String> + Send + Sync),
    ) -> Result<LegacyOwners, StoreError> {
        // The partial index `a2a_tasks_legacy_owner` holds exactly these rows.
        let rows = self
            .rows(|| {
                sqlx::query(
                    "SELECT agent_id, id, principal FROM a2a_tasks WHERE principal LIKE 'legacy:%'",
                )
            })
            .await
            .map_err(backend)?;
        let mut done = LegacyOwners::default();
        let mut mapped = Vec::new();
        for r in &rows {
            let agent: String = r.try_get("agent_id").map_err(backend)?;
            let id: String = r.try_get("id").map_err(backend)?;
            let old: String = r.try_get("principal").map_err(backend)?;
            let name = old.strip_prefix(LEGACY_OWNER).unwrap_or(&old);
            match qualify(name) {
                Some(new) => mapped.push((agent, id, old, new)),
                None => done.left += 1,
            }
        }
        for chunk in mapped.chunks(CHUNK) {
            done.qualified += self.requalify(chunk).await?;
        }
        if done.qualified + done.left > 0 {
            tracing::info!(
                qualified = done.qualified,
                left = done.left,
                "task owners stored before principals named their source"
            );
        }
        if done.left > 0 {
            tracing::warn!(
                tasks = done.left,
                "tasks owned by names no configured authenticator vouches for are seen by no one (configure the credential, or the JWT issuer, that named them)"
            );
        }
        Ok(done)
    }

    /// Rewrites the owner of each `(agent, task, old, new)` in one transaction; how many
    /// still had `old` (another process may have done it first).
    async fn requalify(
        &self,
        tasks: &[(String, String, String, String)],
    ) -> Result<u64, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(backend)?;
        sqlx::query(self.dialect.begin_write())
            .execute(&mut *conn)
            .await
            .map_err(backend)?;
        let written = async {
            let mut n = 0;
            for (agent, id, old, new) in tasks {
                let event = codec::encode(&TaskEvent::Owner(new.as_str().into()))
                    .map_err(StoreError::Serialization)?;
                let changed = sqlx::query(
                    "UPDATE a2a_tasks SET principal = $1 WHERE agent_id = $2 AND id = $3 AND principal = $4",
                )
                .bind(new)
                .bind(agent)
                .bind(id)
                .bind(old)
                .execute(&mut *conn)
                .await
                .map_err(backend)?
                .rows_affected();
                if changed == 0 {
                    continue;
                }
                sqlx::query(
                    "UPDATE a2a_task_events SET event = $1 WHERE agent_id = $2 AND task_id = $3 AND seq = 2",
                )
                .bind(event)
                .bind(agent)
                .bind(id)
                .execute(&mut *conn)
                .await
                .map_err(backend)?;
                n += 1;
            }
            Ok::<_, StoreError>(n)
        }
        .await;
        let end = if written.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        let ended = sqlx::query(end).execute(&mut *conn).await;
        let n = written?;
        ended.map_err(backend)?;
        Ok(n)
    }
}
