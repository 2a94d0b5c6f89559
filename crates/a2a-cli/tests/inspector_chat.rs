//! The inspector's conversation in a real browser: `echo` answers a Message and a Task (each
//! shown for what it is); `slow` streams its `progress` artifact, Stop following leaves the
//! task WORKING (checked through A2A), Cancel ends it CANCELED with only `progress`; `multi`
//! goes through INPUT_REQUIRED to COMPLETED in one task and one context, its chunks
//! reassembled into one artifact; the session exported and imported to look at later.

mod browser;
mod common;

use a2a_client::A2aClient;
use a2a_types::TaskState;
use browser::Browser;
use common::*;

/// The `n`th turn of the transcript (from 1).
fn turn(n: usize) -> String {
    format!("#transcript li.turn:nth-child({n})")
}

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn talk_stream_stop_cancel_and_answer_in_place() {
    let s = serve(&["--store", "memory"]);
    let base = s.base.clone();
    let b = Browser::start("chat", 1280, 800).await;
    b.check(async {
        // echo: a direct Message, then a Task.
        b.goto(&format!("{base}/inspector/?agent=echo#/chat")).await;
        b.wait_text("#agent-name", "Echo").await;
        b.send_message("hello there").await;
        let first = b.wait_text(&turn(1), "Message").await;
        assert!(first.contains("hello there"), "{first}");
        assert!(
            !first.contains("task "),
            "a Message reply has no task: {first}"
        );
        b.send_message("task: a task please").await;
        let second = b.wait_text(&turn(2), "completed").await;
        assert!(
            second.contains("Task + updates") || second.contains("Task"),
            "{second}"
        );
        assert!(second.contains("a task please"), "{second}");

        // slow: streamed progress, Stop following (the task goes on), then Cancel.
        b.open_conversation("slow", "Slow").await;
        b.send_message("30").await;
        let live = b.wait_text(&turn(1), "progress").await;
        assert!(live.contains("working"), "{live}");
        let task_id = b
            .find(&format!("{} .task-id", turn(1)))
            .await
            .text()
            .await
            .unwrap();
        b.click(&format!("{} button.stop", turn(1))).await;
        let stopped = b.wait_text(&turn(1), "keeps running").await;
        assert!(stopped.contains("Not following any more"), "{stopped}");
        let a2a = A2aClient::connect(&format!("{base}/a2a/slow"))
            .await
            .unwrap();
        let task = a2a.get_task(&task_id, None).await.unwrap();
        assert_eq!(
            task.status.state,
            TaskState::Working,
            "stopping never cancels"
        );
        b.click(&format!("{} button.cancel", turn(1))).await;
        b.wait_text(&format!("{} .agent .who", turn(1)), "canceled")
            .await;
        let task = a2a.get_task(&task_id, None).await.unwrap();
        assert_eq!(task.status.state, TaskState::Canceled);
        let names: Vec<_> = task
            .artifacts
            .iter()
            .map(|a| a.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(names, ["progress"], "canceled with only progress");
        b.screenshot("slow-canceled").await;

        // multi: artifacts in chunks, a question answered in place, one task, one context.
        b.open_conversation("multi", "Multi").await;
        b.send_message("start").await;
        let asked = b.wait_text(&turn(1), "The agent asks").await;
        assert!(asked.contains("input-required"), "{asked}");
        let story = b
            .find(&format!(
                "{} section.artifact[data-artifact-name=story]",
                turn(1)
            ))
            .await;
        assert_eq!(
            story.text().await.unwrap().lines().last().unwrap(),
            "Once upon a time."
        );
        let asked_in = b
            .find(&format!("{} .task-id", turn(1)))
            .await
            .text()
            .await
            .unwrap();
        let label = b.wait_text("#composer-label", "continues task").await;
        assert!(label.contains(&asked_in), "{label}");
        let context = b.find("#context-id").await.text().await.unwrap();
        b.send_message("my answer").await;
        let done = b.wait_text(&turn(2), "completed").await;
        assert!(done.contains("my answer"), "{done}");
        let answered_in = b
            .find(&format!("{} .task-id", turn(2)))
            .await
            .text()
            .await
            .unwrap();
        assert_eq!(answered_in, asked_in, "the answer continues the same task");
        assert_eq!(b.find("#context-id").await.text().await.unwrap(), context);
        b.js("window.scrollTo(0, 0); return true").await;
        b.screenshot("multi").await;

        // The session exported (card, conversation, wire) and imported in a fresh page.
        let doc = b
            .js("return JSON.stringify(window.a2aInspector.sessionDocument())")
            .await;
        let path = std::env::temp_dir().join(format!("a2a-session-{}.json", std::process::id()));
        std::fs::write(&path, doc.as_str().unwrap()).unwrap();
        b.goto(&format!("{base}/inspector/#/agents")).await;
        b.wait_text("#agent-list", "echo").await;
        b.find("#import")
            .await
            .send_keys(&path.display().to_string())
            .await
            .unwrap();
        b.wait_text("#agent-name", "Multi").await;
        b.click("nav a[data-view=chat]").await;
        let imported = b.wait_text("#transcript", "my answer").await;
        assert!(imported.contains(&asked_in), "{imported}");
        assert!(
            !b.has("#composer").await,
            "an imported session is only looked at"
        );
        b.click("nav a[data-view=wire]").await;
        b.wait_text(".wire-list", "SendStreamingMessage").await;
        let _ = std::fs::remove_file(&path);

        // A new conversation forgets the context.
        b.goto(&format!("{base}/inspector/?agent=multi#/chat"))
            .await;
        b.wait_text("#agent-name", "Multi").await;
        b.send_message("start").await;
        b.wait_text("#context-id", "context ").await;
        b.click("#new-conversation").await;
        b.wait_text("#context-id", "a new conversation").await;
    })
    .await;
}
