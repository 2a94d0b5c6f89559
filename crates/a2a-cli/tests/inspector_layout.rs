//! The inspector as a person uses it, in a real browser: it fits a 400 px wide window without
//! sideways scrolling, a message is sent from the keyboard, the host view shows what the
//! host counts, and a stream of 10 000 events with a 5 MB artifact is shown without the page
//! freezing (its timers keep firing) and with the large artifact shown in part.

mod browser;
mod common;

use std::sync::Arc;

use a2a_server::prelude::*;
use browser::Browser;
use common::*;

/// Streams 10 000 chunks of one artifact, then a 5 MB artifact, then completes.
struct Flood;

#[async_trait]
impl AgentExecutor for Flood {
    async fn execute(&self, _ctx: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        task.start_work(None).await?;
        let mut lines = task.artifact_writer("lines");
        for i in 0..10_000 {
            lines.chunk_text(format!("line {i}\n"), i == 9_999).await?;
        }
        task.add_artifact(Artifact::text("big", "x".repeat(5 * 1024 * 1024)))
            .await?;
        Ok(task.complete(None).await?)
    }
}

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn narrow_window_keyboard_host_view_and_a_flood() {
    let s = serve(&[
        "--store",
        "memory",
        "--push-allow",
        "127.0.0.1",
        "--trace-url",
        "http://jaeger.example/trace/{trace_id}",
    ]);
    let base = s.base.clone();
    let flood = A2aServer::new(Flood, AgentCard::new("Flood", "streams a lot"))
        .spawn_local()
        .await
        .unwrap();
    let flood_url = flood.url().to_owned();
    let _keep = Arc::new(flood);

    let b = Browser::start("layout", 400, 800).await;
    b.check(async {
        // 400 px wide: no view scrolls sideways.
        b.goto(&format!("{base}/inspector/?agent=echo#/agents")).await;
        b.wait_text("#agent-list", "echo").await;
        for view in ["agents", "card", "chat", "tasks", "wire", "host"] {
            b.click(&format!("nav a[data-view={view}]")).await;
            b.find("main h2").await;
            let overflow = b
                .js("return document.documentElement.scrollWidth - window.innerWidth")
                .await;
            assert!(
                overflow.as_i64().unwrap_or(1) <= 0,
                "{view} is wider than the window by {overflow} px"
            );
        }

        // The keyboard: Ctrl+Enter sends.
        b.click("nav a[data-view=chat]").await;
        let text = b.find("#message-text").await;
        text.send_keys("task: typed").await.unwrap();
        text.send_keys("\u{E009}\u{E007}").await.unwrap();
        b.wait_text("#transcript li.turn:nth-child(1)", "completed").await;

        // The host view reads the host's metrics.
        b.click("nav a[data-view=host]").await;
        let stats = b.wait_text("#host-stats", "requests in flight").await;
        assert!(stats.contains("open streams"), "{stats}");
        let agents = b.wait_text("#host-agents", "echo").await;
        assert!(agents.contains("echo"), "{agents}");
        let traces = b.wait_text("#traces", "SendStreamingMessage").await;
        assert!(traces.contains("Traces"), "{traces}");
        let link = b.find("#traces a").await.attr("href").await.unwrap().unwrap();
        assert!(
            link.starts_with("http://jaeger.example/trace/") && link.len() == 28 + 32,
            "a link to the request's trace: {link}"
        );

        // 10 000 events and 5 MB: the page keeps running its timers, and shows the end.
        b.click("nav a[data-view=agents]").await;
        b.type_into("#agent-url", &flood_url).await;
        b.click(".add-agent button[type=submit]").await;
        b.wait_text("#agent-name", "Flood").await;
        b.click("nav a[data-view=chat]").await;
        b.js("window.gaps = []; let last = performance.now(); window.ticker = setInterval(() => { const now = performance.now(); window.gaps.push(now - last); last = now; }, 50); return true")
            .await;
        b.send_message("go").await;
        b.find_within(
            "#transcript li.turn:nth-child(1) .agent[data-state=completed]",
            std::time::Duration::from_secs(120),
        )
        .await;
        let worst = b
            .js("clearInterval(window.ticker); return Math.max(...window.gaps)")
            .await;
        eprintln!("longest pause of the page's timers during the flood: {worst} ms");
        assert!(
            worst.as_f64().unwrap() < 5_000.0,
            "the page froze for {worst} ms"
        );
        let lines = b
            .find("#transcript li.turn:nth-child(1) section.artifact[data-artifact-name=lines]")
            .await
            .text()
            .await
            .unwrap();
        assert!(lines.trim_end().ends_with("line 9999"), "all chunks, in order");
        let big = b
            .find("#transcript li.turn:nth-child(1) section.artifact[data-artifact-name=big]")
            .await
            .text()
            .await
            .unwrap();
        assert!(big.contains("Showing the first"), "a 5 MB text is shown in part");
        b.screenshot("narrow").await;
    })
    .await;
}
