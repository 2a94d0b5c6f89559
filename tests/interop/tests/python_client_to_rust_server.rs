//! The official Python SDK client against `a2a serve`'s agents, over v1.0 (JSON-RPC,
//! HTTP+JSON, gRPC) and v0.3.

mod common;

use common::*;

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn send_and_get_a_task() {
    let Some(py) = python() else { return };
    let base = start_host().await;
    for protocol in ["1.0", "0.3", "rest", "grpc"] {
        let out = sdk_scenario(&py, "send-get", &format!("{base}/a2a/echo"), Some(protocol)).await;
        assert_eq!(out["state"], "TASK_STATE_COMPLETED", "{protocol}: {out}");
        let out = sdk_scenario(&py, "message", &format!("{base}/a2a/echo"), Some(protocol)).await;
        assert_eq!(out["text"], "just say this");
    }
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn stream_times_out_then_cancel_keeps_only_progress() {
    let Some(py) = python() else { return };
    let base = start_host().await;
    for protocol in ["1.0", "0.3", "rest", "grpc"] {
        let out = sdk_scenario(
            &py,
            "slow-timeout-cancel",
            &format!("{base}/a2a/slow"),
            Some(protocol),
        )
        .await;
        assert_eq!(out["state"], "TASK_STATE_CANCELED", "{protocol}: {out}");
        assert_eq!(out["artifacts"], serde_json::json!(["progress"]));
    }
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn multi_through_input_required_collects_every_artifact() {
    let Some(py) = python() else { return };
    let base = start_host().await;
    for protocol in ["1.0", "0.3", "rest", "grpc"] {
        let out = sdk_scenario(&py, "multi", &format!("{base}/a2a/multi"), Some(protocol)).await;
        let names: Vec<&str> = out["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["summary", "story", "stats", "echo"],
            "{protocol}: {out}"
        );
        assert_eq!(out["artifacts"][1]["text"], "Once upon a time.");
    }
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn plain_http_v03_three_turns() {
    let Some(py) = python() else { return };
    let base = start_host().await;
    let out = sdk_scenario(&py, "v03-conversation", &format!("{base}/a2a/multi"), None).await;
    let tasks = out["tasks"].as_array().unwrap();
    assert_eq!(tasks[0], tasks[1], "turn 2 continues the task");
    assert_ne!(
        tasks[0], tasks[2],
        "turn 3 starts a new task in the context"
    );
}
