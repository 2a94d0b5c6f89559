//! [`TaskStream`]: the events of one task, read from SSE, resumed after dropped connections.

use std::pin::Pin;
use std::time::Duration;

use a2a_types::jsonrpc::JsonRpcResponse;
use a2a_types::{StreamResponse, TaskState, v03};
use futures::{Stream, StreamExt};

use crate::client::A2aClient;
use crate::error::ClientError;
use crate::sse::{SseEvent, sse_stream};

/// One event of a task stream.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamEvent {
    /// The SSE event id (the server's log position), for resuming.
    pub id: Option<String>,
    /// The event.
    pub response: StreamResponse,
    /// The stream ends after this event (a message, or a terminal or interrupted state).
    pub is_final: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// `SendStreamingMessage`: a leading task snapshot is the state being answered.
    Send,
    /// `SubscribeToTask`: a leading task snapshot is the current state.
    Subscribe,
}

type SseBody = Pin<Box<dyn Stream<Item = Result<SseEvent, reqwest::Error>> + Send>>;

const RESUME_ATTEMPTS: u32 = 3;

/// The events of a streamed send or a subscription, until a terminal or interrupted state.
///
/// If the connection drops before that, the stream resubscribes to the task (from the last
/// event id, so nothing is missed on v1.0 servers); if the task finished meanwhile, its final
/// state is fetched and delivered as a last task event. Dropping a `TaskStream` only stops
/// listening: the task keeps running on the agent.
pub struct TaskStream {
    client: A2aClient,
    body: SseBody,
    kind: StreamKind,
    task_id: Option<String>,
    last_id: Option<String>,
    first: bool,
    done: bool,
    resumes_left: u32,
}

impl std::fmt::Debug for TaskStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStream")
            .field("task_id", &self.task_id)
            .field("last_id", &self.last_id)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// The `result` of one JSON-RPC response frame, or its error.
fn decode_result<R: serde::de::DeserializeOwned>(data: &str) -> Result<R, ClientError> {
    let r: JsonRpcResponse<R> = serde_json::from_str(data)
        .map_err(|e| ClientError::InvalidResponse(format!("stream event: {e}")))?;
    if let Some(err) = r.error {
        return Err(ClientError::from_jsonrpc(err));
    }
    r.result
        .ok_or_else(|| ClientError::InvalidResponse("empty stream event".into()))
}

fn body(resp: reqwest::Response) -> SseBody {
    Box::pin(sse_stream(resp.bytes_stream()))
}

impl TaskStream {
    pub(crate) fn new(
        client: A2aClient,
        resp: reqwest::Response,
        kind: StreamKind,
        task_id: Option<String>,
    ) -> Self {
        Self {
            client,
            body: body(resp),
            kind,
            task_id,
            last_id: None,
            first: true,
            done: false,
            resumes_left: RESUME_ATTEMPTS,
        }
    }

    /// The task followed, once known.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The id of the last event received (pass to [`A2aClient::subscribe_after`]).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    fn decode(&self, data: &str) -> Result<(StreamResponse, bool), ClientError> {
        if self.client.protocol_version() == crate::ProtocolVersion::V03 {
            decode_result::<v03::StreamEvent>(data)?
                .into_v1()
                .map_err(|e| ClientError::InvalidResponse(e.to_string()))
        } else {
            Ok((decode_result::<StreamResponse>(data)?, false))
        }
    }

    fn is_final(&self, ev: &StreamResponse, v03_final: bool) -> bool {
        match ev {
            StreamResponse::Message(_) => true,
            StreamResponse::StatusUpdate(s) => v03_final || s.status.state.is_final(),
            StreamResponse::ArtifactUpdate(_) => false,
            StreamResponse::Task(t) => {
                let s = t.status.state;
                s.is_terminal()
                    || (self.first && self.kind == StreamKind::Subscribe && s.is_final())
            }
            _ => false,
        }
    }

    /// The next event; `None` once the stream is over.
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ClientError>> {
        loop {
            if self.done {
                return None;
            }
            match self.body.next().await {
                Some(Ok(sse)) => {
                    if sse.data.trim().is_empty() {
                        continue;
                    }
                    let (response, v03_final) = match self.decode(&sse.data) {
                        Ok(x) => x,
                        Err(e) => {
                            self.done = true;
                            return Some(Err(e));
                        }
                    };
                    if let Some(id) = &sse.id {
                        self.last_id = Some(id.clone());
                    }
                    if self.task_id.is_none() {
                        self.task_id = match &response {
                            StreamResponse::Message(_) => None,
                            other => other.task_id().map(str::to_owned),
                        };
                    }
                    let is_final = self.is_final(&response, v03_final);
                    self.first = false;
                    self.done = is_final;
                    return Some(Ok(StreamEvent {
                        id: sse.id,
                        response,
                        is_final,
                    }));
                }
                Some(Err(e)) => {
                    let err = ClientError::http(self.client.endpoint(), e);
                    match self.resume().await {
                        Some(Ok(Some(ev))) => return Some(Ok(ev)),
                        Some(Ok(None)) => continue,
                        Some(Err(_)) | None => {
                            self.done = true;
                            return Some(Err(err));
                        }
                    }
                }
                None => match self.resume().await {
                    Some(Ok(Some(ev))) => return Some(Ok(ev)),
                    Some(Ok(None)) => continue,
                    Some(Err(e)) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                    None => {
                        self.done = true;
                        return None;
                    }
                },
            }
        }
    }

    /// After the connection ended early: resubscribe (`Ok(None)`: continue reading), or
    /// deliver the final task if it finished meanwhile (`Ok(Some(event))`). `None`: nothing to
    /// resume (no task yet, or attempts exhausted).
    async fn resume(&mut self) -> Option<Result<Option<StreamEvent>, ClientError>> {
        let task_id = self.task_id.clone()?;
        if self.resumes_left == 0 {
            return None;
        }
        let attempt = RESUME_ATTEMPTS - self.resumes_left;
        self.resumes_left -= 1;
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
        }
        match self
            .client
            .open_subscription(&task_id, self.last_id.as_deref())
            .await
        {
            Ok(resp) => {
                tracing::debug!(task_id, last_id = ?self.last_id, "stream resumed");
                self.body = body(resp);
                // A resubscription without a cursor starts with the current task.
                self.kind = StreamKind::Subscribe;
                self.first = self.last_id.is_none();
                Some(Ok(None))
            }
            Err(ClientError::Protocol { .. }) => {
                // Terminal tasks cannot be subscribed to: fetch the final state instead.
                match self.client.get_task(&task_id, None).await {
                    Ok(task) => {
                        let is_final = task.status.state.is_final()
                            || task.status.state == TaskState::Unspecified;
                        self.done = is_final;
                        Some(Ok(Some(StreamEvent {
                            id: None,
                            response: StreamResponse::Task(task),
                            is_final,
                        })))
                    }
                    Err(e) => Some(Err(e)),
                }
            }
            Err(e) => Some(Err(e)),
        }
    }

    /// This stream as a `futures::Stream`.
    pub fn into_stream(self) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send {
        futures::stream::unfold(self, |mut s| async move { s.next().await.map(|e| (e, s)) })
    }
}
