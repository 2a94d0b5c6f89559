//! `echo`: replies with a message echoing the text, or with a completed task carrying an
//! artifact when the text starts with `task:`.

use a2a_server::async_trait;
use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater};
use a2a_types::{AgentCard, Artifact, Message, Role};

use super::{base_card, skill};

/// The echo agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoAgent;

pub(crate) fn card() -> AgentCard {
    base_card(
        "Echo Agent",
        "Echoes your text back as a message; text starting with \"task:\" gets a task with an artifact instead.",
        vec![skill(
            "echo",
            "Echo",
            "Repeats the input",
            &["hello", "task: hello"],
        )],
    )
}

#[async_trait]
impl AgentExecutor for EchoAgent {
    async fn execute(&self, ctx: RequestContext, updater: TaskUpdater) -> Result<(), AgentError> {
        let text = ctx.user_text();
        match text.strip_prefix("task:") {
            Some(rest) => {
                let rest = rest.trim_start();
                updater.add_artifact(Artifact::text("echo", rest)).await?;
                updater
                    .complete(Some(updater.agent_text(format!("Echo: {rest}"))))
                    .await?;
            }
            None if ctx.task.is_some() => {
                // A continued task: answer inside it.
                updater
                    .add_artifact(Artifact::text("echo", text.clone()))
                    .await?;
                updater
                    .complete(Some(updater.agent_text(format!("Echo: {text}"))))
                    .await?;
            }
            None => {
                let reply = Message::new(Role::Agent, ctx.message.parts.clone());
                updater.reply(reply).await?;
            }
        }
        Ok(())
    }
}
