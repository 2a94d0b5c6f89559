//! The built-in `conformance` agent serves both official conformance suites: `tck-` messageIds
//! follow the v1.0 scenarios, any other message keeps its task open turn after turn (what the
//! v0.3 suite expects), and the card declares every capability the server implements.

use a2a_client::{A2aClient, Outcome, ProtocolVersion};
use a2a_host::AgentHost;
use a2a_server::ServeOptions;
use a2a_types::{Message, SendMessageRequest, TaskState};

async fn conformance_url() -> String {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    format!("http://{addr}/a2a/conformance")
}

async fn client(url: &str, v: ProtocolVersion) -> A2aClient {
    A2aClient::builder()
        .protocol_version(v)
        .connect(url)
        .await
        .unwrap()
}

fn turn(text: &str, task_id: Option<&str>) -> SendMessageRequest {
    let mut m = Message::user_text(text);
    m.task_id = task_id.map(str::to_owned);
    SendMessageRequest::new(m)
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_messages_keep_the_task_open_until_canceled() {
    let url = conformance_url().await;
    for v in [ProtocolVersion::V1, ProtocolVersion::V03] {
        let c = client(&url, v).await;
        let o = c.run(turn("hello", None)).await.unwrap();
        let Outcome::InputRequired(first) = &o else {
            panic!("{v:?}: {o:?}")
        };
        assert!(
            first.prompt_text().contains("Turn 1 received: hello"),
            "{v:?}"
        );
        let id = first.task_id().to_owned();
        for n in 2..=3 {
            let o = c.run(turn(&format!("more {n}"), Some(&id))).await.unwrap();
            let Outcome::InputRequired(i) = &o else {
                panic!("{v:?} turn {n}: {o:?}")
            };
            assert_eq!(i.task_id(), id, "{v:?}: the same task");
            assert!(
                i.prompt_text()
                    .contains(&format!("Turn {n} received: more {n}")),
                "{v:?}: {}",
                i.prompt_text()
            );
        }
        let task = c.get_task(&id, Some(2)).await.unwrap();
        assert_eq!(task.status.state, TaskState::InputRequired);
        assert!(task.history.len() <= 2, "{v:?}: historyLength honoured");
        let canceled = c.cancel_task(&id).await.unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled, "{v:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tck_prefixes_follow_the_v1_scenarios() {
    let url = conformance_url().await;
    let c = client(&url, ProtocolVersion::V1).await;
    for prefix in ["tck-complete-task", "tck-some-future-scenario"] {
        let mut m = Message::user_text("hi");
        m.message_id = format!("{prefix}-{}", m.message_id);
        let o = c.run(SendMessageRequest::new(m)).await.unwrap();
        let Outcome::Completed(t) = &o else {
            panic!("{prefix}: {o:?}")
        };
        let status = t.status.message.as_ref().unwrap().text_content();
        assert_eq!(status, "Hello from TCK", "{prefix}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_declares_the_extended_card_and_serves_it() {
    let url = conformance_url().await;
    let c = client(&url, ProtocolVersion::V1).await;
    assert_eq!(c.card().capabilities.extended_agent_card, Some(true));
    assert_eq!(c.card().capabilities.streaming, Some(true));
    let extended = c.extended_card().await.unwrap();
    assert!(
        extended.skills.len() > c.card().skills.len(),
        "the extended card says more than the public one"
    );
    // v0.3's *authenticated* extended card needs authentication, which this agent does not
    // declare, so its v0.3 card does not offer one.
    let legacy: serde_json::Value = reqwest_json(&format!("{url}/.well-known/agent.json")).await;
    assert_eq!(
        legacy["supportsAuthenticatedExtendedCard"], false,
        "{legacy}"
    );
}

async fn reqwest_json(url: &str) -> serde_json::Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// `conformance-bare` declares no optional capability and requires an extension, so the
/// suite's capability-absent MUST tests (CORE-CAP-002, -003, -004) can run against it.
#[tokio::test(flavor = "multi_thread")]
async fn the_bare_agent_refuses_what_it_does_not_declare() {
    let bare = a2a_host::builtin::builtin("conformance-bare").unwrap();
    let host = AgentHost::new(ServeOptions::default()).root(bare.into());
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    let url = format!("http://{addr}");
    let plain = client(&url, ProtocolVersion::V1).await;
    assert_eq!(plain.card().capabilities.streaming, Some(false));
    let err = plain.send(turn("hello", None)).await.unwrap_err();
    assert_eq!(
        err.protocol().map(|e| e.code()),
        Some(a2a_types::ErrorCode::EXTENSION_SUPPORT_REQUIRED),
        "{err}"
    );
    let opted_in = A2aClient::builder()
        .header("A2A-Extensions", a2a_host::builtin::TCK_REQUIRED_EXTENSION)
        .connect(&url)
        .await
        .unwrap();
    let o = opted_in.run(turn("hello", None)).await.unwrap();
    assert!(matches!(o, Outcome::InputRequired(_)), "{o:?}");
    let err = opted_in.extended_card().await.unwrap_err();
    assert_eq!(
        err.protocol().map(|e| e.code()),
        Some(a2a_types::ErrorCode::UNSUPPORTED_OPERATION),
        "{err}"
    );
}
