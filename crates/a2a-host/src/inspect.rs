//! What the inspector reads of this host's tasks: the whole event log of a task, as A2A's
//! `StreamResponse` objects, for the caller that may see the task.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use a2a_server::RequestHandler;
use a2a_server::store::TaskEvent;
use serde_json::{Value, json};

/// The logs of the tasks of a host's agents.
pub(crate) struct HostTaskLogs {
    handlers: BTreeMap<String, Arc<RequestHandler>>,
}

impl HostTaskLogs {
    pub(crate) fn new(handlers: BTreeMap<String, Arc<RequestHandler>>) -> Self {
        Self { handlers }
    }
}

impl a2a_inspector::TaskLogs for HostTaskLogs {
    fn events<'a>(
        &'a self,
        agent: &'a str,
        task: &'a str,
        caller: Option<&'a str>,
    ) -> Pin<Box<dyn Future<Output = Option<Vec<Value>>> + Send + 'a>> {
        Box::pin(async move {
            let handler = self.handlers.get(agent)?;
            let log = handler.runtime().store().events_after(task, 0).await.ok()?;
            if !matches!(log.first().map(|r| &r.event), Some(TaskEvent::Created(_))) {
                return None;
            }
            // As A2A answers: with authentication, only the principal that owns the task.
            let owner = log.iter().find_map(|r| match &r.event {
                TaskEvent::Owner(o) => Some(o.clone()),
                _ => None,
            });
            if let Some(caller) = caller
                && owner.as_deref() != Some(caller)
            {
                return None;
            }
            // No more of the history than A2A answers with.
            let limit = handler.max_history_length();
            let messages = log
                .iter()
                .filter(|r| matches!(r.event, TaskEvent::UserMessage(_)))
                .count();
            let mut skip = limit.map_or(0, |n| messages.saturating_sub(n));
            let events = log
                .iter()
                .filter_map(|r| {
                    let body = match &r.event {
                        TaskEvent::Created(t) => {
                            let mut t = t.clone();
                            if let Some(n) = limit {
                                t.truncate_history(n);
                            }
                            json!({"task": t})
                        }
                        TaskEvent::UserMessage(_) if skip > 0 => {
                            skip -= 1;
                            return None;
                        }
                        TaskEvent::Status(s) => json!({"statusUpdate": s}),
                        TaskEvent::Artifact(a) => json!({"artifactUpdate": a}),
                        TaskEvent::UserMessage(m) => json!({"message": m}),
                        // The owner is never shown; other kinds are not for people.
                        _ => return None,
                    };
                    let mut body = body;
                    body["seq"] = r.seq.into();
                    Some(body)
                })
                .collect();
            Some(events)
        })
    }
}
