//! The runtime enforces the task lifecycle whatever the agent does.

mod common;

use common::*;
use serde_json::json;

fn status_text(task: &serde_json::Value) -> String {
    task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn a_panicking_agent_fails_its_task_and_the_server_lives() {
    let s = server().await;
    let t = send(&s.url, "panic").await["task"].clone();
    assert_eq!(t["status"]["state"], "TASK_STATE_FAILED");
    assert!(status_text(&t).contains("boom in the agent"), "{t}");
    let t = send(&s.url, "panic-early").await["task"].clone();
    assert_eq!(t["status"]["state"], "TASK_STATE_FAILED");
    assert!(status_text(&t).contains("boom before anything"), "{t}");
    assert_eq!(
        send(&s.url, "fine").await["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

#[tokio::test]
async fn returning_without_a_final_state_fails_the_task() {
    let s = server().await;
    for word in ["return", "nothing"] {
        let t = send(&s.url, word).await["task"].clone();
        assert_eq!(t["status"]["state"], "TASK_STATE_FAILED", "{word}: {t}");
        assert!(status_text(&t).contains("without a final state"), "{t}");
    }
    let t = send(&s.url, "error").await["task"].clone();
    assert_eq!(t["status"]["state"], "TASK_STATE_FAILED");
    assert!(status_text(&t).contains("the model is down"));
}

#[tokio::test]
async fn nothing_follows_a_terminal_state() {
    let s = server().await;
    let t = send(&s.url, "after-terminal").await["task"].clone();
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
    let g = rpc(&s.url, "GetTask", json!({"id": t["id"]})).await;
    assert_eq!(g["result"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn last_chunk_closes_an_artifact() {
    let s = server().await;
    let t = send(&s.url, "closed-chunk").await["task"].clone();
    assert_eq!(status_text(&t), "refused=true");
    assert_eq!(t["artifacts"][0]["parts"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn terminal_states_from_the_agent() {
    let s = server().await;
    for (word, state) in [
        ("state failed", "TASK_STATE_FAILED"),
        ("state rejected", "TASK_STATE_REJECTED"),
    ] {
        let t = send(&s.url, word).await["task"].clone();
        assert_eq!(t["status"]["state"], state);
    }
}
