//! The inspector reaching an agent on another host, through its own host (a browser cannot
//! call it directly): the card is fetched and checked, and the conversation goes through the
//! relay, shown as such on the wire.

mod browser;
mod common;

use browser::Browser;
use common::*;

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_on_another_host_is_reached_through_the_relay() {
    // The other host is on loopback too, which the relay reaches only when allowed, as push.
    let here = serve(&["--store", "memory", "--push-allow", "127.0.0.1"]);
    let there = serve(&["--store", "memory", "--no-inspector"]);
    let base = here.base.clone();
    let far = format!("{}/a2a/echo", there.base);
    // --no-inspector: no console there.
    let r = reqwest::get(format!("{}/inspector/", there.base))
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let b = Browser::start("relay", 1280, 800).await;
    b.check(async {
        b.goto(&format!("{base}/inspector/#/agents")).await;
        b.type_into("#agent-url", &far).await;
        b.click(".add-agent button[type=submit]").await;
        b.wait_text("#card-check", "Valid against the specification")
            .await;
        let line = b.wait_text("#agent-line", "through the host").await;
        assert!(line.contains(&far), "{line}");

        b.click("nav a[data-view=chat]").await;
        b.send_message("task: from afar").await;
        let turn = b
            .wait_text("#transcript li.turn:nth-child(1)", "completed")
            .await;
        assert!(turn.contains("from afar"), "{turn}");

        b.click("nav a[data-view=wire]").await;
        let wire = b.wait_text(".wire-list", "through the host").await;
        assert!(wire.contains(&there.base), "{wire}");
        b.screenshot("relay").await;
    })
    .await;

    // Not everywhere: the relay refuses inner addresses the host does not allow.
    let closed = serve(&["--store", "memory"]);
    let (status, text) = relay(&closed.base, &far).await;
    assert_eq!(status, 403);
    assert!(text.contains("loopback"), "{text}");

    // A host anyone can reach without credentials is not an open proxy: its console reaches
    // only itself.
    let open = serve(&[
        "--store",
        "memory",
        "--host",
        "0.0.0.0",
        "--push-allow-private",
    ]);
    let (status, text) = relay(&open.base, &far).await;
    assert_eq!(status, 403);
    assert!(text.contains("open proxy"), "{text}");
}

/// Asks the host at `base` to relay a GET of `target`: the status and body of its answer.
async fn relay(base: &str, target: &str) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(format!("{base}/inspector/api/relay"))
        .header("x-relay-url", target)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}
