//! Push notifications: each webhook registered for a task gets the task's events, in order,
//! from a worker of its own that follows the task's log the way a stream does. Publishing
//! never waits for a webhook: a slow or dead receiver holds only its own worker, which falls
//! back to reading the log when it lags behind the bus.
//!
//! Delivery is at least once: an event is posted until the receiver answers 2xx, retrying
//! with exponential back-off, and given up (logged and counted) after
//! [`PushSettings::give_up_after`]. A 4xx answer other than 408 and 429 is final for that
//! event. Each POST carries one `StreamResponse` (HTTP+JSON shapes, `application/a2a+json`),
//! `Authorization: {scheme} {credentials}` when the config has authentication, and
//! `X-A2A-Notification-Token` when it has a token, and with a [`PushSigner`] a signature in
//! `X-A2A-Notification-Signature` (see [`a2a_types::NOTIFICATION_SIGNATURE_HEADER`]).

pub mod guard;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_types::{A2aError, TaskPushNotificationConfig};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

pub use guard::PushPolicy;

use a2a_runtime::store::{PUSH_DELIVERY_DONE, TaskStore};
use a2a_runtime::{StreamPayload, TaskEventStream};

/// How webhooks are called.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PushSettings {
    /// Where webhooks may point.
    pub policy: PushPolicy,
    /// Time for one POST (default 10 s).
    pub timeout: Duration,
    /// First retry delay, doubled after each failure, each wait drawn between half of it and
    /// all of it (jitter), unless the receiver's `Retry-After` asks for another (default
    /// 500 ms)...
    pub initial_backoff: Duration,
    /// ...up to this (default 30 s).
    pub max_backoff: Duration,
    /// An event still undelivered this long after its first attempt is given up (default
    /// 15 minutes).
    pub give_up_after: Duration,
    /// Signs each notification, when set.
    pub signer: Option<PushSigner>,
}

/// How often a worker records how far it has delivered.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long a notification's signature is valid after it is made.
const SIGNATURE_LIFETIME_SECS: u64 = 300;

/// The key that signs push notifications, and where its JWK Set is published.
#[derive(Debug, Clone)]
pub struct PushSigner {
    key: Arc<crate::card_signing::CardSigner>,
    jku: Option<String>,
}

impl PushSigner {
    /// Signs with `key`; `jku`, when known, is the public URL of the JWK Set with its public
    /// half (the server's [`JWKS_PATH`](crate::card_signing::JWKS_PATH)).
    pub fn new(key: Arc<crate::card_signing::CardSigner>, jku: Option<String>) -> Self {
        Self { key, jku }
    }

    /// The signature header's value for `body` posted to `url` about `task_id`: a JWT with
    /// the body's SHA-256, the webhook as audience, a fresh `jti` and a five-minute window.
    fn sign(&self, task_id: &str, url: &str, body_sha256: &str) -> Option<String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let claims = serde_json::json!({
            "iat": now,
            "exp": now + SIGNATURE_LIFETIME_SECS,
            "jti": a2a_types::new_id(),
            "aud": url,
            "task_id": task_id,
            "request_body_sha256": body_sha256,
        });
        match self.key.sign_jwt(&claims, self.jku.as_deref()) {
            Ok(jwt) => Some(jwt),
            Err(e) => {
                tracing::warn!(task_id, error = %e, "push: cannot sign a notification; sending it unsigned");
                None
            }
        }
    }
}

impl PartialEq for PushSigner {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.key, &other.key) && self.jku == other.jku
    }
}

impl Eq for PushSigner {}

impl Default for PushSettings {
    fn default() -> Self {
        Self {
            policy: PushPolicy::default(),
            timeout: Duration::from_secs(10),
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            give_up_after: Duration::from_secs(15 * 60),
            signer: None,
        }
    }
}

/// Calls the webhooks of one server's tasks. Cheap to clone; clones are equal.
#[derive(Debug, Clone)]
pub struct PushDelivery {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    settings: PushSettings,
    client: reqwest::Client,
    /// The running workers, by (task, config id), with a number telling a worker from the
    /// one that replaced it: deleting a config stops its worker.
    workers: Mutex<HashMap<(String, String), (u64, CancellationToken)>>,
    next_worker: std::sync::atomic::AtomicU64,
}

impl PartialEq for PushDelivery {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for PushDelivery {}

impl PushDelivery {
    /// A delivery service with `settings`.
    pub fn new(settings: PushSettings) -> Result<Self, A2aError> {
        let client = guard::guarded_client(&settings.policy, Some(settings.timeout))?;
        Ok(Self {
            inner: Arc::new(Inner {
                settings,
                client,
                workers: Mutex::new(HashMap::new()),
                next_worker: std::sync::atomic::AtomicU64::new(0),
            }),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &PushSettings {
        &self.inner.settings
    }

    /// Checks a config's URL against the policy.
    pub(crate) fn check(&self, config: &TaskPushNotificationConfig) -> Result<(), A2aError> {
        self.inner
            .settings
            .policy
            .check_url(&config.url)
            .map(|_| ())
    }

    /// Delivers the events of `events` (those after `from`) to `config`'s webhook until the
    /// task ends or the config is deleted, recording progress in `store` (see
    /// [`TaskStore::push_delivered`]). `on_first` runs once the task exists (the worker of a
    /// config given with the message that creates the task stores it then).
    pub(crate) fn follow(
        &self,
        task_id: &str,
        config: TaskPushNotificationConfig,
        events: TaskEventStream,
        from: (Arc<dyn TaskStore>, u64),
        on_first: Option<futures::future::BoxFuture<'static, ()>>,
    ) {
        let key = (task_id.to_owned(), config.id.clone().unwrap_or_default());
        let stop = CancellationToken::new();
        let number = self
            .inner
            .next_worker
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some((_, old)) = self.lock().insert(key.clone(), (number, stop.clone())) {
            old.cancel();
        }
        let this = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = this.run(&key.0, &config, events, from, on_first) => {}
            }
            let mut workers = this.lock();
            if workers.get(&key).is_some_and(|(n, _)| *n == number) {
                workers.remove(&key);
            }
        });
    }

    /// Stops the worker of config `id` of `task_id`, if one runs.
    pub(crate) fn stop(&self, task_id: &str, id: &str) {
        if let Some((_, token)) = self.lock().remove(&(task_id.to_owned(), id.to_owned())) {
            token.cancel();
        }
    }

    #[allow(clippy::type_complexity)]
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(String, String), (u64, CancellationToken)>> {
        self.inner.workers.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn run(
        &self,
        task_id: &str,
        config: &TaskPushNotificationConfig,
        events: TaskEventStream,
        (store, from): (Arc<dyn TaskStore>, u64),
        mut on_first: Option<futures::future::BoxFuture<'static, ()>>,
    ) {
        let id = config.id.as_deref().unwrap_or_default();
        let progress = |seq: u64| {
            let store = store.clone();
            async move {
                if let Err(e) = store.push_delivered(task_id, id, seq).await {
                    tracing::warn!(task_id, error = %e, "push: cannot record delivery progress");
                }
            }
        };
        if from > 0 {
            progress(from).await;
        }
        // Progress is recorded at most this often (a process that stops resends at most
        // that much), and when the task's last event is delivered.
        let mut recorded = tokio::time::Instant::now();
        let mut events = std::pin::pin!(events.into_stream());
        while let Some(item) = events.next().await {
            let item = match item {
                Ok(item) => item,
                Err(e) => {
                    tracing::warn!(task_id, error = %e, "push: cannot read the task's events");
                    return;
                }
            };
            // A direct reply: there is no task to report on.
            if matches!(item.payload, StreamPayload::Reply(_)) {
                return;
            }
            if let Some(first) = on_first.take() {
                first.await;
            }
            let body = match a2a_json::to_vec(&item.response()) {
                Ok(b) => bytes::Bytes::from(b),
                Err(_) => continue,
            };
            self.deliver(task_id, item.seq, config, body).await;
            if recorded.elapsed() >= PROGRESS_EVERY {
                progress(item.seq).await;
                recorded = tokio::time::Instant::now();
            }
        }
        progress(PUSH_DELIVERY_DONE).await;
    }

    /// Posts one event until it is accepted, refused for good, or given up.
    async fn deliver(
        &self,
        task_id: &str,
        seq: u64,
        config: &TaskPushNotificationConfig,
        body: bytes::Bytes,
    ) {
        let settings = &self.inner.settings;
        let started = tokio::time::Instant::now();
        let mut backoff = settings.initial_backoff;
        let mut attempt = 0u32;
        let body_sha256 = settings
            .signer
            .as_ref()
            .map(|_| a2a_types::notification_body_digest(&body));
        loop {
            attempt += 1;
            let mut req = self
                .inner
                .client
                .post(&config.url)
                .header(reqwest::header::CONTENT_TYPE, "application/a2a+json")
                .body(body.clone());
            if let Some(auth) = &config.authentication {
                let value = match &auth.credentials {
                    Some(c) => format!("{} {c}", auth.scheme),
                    None => auth.scheme.clone(),
                };
                req = req.header(reqwest::header::AUTHORIZATION, value);
            }
            if let Some(token) = &config.token {
                req = req.header(a2a_types::NOTIFICATION_TOKEN_HEADER, token);
            }
            // Signed afresh for each attempt: a retry hours later still carries a valid
            // window.
            if let (Some(signer), Some(hash)) = (&settings.signer, &body_sha256)
                && let Some(signature) = signer.sign(task_id, &config.url, hash)
            {
                req = req.header(a2a_types::NOTIFICATION_SIGNATURE_HEADER, signature);
            }
            let mut retry_after = None;
            let failure = match self.send_checked(req, &config.url).await {
                Ok((status, _)) if status.is_success() => {
                    crate::metrics::global().push_delivery("delivered");
                    tracing::debug!(task_id, seq, attempt, "push delivered");
                    return;
                }
                Ok((status, _))
                    if status.is_client_error()
                        && status != reqwest::StatusCode::REQUEST_TIMEOUT
                        && status != reqwest::StatusCode::TOO_MANY_REQUESTS =>
                {
                    crate::metrics::global().push_delivery("rejected");
                    tracing::warn!(task_id, seq, %status, url = %config.url,
                        "push: the receiver refused the notification; not retried");
                    return;
                }
                Ok((status, after)) => {
                    retry_after = after;
                    format!("status {status}")
                }
                Err(e) => e,
            };
            let delay = retry_delay(backoff, retry_after, fastrand::f64());
            if started.elapsed() + delay > settings.give_up_after {
                crate::metrics::global().push_delivery("gave_up");
                tracing::warn!(task_id, seq, attempts = attempt, url = %config.url, error = %failure,
                    "push: giving up on a notification");
                return;
            }
            crate::metrics::global().push_delivery("retried");
            tracing::debug!(task_id, seq, attempt, error = %failure, retry_in = ?delay,
                "push attempt failed");
            tokio::time::sleep(delay).await;
            backoff = (backoff * 2).min(settings.max_backoff);
        }
    }

    /// Sends `req`: the answer's status and the wait its `Retry-After` asks for, if any. A
    /// URL with a literal inner address is refused here (a name is checked by the resolver).
    async fn send_checked(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<(reqwest::StatusCode, Option<Duration>), String> {
        self.inner
            .settings
            .policy
            .check_url(url)
            .map_err(|e| e.to_string())?;
        let response = req.send().await.map_err(|e| {
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                text = format!("{text}: {c}");
                cause = c.source();
            }
            text
        })?;
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        Ok((response.status(), retry_after))
    }
}

/// Longest wait a `Retry-After` may ask for (a receiver asking for more is retried then).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// A `Retry-After` value: delay-seconds or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => httpdate::parse_http_date(value)
            .ok()?
            .duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// The wait before the next attempt: what the receiver's `Retry-After` asked for, when it
/// did; else the back-off with jitter, between half of it and all of it (`unit` is uniform
/// in [0, 1)), so that the webhooks of a receiver that failed for everyone at once are not
/// retried all at the same instant.
fn retry_delay(backoff: Duration, retry_after: Option<Duration>, unit: f64) -> Duration {
    if let Some(wait) = retry_after {
        return wait;
    }
    backoff.mul_f64(0.5 + 0.5 * unit.clamp(0.0, 1.0))
}

#[cfg(test)]
mod retry_tests {
    use super::*;

    #[test]
    fn retries_are_spread_and_retry_after_is_honoured() {
        let backoff = Duration::from_secs(4);
        let delays: Vec<Duration> = (0..1000)
            .map(|i| retry_delay(backoff, None, f64::from(i) / 1000.0))
            .collect();
        assert!(delays.iter().all(|d| *d >= backoff / 2 && *d <= backoff));
        let spread = delays
            .iter()
            .max()
            .unwrap()
            .saturating_sub(*delays.iter().min().unwrap());
        assert!(spread >= backoff * 2 / 5, "{spread:?}");
        assert_eq!(
            retry_delay(backoff, Some(Duration::from_secs(7)), 0.3),
            Duration::from_secs(7)
        );
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("99999"), Some(MAX_RETRY_AFTER));
        let later = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(60));
        let wait = parse_retry_after(&later).unwrap();
        assert!(
            wait > Duration::from_secs(55) && wait <= Duration::from_secs(60),
            "{wait:?}"
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
