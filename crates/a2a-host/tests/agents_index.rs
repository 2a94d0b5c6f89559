//! `GET /agents` (and `GET /` when no agent is at the root) lists the hosted agents with
//! their URLs and card URLs.

use a2a_host::AgentHost;
use a2a_server::ServeOptions;

#[tokio::test(flavor = "multi_thread")]
async fn agents_are_listed_with_their_cards() {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    for path in ["/agents", "/"] {
        let body: serde_json::Value = reqwest::get(format!("http://{addr}{path}"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ids: Vec<&str> = body["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["conformance", "echo", "multi", "slow"], "{path}");
        let card = body["agents"][1]["card"].as_str().unwrap();
        let fetched = reqwest::get(format!("http://{addr}{card}")).await.unwrap();
        assert_eq!(fetched.status(), 200, "{card}");
    }
}
