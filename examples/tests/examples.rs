//! The example programs' agents and client, driven over real HTTP on loopback.

#![allow(dead_code, unreachable_pub)] // each example's `main` is not called here

#[path = "../agent_calls_agent.rs"]
mod agent_calls_agent;
#[path = "../follow_stream.rs"]
mod follow_stream;
#[path = "../multi_turn_agent.rs"]
mod multi_turn_agent;
#[path = "../streaming_agent.rs"]
mod streaming_agent;

use std::sync::Arc;
use std::time::Duration;

use a2a_client::types::{ListTasksRequest, Message, SendMessageRequest, StreamResponse};
use a2a_client::{A2aClient, Conversation, Outcome, StopReason};
use a2a_server::prelude::*;
use a2a_server::{
    HandlerConfig, InMemoryTaskStore, InProcessBus, LocalServer, RequestHandler, RuntimeConfig,
    TaskRuntime,
};

/// Serves `executor` with a cancel grace of an hour: an execution that ignored its
/// cancellation would then outlive any test, so `stopped()` returning proves it stopped.
async fn serve(executor: impl AgentExecutor, name: &str) -> anyhow::Result<LocalServer> {
    let mut config = RuntimeConfig::default();
    config.cancel_grace = Duration::from_secs(3600);
    let runtime = TaskRuntime::new(
        Arc::new(executor),
        Arc::new(InMemoryTaskStore::default()),
        Arc::new(InProcessBus::default()),
        config,
    );
    let card = AgentCard::new(name, "an example agent under test");
    let handler = RequestHandler::new(runtime, card, HandlerConfig::default());
    Ok(A2aServer::from_handler(handler).spawn_local().await?)
}

fn request(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}

/// Fails the test instead of hanging it.
async fn within<T>(what: &str, fut: impl Future<Output = T>) -> anyhow::Result<T> {
    tokio::time::timeout(Duration::from_secs(30), fut)
        .await
        .map_err(|_| anyhow::anyhow!("{what}: still waiting after 30 s"))
}

#[tokio::test]
async fn countdown_streams_every_chunk_and_completes() -> anyhow::Result<()> {
    let server = serve(streaming_agent::Ticker, "Ticker").await?;
    let client = A2aClient::connect(server.url()).await?;
    // The card says streaming without the agent having set it.
    assert!(client.supports_streaming(), "card: {:?}", client.card());
    let mut stream = client.stream(request("go")).await?;
    let mut chunks = Vec::new();
    while let Some(event) = stream.next().await {
        if let StreamResponse::ArtifactUpdate(a) = event?.response {
            chunks.push(a.artifact.text_content());
        }
    }
    assert_eq!(chunks, ["3\n", "2\n", "1"]);
    let outcome = client.run(request("go")).await?;
    let Outcome::Completed(task) = outcome else {
        anyhow::bail!("expected completed, got {outcome:?}");
    };
    // The chunks of one artifact, in order, not an artifact per number.
    assert_eq!(task.artifacts.len(), 1, "artifacts: {:?}", task.artifacts);
    assert_eq!(task.artifacts[0].name.as_deref(), Some("count"));
    assert_eq!(task.artifacts[0].text_content(), "3\n2\n1");
    server.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn countdown_stops_when_canceled() -> anyhow::Result<()> {
    let server = serve(streaming_agent::Ticker, "Ticker").await?;
    let runtime = server.runtime().clone();
    let client = A2aClient::connect(server.url()).await?;
    let mut stream = client.stream(request("go")).await?;
    let mut task_id = None;
    while let Some(event) = stream.next().await {
        match event?.response {
            StreamResponse::Task(t) => task_id = Some(t.id),
            StreamResponse::ArtifactUpdate(_) => break,
            _ => {}
        }
    }
    let task_id = task_id.ok_or_else(|| anyhow::anyhow!("no task snapshot came first"))?;
    let canceled = client.cancel_task(&task_id).await?;
    assert_eq!(canceled.status.state, TaskState::Canceled);
    // The execution ends by itself (the grace before an abort is an hour).
    within("the canceled execution to end", runtime.stopped()).await?;
    let task = client.get_task(&task_id, None).await?;
    assert_eq!(task.status.state, TaskState::Canceled);
    assert_eq!(task.artifacts_text(), "3\n", "nothing after the cancel");
    server.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn greeter_asks_then_completes_in_the_same_task() -> anyhow::Result<()> {
    let server = serve(multi_turn_agent::Greeter, "Greeter").await?;
    let mut conversation = Conversation::new(A2aClient::connect(server.url()).await?);
    let first = conversation.send("hi").await?;
    let Outcome::InputRequired(question) = &first else {
        anyhow::bail!("expected input required, got {first:?}");
    };
    assert_eq!(question.prompt_text(), "What is your name?");
    let asked_in = question.task_id().to_owned();
    let second = conversation.send("Ada").await?;
    let Outcome::Completed(task) = second else {
        anyhow::bail!("expected completed, got {second:?}");
    };
    assert_eq!(task.id, asked_in);
    assert_eq!(task.artifacts_text(), "Hello, Ada!");
    server.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn follow_reads_to_the_end_or_stops_at_its_deadline() -> anyhow::Result<()> {
    let countdown = serve(streaming_agent::Ticker, "Ticker").await?;
    let outcome = follow_stream::follow(countdown.url(), "go", Duration::from_secs(30)).await?;
    let Outcome::Completed(task) = outcome else {
        anyhow::bail!("expected completed, got {outcome:?}");
    };
    assert_eq!(task.artifacts_text(), "3\n2\n1");

    // An agent that works until canceled: the deadline stops the listening, not the task.
    let forever = serve(UntilCanceled, "Forever").await?;
    let outcome = follow_stream::follow(forever.url(), "go", Duration::from_secs(1)).await?;
    let Outcome::Stopped(stopped) = outcome else {
        anyhow::bail!("expected stopped, got {outcome:?}");
    };
    assert_eq!(stopped.reason, StopReason::Deadline);
    let id = stopped.task_id().expect("the task had started");
    let client = A2aClient::connect(forever.url()).await?;
    assert_eq!(
        client.get_task(id, None).await?.status.state,
        TaskState::Working
    );
    client.cancel_task(id).await?;
    countdown.shutdown().await?;
    forever.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn relay_streams_the_upstream_answer_and_cancels_upstream_with_its_own() -> anyhow::Result<()>
{
    let upstream = serve(streaming_agent::Ticker, "Ticker").await?;
    let upstream_client = A2aClient::connect(upstream.url()).await?;
    let relay = serve(
        agent_calls_agent::Relay {
            upstream: upstream_client.clone(),
        },
        "Relay",
    )
    .await?;
    let relay_runtime = relay.runtime().clone();
    let client = A2aClient::connect(relay.url()).await?;
    let outcome = client.run(request("go")).await?;
    let Outcome::Completed(task) = outcome else {
        anyhow::bail!("expected completed, got {outcome:?}");
    };
    assert_eq!(task.artifacts_text(), "3\n2\n1");

    // Cancel the relay's task after its first relayed chunk: the upstream task is canceled.
    let mut stream = client.stream(request("go")).await?;
    let mut task_id = None;
    while let Some(event) = stream.next().await {
        match event?.response {
            StreamResponse::Task(t) => task_id = Some(t.id),
            StreamResponse::ArtifactUpdate(_) => break,
            _ => {}
        }
    }
    let task_id = task_id.ok_or_else(|| anyhow::anyhow!("no task snapshot came first"))?;
    client.cancel_task(&task_id).await?;
    within("the relay's execution to end", relay_runtime.stopped()).await?;
    let listed = upstream_client
        .list_tasks(ListTasksRequest::default())
        .await?;
    let states: Vec<TaskState> = listed.tasks.iter().map(|t| t.status.state).collect();
    assert!(
        states.contains(&TaskState::Canceled),
        "upstream task states: {states:?}"
    );
    relay.shutdown().await?;
    upstream.shutdown().await?;
    Ok(())
}

/// Starts work, then waits until canceled.
struct UntilCanceled;

#[async_trait]
impl AgentExecutor for UntilCanceled {
    async fn execute(&self, ctx: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        task.start_work(None).await?;
        ctx.cancellation.cancelled().await;
        Ok(())
    }
}
