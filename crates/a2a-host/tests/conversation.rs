//! Two hosted agents hold a 3-round conversation through the host: a `remote` agent relays
//! each round to an `exec` agent in the same conversation, over v1.0 and over v0.3, and the
//! far agent sees the thread grow (every earlier round of the context, in order).

mod common;

use std::sync::Arc;

use a2a_client::{A2aClient, Conversation, Outcome, ProtocolVersion};
use a2a_host::exec::ExecAgent;
use a2a_host::remote::RemoteAgent;
use a2a_host::{AgentHost, HostAgent};
use a2a_server::ServeOptions;
use common::card;

#[tokio::test(flavor = "multi_thread")]
async fn three_rounds_through_a_relay_on_each_version() {
    // The far agent answers with how many messages of the conversation it was shown, and
    // the texts of the user's earlier messages.
    let counter = ExecAgent::new(vec![
        "sh".into(),
        "-c".into(),
        r#"text=$(cat); n=$(printf '%s' "$A2A_HISTORY" | grep -o '"messageId"' | wc -l); printf '%s after %s' "$text" "$n""#.into(),
    ]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let far = format!("http://{addr}/a2a/counter");
    let host = AgentHost::new(ServeOptions::default())
        .agent(HostAgent::in_memory(
            "counter",
            Arc::new(counter),
            card("counter"),
        ))
        .agent(HostAgent::in_memory(
            "relay-v1",
            Arc::new(
                RemoteAgent::new(far.clone(), None).with_protocol_version(ProtocolVersion::V1),
            ),
            card("relay-v1"),
        ))
        .agent(HostAgent::in_memory(
            "relay-v03",
            Arc::new(RemoteAgent::new(far, None).with_protocol_version(ProtocolVersion::V03)),
            card("relay-v03"),
        ));
    tokio::spawn(a2a_server::serve(
        listener,
        host.router(),
        std::future::pending(),
    ));

    for relay in ["relay-v1", "relay-v03"] {
        let client = A2aClient::connect(&format!("http://{addr}/a2a/{relay}"))
            .await
            .unwrap();
        let mut conv = Conversation::new(client);
        let mut answers = Vec::new();
        for round in ["one", "two", "three"] {
            let Outcome::Completed(task) = conv.send(round).await.unwrap() else {
                panic!("{relay}: round {round}")
            };
            answers.push(task.artifacts_text());
        }
        // Each round, the far agent was shown the earlier rounds of the same conversation:
        // one message each (the user's; an exec agent's answer is an artifact, not a message).
        assert_eq!(
            answers,
            ["one after 0", "two after 1", "three after 2"],
            "{relay}"
        );
    }
}
