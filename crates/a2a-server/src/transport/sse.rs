//! Server-Sent Events framing of task streams for JSON-RPC.

use std::convert::Infallible;
use std::time::Duration;

use a2a_types::{ProtocolVersion, v03};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::value::RawValue;

use super::envelope::{error_body, success_body};
use crate::runtime::TaskEventStream;

/// Turns a task stream into an SSE response: one JSON-RPC response per `data:` line, the
/// log sequence number as the event `id` (so `Last-Event-ID` can resume), keep-alive
/// comments while the agent is quiet.
pub(crate) fn sse_response(
    events: TaskEventStream,
    id: Option<Box<RawValue>>,
    version: ProtocolVersion,
    keep_alive: Duration,
) -> Response {
    let stream = events.into_stream().map(move |item| {
        let id = id.as_deref();
        let event = match item {
            Ok(item) => {
                let data = if version == ProtocolVersion::V03 {
                    success_body(
                        id,
                        v03::StreamEvent::from_v1(item.response(), item.is_final),
                    )
                } else {
                    success_body(id, item.response())
                };
                let event = Event::default().data(data);
                if item.seq > 0 {
                    event.id(item.seq.to_string())
                } else {
                    event
                }
            }
            Err(e) => Event::default().data(error_body(id, &e, version)),
        };
        Ok::<_, Infallible>(event)
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response()
}
