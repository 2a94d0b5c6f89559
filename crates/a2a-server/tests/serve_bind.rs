//! `A2aServer::serve` names the address it cannot listen on, and why, instead of a bare
//! `AddrInUse` code.

use a2a_server::prelude::*;

struct Idle;

#[async_trait]
impl AgentExecutor for Idle {
    async fn execute(&self, _ctx: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        Ok(task.complete(None).await?)
    }
}

#[tokio::test]
async fn a_busy_port_is_named_with_its_address() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = taken.local_addr().unwrap();
    let card = AgentCard::new("Idle", "an agent whose port is taken");
    let err = A2aServer::new(Idle, card)
        .serve(addr)
        .await
        .expect_err("the port is taken");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    let text = err.to_string();
    assert!(text.contains(&addr.to_string()), "{text}");
    assert!(text.contains("in use"), "{text}");
}
