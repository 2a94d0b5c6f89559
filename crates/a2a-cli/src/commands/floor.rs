//! `a2a floor`: a bare axum endpoint that parses the same JSON-RPC `SendMessage` body as the
//! real server and answers a fixed completed task of the same shape as the real answer. It measures what the HTTP stack alone can
//! do on this machine: the floor for `a2a bench`.

use std::net::SocketAddr;

use a2a_types::{Message, SendMessageRequest, SendMessageResponse, Task, TaskState};
use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::post;
use clap::Args;
use serde::Deserialize;

#[derive(Debug, Args)]
pub(crate) struct FloorArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on.
    #[arg(long, default_value_t = 41299)]
    port: u16,
    /// Serve through the server's own connection handling (`a2a_server::serve`: accept loop,
    /// connection limits and deadlines, panic guard, body deadline) instead of plain
    /// `axum::serve`: the difference is what those layers cost with their features off.
    #[arg(long)]
    server_stack: bool,
}

#[derive(serde::Serialize)]
struct Reply {
    jsonrpc: &'static str,
    id: serde_json::Value,
    result: SendMessageResponse,
}

#[derive(Deserialize)]
struct Envelope {
    id: serde_json::Value,
    #[allow(dead_code)]
    method: String,
    params: SendMessageRequest,
}

async fn endpoint(body: Bytes) -> impl IntoResponse {
    let env: Envelope = match serde_json::from_slice(&body) {
        Ok(e) => e,
        Err(e) => return (axum::http::StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    };
    // A fixed task of the same shape and size as the real server's answer: ids on the task
    // and both messages, the client's message in the history, an agent status message.
    const TASK: &str = "00000000-0000-4000-8000-000000000001";
    const CONTEXT: &str = "00000000-0000-4000-8000-000000000002";
    const REPLY: &str = "00000000-0000-4000-8000-000000000003";
    let mut task = Task::new(TASK, CONTEXT, TaskState::Completed);
    let mut m = env.params.message;
    m.task_id = Some(TASK.to_owned());
    m.context_id = Some(CONTEXT.to_owned());
    task.history.push(m);
    let mut reply = Message::agent_text("Hello from TCK")
        .with_context_id(CONTEXT)
        .with_task_id(TASK);
    reply.message_id = REPLY.to_owned();
    task.status.message = Some(reply);
    let body = serde_json::to_string(&Reply {
        jsonrpc: "2.0",
        id: env.id,
        result: SendMessageResponse::Task(task),
    })
    .unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub(crate) async fn run(args: FloorArgs) -> anyhow::Result<()> {
    let addr: SocketAddr = format!("{}:{}", args.host, args.port)
        .parse()
        .context("address")?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!(
        "a2a floor: bare JSON-RPC endpoint on http://{}/",
        listener.local_addr()?
    );
    let router = Router::new().route("/", post(endpoint));
    if args.server_stack {
        a2a_server::serve(listener, router, std::future::pending()).await?;
    } else {
        // Plain `axum::serve`: none of the server's own accept loop, deadlines or limits, so
        // the floor is what the HTTP stack alone does.
        axum::serve(listener, router).await?;
    }
    Ok(())
}
