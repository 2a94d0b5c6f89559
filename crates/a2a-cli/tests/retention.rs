//! Bounded growth: a task left waiting for input is canceled as expired after
//! `--idle-expiry` (on a SQL store and in memory alike), and on a SQL store finished tasks are
//! deleted, events and all, after `--retention`.

mod common;

use std::time::Duration;

use a2a_client::{A2aClient, Outcome};
use a2a_types::{Message, SendMessageRequest, Task, TaskState};
use common::*;

/// Polls `check` every 100 ms, for at most 20 s (nothing to subscribe to for a deletion).
async fn eventually<T>(mut check: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..200 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the store's upkeep did not happen within 20 s");
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_tasks_expire_and_finished_tasks_go() {
    let store = temp_store();
    let s = serve(&[
        "--store",
        &store,
        "--lease-expiry",
        "1",
        "--idle-expiry",
        "1",
        "--retention",
        "2",
    ]);
    let multi = A2aClient::connect(&format!("{}/a2a/multi", s.base))
        .await
        .unwrap();
    let o = multi
        .run(SendMessageRequest::new(Message::user_text("start")))
        .await
        .unwrap();
    let Outcome::InputRequired(waiting) = &o else {
        panic!("{o:?}")
    };
    let id = waiting.task_id().to_owned();

    let expired: Task = eventually(async || {
        let t = multi.get_task(&id, None).await.ok()?;
        (t.status.state == TaskState::Canceled).then_some(t)
    })
    .await;
    let reason = expired.status.message.unwrap().text_content();
    assert!(reason.contains("expired"), "{reason}");
    assert!(
        !expired.artifacts.is_empty(),
        "what was produced stays until deleted"
    );

    // Now finished, it is deleted once past retention.
    eventually(async || multi.get_task(&id, None).await.is_err().then_some(())).await;
    let err = multi.get_task(&id, None).await.unwrap_err();
    assert!(
        matches!(
            err.protocol(),
            Some(a2a_types::A2aError::TaskNotFound { .. })
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_tasks_expire_in_memory_too() {
    let s = serve(&["--store", "memory", "--idle-expiry", "1"]);
    let multi = A2aClient::connect(&format!("{}/a2a/multi", s.base))
        .await
        .unwrap();
    let o = multi
        .run(SendMessageRequest::new(Message::user_text("start")))
        .await
        .unwrap();
    let Outcome::InputRequired(waiting) = &o else {
        panic!("{o:?}")
    };
    let id = waiting.task_id().to_owned();
    let expired: Task = eventually(async || {
        let t = multi.get_task(&id, None).await.ok()?;
        (t.status.state == TaskState::Canceled).then_some(t)
    })
    .await;
    let reason = expired.status.message.unwrap().text_content();
    assert!(reason.contains("expired"), "{reason}");
}
