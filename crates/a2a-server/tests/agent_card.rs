//! Agent cards: strict v1.0 at agent-card.json, v0.3 at agent.json, caching headers.

mod common;

use a2a_server::CardCompat;
use common::*;
use serde_json::Value;

#[tokio::test]
async fn strict_card_with_real_interfaces_and_etag() {
    let mut setup = Setup::default();
    setup.path = "/a2a/script";
    let s = start(setup).await;
    let url = format!("{}/a2a/script/.well-known/agent-card.json", s.base);
    let resp = http().get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    let card: Value = resp.json().await.unwrap();
    let ifaces = card["supportedInterfaces"].as_array().unwrap();
    assert_eq!(ifaces[0]["url"], format!("{}/a2a/script", s.base));
    assert_eq!(ifaces[0]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[0]["protocolVersion"], "1.0");
    assert_eq!(ifaces[1]["protocolBinding"], "HTTP+JSON");
    assert_eq!(ifaces[1]["protocolVersion"], "1.0");
    assert_eq!(ifaces[2]["protocolBinding"], "GRPC");
    assert_eq!(ifaces[2]["url"], s.base.trim_start_matches("http://"));
    assert_eq!(ifaces[2]["tenant"], "a2a/script");
    assert_eq!(ifaces[3]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[3]["protocolVersion"], "0.3");
    for legacy_field in [
        "url",
        "protocolVersion",
        "preferredTransport",
        "additionalInterfaces",
    ] {
        assert!(
            card.get(legacy_field).is_none(),
            "strict card has no {legacy_field}"
        );
    }
    let again = http()
        .get(&url)
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    // Last-Modified, and If-Modified-Since (used when If-None-Match is absent).
    let last_modified = again.headers()["last-modified"]
        .to_str()
        .unwrap()
        .to_owned();
    let conditional = |headers: Vec<(&'static str, String)>| {
        let mut req = http().get(&url);
        for (name, value) in headers {
            req = req.header(name, value);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    let current = || ("If-Modified-Since", last_modified.clone());
    assert_eq!(conditional(vec![current()]).await, 304);
    let old_date = (
        "If-Modified-Since",
        "Mon, 01 Jan 2024 00:00:00 GMT".to_owned(),
    );
    assert_eq!(conditional(vec![old_date]).await, 200);
    let stale = ("If-None-Match", "\"stale\"".to_owned());
    assert_eq!(
        conditional(vec![stale, current()]).await,
        200,
        "a stale ETag wins over a current date"
    );

    // The advertised URL works.
    let r = send(ifaces[0]["url"].as_str().unwrap(), "hi").await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    let legacy: Value = get_json(&format!("{}/a2a/script/.well-known/agent.json", s.base)).await;
    assert_eq!(legacy["protocolVersion"], "0.3.0");
    assert_eq!(legacy["url"], format!("{}/a2a/script", s.base));
    assert_eq!(legacy["preferredTransport"], "JSONRPC");
    assert!(legacy.get("supportedInterfaces").is_none());
}

#[tokio::test]
async fn merged_card_and_public_url() {
    let mut setup = Setup::default();
    setup.options.card_compat = CardCompat::V03Merged;
    setup.options.public_url = Some("https://agents.example.com/".into());
    let s = start(setup).await;
    let card: Value = get_json(&format!("{}/.well-known/agent-card.json", s.base)).await;
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "https://agents.example.com/"
    );
    assert_eq!(card["url"], "https://agents.example.com/");
    assert_eq!(card["protocolVersion"], "0.3.0");
}
