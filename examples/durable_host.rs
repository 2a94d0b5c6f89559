//! A durable host: two agents whose tasks are kept in an SQLite file, so that they survive
//! the process (a crash included). `cargo run -p a2a-examples --example durable_host`
//! (`A2A_STORE`, `A2A_ADDRESS` to change where), then `a2a send localhost:41242/a2a/greeter Ada`.
use std::sync::Arc;

use a2a_host::{HostBuilder, builtin::builtin, config::ConfiguredAgent};
use a2a_server::prelude::*;

/// Greets whoever the message names, in a completed task.
pub struct Greeter;

#[async_trait]
impl AgentExecutor for Greeter {
    async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        let hello = u.agent_text(format!("Hello, {}!", ctx.user_text()));
        Ok(u.complete(Some(hello)).await?)
    }
}

#[tokio::main]
pub async fn main() -> anyhow::Result<()> {
    let var = |name, default: &str| std::env::var(name).unwrap_or(default.to_owned());
    let greeter = AgentCard::new("Greeter", "Greets whoever you name");
    let host = HostBuilder::new()
        .agent(ConfiguredAgent::new("greeter", Arc::new(Greeter), greeter))
        .agent(builtin("slow").expect("a built-in agent"))
        .store(var("A2A_STORE", "sqlite:durable.db"))
        .bind(var("A2A_ADDRESS", "127.0.0.1:41242").as_str())
        .await?;
    println!("serving on {}", host.base_url());
    Ok(host.serve(a2a_server::shutdown_signal()).await?)
}
