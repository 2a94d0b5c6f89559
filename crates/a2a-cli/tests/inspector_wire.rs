//! The inspector's wire pane in a real browser: every call with its headers, status, timings
//! and events; the copied curl command, run as it is, gets the same answer from the agent.

mod browser;
mod common;

use browser::Browser;
use common::*;

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn each_call_is_shown_and_its_curl_command_works() {
    let s = serve(&["--store", "memory"]);
    let base = s.base.clone();
    let b = Browser::start("wire", 1280, 800).await;
    b.check(async {
        b.goto(&format!("{base}/inspector/?agent=echo#/chat")).await;
        b.wait_text("#agent-name", "Echo").await;
        b.choose("#send-mode", "send").await;
        b.send_message("task: over the wire").await;
        b.wait_text("#transcript", "completed").await;
        b.choose("#send-mode", "stream").await;
        b.send_message("task: streamed").await;
        b.wait_text("#transcript li.turn:nth-child(2)", "completed")
            .await;

        b.click("nav a[data-view=wire]").await;
        let list = b.wait_text(".wire-list", "SendStreamingMessage").await;
        assert!(list.contains("SendMessage"), "{list}");
        assert!(list.contains("200"), "{list}");
        assert!(
            list.contains("events"),
            "the stream's events are counted: {list}"
        );

        // The blocking send: its details and its curl command.
        let mut send_row = None;
        for r in b
            .client
            .find_all(fantoccini::Locator::Css(".wire-row"))
            .await
            .unwrap()
        {
            let t = r.text().await.unwrap();
            if t.contains("SendMessage") && !t.contains("Streaming") {
                send_row = Some(r);
                break;
            }
        }
        send_row.expect("a SendMessage row").click().await.unwrap();
        let detail = b.wait_text(".wire-detail", "Request headers").await;
        assert!(detail.contains("A2A-Version"), "{detail}");
        assert!(detail.contains("traceparent"), "{detail}");
        assert!(detail.contains("Answer: HTTP 200"), "{detail}");
        let curl = b.find("#wire-curl").await.text().await.unwrap();
        assert!(curl.starts_with("curl "), "{curl}");
        let a2a = b.find("#wire-a2a").await.text().await.unwrap();
        assert!(a2a.starts_with("a2a send "), "{a2a}");
        b.screenshot("wire").await;

        // The same over HTTP+JSON, JSON-RPC v0.3 and gRPC (made by the host), chosen per
        // agent.
        b.click("nav a[data-view=chat]").await;
        for (choice, expected) in [
            ("HTTP+JSON|1.0", "/a2a/echo/message:send"),
            ("JSONRPC|0.3", "message/send"),
            ("GRPC|1.0", "lf.a2a.v1.A2AService/SendMessage"),
        ] {
            b.choose("#interface", choice).await;
            b.choose("#send-mode", "send").await;
            b.send_message(&format!("task: over {choice}")).await;
            let done = b.wait_text("#transcript", &format!("over {choice}")).await;
            assert!(done.contains("completed"), "{choice}: {done}");
            let last = b
                .js("const e = window.a2aInspector.session.wire.entries.at(-1); return e.request.url + ' ' + (e.request.body || '')")
                .await;
            assert!(last.as_str().unwrap().contains(expected), "{choice}: {last}");
        }

        // The command works as copied.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&curl)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{curl}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(
            answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{answer}"
        );
        assert_eq!(
            answer["result"]["task"]["artifacts"][0]["parts"][0]["text"],
            "over the wire"
        );
    })
    .await;
}
