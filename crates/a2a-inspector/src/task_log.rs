//! `GET /inspector/api/tasks/{agent}/{task}/events`: the whole event log of a task of this
//! host (its creation, each status with the time the agent wrote it, each artifact update,
//! each message that continued it), which A2A itself does not offer for a finished task. Only
//! for the caller that may see the task through A2A: another caller's task answers 404, as
//! one that does not exist.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::access::{Shared, error};

/// Where the console reads a hosted task's log.
///
/// Contract: `events` answers the task's log as v1.0 `StreamResponse` objects (`{"task"}`
/// first, then `{"statusUpdate"}`, `{"artifactUpdate"}`, `{"message"}`), in log order, each
/// with a `"seq"`; `None` when the agent or the task does not exist, or when `caller` (the
/// principal, `None` without authentication) may not see the task.
pub trait TaskLogs: Send + Sync + 'static {
    /// The log of `task` of agent `agent`, as `caller` may see it.
    fn events<'a>(
        &'a self,
        agent: &'a str,
        task: &'a str,
        caller: Option<&'a str>,
    ) -> Pin<Box<dyn Future<Output = Option<Vec<Value>>> + Send + 'a>>;
}

pub(crate) fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(
            &format!("{}/api/tasks/{{agent}}/{{task}}/events", crate::PATH),
            get(events),
        )
        .with_state(shared)
}

async fn events(
    State(shared): State<Arc<Shared>>,
    Path((agent, task)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let caller = match shared.admit(&headers).await {
        Ok(p) => p.map(|p| p.id().to_owned()),
        Err(refusal) => return refusal,
    };
    let found = match &shared.config.task_logs {
        Some(logs) => logs.events(&agent, &task, caller.as_deref()).await,
        None => None,
    };
    match found {
        Some(events) => Json(json!({"events": events})).into_response(),
        None => error(StatusCode::NOT_FOUND, format!("Task not found: {task}")),
    }
}
