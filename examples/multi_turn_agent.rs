//! A multi-turn agent: it asks a question (INPUT_REQUIRED) and finishes the task when the
//! answer arrives. `cargo run -p a2a-examples --example multi_turn_agent`, then
//! `a2a chat localhost:3001`.
use a2a_server::prelude::*;

/// Asks for a name, then greets.
pub struct Greeter;

#[async_trait]
impl AgentExecutor for Greeter {
    async fn execute(&self, ctx: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        match &ctx.task {
            // A new task: ask, and wait. The task pauses in INPUT_REQUIRED.
            None => {
                let question = task.agent_text("What is your name?");
                task.require_input(Some(question)).await?;
            }
            // The answer: the client sent it with this task's id, so the task goes on.
            Some(_) => {
                let greeting = format!("Hello, {}!", ctx.user_text().trim());
                task.add_artifact(Artifact::text("greeting", greeting))
                    .await?;
                task.complete(None).await?;
            }
        }
        Ok(())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let card = AgentCard::new("Greeter", "Asks your name, then greets you");
    A2aServer::new(Greeter, card).serve("127.0.0.1:3001").await
}
