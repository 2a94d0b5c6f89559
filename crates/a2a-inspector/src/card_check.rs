//! `POST /inspector/api/card`: a card checked for a person. `{"url": …}` fetches it (through
//! the relay's guard) from the URL, or from its well-known paths under it; `{"card": …}`
//! checks one the console already has. The answer: the card, every problem with its JSON
//! path ([`crate::proto_check`]), and its signature: `valid` (with the key id and where the
//! key set came from), `invalid` (why), or `unsigned`.

use std::sync::Arc;

use a2a_client::signature::{self, JwkSet};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::access::{Shared, error};
use crate::proto_check::{self, Problem, Severity};

pub(crate) fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(&format!("{}/api/card", crate::PATH), post(check))
        .with_state(shared)
}

#[derive(Deserialize)]
struct CheckRequest {
    url: Option<String>,
    card: Option<Value>,
}

async fn check(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(req): Json<CheckRequest>,
) -> Response {
    if let Err(refusal) = shared.admit(&headers).await {
        return refusal;
    }
    let (card, fetched_from) = match (req.card, req.url) {
        (Some(card), url) => (card, url),
        (None, Some(url)) => match fetch_card(&shared, &url).await {
            Ok((card, from)) => (card, Some(from)),
            Err(why) => return error(StatusCode::BAD_GATEWAY, why),
        },
        (None, None) => return error(StatusCode::BAD_REQUEST, "give a card or a url"),
    };
    let v03 = card.get("supportedInterfaces").is_none()
        && (card.get("url").is_some() || card.get("preferredTransport").is_some());
    let mut problems = proto_check::check_card(&card);
    if v03 {
        // What v0.3 writes its own way is not a problem of a v0.3 card; the rest is.
        problems.retain(|p| p.severity == Severity::Error && !v03_field(&p.path));
        problems.insert(0, Problem {
            path: "$".into(),
            message: "a v0.3 card (url, preferredTransport): checked against the v1.0 proto only for what the versions share".into(),
            severity: Severity::Warning,
        });
    }
    let signature = check_signature(&shared, &card, fetched_from.as_deref()).await;
    Json(json!({
        "url": fetched_from,
        "card": card,
        "problems": problems,
        "signature": signature,
    }))
    .into_response()
}

/// Fields that v0.3 cards have in their own way (not errors of a v0.3 card).
fn v03_field(path: &str) -> bool {
    [
        "$.supportedInterfaces",
        "$.url",
        "$.protocolVersion",
        "$.preferredTransport",
        "$.additionalInterfaces",
        "$.security",
    ]
    .iter()
    .any(|p| path.starts_with(p))
}

/// The card at `url` itself, or under it at the well-known paths (v1.0, then v0.3).
async fn fetch_card(shared: &Shared, url: &str) -> Result<(Value, String), String> {
    let candidates = a2a_client::card::card_urls(url).map_err(|e| e.to_string())?;
    let mut last = String::from("no agent card found");
    for candidate in candidates.iter().map(ToString::to_string) {
        match shared.fetch_json(&candidate, MAX_CARD).await {
            Ok(card) => return Ok((card, candidate)),
            // Not there: the next well-known path may be.
            Err(why) if why.contains("HTTP 404") => last = why,
            Err(why) => return Err(why),
        }
    }
    Err(last)
}

/// Largest card fetched.
const MAX_CARD: usize = 1024 * 1024;
/// Largest key set fetched.
pub(crate) const MAX_KEYS: usize = 256 * 1024;

/// The signature's state: `unsigned`, `valid` (key id, key source) or `invalid` (why).
async fn check_signature(shared: &Shared, card: &Value, from: Option<&str>) -> Value {
    let headers = match signature::signature_headers(card) {
        Ok(h) if h.is_empty() => return json!({"state": "unsigned"}),
        Ok(h) => h,
        Err(signature::SignatureError::Unsigned) => return json!({"state": "unsigned"}),
        Err(e) => return json!({"state": "invalid", "reason": e.to_string()}),
    };
    let Some(jku) = headers.iter().find_map(|(h, _)| h.jku.clone()) else {
        return json!({"state": "invalid", "reason": "the signature names no key set (jku)"});
    };
    // The card names its own key set: one elsewhere would let whoever altered the card sign
    // it with a key of their own.
    let origin = |u: &str| reqwest::Url::parse(u).ok().map(|u| u.origin());
    if let Some(from) = from
        && origin(from) != origin(&jku)
    {
        return json!({
            "state": "invalid",
            "reason": format!("the key set {jku} is not served by the card's own server"),
            "keySource": jku,
        });
    }
    let keys: JwkSet =
        match shared.fetch_json(&jku, MAX_KEYS).await.and_then(|v| {
            serde_json::from_value(v).map_err(|e| format!("{jku}: not a JWK Set: {e}"))
        }) {
            Ok(k) => k,
            Err(why) => return json!({"state": "invalid", "reason": why, "keySource": jku}),
        };
    match signature::verify_card(card, &keys) {
        Ok(kid) => json!({"state": "valid", "kid": kid, "keySource": jku}),
        Err(e) => json!({"state": "invalid", "reason": e.to_string(), "keySource": jku}),
    }
}
