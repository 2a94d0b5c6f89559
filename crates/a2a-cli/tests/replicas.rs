//! Two `a2a serve` replicas on one PostgreSQL database: either one answers get and list for a
//! task the other runs, and a subscriber on one follows a task running on the other to its end.

mod common;

use a2a_client::A2aClient;
use a2a_types::{ListTasksRequest, Message, SendMessageRequest, StreamResponse, TaskState};
use common::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_follows_a_task_running_on_another() {
    let Some(url) = postgres_store().await else {
        return;
    };
    let a = serve(&["--store", &url]);
    let b = serve(&["--store", &url]);
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
    assert_eq!(last_state, TaskState::Completed);
    assert!(artifacts.contains(&"result".to_owned()), "{artifacts:?}");
    drop(stream);
}
