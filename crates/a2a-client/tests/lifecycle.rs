//! The client against this project's own agents: every reply shape, assembly of chunked
//! artifacts, continuation, listeners, deadlines, cancel, subscribe and resume, both versions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_client::{
    A2aClient, Binding, ClientError, Conversation, Decision, Outcome, ProtocolVersion, StopReason,
};
use a2a_host::{AgentHost, HostAgent};
use a2a_server::{AgentError, AgentExecutor, RequestContext, ServeOptions, TaskUpdater};
use a2a_types::{
    A2aError, AgentCard, Message, SendMessageConfiguration, SendMessageRequest, StreamResponse,
    TaskState,
};
use async_trait::async_trait;

/// Records the request metadata it sees and completes.
#[derive(Default)]
struct MetadataProbe {
    seen: Mutex<Vec<Option<serde_json::Map<String, serde_json::Value>>>>,
}

#[async_trait]
impl AgentExecutor for MetadataProbe {
    async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        self.seen.lock().unwrap().push(ctx.metadata.clone());
        u.complete(Some(u.agent_text("ok"))).await?;
        Ok(())
    }
}

async fn host(extra: Option<Arc<MetadataProbe>>) -> String {
    let mut host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    if let Some(probe) = extra {
        let mut card = AgentCard::default();
        card.name = "probe".into();
        card.capabilities.streaming = Some(true);
        host = host.agent(HostAgent::in_memory("probe", probe, card));
    }
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    format!("http://{addr}")
}

fn req(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}

/// The same agent through every binding and version it offers: JSON-RPC v1.0, JSON-RPC
/// v0.3, HTTP+JSON v1.0 and gRPC v1.0. The tests below run each scenario on all four and
/// expect the same outcomes.
async fn every_binding(url: &str) -> [A2aClient; 4] {
    let v1 = A2aClient::builder()
        .protocol_version(ProtocolVersion::V1)
        .binding(Binding::JsonRpc)
        .connect(url)
        .await
        .unwrap();
    let v03 = A2aClient::builder()
        .protocol_version(ProtocolVersion::V03)
        .connect(url)
        .await
        .unwrap();
    let rest = A2aClient::builder()
        .binding(Binding::HttpJson)
        .connect(url)
        .await
        .unwrap();
    assert_eq!(rest.endpoint(), url.trim_end_matches('/'));
    let grpc = A2aClient::builder()
        .binding(Binding::Grpc)
        .connect(url)
        .await
        .unwrap();
    assert_eq!(grpc.binding(), "GRPC");
    assert!(!grpc.endpoint().contains("://"), "{}", grpc.endpoint());
    [v1, v03, rest, grpc]
}

#[tokio::test(flavor = "multi_thread")]
async fn resolves_cards_and_prefers_v1() {
    let base = host(None).await;
    let c = A2aClient::connect(&format!("{base}/a2a/echo"))
        .await
        .unwrap();
    assert_eq!(c.protocol_version(), ProtocolVersion::V1);
    assert_eq!(c.endpoint(), format!("{base}/a2a/echo"));
    assert_eq!(c.card().name, "Echo Agent");
    // The host's query-style card URL works too.
    let c = A2aClient::connect(&format!(
        "{base}/.well-known/agent-card.json?assistant_id=multi"
    ))
    .await
    .unwrap();
    assert_eq!(c.card().name, "Multi Agent");
    // A card URL that only has the legacy v0.3 card.
    let c = A2aClient::connect(&format!("{base}/a2a/echo/.well-known/agent.json"))
        .await
        .unwrap();
    assert_eq!(c.protocol_version(), ProtocolVersion::V03);
    assert!(c.run(req("hi")).await.unwrap().is_success());
    let err = A2aClient::connect(&format!("{base}/a2a/nobody"))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::CardNotFound { .. }), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_reply_shape() {
    let base = host(None).await;
    for c in every_binding(&format!("{base}/a2a/echo")).await {
        let o = c.run(req("hello")).await.unwrap();
        assert!(
            matches!(&o, Outcome::Message(m) if m.text_content() == "hello"),
            "{o:?}"
        );
        let o = c.run(req("task: hello")).await.unwrap();
        assert!(matches!(o, Outcome::Completed(_)), "{o:?}");
        assert_eq!(o.text(), "hello");
        let o = Outcome::from_response(c.send(req("task: blocking")).await.unwrap());
        assert_eq!(o.text(), "blocking");
    }
    for c in every_binding(&format!("{base}/a2a/conformance")).await {
        let mut m = Message::user_text("x");
        m.message_id = format!("tck-reject-task-{}", m.message_id);
        let o = c.run(SendMessageRequest::new(m)).await.unwrap();
        assert!(matches!(o, Outcome::Rejected(_)), "{o:?}");
        assert_eq!(o.reason().as_deref(), Some("rejected"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn multi_artifacts_chunks_and_continuation() {
    let base = host(None).await;
    for c in every_binding(&format!("{base}/a2a/multi")).await {
        let mut conv = Conversation::new(c.clone());
        let o = conv.send("start").await.unwrap();
        let Outcome::InputRequired(i) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(i.prompt_text(), "What should I echo back?");
        let texts: Vec<String> = o.artifacts().iter().map(|a| a.text_content()).collect();
        assert_eq!(
            texts[..2],
            ["Three artifacts follow.", "Once upon a time."],
            "{texts:?}"
        );
        assert_eq!(o.artifacts().len(), 3);
        let task_id = i.task_id().to_owned();
        let ctx = i.context_id().to_owned();
        let o = conv.send("forty-two").await.unwrap();
        assert!(matches!(o, Outcome::Completed(_)), "{o:?}");
        assert_eq!(o.task_id(), Some(task_id.as_str()));
        assert_eq!(o.context_id(), Some(ctx.as_str()));
        assert!(o.text().ends_with("forty-two"), "{}", o.text());
        // A new turn after a terminal task starts a new task in the same context.
        let o = conv.send("again").await.unwrap();
        assert_ne!(o.task_id(), Some(task_id.as_str()));
        assert_eq!(o.context_id(), Some(ctx.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn listener_and_deadline_never_cancel() {
    let base = host(None).await;
    for c in every_binding(&format!("{base}/a2a/slow")).await {
        let o = c
            .run_with_listener(
                req("30"),
                |ev: &a2a_client::StreamEvent, _: Option<&a2a_types::Task>| {
                    if matches!(ev.response, StreamResponse::ArtifactUpdate(_)) {
                        Decision::StopWithArtifacts
                    } else {
                        Decision::Continue
                    }
                },
            )
            .await
            .unwrap();
        let Outcome::Stopped(s) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(s.reason, StopReason::Listener);
        assert!(s.answer.starts_with("started"), "{}", s.answer);
        let id = s.task_id().unwrap().to_owned();
        assert_eq!(
            c.get_task(&id, None).await.unwrap().status.state,
            TaskState::Working
        );
        assert_eq!(
            c.cancel_task(&id).await.unwrap().status.state,
            TaskState::Canceled
        );

        let o = c
            .run_with_deadline(req("30"), Duration::from_secs(1))
            .await
            .unwrap();
        let Outcome::Stopped(s) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(s.reason, StopReason::Deadline);
        let id = s.task_id().unwrap().to_owned();
        assert_eq!(
            c.get_task(&id, None).await.unwrap().status.state,
            TaskState::Working
        );
        let t = c.cancel_task(&id).await.unwrap();
        assert_eq!(t.status.state, TaskState::Canceled);
        assert_eq!(
            t.artifacts
                .iter()
                .filter_map(|a| a.name.as_deref())
                .collect::<Vec<_>>(),
            ["progress"]
        );
        let err = c.cancel_task(&id).await.unwrap_err();
        assert!(
            matches!(err.protocol(), Some(A2aError::TaskNotCancelable { .. })),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn subscribe_and_resume_from_an_event_id() {
    let base = host(None).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let c = A2aClient::builder()
            .binding(binding)
            .connect(&format!("{base}/a2a/slow"))
            .await
            .unwrap();
        subscribe_and_resume(&c).await;
    }
}

/// gRPC events carry no ids (its messages have no place for them), so a gRPC subscriber
/// follows a task to its end, and resumes with an id learned elsewhere: ids are positions in
/// the task's log, the same on every binding.
#[tokio::test(flavor = "multi_thread")]
async fn subscribe_over_grpc_and_resume_from_an_id_seen_on_json_rpc() {
    let base = host(None).await;
    let url = format!("{base}/a2a/slow");
    let grpc = A2aClient::builder()
        .binding(Binding::Grpc)
        .connect(&url)
        .await
        .unwrap();
    let jsonrpc = A2aClient::builder()
        .binding(Binding::JsonRpc)
        .connect(&url)
        .await
        .unwrap();
    let mut conf = SendMessageConfiguration::default();
    conf.return_immediately = true;
    let o = Outcome::from_response(
        grpc.send(req("0.3").with_configuration(conf))
            .await
            .unwrap(),
    );
    let id = o.task_id().unwrap().to_owned();
    let mut over_grpc = grpc.subscribe(&id).await.unwrap();
    let mut over_jsonrpc = jsonrpc.subscribe(&id).await.unwrap();
    let mut seen_grpc = Vec::new();
    while let Some(ev) = over_grpc.next().await {
        let ev = ev.unwrap();
        assert_eq!(ev.id, None);
        seen_grpc.push(ev.response);
    }
    let mut seen_jsonrpc = Vec::new();
    while let Some(ev) = over_jsonrpc.next().await {
        seen_jsonrpc.push(ev.unwrap());
    }
    assert!(matches!(seen_grpc[0], StreamResponse::Task(_)));
    assert!(matches!(
        seen_grpc.last(),
        Some(StreamResponse::StatusUpdate(s)) if s.status.state == TaskState::Completed
    ));
    // Both saw the same events after the first (each starts with a snapshot of its moment).
    let tail = |v: &[StreamResponse]| serde_json::to_value(&v[1..]).unwrap();
    let jsonrpc_events: Vec<_> = seen_jsonrpc.iter().map(|e| e.response.clone()).collect();
    assert_eq!(tail(&seen_grpc), tail(&jsonrpc_events));
    // Resuming over gRPC after the JSON-RPC stream's first update replays the rest.
    let cut = seen_jsonrpc[1].id.clone().expect("SSE events carry ids");
    let mut resumed = grpc.subscribe_after(&id, Some(&cut)).await.unwrap();
    let mut replay = Vec::new();
    while let Some(ev) = resumed.next().await {
        replay.push(ev.unwrap().response);
    }
    assert_eq!(
        serde_json::to_value(&replay).unwrap(),
        serde_json::to_value(&jsonrpc_events[2..]).unwrap()
    );
}

async fn subscribe_and_resume(c: &A2aClient) {
    let mut conf = SendMessageConfiguration::default();
    conf.return_immediately = true;
    let o = Outcome::from_response(c.send(req("0.3").with_configuration(conf)).await.unwrap());
    let id = o.task_id().unwrap().to_owned();
    let mut sub = c.subscribe(&id).await.unwrap();
    let first = sub.next().await.unwrap().unwrap();
    assert!(matches!(first.response, StreamResponse::Task(_)));
    let mut all = Vec::new();
    while let Some(ev) = sub.next().await {
        all.push(ev.unwrap());
    }
    assert!(all.last().unwrap().is_final);
    // Resuming from the first of those events replays exactly the rest.
    let cut = all[0].id.clone().expect("events carry ids");
    let mut resumed = c.subscribe_after(&id, Some(&cut)).await.unwrap();
    let mut replay = Vec::new();
    while let Some(ev) = resumed.next().await {
        replay.push(ev.unwrap().id);
    }
    let expected: Vec<_> = all[1..].iter().map(|e| e.id.clone()).collect();
    assert_eq!(replay, expected);
    // The task is done: a plain subscription is refused.
    let err = c.subscribe(&id).await.unwrap_err();
    assert!(
        matches!(err.protocol(), Some(A2aError::UnsupportedOperation { .. })),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_typed() {
    let base = host(None).await;
    for c in every_binding(&format!("{base}/a2a/echo")).await {
        let err = c.get_task("nope", None).await.unwrap_err();
        assert!(
            matches!(err.protocol(), Some(A2aError::TaskNotFound { .. })),
            "{err}"
        );
    }
    let [v1, v03, rest, grpc] = every_binding(&format!("{base}/a2a/echo")).await;
    assert!(matches!(
        v03.list_tasks(Default::default()).await,
        Err(ClientError::Unsupported(_))
    ));
    for c in [v1, rest, grpc] {
        assert!(c.list_tasks(Default::default()).await.is_ok());
        let err = c.extended_card().await.unwrap_err();
        assert!(
            matches!(err.protocol(), Some(A2aError::UnsupportedOperation { .. })),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn conversation_sends_thread_id() {
    let probe = Arc::new(MetadataProbe::default());
    let base = host(Some(probe.clone())).await;
    let c = A2aClient::connect(&format!("{base}/a2a/probe"))
        .await
        .unwrap();
    let mut conv = Conversation::new(c).with_thread_id(None);
    conv.send("one").await.unwrap();
    let ctx = conv.context_id().unwrap().to_owned();
    conv.send("two").await.unwrap();
    let seen = probe.seen.lock().unwrap().clone();
    assert_eq!(seen[0], None, "no context yet on the first turn");
    let thread = seen[1].as_ref().unwrap()["thread_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(thread, ctx, "thread_id defaults to the context id");
}
