//! The stored form of events: one JSON document per event, keyed by its kind
//! (`{"created":{…}}`, `{"status":{…}}`, …). The SQL stores keep one per row, so this form
//! must not change. Timestamps keep the wire's millisecond precision.
//!
//! The memory store keeps a finished task's whole log in a compact form of its own
//! (`write_compact_log`, crate-private): the same documents as MessagePack, never persisted and never read
//! by another version, so free to change. It is written on every finished send, and a
//! string in it is a length and a copy, where JSON checks each byte for an escape.

use a2a_types::{Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use serde::{Deserialize, Serialize, Serializer};

use super::TaskEvent;

/// An event as written (borrowed, so encoding copies nothing).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum StoredRef<'a> {
    Created(&'a Task),
    Status(&'a TaskStatusUpdateEvent),
    Artifact(&'a TaskArtifactUpdateEvent),
    UserMessage(&'a Message),
    Owner(&'a str),
}

/// An event as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum Stored {
    Created(Task),
    Status(TaskStatusUpdateEvent),
    Artifact(TaskArtifactUpdateEvent),
    UserMessage(Message),
    Owner(String),
}

/// The stored form of `event`.
pub fn encode(event: &TaskEvent) -> serde_json::Result<String> {
    a2a_json::to_string(&stored_ref(event))
}

/// Every kind of event has a stored form: a new kind does not compile until it has one.
fn stored_ref(event: &TaskEvent) -> StoredRef<'_> {
    match event {
        TaskEvent::Created(t) => StoredRef::Created(t),
        TaskEvent::Status(s) => StoredRef::Status(s),
        TaskEvent::Artifact(a) => StoredRef::Artifact(a),
        TaskEvent::UserMessage(m) => StoredRef::UserMessage(m),
        TaskEvent::Owner(o) => StoredRef::Owner(&o[..]),
    }
}

/// The event stored as `json`.
pub fn decode(json: &str) -> serde_json::Result<TaskEvent> {
    serde_json::from_str(json).map(Stored::into_event)
}

/// Appends the compact form of the log `events` to `out`: a MessagePack array of the same
/// documents as [`encode`]'s (structs as maps keyed by field name, enum variants by name),
/// read back by [`decode_compact_log`].
pub(crate) fn write_compact_log<'a>(
    out: &mut Vec<u8>,
    events: impl IntoIterator<Item = &'a TaskEvent>,
) -> Result<(), rmp_serde::encode::Error> {
    let mut ser = rmp_serde::Serializer::new(out).with_struct_map();
    ser.collect_seq(events.into_iter().map(stored_ref))
}

/// The events of a log written by [`write_compact_log`].
pub(crate) fn decode_compact_log(bytes: &[u8]) -> Result<Vec<TaskEvent>, rmp_serde::decode::Error> {
    let stored: Vec<Stored> = rmp_serde::from_slice(bytes)?;
    Ok(stored.into_iter().map(Stored::into_event).collect())
}

impl Stored {
    fn into_event(self) -> TaskEvent {
        match self {
            Stored::Created(t) => TaskEvent::Created(t),
            Stored::Status(s) => TaskEvent::Status(s),
            Stored::Artifact(a) => TaskEvent::Artifact(a),
            Stored::UserMessage(m) => TaskEvent::UserMessage(m),
            Stored::Owner(o) => TaskEvent::Owner(o.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_types::{Artifact, Part, TaskState, TaskStatus};

    #[test]
    fn round_trip() {
        let mut task = Task::new("t", "c", TaskState::Submitted);
        task.history.push(Message::user_text("hi"));
        let events = [
            TaskEvent::Created(task),
            TaskEvent::Status(TaskStatusUpdateEvent::new(
                "t",
                "c",
                TaskStatus::with_message(TaskState::Working, Some(Message::agent_text("w"))),
            )),
            TaskEvent::Artifact(TaskArtifactUpdateEvent::new(
                "t",
                "c",
                Artifact::new("a", vec![Part::raw(vec![0, 1, 2])]),
                true,
                false,
            )),
            TaskEvent::UserMessage(Message::user_text("more")),
        ];
        for e in &events {
            let json = encode(e).unwrap();
            let back = decode(&json).unwrap();
            // Timestamps are stored with the wire's millisecond precision.
            assert_eq!(encode(&back).unwrap(), json);
            assert_eq!(std::mem::discriminant(&back), std::mem::discriminant(e));
        }
    }

    /// Metadata with every kind of JSON value, and strings JSON would escape.
    fn metadata(tag: &str) -> serde_json::Map<String, serde_json::Value> {
        let value = serde_json::json!({
            "tag": tag,
            "quote\"back\\slash\u{1}control\nnewline": "é ✓ 😀 \u{7f}",
            "numbers": [0, -1, i64::MIN, u64::MAX, 1.5, -0.125, 1e300],
            "flags": [true, false, null],
            "nested": {"empty": {}, "list": [[], [{}], "x"]},
            "": "",
        });
        match value {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("an object"),
        }
    }

    /// A message with every field set.
    fn full_message(text: &str) -> Message {
        let mut message = Message::user_text(text);
        message.context_id = Some("ctx-\u{0}-é".into());
        message.task_id = Some("task".into());
        message.metadata = Some(metadata("message"));
        message.extensions = vec!["https://ext/a".into(), "".into()];
        message.reference_task_ids = vec!["r1".into(), "r2".into()];
        message.parts = vec![
            Part::text(text)
                .with_filename("a \"name\".txt")
                .with_media_type("text/plain")
                .with_metadata(metadata("part")),
            Part::raw((0..=255u8).collect::<Vec<_>>()).with_media_type("application/octet-stream"),
            Part::url("https://example.com/a?b=c&d=\"e\""),
            Part::data(serde_json::Value::Object(metadata("data"))),
            Part::text(""),
        ];
        message
    }

    /// Events with every field set, and the status timestamp a whole number of
    /// milliseconds (the stored forms keep milliseconds).
    fn full_events() -> Vec<TaskEvent> {
        let at = chrono::DateTime::from_timestamp_millis(1_765_000_000_123).expect("in range");
        let mut status = TaskStatus::with_message(TaskState::Working, Some(full_message("w")));
        status.timestamp = Some(at);
        let mut artifact = Artifact::new("a\"1", vec![Part::text("chunk ✓")]);
        artifact.name = Some("name".into());
        artifact.description = Some("line\nbreak".into());
        artifact.metadata = Some(metadata("artifact"));
        artifact.extensions = vec!["e".into()];
        let mut task = Task::new("t", "c", TaskState::Submitted);
        task.status = status.clone();
        task.history = vec![full_message("first"), Message::agent_text("second")];
        task.artifacts = vec![artifact.clone()];
        task.metadata = Some(metadata("task"));
        let mut update = TaskStatusUpdateEvent::new("t", "c", status);
        update.metadata = Some(metadata("status"));
        let mut chunk = TaskArtifactUpdateEvent::new("t", "c", artifact, true, true);
        let mut completed = TaskStatus::new(TaskState::Completed);
        completed.timestamp = Some(at);
        chunk.metadata = Some(metadata("chunk"));
        vec![
            TaskEvent::Created(task),
            TaskEvent::Owner("jwt:https://issuer:alice \"quoted\"".into()),
            TaskEvent::Status(update),
            TaskEvent::Artifact(chunk),
            TaskEvent::UserMessage(full_message("more")),
            TaskEvent::Status(TaskStatusUpdateEvent::new("t", "c", completed)),
        ]
    }

    #[test]
    fn the_compact_log_reads_back_every_field() {
        let events = full_events();
        let mut compact = Vec::new();
        write_compact_log(&mut compact, &events).unwrap();
        let back = decode_compact_log(&compact).unwrap();
        assert_eq!(back, events);
        // And the same events as each one's JSON form reads back.
        for (e, b) in events.iter().zip(&back) {
            assert_eq!(&decode(&encode(e).unwrap()).unwrap(), b);
        }
        // Written after other bytes (the memory store puts the context id first).
        let mut prefixed = b"context".to_vec();
        write_compact_log(&mut prefixed, &events).unwrap();
        assert_eq!(&prefixed[7..], &compact[..]);
    }

    #[test]
    fn the_compact_log_holds_logs_of_any_length() {
        for n in [0usize, 1, 15, 16, 65_535, 65_536] {
            let events: Vec<TaskEvent> = (0..n)
                .map(|i| TaskEvent::UserMessage(Message::user_text(i.to_string())))
                .collect();
            let mut compact = Vec::new();
            write_compact_log(&mut compact, &events).unwrap();
            assert_eq!(decode_compact_log(&compact).unwrap(), events, "{n} events");
        }
    }

    #[test]
    fn a_damaged_compact_log_is_an_error() {
        let mut compact = Vec::new();
        write_compact_log(&mut compact, &full_events()).unwrap();
        for cut in [1, compact.len() / 2, compact.len() - 1] {
            assert!(decode_compact_log(&compact[..cut]).is_err(), "cut at {cut}");
        }
    }
}
