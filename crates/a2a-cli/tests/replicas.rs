//! Two `a2a serve` replicas on one PostgreSQL database: either one answers get and list for a
//! task the other runs, a subscriber on one follows a task running on the other to its end,
//! and a cancel sent to one stops the execution on the other. The replicas run with
//! `--store-poll 0`, so what one writes reaches the other's streams through LISTEN/NOTIFY
//! alone.

mod common;

use a2a_client::A2aClient;
use std::time::Duration;

use a2a_types::{ListTasksRequest, Message, SendMessageRequest, StreamResponse, TaskState};
use common::*;

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_follows_a_task_running_on_another() {
    follow_across(RunsOn::First).await;
}

/// The replica started second knows of the first only because the first answers its hello
/// (the first has written nothing since): without that, it would send the first no notices.
#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread")]
async fn the_first_replica_follows_a_task_running_on_one_started_after_it() {
    follow_across(RunsOn::Second).await;
}

#[derive(PartialEq)]
enum RunsOn {
    First,
    Second,
}

/// Starts two replicas; runs a task on one (A) and follows it from the other (B).
async fn follow_across(runs_on: RunsOn) {
    let Some(url) = postgres_store().await else {
        return;
    };
    let first = serve(&["--store", &url, "--store-poll", "0"]);
    let second = serve(&["--store", &url, "--store-poll", "0"]);
    let (a, b) = match runs_on {
        RunsOn::First => (&first, &second),
        RunsOn::Second => (&second, &first),
    };
    let on_a = A2aClient::connect(&format!("{}/a2a/slow", a.base))
        .await
        .unwrap();
    let on_b = A2aClient::connect(&format!("{}/a2a/slow", b.base))
        .await
        .unwrap();

    let mut stream = on_a
        .stream(SendMessageRequest::new(Message::user_text("1")))
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    let id = first.response.task_id().unwrap().to_owned();

    let seen = on_b.get_task(&id, None).await.unwrap();
    assert!(!seen.status.state.is_terminal(), "{:?}", seen.status.state);
    let listed = on_b.list_tasks(ListTasksRequest::default()).await.unwrap();
    assert!(listed.tasks.iter().any(|t| t.id == id));

    // Follow it from B while A runs it: B sees A's later events, to the end.
    let mut sub = on_b.subscribe(&id).await.unwrap();
    let mut artifacts = Vec::new();
    let mut last_state = TaskState::Unspecified;
    let followed = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(ev) = sub.next().await {
            match ev.unwrap().response {
                StreamResponse::ArtifactUpdate(a) => {
                    artifacts.push(a.artifact.name.unwrap_or_default())
                }
                StreamResponse::StatusUpdate(s) => last_state = s.status.state,
                StreamResponse::Task(t) => last_state = t.status.state,
                _ => {}
            }
        }
    })
    .await;
    assert!(
        followed.is_ok(),
        "B's subscriber never heard the end of the task"
    );
    assert_eq!(last_state, TaskState::Completed);
    assert!(artifacts.contains(&"result".to_owned()), "{artifacts:?}");
    drop(stream);
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_sent_to_one_replica_stops_the_task_on_another() {
    // At once: A has not begun to watch its execution (it waits up to 50 ms for
    // executions that end at once), so A learns of the cancel from the store when it does.
    // That the cancel lands within those 50 ms is timing (a few ms here: without the store
    // read this test fails); later than that, it passes through the notice.
    cancel_across(Duration::ZERO).await;
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_sent_to_one_replica_later_stops_the_task_on_another() {
    // Later: A watches its execution by then, and learns of the cancel from B's notice.
    cancel_across(Duration::from_millis(500)).await;
}

/// Runs an hour-long task on A, cancels it on B `after` A's first artifact, and checks
/// that A's execution stopped.
async fn cancel_across(after: Duration) {
    let Some(url) = postgres_store().await else {
        return;
    };
    let (a, a_log) = serve_logged(
        &["--store", &url, "--store-poll", "0"],
        "a2a_server=info,a2a_runtime=info",
    );
    let b = serve(&["--store", &url, "--store-poll", "0"]);
    let on_a = A2aClient::connect(&format!("{}/a2a/slow", a.base))
        .await
        .unwrap();
    let on_b = A2aClient::connect(&format!("{}/a2a/slow", b.base))
        .await
        .unwrap();

    // An hour of work on A, followed by a stream on A.
    let mut stream = on_a
        .stream(SendMessageRequest::new(Message::user_text("3600")))
        .await
        .unwrap();
    let mut id = String::new();
    while let Some(ev) = stream.next().await {
        if let StreamResponse::ArtifactUpdate(u) = ev.unwrap().response {
            id = u.task_id;
            break; // the `progress` artifact: A is now waiting inside the agent
        }
    }
    assert!(!id.is_empty());

    tokio::time::sleep(after).await;
    let canceled = on_b.cancel_task(&id).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);

    // A's stream hears of it and ends there.
    let mut last = TaskState::Unspecified;
    let followed = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(ev) = stream.next().await {
            if let StreamResponse::StatusUpdate(s) = ev.unwrap().response {
                last = s.status.state;
            }
        }
    })
    .await;
    assert!(followed.is_ok(), "A's stream never heard of the cancel");
    assert_eq!(last, TaskState::Canceled);
    // And A's execution stopped (it would otherwise wait an hour).
    let line = wait_for_line(
        &a_log,
        &[&id, "its execution here stopped"],
        Duration::from_secs(30),
    );
    assert!(line.is_some(), "A did not stop the execution of {id}");
    let task = on_a.get_task(&id, None).await.unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    let names: Vec<_> = task
        .artifacts
        .iter()
        .filter_map(|a| a.name.as_deref())
        .collect();
    assert_eq!(names, ["progress"]);
}
