//! A `thread_id` in the request's (or the message's) metadata names the conversation when
//! the message has no `contextId`: the same thread id continues the same context.

mod common;

use common::*;
use serde_json::json;

#[tokio::test]
async fn a_thread_id_names_and_selects_the_context() {
    let s = server().await;
    let mut contexts = Vec::new();
    let mut tasks = Vec::new();
    for (i, text) in ["complete", "complete"].iter().enumerate() {
        // Once in the request's metadata, once in the message's.
        let params = if i == 0 {
            json!({"message": user(text), "metadata": {"thread_id": "th-42"}})
        } else {
            let mut m = user(text);
            m["metadata"] = json!({"thread_id": "th-42"});
            json!({"message": m})
        };
        let r = rpc(&s.url, "SendMessage", params).await;
        let task = &r["result"]["task"];
        contexts.push(task["contextId"].as_str().unwrap().to_owned());
        tasks.push(task["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(contexts, ["th-42", "th-42"]);
    assert_ne!(tasks[0], tasks[1]);
    let listed = rpc(&s.url, "ListTasks", json!({"contextId": "th-42"})).await;
    assert_eq!(
        listed["result"]["tasks"].as_array().unwrap().len(),
        2,
        "{listed}"
    );

    // An explicit contextId wins over a thread id.
    let mut m = user("complete");
    m["contextId"] = json!("ctx-explicit");
    let r = rpc(
        &s.url,
        "SendMessage",
        json!({"message": m, "metadata": {"thread_id": "th-42"}}),
    )
    .await;
    assert_eq!(r["result"]["task"]["contextId"], "ctx-explicit");
}

/// Some v0.3 clients put the request metadata beside `params`, not inside it.
#[tokio::test]
async fn a_v03_thread_id_beside_params_counts_too() {
    let s = server().await;
    let message = json!({"kind": "message", "messageId": a2a_types::new_id(), "role": "user",
        "parts": [{"kind": "text", "text": "complete"}]});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": message}, "metadata": {"thread_id": "v03-thread"}});
    let r = post_json(&s.url, None, &body).await;
    assert_eq!(r["result"]["contextId"], "v03-thread", "{r}");
}
