//! On a store that keeps no logs in memory (SQLite here), the runtime keeps a new task's
//! events in the process while it writes them only when a blocking send will answer from
//! them. A stream's task keeps none: they would stay in memory, for nobody, for as long as
//! the stream runs (ten thousand streams held about 20 MiB of them).

use std::sync::Arc;

use a2a_runtime::store::TaskEvent;
use a2a_runtime::{
    AgentError, AgentExecutor, CallContext, InProcessBus, RequestContext, RuntimeConfig,
    StartRequest, TaskRuntime, TaskUpdater,
};
use a2a_types::{Message, ProtocolVersion, TaskState};

/// Works, then completes.
struct WorksThenCompletes;

#[async_trait::async_trait]
impl AgentExecutor for WorksThenCompletes {
    async fn execute(&self, _ctx: RequestContext, updater: TaskUpdater) -> Result<(), AgentError> {
        updater.start_work(None).await?;
        updater.complete(Some(updater.agent_text("done"))).await?;
        Ok(())
    }
}

async fn runtime() -> TaskRuntime {
    let store = a2a_store_sql::test_util::sqlite().await.scoped("agent");
    TaskRuntime::new(
        Arc::new(WorksThenCompletes),
        Arc::new(store),
        Arc::new(InProcessBus::new(64)),
        RuntimeConfig::default(),
    )
}

fn request(task_id: &str) -> Box<StartRequest> {
    let mut message = Message::user_text("hello");
    message.task_id = Some(task_id.into());
    message.context_id = Some("ctx".into());
    Box::new(StartRequest {
        task_id: task_id.into(),
        context_id: "ctx".into(),
        message,
        existing: None,
        configuration: None,
        metadata: None,
        call: Arc::new(CallContext::new(ProtocolVersion::V1)),
    })
}

#[tokio::test]
async fn a_blocking_send_answers_from_the_log_it_kept() {
    let runtime = runtime().await;
    let mut started = runtime.start(request("blocking"), false).await.unwrap();
    started.execution.drive_until(|t| t.ended).await;
    let log = started
        .execution
        .updater()
        .written_log()
        .await
        .expect("the log of a task this send created");
    assert!(matches!(
        log.first().map(|r| &r.event),
        Some(TaskEvent::Created(_))
    ));
    assert_eq!(log.last().unwrap().state, TaskState::Completed);
}

#[tokio::test]
async fn a_stream_keeps_no_log() {
    let runtime = runtime().await;
    let started = runtime.start(request("streamed"), true).await.unwrap();
    let mut events = started.events.expect("following");
    let mut ended = false;
    while let Some(item) = events.next().await {
        ended = item.unwrap().is_final;
    }
    assert!(ended, "the stream ran to the task's end");
    assert!(
        started.execution.updater().written_log().await.is_none(),
        "a stream's task keeps no log in memory"
    );
    // The events are in the store.
    let snapshot = runtime
        .store()
        .get("streamed", None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.task.status.state, TaskState::Completed);
}
