//! [`TaskView`]: a task projected from its log by reference, serialized without copying.
//!
//! Answering a request with a task normally means folding the log into an owned [`Task`]
//! (copying every message and artifact) only to serialize and drop it. A view borrows from
//! the log's records instead, so the answer costs no copies of messages or artifacts, however
//! large they are. It projects by the same rules as an owned `Task` (it implements
//! [`TaskProjection`]) and serializes through the same [`TaskRef`].

use std::borrow::Cow;
use std::sync::Arc;

use a2a_types::projection::{
    TaskProjection, TaskRef, TaskStatusRef, project_artifact, project_status, project_user_message,
};
use a2a_types::{Artifact, Message, Task, TaskStatus};
use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::{TaskEvent, TaskEventRecord};

/// A task as projected from its log, borrowing from the records.
#[derive(Debug)]
pub struct TaskView<'a> {
    created: &'a Task,
    status: &'a TaskStatus,
    /// The status message moved into the history (a client message continued the task).
    status_message_moved: bool,
    history: Vec<&'a Message>,
    artifacts: Vec<Cow<'a, Artifact>>,
    metadata: Option<Cow<'a, Map<String, Value>>>,
}

impl<'a> TaskView<'a> {
    /// Projects `records` (a task's log, from its creation) the way
    /// [`apply_event`](super::apply_event) does, keeping at most `history_length` recent
    /// history messages. `None` when the log does not start with the task's creation.
    pub fn new(records: &'a [Arc<TaskEventRecord>], history_length: Option<usize>) -> Option<Self> {
        let TaskEvent::Created(created) = &records.first()?.event else {
            return None;
        };
        let mut view = TaskView {
            created,
            status: &created.status,
            status_message_moved: false,
            history: created.history.iter().collect(),
            artifacts: created.artifacts.iter().map(Cow::Borrowed).collect(),
            metadata: created.metadata.as_ref().map(Cow::Borrowed),
        };
        for r in &records[1..] {
            view.apply(&r.event);
        }
        if let Some(n) = history_length {
            let len = view.history.len();
            if n < len {
                view.history.drain(..len - n);
            }
        }
        Some(view)
    }

    fn status_message(&self) -> Option<&'a Message> {
        if self.status_message_moved {
            None
        } else {
            self.status.message.as_ref()
        }
    }

    fn apply(&mut self, event: &'a TaskEvent) {
        match event {
            TaskEvent::Created(_) => {}
            TaskEvent::Status(e) => project_status(self, e),
            TaskEvent::Artifact(e) => project_artifact(self, e),
            TaskEvent::UserMessage(m) => project_user_message(self, m),
            TaskEvent::Owner(_) => {}
        }
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.created.id
    }

    /// The task by reference, for a writer of another format (protobuf) to walk.
    pub fn task_ref(&self) -> TaskRef<'_, Cow<'a, Artifact>, &'a Message> {
        TaskRef {
            id: &self.created.id,
            context_id: &self.created.context_id,
            status: TaskStatusRef {
                state: self.status.state,
                message: self.status_message(),
                timestamp: self.status.timestamp.as_ref(),
            },
            artifacts: &self.artifacts,
            history: &self.history,
            metadata: self.metadata.as_deref(),
        }
    }

    /// An owned copy of the task.
    pub fn to_task(&self) -> Task {
        let mut t = Task::new(
            self.created.id.clone(),
            self.created.context_id.clone(),
            self.status.state,
        );
        t.status = self.status.clone();
        if self.status_message_moved {
            t.status.message = None;
        }
        t.history = self.history.iter().map(|m| (*m).clone()).collect();
        t.artifacts = self
            .artifacts
            .iter()
            .map(|a| a.clone().into_owned())
            .collect();
        t.metadata = self.metadata.as_ref().map(|m| m.clone().into_owned());
        t
    }
}

impl<'a> TaskProjection<'a> for TaskView<'a> {
    fn move_status_message_to_history(&mut self) {
        if let Some(m) = self.status_message() {
            self.history.push(m);
        }
        // The status is borrowed: its message is marked as moved rather than taken.
        self.status_message_moved = true;
    }

    fn merge_metadata(&mut self, metadata: &'a Map<String, Value>) {
        self.metadata
            .get_or_insert_with(|| Cow::Owned(Map::new()))
            .to_mut()
            .extend(metadata.clone());
    }

    fn set_status(&mut self, status: &'a TaskStatus) {
        self.status = status;
        self.status_message_moved = false;
    }

    fn push_history(&mut self, message: &'a Message) {
        self.history.push(message);
    }

    fn artifact_index(&self, artifact_id: &str) -> Option<usize> {
        self.artifacts
            .iter()
            .rposition(|a| a.artifact_id == artifact_id)
    }

    fn append_to_artifact(&mut self, index: usize, chunk: &'a Artifact) {
        self.artifacts[index].to_mut().append_chunk(chunk);
    }

    fn replace_artifact(&mut self, index: usize, artifact: &'a Artifact) {
        self.artifacts[index] = Cow::Borrowed(artifact);
    }

    fn push_artifact(&mut self, artifact: &'a Artifact) {
        self.artifacts.push(Cow::Borrowed(artifact));
    }
}

impl Serialize for TaskView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.task_ref().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use a2a_types::{Part, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent};
    use serde_json::json;

    use super::*;
    use crate::store::apply_event;

    fn records(events: Vec<TaskEvent>) -> Vec<Arc<TaskEventRecord>> {
        events
            .into_iter()
            .enumerate()
            .map(|(i, e)| Arc::new(TaskEventRecord::new(i as u64 + 1, TaskState::Working, e)))
            .collect()
    }

    fn project(records: &[Arc<TaskEventRecord>], n: Option<usize>) -> Task {
        let mut t = Task::default();
        for r in records {
            apply_event(&mut t, &r.event);
        }
        if let Some(n) = n {
            t.truncate_history(n);
        }
        t
    }

    #[test]
    fn serializes_exactly_like_the_projection() {
        let mut created = Task::new("t", "c", TaskState::Submitted);
        created.history.push(Message::user_text("hi"));
        let status = |state, text: Option<&str>| {
            let mut e = TaskStatusUpdateEvent::new(
                "t",
                "c",
                TaskStatus::with_message(state, text.map(Message::agent_text)),
            );
            if state == TaskState::Completed {
                let mut md = Map::new();
                md.insert("k".into(), json!(1));
                e.metadata = Some(md);
            }
            TaskEvent::Status(e)
        };
        let chunk = |id: &str, text: &str, append| {
            let mut a = Artifact::new(id, vec![Part::text(text)]);
            if append {
                a.name = Some("renamed".into());
            }
            TaskEvent::Artifact(TaskArtifactUpdateEvent::new("t", "c", a, append, false))
        };
        let log = records(vec![
            TaskEvent::Created(created),
            status(TaskState::Working, Some("thinking")),
            chunk("a", "one ", false),
            chunk("a", "two", true),
            chunk("b", "old", false),
            chunk("b", "new", false),
            status(TaskState::InputRequired, Some("question")),
            TaskEvent::UserMessage(Message::user_text("answer")),
            status(TaskState::Completed, None),
        ]);
        for end in 1..=log.len() {
            for n in [None, Some(0), Some(1), Some(3)] {
                let view = TaskView::new(&log[..end], n).unwrap();
                let projected = project(&log[..end], n);
                assert_eq!(
                    serde_json::to_value(&view).unwrap(),
                    serde_json::to_value(&projected).unwrap(),
                    "after {end} events, history {n:?}"
                );
                assert_eq!(view.to_task(), projected);
            }
        }
    }
}
