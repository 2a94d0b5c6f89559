//! `remote` agents: a chain of two hosted agents, on each binding, and a cancel that reaches
//! the far end.

mod common;

use std::sync::Arc;
use std::time::Duration;

use a2a_client::{A2aClient, Binding, Outcome};
use a2a_host::remote::RemoteAgent;
use a2a_host::{AgentHost, HostAgent};
use a2a_server::ServeOptions;
use a2a_types::{AgentCard, StreamResponse, TaskState};
use common::req;

async fn far_end() -> String {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    format!("http://{addr}")
}

async fn forwarder(to: String, binding: Option<Binding>) -> A2aClient {
    let mut card = AgentCard::new("fwd", "forwards");
    card.capabilities.streaming = Some(true);
    let host = AgentHost::new(ServeOptions::default()).agent(HostAgent::in_memory(
        "fwd",
        Arc::new(RemoteAgent::new(to, binding)),
        card,
    ));
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    A2aClient::connect(&format!("http://{addr}/a2a/fwd"))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chain_of_two_hosts_on_every_binding() {
    let far = far_end().await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let c = forwarder(format!("{far}/a2a/multi"), Some(binding)).await;
        let first = c.run(req("start")).await.unwrap();
        let Outcome::InputRequired(ask) = &first else {
            panic!("{binding:?}: {first:?}")
        };
        // The continuation goes to the same remote task.
        let mut next = req("more");
        next.message.task_id = Some(ask.task_id().to_owned());
        next.message.context_id = Some(ask.context_id().to_owned());
        let Outcome::Completed(task) = c.run(next).await.unwrap() else {
            panic!("{binding:?}")
        };
        let names: Vec<&str> = task
            .artifacts
            .iter()
            .filter_map(|a| a.name.as_deref())
            .collect();
        assert_eq!(names, ["summary", "story", "stats", "echo"], "{binding:?}");

        let c = forwarder(format!("{far}/a2a/echo"), Some(binding)).await;
        let Outcome::Message(m) = c.run(req("plain")).await.unwrap() else {
            panic!("{binding:?}")
        };
        assert_eq!(m.text_content(), "plain");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_reaches_the_remote_task() {
    let far = far_end().await;
    let far_client = A2aClient::connect(&format!("{far}/a2a/slow"))
        .await
        .unwrap();
    let c = forwarder(format!("{far}/a2a/slow"), None).await;
    let mut stream = c.stream(req("30")).await.unwrap();
    let mut ours = None;
    while let Some(ev) = stream.next().await {
        let ev = ev.unwrap();
        if let StreamResponse::Task(t) = &ev.response {
            ours = Some(t.id.clone());
        }
        if matches!(ev.response, StreamResponse::ArtifactUpdate(_)) {
            break;
        }
    }
    let canceled = c.cancel_task(ours.as_deref().unwrap()).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    // The far end's only task is canceled too.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let page = far_client.list_tasks(Default::default()).await.unwrap();
        if page.tasks.len() == 1 && page.tasks[0].status.state == TaskState::Canceled {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "far end: {:?}",
            page.tasks
                .iter()
                .map(|t| t.status.state)
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
