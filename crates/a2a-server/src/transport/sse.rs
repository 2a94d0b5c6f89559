//! Server-Sent Events framing of task streams, for JSON-RPC and for HTTP+JSON.

use std::convert::Infallible;
use std::time::Duration;

use a2a_types::{ProtocolVersion, v03};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::value::RawValue;

use super::envelope::{error_body, success_body};
use a2a_runtime::TaskEventStream;

/// What each event's `data:` holds.
pub(crate) enum Framing {
    /// A JSON-RPC response to request `id`, in `version`'s shapes.
    JsonRpc {
        id: Option<Box<RawValue>>,
        version: ProtocolVersion,
    },
    /// The bare `StreamResponse` (HTTP+JSON); an error is a `google.rpc.Status` body.
    Rest,
}

/// Turns a task stream into an SSE response: one event per `data:` line, framed by
/// `framing`, the log sequence number as the event `id` (so `Last-Event-ID` can resume),
/// keep-alive comments while the agent is quiet.
pub(crate) fn sse_response(
    events: TaskEventStream,
    framing: Framing,
    keep_alive: Duration,
) -> Response {
    let stream = events.into_stream().map(move |item| {
        let event = match (item, &framing) {
            (Ok(item), framing) => {
                let data = match framing {
                    Framing::JsonRpc {
                        id,
                        version: ProtocolVersion::V03,
                    } => success_body(
                        id.as_deref(),
                        v03::StreamEvent::from_v1(item.response(), item.is_final),
                    ),
                    Framing::JsonRpc { id, .. } => success_body(id.as_deref(), item.response()),
                    Framing::Rest => a2a_json::to_string(&item.response()).unwrap_or_default(),
                };
                let event = Event::default().data(data);
                if item.seq > 0 {
                    event.id(item.seq.to_string())
                } else {
                    event
                }
            }
            (Err(e), Framing::JsonRpc { id, version }) => {
                Event::default().data(error_body(id.as_deref(), &e, *version))
            }
            (Err(e), Framing::Rest) => Event::default().data(e.to_rest_body().to_string()),
        };
        Ok::<_, Infallible>(event)
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response()
}

/// A stream of one event, the JSON-RPC error `e` for request `id`: how v0.3 servers (the
/// reference SDK) answer a streaming method that fails before its first event, and what
/// v0.3 clients, which open the response as an event stream, can read.
pub(crate) fn sse_error(
    id: Option<&RawValue>,
    e: &a2a_types::A2aError,
    version: ProtocolVersion,
) -> Response {
    let event = Event::default().data(error_body(id, e, version));
    Sse::new(futures::stream::iter([Ok::<_, Infallible>(event)])).into_response()
}
