//! A served streaming agent that honours cancel: `cargo run -p a2a-examples --example
//! streaming_agent`, then `a2a stream localhost:3000 go` (or `examples/follow_stream.rs`).
use std::time::Duration;

use a2a_server::prelude::*;

/// Counts down from 3, one number every half second, as chunks of one artifact.
pub struct Countdown;

#[async_trait]
impl AgentExecutor for Countdown {
    async fn execute(&self, ctx: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        task.start_work(None).await?;
        for n in (1..=3).rev() {
            ctx.unless_canceled(tokio::time::sleep(Duration::from_millis(500)))
                .await?;
            task.append_artifact(Artifact::text("count", n.to_string()), n == 1)
                .await?;
        }
        Ok(task.complete(None).await?)
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let card = AgentCard::new("Countdown", "Counts down from 3, streaming each number");
    A2aServer::new(Countdown, card)
        .serve("127.0.0.1:3000")
        .await
}
