//! The console's push receiver. The console asks for a receiver of its own
//! (`POST /inspector/api/hooks`: a URL under `/inspector/hooks/` with an unguessable id, and a
//! token), adds a push config pointing at it to a task, and follows what arrives
//! (`GET /inspector/api/hooks/{id}/events`, server-sent events: what came before, then each
//! delivery as it comes), each with its signature checked.
//!
//! A receiver belongs to the caller that asked for it: with authentication, another caller's
//! request for its deliveries answers 404, as for one that does not exist. The receiver
//! itself (`POST /inspector/hooks/{id}`) is open, as webhooks are: agents post to it.
//! Receivers are kept in memory: at most [`MAX_HOOKS_PER_CALLER`] per caller (its oldest goes
//! first) and [`MAX_HOOKS`] in all, each with its last [`MAX_DELIVERIES`] deliveries and at
//! most [`MAX_BYTES`] of them; a delivery's body is kept as text, cut at
//! [`MAX_KEPT_BODY`]. Whoever knows a receiver's URL can post to it, so what one can hold is
//! bounded, and a signature is called valid only when this host's own key made it.

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

use crate::access::{Shared, error};

/// Most receivers kept.
pub const MAX_HOOKS: usize = 256;
/// Most receivers kept per caller.
pub const MAX_HOOKS_PER_CALLER: usize = 8;
/// Most deliveries kept per receiver.
pub const MAX_DELIVERIES: usize = 500;
/// Most bytes of deliveries kept per receiver.
pub const MAX_BYTES: usize = 4 * 1024 * 1024;
/// Largest body kept of one delivery.
pub const MAX_KEPT_BODY: usize = 64 * 1024;
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
    deliveries: Mutex<Deliveries>,
    live: broadcast::Sender<Value>,
}

#[derive(Default)]
struct Deliveries {
    kept: VecDeque<(Value, usize)>,
    bytes: usize,
    next: u64,
}

impl Registry {
    fn get(&self, id: &str) -> Option<Arc<Hook>> {
        let hooks = self.hooks.lock().unwrap_or_else(|e| e.into_inner());
        hooks.iter().find(|(k, _)| k == id).map(|(_, h)| h.clone())
    }

    /// Adds a receiver; the caller's oldest goes when it has too many, the oldest of all
    /// when there are too many (so one caller cannot push out the others' by itself).
    fn add(&self, id: String, hook: Arc<Hook>) {
        let mut hooks = self.hooks.lock().unwrap_or_else(|e| e.into_inner());
        let mine = hooks.iter().filter(|(_, h)| h.owner == hook.owner).count();
        if mine >= MAX_HOOKS_PER_CALLER
            && let Some(i) = hooks.iter().position(|(_, h)| h.owner == hook.owner)
        {
            hooks.remove(i);
        }
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
    error(StatusCode::NOT_FOUND, "no such receiver")
}

/// A receiver for the caller.
async fn create(State(hooks): State<Arc<Hooks>>, headers: HeaderMap) -> Response {
    let owner = match hooks.shared.admit(&headers).await {
        Ok(p) => p.map(|p| p.id().to_owned()),
        Err(refusal) => return refusal,
    };
    // A JSON request, which another site cannot make without asking first (CORS).
    let json = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send Content-Type: application/json",
        );
    }
    if !hooks.shared.config.push {
        return error(
            StatusCode::CONFLICT,
            "this host does not send push notifications (--no-push)",
        );
    }
    // Two random (v4) UUIDs: 244 random bits, not guessable; the token another 122.
    let id = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let url = format!("{}{id}", hooks.shared.config.hooks_prefix());
    let token = uuid::Uuid::new_v4().simple().to_string();
    let (live, _) = broadcast::channel(64);
    hooks.registry.add(
        id.clone(),
        Arc::new(Hook {
            owner,
            url: url.clone(),
            token: token.clone(),
            deliveries: Mutex::new(Deliveries::default()),
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
        Some(sig) => check_signature(&hooks.shared, sig, &body, &hook.url),
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
    // Kept as text, and cut: what a receiver holds is bounded whatever is posted to it.
    let kept = &body[..body.len().min(MAX_KEPT_BODY)];
    let body_value = match serde_json::from_slice::<Value>(kept) {
        Ok(v) if kept.len() == body.len() => v,
        _ => Value::String(String::from_utf8_lossy(kept).into_owned()),
    };
    let mut delivery = json!({
        "receivedAt": received_ms,
        "headers": shown,
        "tokenMatches": token == Some(hook.token.as_str()),
        "body": body_value,
        "bodyBytes": body.len(),
        "truncated": kept.len() < body.len(),
        "signature": signature,
    });
    let cost = kept.len() + 1024;
    {
        // Numbered and published under the lock: a follower that read the past knows which
        // live deliveries it has already seen.
        let mut log = hook.deliveries.lock().unwrap_or_else(|e| e.into_inner());
        log.next += 1;
        delivery["seq"] = log.next.into();
        while !log.kept.is_empty()
            && (log.kept.len() >= MAX_DELIVERIES || log.bytes + cost > MAX_BYTES)
        {
            if let Some((_, c)) = log.kept.pop_front() {
                log.bytes -= c;
            }
        }
        log.bytes += cost;
        log.kept.push_back((delivery.clone(), cost));
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

/// The notification's signature. `valid` only when this host's own push key made it: a key
/// set the notification names itself (`jku`) proves only that its sender holds that key, so
/// such a signature is `foreign`, with where the key set is, and is not fetched (whoever
/// knows the receiver's URL could make the host fetch anything, again and again).
fn check_signature(shared: &Shared, sig: &str, body: &[u8], url: &str) -> Value {
    let own: Option<JwkSet> = shared
        .config
        .push_keys
        .clone()
        .and_then(|k| serde_json::from_value(k).ok());
    if let Some(keys) = &own {
        match signature::verify_notification(sig, body, url, keys) {
            Ok(claims) => {
                return json!({"state": "valid", "keySource": "this host's key", "taskId": claims.task_id});
            }
            // Made with this host's key, but not for this body or this receiver.
            Err(
                e @ (signature::SignatureError::Mismatch
                | signature::SignatureError::Expired
                | signature::SignatureError::WrongAudience),
            ) => {
                return json!({"state": "invalid", "reason": e.to_string(), "keySource": "this host's key"});
            }
            Err(_) => {}
        }
    }
    let jku = jwt_header(sig).and_then(|h| h.get("jku").and_then(Value::as_str).map(str::to_owned));
    json!({
        "state": "foreign",
        "reason": "not made by this host's key: check it with the sending agent's published key set",
        "keySource": jku,
    })
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
        .kept
        .iter()
        .map(|(d, _)| d.clone())
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
