//! In-process cost of the runtime, without HTTP: `cargo bench -p a2a-server --bench runtime`.
//!
//! Runs blocking `SendMessage` calls that complete a task with one status message (the shape
//! of the `conformance` agent's default scenario) through `RequestHandler` directly, then
//! serializes the answer as the transport would, and prints the time per call,
//! single-threaded and with concurrent callers.

use std::sync::Arc;
use std::time::Instant;

use a2a_server::{
    AgentError, AgentExecutor, CallContext, RequestContext, RequestHandler, TaskUpdater,
    in_memory_handler,
};
use a2a_types::{AgentCard, Message, SendMessageRequest};
use async_trait::async_trait;

// The same allocator as the `a2a` binary.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

struct Complete;

#[async_trait]
impl AgentExecutor for Complete {
    async fn execute(&self, _ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        u.complete(Some(u.agent_text("Hello from TCK"))).await?;
        Ok(())
    }
}

async fn run(handler: Arc<RequestHandler>, n: usize) {
    let call = Arc::new(CallContext::new(a2a_types::ProtocolVersion::V1));
    for _ in 0..n {
        let req = SendMessageRequest::new(Message::user_text("hello"));
        // Answer and serialize, as the JSON-RPC transport does.
        let answer = handler
            .send_message_answer(req, call.clone())
            .await
            .unwrap();
        let mut out = Vec::with_capacity(1024);
        serde_json::to_writer(&mut out, &answer).unwrap();
        assert!(out.len() > 100);
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let handler = Arc::new(in_memory_handler(Arc::new(Complete), AgentCard::default()));
    rt.block_on(run(handler.clone(), 20_000)); // warm up, fill the store to its bound
    for tasks in [1usize, 32] {
        let n = 100_000 / tasks;
        let start = Instant::now();
        rt.block_on(async {
            let joins: Vec<_> = (0..tasks)
                .map(|_| tokio::spawn(run(handler.clone(), n)))
                .collect();
            for j in joins {
                j.await.unwrap();
            }
        });
        let per = start.elapsed() / (n * tasks) as u32;
        println!("send_message, {tasks:>2} concurrent callers: {per:?} per call");
    }
}
