//! The inspector's push receiver in a real browser: the console asks the host for a receiver,
//! adds a push config pointing at it to a running task, and shows each delivery as it comes
//! with its signature checked against the host's key.

mod browser;
mod common;

use browser::Browser;
use common::*;

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn deliveries_arrive_with_a_valid_signature() {
    let key = format!("{FIXTURES}/jwt-es256.pem");
    let s = serve(&["--store", "memory", "--signing-key", &key]);
    let base = s.base.clone();
    let b = Browser::start("push", 1280, 800).await;
    b.check(async {
        b.goto(&format!("{base}/inspector/?agent=slow#/chat")).await;
        b.wait_text("#agent-name", "Slow").await;
        b.send_message("4").await;
        b.wait_text("#transcript li.turn:nth-child(1)", "progress")
            .await;
        let task_id = b
            .find("#transcript li.turn:nth-child(1) .task-id")
            .await
            .text()
            .await
            .unwrap();

        b.click("nav a[data-view=push]").await;
        b.click("#create-hook").await;
        let url = b.find("#hook-url").await.text().await.unwrap();
        assert!(
            url.starts_with(&format!("{base}/inspector/hooks/")),
            "{url}"
        );
        b.type_into("#push-task", &task_id).await;
        b.click("#add-push-config").await;
        b.wait_text("#push-status", "added to task").await;

        // The task's events come, each signed by the host's key.
        let deliveries = b.wait_text("#deliveries", "completed").await;
        assert!(deliveries.contains("valid"), "{deliveries}");
        assert!(
            b.has("#deliveries li.delivery[data-signature=valid]").await,
            "{deliveries}"
        );
        assert!(
            !b.has("#deliveries li.delivery[data-signature=invalid]")
                .await,
            "{deliveries}"
        );
        b.screenshot("push").await;
    })
    .await;
}
