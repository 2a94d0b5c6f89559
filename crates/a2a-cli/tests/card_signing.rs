//! Signed agent cards: `a2a serve --signing-key` signs every card (JCS + JWS, ES256) and
//! publishes the key at `/.well-known/jwks.json`; `a2a card --verify` accepts the card as
//! served and rejects an altered or unsigned one.

mod common;

use common::*;
use serde_json::Value;

/// Serves `card` at `/.well-known/agent-card.json` on a loopback port; the base URL.
fn serve_card(card: Value) -> String {
    let (listener, addr) = loopback_listener();
    let body = card.to_string();
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    serve_app(listener, app);
    format!("http://{addr}")
}

#[test]
fn signed_cards_verify_and_altered_ones_do_not() {
    // A test-only P-256 key.
    let key = format!("{FIXTURES}/jwt-es256.pem");
    let s = serve(&[
        "--signing-key",
        &key,
        "--signing-kid",
        "k1",
        "--store",
        "memory",
    ]);
    let echo = format!("{}/a2a/echo", s.base);
    let card: Value = reqwest::blocking::get(format!("{echo}/.well-known/agent-card.json"))
        .unwrap()
        .json()
        .unwrap();
    let headers = a2a_client::signature::signature_headers(&card).expect("signed");
    let header = &headers[0].0;
    assert_eq!(header.alg, "ES256");
    assert_eq!(header.kid.as_deref(), Some("k1"));
    let jku = header.jku.as_deref().unwrap();
    assert_eq!(jku, format!("{}/.well-known/jwks.json", s.base));
    let jwks: Value = reqwest::blocking::get(jku).unwrap().json().unwrap();
    assert_eq!(jwks["keys"][0]["kid"], "k1");

    // As served: verified, with the key the jku names.
    let o = a2a(&["card", &echo, "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("verified with key k1"),
        "{}",
        stdout(&o)
    );
    // The legacy (v0.3) card is signed too.
    let legacy: Value = reqwest::blocking::get(format!("{echo}/.well-known/agent.json"))
        .unwrap()
        .json()
        .unwrap();
    assert!(legacy["signatures"][0]["signature"].is_string());

    // Altered after signing: refused, whatever it claims.
    let jwks_file = std::env::temp_dir().join(format!("a2a-jwks-{}.json", std::process::id()));
    std::fs::write(&jwks_file, jwks.to_string()).unwrap();
    let mut altered = card.clone();
    altered["description"] = Value::from("Now also wires money.");
    let fake = serve_card(altered);
    let o = a2a(&[
        "card",
        &fake,
        "--verify",
        "--jwks",
        jwks_file.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("does not match"), "{}", stderr(&o));
    // The untouched copy verifies from anywhere with the trusted keys.
    let copy = serve_card(card.clone());
    let o = a2a(&[
        "card",
        &copy,
        "--verify",
        "--jwks",
        jwks_file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Without trusted keys, a card's `jku` is followed only to the card's own server: a
    // card elsewhere could name a key set of whoever re-signed it.
    let o = a2a(&["card", &copy, "--verify"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("not served by the card's own server"),
        "{}",
        stderr(&o)
    );
    // An unsigned card is refused.
    let mut unsigned = card;
    unsigned.as_object_mut().unwrap().remove("signatures");
    let bare = serve_card(unsigned);
    let o = a2a(&[
        "card",
        &bare,
        "--verify",
        "--jwks",
        jwks_file.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not signed"), "{}", stderr(&o));
    let _ = std::fs::remove_file(jwks_file);
}
