//! The inspector in a real browser: the host's agents listed; a card checked against the
//! spec, with a broken card (served by this test on another address, reached through the
//! host) showing each problem at its JSON path; a signed card's signature verified; browsers
//! asking `/` get the console while API clients keep the JSON.

mod browser;
mod common;

use browser::Browser;
use common::*;
use serde_json::json;

const NEEDS: &str =
    "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)";

/// A card with problems: no version, a capability of the wrong type, a relative interface
/// URL, a skill id twice, an unknown field.
fn broken_card() -> serde_json::Value {
    json!({
        "name": "Broken",
        "description": "a card with mistakes",
        "supportedInterfaces": [{"url": "/a2a/broken", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": "yes"},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {"id": "s", "name": "S", "description": "d", "tags": ["t"]},
            {"id": "s", "name": "S again", "description": "d", "tags": ["t"]}
        ],
        "colour": "blue"
    })
}

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn agents_are_listed_and_cards_checked_against_the_spec() {
    let _ = NEEDS;
    let key = format!("{FIXTURES}/jwt-es256.pem");
    // The broken card's server is on loopback, which the host reaches only when allowed.
    let s = serve(&[
        "--store",
        "memory",
        "--signing-key",
        &key,
        "--push-allow",
        "127.0.0.1",
    ]);
    let (listener, addr) = loopback_listener();
    let card = broken_card();
    serve_app(
        listener,
        axum::Router::new().route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let card = card.clone();
                async move { axum::Json(card) }
            }),
        ),
    );
    let base = s.base.clone();

    // A browser asking `/` for a page gets the console; an API client still gets JSON.
    let api: serde_json::Value = reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(api["agents"].is_array(), "{api}");

    let b = Browser::start("agents", 1280, 800).await;
    b.check(async {
        b.goto(&format!("{base}/")).await;
        let list = b.wait_text("#agent-list", "echo").await;
        for agent in ["echo", "slow", "multi", "conformance"] {
            assert!(list.contains(agent), "{list}");
        }
        assert!(b.js("return location.pathname").await == "/inspector/");

        // A hosted card: valid, signed by the host's key.
        b.click("button[data-agent=echo]").await;
        b.wait_text("#card-check", "Valid against the specification")
            .await;
        let sig = b.wait_text("#signature", "valid").await;
        assert!(sig.contains("Signature: valid"), "{sig}");
        assert!(sig.contains("/.well-known/jwks.json"), "{sig}");
        b.wait_text("#agent-name", "Echo").await;

        // A broken card elsewhere: each problem at its path.
        b.click("nav a[data-view=agents]").await;
        b.type_into("#agent-url", &format!("http://{addr}/")).await;
        b.click(".add-agent button[type=submit]").await;
        let check = b.wait_text("#card-check", "problem").await;
        assert!(check.contains("against the specification"), "{check}");
        for path in [
            "$.version",
            "$.capabilities.streaming",
            "$.supportedInterfaces[0].url",
            "$.skills[1].id",
            "$.colour",
        ] {
            assert!(
                b.has(&format!("#problems li[data-path=\"{path}\"]")).await,
                "no problem listed at {path}: {check}"
            );
        }
        let warning = b.find("#problems li[data-path=\"$.colour\"]").await;
        assert!(warning.text().await.unwrap().contains("warning"));
        let sig = b.wait_text("#signature", "unsigned").await;
        assert!(sig.contains("Signature: unsigned"), "{sig}");
        b.screenshot("card").await;
    })
    .await;
}
