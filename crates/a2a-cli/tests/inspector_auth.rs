//! With authentication on, the inspector asks for the caller's credentials and shows nothing
//! before they are accepted; its host-side operations refuse a caller without them, and a
//! push receiver belongs to the caller that asked for it.

mod browser;
mod common;

use browser::Browser;
use common::*;

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn a_caller_without_credentials_is_refused() {
    let s = serve(&[
        "--store",
        "memory",
        "--auth-token",
        "alice=s3cret-a,bob=s3cret-b",
    ]);
    let base = s.base.clone();
    let http = reqwest::Client::new();

    // The host-side operations, without credentials: 401, with a challenge.
    for (method, path) in [
        ("GET", "/inspector/api/whoami"),
        ("POST", "/inspector/api/relay"),
        ("POST", "/inspector/api/hooks"),
        ("POST", "/inspector/api/card"),
        ("GET", "/inspector/api/tasks/echo/x/events"),
    ] {
        let r = http
            .request(method.parse().unwrap(), format!("{base}{path}"))
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{method} {path}");
        assert!(
            r.headers().contains_key("www-authenticate"),
            "{method} {path}"
        );
    }
    // A receiver is its caller's: another caller is told it does not exist.
    let hook: serde_json::Value = http
        .post(format!("{base}/inspector/api/hooks"))
        .bearer_auth("s3cret-a")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let events = format!(
        "{base}/inspector/api/hooks/{}/events",
        hook["id"].as_str().unwrap()
    );
    let r = http
        .get(&events)
        .bearer_auth("s3cret-b")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    let b = Browser::start("auth", 1280, 800).await;
    b.check(async {
        b.goto(&format!("{base}/inspector/")).await;
        b.find("#credential").await;
        assert!(
            !b.has("#agent-list").await,
            "nothing is shown before signing in"
        );
        b.type_into("#credential", "not-a-token").await;
        b.click("#sign-in").await;
        b.wait_text("#sign-in-error", "refused").await;
        assert!(!b.has("#agent-list").await);
        b.screenshot("refused").await;

        b.type_into("#credential", "s3cret-a").await;
        b.click("#sign-in").await;
        b.wait_text("#agent-list", "echo").await;
        b.wait_text("#who", "token:alice").await;
        // The credentials go with the console's calls to the agents.
        b.open_conversation("echo", "Echo").await;
        b.send_message("task: mine").await;
        b.wait_text("#transcript li.turn:nth-child(1)", "completed")
            .await;
    })
    .await;
}
