//! The console's push receiver. The console asks for a receiver of its own
//! (`POST /inspector/api/hooks`: a URL under `/inspector/hooks/` with an unguessable id, and a
//! token), adds a push config pointing at it to a task, and follows what arrives
//! (`GET /inspector/api/hooks/{id}/events`, server-sent events: what came before, then each
//! delivery as it comes), each with its signature checked.
//!
//! A receiver belongs to the caller that asked for it: with authentication, another caller's
//! request for its deliveries answers 404, as for one that does not exist. The receiver
//! itself (`POST /inspector/hooks/{id}`) is open, as webhooks are: agents post to it.
//! Receivers are kept in memory, at most [`MAX_HOOKS`] (the oldest goes first), each with its
//! last [`MAX_DELIVERIES`] deliveries.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use a2a_client::signature::{self, JwkSet};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::access::Shared;

/// Most receivers kept.
pub const MAX_HOOKS: usize = 256;
/// Most deliveries kept per receiver.
pub const MAX_DELIVERIES: usize = 500;
/// Largest notification accepted.
const MAX_BODY: usize = 1024 * 1024;

/// The receivers.
#[derive(Default)]
pub(crate) struct Registry {
    hooks: Mutex<VecDeque<(String, Arc<Hook>)>>,
}

struct Hook {
    /// The principal that asked for it (`None` without authentication).
    owner: Option<String>,
    url: String,
    token: String,
    deliveries: Mutex<VecDeque<Value>>,
    live: broadcast::Sender<Value>,
}

impl Registry {
    fn get(&self, id: &str) -> Option<Arc<Hook>> {
        let hooks = self.hooks.lock().unwrap_or_else(|e| e.into_inner());
        hooks.iter().find(|(k, _)| k == id).map(|(_, h)| h.clone())
    }

    fn add(&self, id: String, hook: Arc<Hook>) {
        let mut hooks = self.hooks.lock().unwrap_or_else(|e| e.into_inner());
        if hooks.len() >= MAX_HOOKS {
            hooks.pop_front();
        }
        hooks.push_back((id, hook));
    }
}

/// The receivers, with what every host-side operation shares.
pub(crate) struct Hooks {
    shared: Arc<Shared>,
    registry: Registry,
}

pub(crate) fn routes(shared: Arc<Shared>) -> Router {
    let hooks = Arc::new(Hooks {
        shared,
        registry: Registry::default(),
    });
    Router::new()
        .route(&format!("{}/api/hooks", crate::PATH), post(create))
        .route(
            &format!("{}/api/hooks/{{id}}/events", crate::PATH),
            get(events),
        )
        .route(
            &format!("{}/hooks/{{id}}", crate::PATH),
            post(receive).layer(axum::extract::DefaultBodyLimit::max(MAX_BODY)),
        )
        .with_state(hooks)
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"error": {"code": 404, "message": "no such receiver"}})),
    )
        .into_response()
}

/// A receiver for the caller.
async fn create(State(hooks): State<Arc<Hooks>>, headers: HeaderMap) -> Response {
    let owner = match hooks.shared.admit(&headers).await {
        Ok(p) => p.map(|p| p.id().to_owned()),
        Err(refusal) => return refusal,
    };
    if !hooks.shared.config.push {
        return (
            StatusCode::CONFLICT,
            Json(json!({"error": {"code": 409, "message": "this host does not send push notifications (--no-push)"}})),
        )
            .into_response();
    }
    // Two v4-style ids: 244 random bits, not guessable.
    let id = format!("{}{}", a2a_types::new_id(), a2a_types::new_id()).replace('-', "");
    let url = format!("{}{id}", hooks.shared.config.hooks_prefix());
    let token = a2a_types::new_id();
    let (live, _) = broadcast::channel(64);
    hooks.registry.add(
        id.clone(),
        Arc::new(Hook {
            owner,
            url: url.clone(),
            token: token.clone(),
            deliveries: Mutex::new(VecDeque::new()),
            live,
        }),
    );
    Json(json!({"id": id, "url": url, "token": token})).into_response()
}

/// A notification posted by an agent.
async fn receive(
    State(hooks): State<Arc<Hooks>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: bytes::Bytes,
) -> Response {
    let Some(hook) = hooks.registry.get(&id) else {
        return not_found();
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let signature = match header(a2a_types::NOTIFICATION_SIGNATURE_HEADER) {
        None => json!({"state": "unsigned"}),
        Some(sig) => check_signature(&hooks.shared, sig, &body, &hook.url).await,
    };
    let token = header("x-a2a-notification-token");
    let mut shown = serde_json::Map::new();
    for (name, value) in &headers {
        let v = value.to_str().unwrap_or("(not text)");
        let v = match name.as_str() {
            "authorization" | "x-api-key" | "x-a2a-notification-token" => mask(v),
            _ => v.to_owned(),
        };
        shown.insert(name.as_str().to_owned(), v.into());
    }
    let received_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut delivery = json!({
        "receivedAt": received_ms,
        "headers": shown,
        "tokenMatches": token == Some(hook.token.as_str()),
        "body": serde_json::from_slice::<Value>(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned())),
        "signature": signature,
    });
    {
        // Numbered and published under the lock: a follower that read the past knows which
        // live deliveries it has already seen.
        let mut log = hook.deliveries.lock().unwrap_or_else(|e| e.into_inner());
        let seq = log.back().map_or(1, |d| seq_of(d) + 1);
        delivery["seq"] = seq.into();
        if log.len() >= MAX_DELIVERIES {
            log.pop_front();
        }
        log.push_back(delivery.clone());
        let _ = hook.live.send(delivery);
    }
    StatusCode::OK.into_response()
}

fn seq_of(delivery: &Value) -> u64 {
    delivery["seq"].as_u64().unwrap_or(0)
}

/// `abcd…` for a secret: enough to tell two apart, not enough to use one.
fn mask(secret: &str) -> String {
    let shown: String = secret.chars().take(4).collect();
    format!("{shown}… (masked)")
}

/// The notification's signature: checked with this host's push key when it is one of its
/// own, else with the key set the signature names.
async fn check_signature(shared: &Shared, sig: &str, body: &[u8], url: &str) -> Value {
    let own: Option<JwkSet> = shared
        .config
        .push_keys
        .clone()
        .and_then(|k| serde_json::from_value(k).ok());
    if let Some(keys) = &own
        && let Ok(claims) = signature::verify_notification(sig, body, url, keys)
    {
        return json!({"state": "valid", "keySource": "this host's key", "taskId": claims.task_id});
    }
    // Someone else's: the key set its header names (`jku`), fetched through the guard.
    let jku = jwt_header(sig).and_then(|h| h.get("jku").and_then(Value::as_str).map(str::to_owned));
    let Some(jku) = jku else {
        return json!({"state": "invalid", "reason": "the signature names no key set this console knows"});
    };
    let keys = match shared.policy.check_url(&jku) {
        Ok(u) => signature::fetch_keys(&shared.client, u.as_str()).await,
        Err(e) => return json!({"state": "invalid", "reason": e.to_string(), "keySource": jku}),
    };
    match keys.and_then(|k| signature::verify_notification(sig, body, url, &k)) {
        Ok(claims) => json!({"state": "valid", "keySource": jku, "taskId": claims.task_id}),
        Err(e) => json!({"state": "invalid", "reason": e.to_string(), "keySource": jku}),
    }
}

/// A JWT's header, decoded without checking anything.
fn jwt_header(jwt: &str) -> Option<Value> {
    use base64::Engine as _;
    let head = jwt.split('.').next()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// What a receiver got, then each delivery as it comes (server-sent events).
async fn events(
    State(hooks): State<Arc<Hooks>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let caller = match hooks.shared.admit(&headers).await {
        Ok(p) => p.map(|p| p.id().to_owned()),
        Err(refusal) => return refusal,
    };
    let Some(hook) = hooks.registry.get(&id) else {
        return not_found();
    };
    // Another caller's receiver is answered as one that does not exist.
    if hook.owner != caller {
        return not_found();
    }
    // Subscribed before the past is read, so nothing falls between them.
    let live = tokio_stream::wrappers::BroadcastStream::new(hook.live.subscribe());
    let past: Vec<Value> = hook
        .deliveries
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .cloned()
        .collect();
    // A delivery that arrived between the subscription and the read is in both: the live
    // stream leaves out what the past already held.
    let seen = past.last().map_or(0, seq_of);
    let past = futures::stream::iter(past);
    let live = live
        .filter_map(move |d| async move { d.ok().filter(|d| seq_of(d) > seen) })
        .boxed();
    let stream = past
        .chain(live)
        .map(|d| Ok::<_, Infallible>(Event::default().event("delivery").data(d.to_string())));
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
