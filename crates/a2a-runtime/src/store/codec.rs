//! The stored form of events: one JSON document per event, keyed by its kind
//! (`{"created":{…}}`, `{"status":{…}}`, …). The SQL stores keep one per row, so this form
//! must not change; the memory store keeps a finished task's whole log as one JSON array of
//! them. Timestamps keep the wire's millisecond precision.

use a2a_types::{Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use serde::{Deserialize, Serialize};

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

/// Appends the stored forms of `events` to `out`, as one JSON array.
pub fn write_log<'a>(
    out: &mut String,
    events: impl IntoIterator<Item = &'a TaskEvent>,
) -> serde_json::Result<()> {
    out.push('[');
    for (i, event) in events.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        a2a_json::write(out, &stored_ref(event))?;
    }
    out.push(']');
    Ok(())
}

/// The events of a log stored by [`write_log`].
pub fn decode_log(json: &str) -> serde_json::Result<Vec<TaskEvent>> {
    let stored: Vec<Stored> = serde_json::from_str(json)?;
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
        let log = |events: &[TaskEvent]| {
            let mut out = String::new();
            write_log(&mut out, events).unwrap();
            out
        };
        let back = decode_log(&log(&events)).unwrap();
        assert_eq!(back.len(), events.len());
        for (b, e) in back.iter().zip(&events) {
            assert_eq!(encode(b).unwrap(), encode(e).unwrap());
        }
        assert_eq!(decode_log(&log(&[])).unwrap(), vec![]);
    }
}
