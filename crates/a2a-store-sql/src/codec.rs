//! How events are stored: one JSON document per event, keyed by its kind.

use a2a_runtime::store::TaskEvent;
use a2a_types::{Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use serde::{Deserialize, Serialize};

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
pub(crate) fn encode(event: &TaskEvent) -> serde_json::Result<String> {
    let stored = match event {
        TaskEvent::Created(t) => StoredRef::Created(t),
        TaskEvent::Status(s) => StoredRef::Status(s),
        TaskEvent::Artifact(a) => StoredRef::Artifact(a),
        TaskEvent::UserMessage(m) => StoredRef::UserMessage(m),
        TaskEvent::Owner(o) => StoredRef::Owner(&o[..]),
        // `TaskEvent` is non-exhaustive; a new kind needs a stored form before it is logged.
        other => {
            return Err(serde::ser::Error::custom(format!(
                "no stored form for {other:?}"
            )));
        }
    };
    serde_json::to_string(&stored)
}

/// The event stored as `json`.
pub(crate) fn decode(json: &str) -> serde_json::Result<TaskEvent> {
    Ok(match serde_json::from_str(json)? {
        Stored::Created(t) => TaskEvent::Created(t),
        Stored::Status(s) => TaskEvent::Status(s),
        Stored::Artifact(a) => TaskEvent::Artifact(a),
        Stored::UserMessage(m) => TaskEvent::UserMessage(m),
        Stored::Owner(o) => TaskEvent::Owner(o.into()),
    })
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
        for e in events {
            let json = encode(&e).unwrap();
            let back = decode(&json).unwrap();
            // Timestamps are stored with the wire's millisecond precision.
            assert_eq!(encode(&back).unwrap(), json);
            assert_eq!(std::mem::discriminant(&back), std::mem::discriminant(&e));
        }
    }
}
