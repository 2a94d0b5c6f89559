//! Statements prepared before a schema change. Connections keep their statements prepared
//! (sqlx caches them per connection); when a migration changes the type of a column a
//! statement returns (its collation, say), PostgreSQL refuses that statement from then on
//! with `cached plan must not change result type` (SQLSTATE `0A000`), on every connection
//! that prepared it, until the statement is prepared again. That is what a rolling upgrade
//! does to the replicas still running: a newer one migrates the schema under them.
//!
//! The refusal comes before the statement runs (PostgreSQL checks a cached plan when it is
//! executed, before it reads or writes anything), so the statement can be run again as is.
//! The writers clear their connection's statements and run it again (`writer/postgres.rs`);
//! the readers run it again on a connection opened after the refusal: [`StalePlans`]
//! remembers when one was last seen, and the pool closes, as they are acquired, the
//! connections opened before that.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Whether PostgreSQL refused `e`'s statement as prepared before a change of its result
/// type.
pub(crate) fn stale_plan(e: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = e else {
        return false;
    };
    db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
        .is_some_and(|pg| {
            // 0A000 is `feature_not_supported`, which other refusals share; the function that
            // raised it tells them apart (the message may be in the server's language).
            pg.code() == "0A000"
                && (pg.routine() == Some("RevalidateCachedQuery")
                    || pg.message().starts_with("cached plan must not change"))
        })
}

/// When a reader's statement was last refused as stale: connections opened before that are
/// not used again.
#[derive(Debug)]
pub(crate) struct StalePlans {
    /// What `seen_at` counts from.
    origin: Instant,
    /// Microseconds from `origin` to the last refusal, plus one; 0 while none was seen.
    seen_at: AtomicU64,
}

impl Default for StalePlans {
    fn default() -> Self {
        Self {
            origin: Instant::now(),
            seen_at: AtomicU64::new(0),
        }
    }
}

impl StalePlans {
    /// Records the refusal if `e` is one (for a statement that is not run again here: the
    /// next run of its caller gets a connection opened since).
    pub(crate) fn note(&self, e: &sqlx::Error) {
        if stale_plan(e) {
            self.seen();
        }
    }

    /// Records that a statement was refused as stale now.
    fn seen(&self) {
        let at = u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX - 1) + 1;
        self.seen_at.fetch_max(at, Ordering::Relaxed);
    }

    /// Whether a connection opened `age` ago was opened before the last refusal (and may
    /// hold stale statements).
    pub(crate) fn opened_before_refusal(&self, age: Duration) -> bool {
        let seen_at = self.seen_at.load(Ordering::Relaxed);
        if seen_at == 0 {
            return false;
        }
        let since_refusal = self
            .origin
            .elapsed()
            .saturating_sub(Duration::from_micros(seen_at - 1));
        age >= since_refusal
    }

    /// Runs `statement`, and once more if its connection's prepared form was stale (on a
    /// connection opened since: the pool drops the older ones). `statement` must build the
    /// query anew each time it is called.
    pub(crate) async fn retrying<T, F>(&self, statement: impl Fn() -> F) -> Result<T, sqlx::Error>
    where
        F: Future<Output = Result<T, sqlx::Error>>,
    {
        match statement().await {
            Err(e) if stale_plan(&e) => {
                tracing::info!("a statement prepared before a schema change is prepared again");
                self.seen();
                statement().await
            }
            done => done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_connections_opened_before_the_last_refusal_are_stale() {
        let plans = StalePlans::default();
        assert!(!plans.opened_before_refusal(Duration::from_secs(3600)));
        std::thread::sleep(Duration::from_millis(20));
        plans.seen();
        // Opened 10 s before the refusal (measured right after it).
        assert!(plans.opened_before_refusal(Duration::from_secs(10)));
        // 30 ms later: a connection opened 10 ms ago came after it.
        std::thread::sleep(Duration::from_millis(30));
        assert!(!plans.opened_before_refusal(Duration::from_millis(10)));
        assert!(plans.opened_before_refusal(Duration::from_secs(10)));
    }
}
