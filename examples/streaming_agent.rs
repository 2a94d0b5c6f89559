//! A served streaming agent that honours cancel: `cargo run -p a2a-examples --example
//! streaming_agent`, then `a2a stream localhost:3000 go` (or `examples/follow_stream.rs`).
use a2a_server::prelude::*;

const TICK: std::time::Duration = std::time::Duration::from_millis(500);

/// Counts down from 3, one number a tick, as chunks of one artifact.
pub struct Ticker;

#[async_trait]
impl AgentExecutor for Ticker {
    async fn execute(&self, ctx: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        task.start_work(None).await?;
        let mut count = task.artifact_writer("count"); // one artifact, sent in chunks
        for (i, text) in ["3\n", "2\n", "1"].into_iter().enumerate() {
            ctx.unless_canceled(tokio::time::sleep(TICK)).await?; // canceled: stop here
            count.chunk_text(text, i == 2).await?; // the last chunk closes the artifact
        }
        Ok(task.complete(None).await?)
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let card = AgentCard::new("Ticker", "Counts down from 3, streaming each number");
    A2aServer::new(Ticker, card).serve("127.0.0.1:3000").await
}
