//! An agent that calls another agent: it forwards each message to the agent at `UPSTREAM`
//! (default `http://127.0.0.1:3000`, the `streaming_agent` example), streams the upstream
//! artifacts back as its own, and cancels the upstream task when its own is canceled.
//! `cargo run -p a2a-examples --example agent_calls_agent` serves it on port 3002.
use a2a_client::A2aClient;
use a2a_client::types::{SendMessageRequest, StreamResponse};
use a2a_server::prelude::*;

/// Relays messages to another agent.
pub struct Relay {
    /// The agent called.
    pub upstream: A2aClient,
}

#[async_trait]
impl AgentExecutor for Relay {
    async fn execute(&self, ctx: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        task.start_work(None).await?;
        let request = SendMessageRequest::new(Message::user_text(ctx.user_text()));
        let mut events = self.upstream.stream(request).await?;
        let (mut upstream_task, mut last): (Option<String>, _) = (None, TaskState::Unspecified);
        loop {
            let event = match ctx.unless_canceled(events.next()).await {
                Ok(Some(event)) => event?,
                Ok(None) => break,
                Err(canceled) => {
                    // Ours was canceled: theirs is not needed any more.
                    if let Some(id) = &upstream_task {
                        self.upstream.cancel_task(id).await?;
                    }
                    return Err(canceled.into());
                }
            };
            match event.response {
                StreamResponse::Task(t) => (upstream_task, last) = (Some(t.id), t.status.state),
                StreamResponse::StatusUpdate(s) => last = s.status.state,
                StreamResponse::ArtifactUpdate(a) => {
                    task.artifact_chunk(a.artifact, a.append, a.last_chunk)
                        .await?;
                }
                StreamResponse::Message(m) => {
                    task.add_artifact(Artifact::text("reply", m.text_content()))
                        .await?;
                    last = TaskState::Completed;
                }
                _ => {}
            }
        }
        match last {
            TaskState::Completed => task.complete(None).await?,
            other => {
                let why = task.agent_text(format!("the upstream agent ended {other}"));
                task.fail(Some(why)).await?;
            }
        }
        Ok(())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let upstream = std::env::var("UPSTREAM").unwrap_or_else(|_| "http://127.0.0.1:3000".into());
    let relay = Relay {
        upstream: A2aClient::connect(&upstream).await?,
    };
    let card = AgentCard::new("Relay", "Forwards your message to another agent");
    A2aServer::new(relay, card).serve("127.0.0.1:3002").await?;
    Ok(())
}
