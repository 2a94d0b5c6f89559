//! `a2a floor`: a bare axum endpoint that parses the same JSON-RPC `SendMessage` body as the
//! real server and answers a fixed completed task. It measures what the HTTP stack alone can
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
    let mut task = Task::new("fixed-task", "fixed-context", TaskState::Completed);
    task.history.push(env.params.message);
    task.status.message = Some(Message::agent_text("Hello from TCK"));
    let body = serde_json::json!({"jsonrpc": "2.0", "id": env.id, "result": SendMessageResponse::Task(task)});
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
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
    a2a_server::serve(listener, router, std::future::pending()).await?;
    Ok(())
}
