//! contextId / taskId rules and multi-turn continuation.

mod common;

use common::*;
use serde_json::json;

#[tokio::test]
async fn input_required_continues_with_the_same_task() {
    let s = server().await;
    let first = send(&s.url, "input").await["task"].clone();
    let (id, ctx) = (
        first["id"].as_str().unwrap(),
        first["contextId"].as_str().unwrap(),
    );
    // Only taskId: the server infers the context.
    let mut follow = user("input the answer");
    follow["taskId"] = json!(id);
    let r = rpc(&s.url, "SendMessage", json!({"message": follow})).await;
    let t = &r["result"]["task"];
    assert_eq!(t["id"], id);
    assert_eq!(t["contextId"], ctx);
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(t["artifacts"][0]["parts"][0]["text"], "input the answer");
    let history = t["history"].as_array().unwrap();
    let texts: Vec<&str> = history
        .iter()
        .map(|m| m["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["input", "more please", "input the answer"], "{t}");
}

#[tokio::test]
async fn client_context_is_kept_and_new_tasks_join_it() {
    let s = server().await;
    let mut m = user("complete");
    m["contextId"] = json!("my-context");
    let a = rpc(&s.url, "SendMessage", json!({"message": m})).await["result"]["task"].clone();
    assert_eq!(a["contextId"], "my-context");
    let mut m = user("complete");
    m["contextId"] = json!("my-context");
    let b = rpc(&s.url, "SendMessage", json!({"message": m})).await["result"]["task"].clone();
    assert_eq!(b["contextId"], "my-context");
    assert_ne!(
        a["id"], b["id"],
        "contextId without taskId starts a new task"
    );
    let list = rpc(&s.url, "ListTasks", json!({"contextId": "my-context"})).await;
    assert_eq!(list["result"]["tasks"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn mismatched_context_is_refused() {
    let s = server().await;
    let t = send(&s.url, "input").await["task"].clone();
    let mut m = user("input x");
    m["taskId"] = t["id"].clone();
    m["contextId"] = json!("another-context");
    let r = rpc(&s.url, "SendMessage", json!({"message": m})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // The task is untouched and still waiting.
    let g = rpc(&s.url, "GetTask", json!({"id": t["id"]})).await;
    assert_eq!(g["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
}

#[tokio::test]
async fn v03_three_turn_conversation() {
    let s = server().await;
    let msg = |text: &str, task: Option<&str>, ctx: Option<&str>| {
        let mut m = json!({"kind": "message", "messageId": a2a_types::new_id(), "role": "user",
                           "parts": [{"kind": "text", "text": text}]});
        if let Some(t) = task {
            m["taskId"] = json!(t);
        }
        if let Some(c) = ctx {
            m["contextId"] = json!(c);
        }
        json!({"message": m})
    };
    let r1 = rpc03(&s.url, "message/send", msg("input", None, None)).await["result"].clone();
    assert_eq!(r1["status"]["state"], "input-required");
    let (task, ctx) = (
        r1["id"].as_str().unwrap(),
        r1["contextId"].as_str().unwrap(),
    );
    let r2 = rpc03(
        &s.url,
        "message/send",
        msg("input second", Some(task), Some(ctx)),
    )
    .await["result"]
        .clone();
    assert_eq!(r2["id"], task);
    assert_eq!(r2["status"]["state"], "completed");
    let r3 = rpc03(&s.url, "message/send", msg("third", None, Some(ctx))).await["result"].clone();
    assert_eq!(r3["contextId"], ctx);
    assert_ne!(r3["id"], task);
    assert_eq!(r3["status"]["state"], "completed");
}
