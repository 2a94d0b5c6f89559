//! Checks of REQUIRED fields and value ranges, with errors that name the field.

use crate::error::{A2aError, FieldViolation};
use crate::message::{Message, Role};
use crate::request::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfigRequest,
};

/// Largest `pageSize` of `ListTasks`.
pub const MAX_PAGE_SIZE: i32 = 100;

/// A request that can check itself.
pub trait Validate {
    /// Collects the violations of this value under `path`.
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>);

    /// `Ok` when valid, else `InvalidParams` listing every violation.
    fn validate(&self) -> Result<(), A2aError> {
        let mut out = Vec::new();
        self.violations("", &mut out);
        if out.is_empty() {
            return Ok(());
        }
        let detail = out
            .iter()
            .map(|v| format!("{}: {}", v.field, v.description))
            .collect::<Vec<_>>()
            .join("; ");
        Err(A2aError::InvalidParams {
            detail,
            violations: out,
        })
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

fn required_str(v: &str, path: &str, field: &str, out: &mut Vec<FieldViolation>) {
    if v.is_empty() {
        out.push(FieldViolation::new(join(path, field), "is required"));
    }
}

fn non_negative(v: Option<i32>, path: &str, field: &str, out: &mut Vec<FieldViolation>) {
    if let Some(n) = v
        && n < 0
    {
        out.push(FieldViolation::new(
            join(path, field),
            "must not be negative",
        ));
    }
}

impl Validate for Message {
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>) {
        required_str(&self.message_id, path, "messageId", out);
        if self.role == Role::Unspecified {
            out.push(FieldViolation::new(
                join(path, "role"),
                "is required (ROLE_USER or ROLE_AGENT)",
            ));
        }
        if self.parts.is_empty() {
            out.push(FieldViolation::new(
                join(path, "parts"),
                "at least one part is required",
            ));
        }
    }
}

impl Validate for SendMessageRequest {
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>) {
        self.message.violations(&join(path, "message"), out);
        if let Some(c) = &self.configuration {
            non_negative(
                c.history_length,
                &join(path, "configuration"),
                "historyLength",
                out,
            );
        }
    }
}

impl Validate for GetTaskRequest {
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>) {
        required_str(&self.id, path, "id", out);
        non_negative(self.history_length, path, "historyLength", out);
    }
}

impl Validate for CancelTaskRequest {
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>) {
        required_str(&self.id, path, "id", out);
    }
}

impl Validate for SubscribeToTaskRequest {
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>) {
        required_str(&self.id, path, "id", out);
    }
}

impl Validate for TaskPushNotificationConfigRequest {
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>) {
        required_str(&self.task_id, path, "taskId", out);
        required_str(&self.id, path, "id", out);
    }
}

impl Validate for ListTasksRequest {
    fn violations(&self, path: &str, out: &mut Vec<FieldViolation>) {
        if let Some(n) = self.page_size
            && !(1..=MAX_PAGE_SIZE).contains(&n)
        {
            out.push(FieldViolation::new(
                join(path, "pageSize"),
                format!("must be between 1 and {MAX_PAGE_SIZE}"),
            ));
        }
        non_negative(self.history_length, path, "historyLength", out);
    }
}
