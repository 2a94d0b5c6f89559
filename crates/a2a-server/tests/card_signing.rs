//! A server built as a library (`A2aServer`) that signs its cards also serves the key set
//! its signatures name in `jku`.

mod common;

use a2a_server::card_signing::CardSigner;
use a2a_server::{A2aServer, ServeOptions};
use base64::Engine as _;
use common::{ScriptAgent, card};
use serde_json::Value;

#[tokio::test]
async fn a_signing_server_serves_the_key_its_signatures_name() {
    let pem = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../a2a-cli/tests/fixtures/jwt-es256.pem"
    ))
    .unwrap();
    let mut options = ServeOptions::default();
    options.card_signer = Some(CardSigner::from_ec_pem(&pem, "k1").unwrap());
    let router = A2aServer::new(ScriptAgent, card(true))
        .with_options(options)
        .router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(a2a_server::serve(listener, router, std::future::pending()));

    let card: Value = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let protected = card["signatures"][0]["protected"].as_str().expect("signed");
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(protected)
            .unwrap(),
    )
    .unwrap();
    let jku = header["jku"].as_str().expect("a jku");
    let resp = reqwest::get(jku).await.unwrap();
    assert_eq!(resp.status(), 200, "{jku}");
    let keys: Value = resp.json().await.unwrap();
    assert_eq!(keys["keys"][0]["kid"], "k1", "{keys}");
}
