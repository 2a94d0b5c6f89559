//! Helpers: one agent hosted on a free port, and a plain request.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use a2a_client::A2aClient;
use a2a_host::{AgentHost, HostAgent};
use a2a_server::{AgentExecutor, ServeOptions};
use a2a_types::{AgentCard, Message, SendMessageRequest};

/// A streaming card named `name`.
pub fn card(name: &str) -> AgentCard {
    let mut card = AgentCard::new(name, "test");
    card.capabilities.streaming = Some(true);
    card
}

/// `agent` hosted alone at `/a2a/x` on 127.0.0.1, and a client connected to it.
pub async fn serve(agent: impl AgentExecutor) -> A2aClient {
    let host = AgentHost::new(ServeOptions::default()).agent(HostAgent::in_memory(
        "x",
        Arc::new(agent),
        card("x"),
    ));
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    A2aClient::connect(&format!("http://{addr}/a2a/x"))
        .await
        .unwrap()
}

/// A request carrying the user's `text`.
pub fn req(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}
