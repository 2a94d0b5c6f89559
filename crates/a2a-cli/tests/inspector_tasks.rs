//! The inspector's task list and task page in a real browser: tasks listed with a state
//! filter; a task's page with its status timeline (from the host's log, with timestamps),
//! history and artifacts.

mod browser;
mod common;

use a2a_client::{A2aClient, Outcome};
use a2a_types::{Message, SendMessageRequest};
use browser::Browser;
use common::*;

#[cfg_attr(
    not(a2a_browser),
    ignore = "needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread")]
async fn tasks_are_listed_filtered_and_each_has_a_timeline() {
    let s = serve(&["--store", "memory"]);
    let base = s.base.clone();
    let echo = A2aClient::connect(&format!("{base}/a2a/echo"))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for text in ["task: first", "task: second"] {
        let o = echo
            .run(SendMessageRequest::new(Message::user_text(text)))
            .await
            .unwrap();
        let Outcome::Completed(t) = o else {
            panic!("{o:?}")
        };
        ids.push(t.id);
    }
    let b = Browser::start("tasks", 1280, 800).await;
    b.check(async {
        b.goto(&format!("{base}/inspector/?agent=echo#/tasks"))
            .await;
        let list = b.wait_text("#task-list", &ids[0]).await;
        assert!(list.contains(&ids[1]), "{list}");
        assert!(list.contains("completed"), "{list}");

        // Filtered by a state no task is in: none listed.
        b.choose("#filter-state", "TASK_STATE_WORKING").await;
        b.click("#apply-filters").await;
        b.wait_text("#task-list", "No tasks match").await;
        b.choose("#filter-state", "TASK_STATE_COMPLETED").await;
        b.click("#apply-filters").await;
        b.wait_text("#task-list", &ids[1]).await;

        // A task's page: its timeline with times, its history and its artifact.
        b.click(&format!("#task-list tr[data-task-id=\"{}\"] a", ids[0]))
            .await;
        let timeline = b.wait_text("#task-timeline", "completed").await;
        assert!(
            timeline.contains("submitted") || timeline.contains("working"),
            "{timeline}"
        );
        let rows = b
            .client
            .find_all(fantoccini::Locator::Css("#task-timeline li"))
            .await
            .unwrap();
        assert!(rows.len() >= 2, "a timeline of every status: {timeline}");
        assert!(
            !timeline.contains("(no time)"),
            "each status has its time: {timeline}"
        );
        let page = b.wait_text("#task-page", "first").await;
        assert!(
            page.contains("History (1)") || page.contains("History ("),
            "{page}"
        );
        assert!(page.contains("echo"), "the artifact: {page}");
        b.screenshot("task").await;
    })
    .await;
}
