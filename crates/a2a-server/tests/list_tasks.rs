//! `ListTasks`: filters, ordering, cursor pagination, artifacts and history shaping.

mod common;

use std::collections::HashSet;

use common::*;
use serde_json::json;

#[tokio::test]
async fn pages_filters_and_shapes() {
    let s = server().await;
    let mut ids = Vec::new();
    for i in 0..7 {
        let mut m = user("complete");
        m["contextId"] = json!(if i % 2 == 0 { "even" } else { "odd" });
        let r = rpc(&s.url, "SendMessage", json!({"message": m})).await;
        ids.push(r["result"]["task"]["id"].as_str().unwrap().to_owned());
    }
    send(&s.url, "input").await;

    let all = rpc(&s.url, "ListTasks", json!({})).await["result"].clone();
    assert_eq!(all["totalSize"], 8);
    assert_eq!(all["pageSize"], 50);
    assert_eq!(
        all["nextPageToken"], "",
        "always present, empty on the last page"
    );
    let first = &all["tasks"][0];
    assert!(
        first.get("artifacts").is_none(),
        "artifacts omitted unless asked for"
    );
    let stamps: Vec<&str> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"]["timestamp"].as_str().unwrap())
        .collect();
    assert!(
        stamps.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {stamps:?}"
    );

    // Paging through everything with pageSize 3 visits each task once.
    let mut seen = HashSet::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let mut params = json!({"pageSize": 3});
        if !token.is_empty() {
            params["pageToken"] = json!(token);
        }
        let page = rpc(&s.url, "ListTasks", params).await["result"].clone();
        for t in page["tasks"].as_array().unwrap() {
            assert!(
                seen.insert(t["id"].as_str().unwrap().to_owned()),
                "duplicate across pages"
            );
        }
        pages += 1;
        token = page["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!((seen.len(), pages), (8, 3));

    let even = rpc(
        &s.url,
        "ListTasks",
        json!({"contextId": "even", "includeArtifacts": true, "historyLength": 0}),
    )
    .await["result"]
        .clone();
    assert_eq!(even["totalSize"], 4);
    let t = &even["tasks"][0];
    assert_eq!(t["artifacts"][0]["artifactId"], "out");
    assert!(t.get("history").is_none());

    let waiting = rpc(
        &s.url,
        "ListTasks",
        json!({"status": "TASK_STATE_INPUT_REQUIRED"}),
    )
    .await["result"]
        .clone();
    assert_eq!(waiting["totalSize"], 1);
    let later = rpc(
        &s.url,
        "ListTasks",
        json!({"statusTimestampAfter": "2100-01-01T00:00:00Z"}),
    )
    .await["result"]
        .clone();
    assert_eq!(later["totalSize"], 0);
    assert_eq!(later["tasks"], json!([]));
}
