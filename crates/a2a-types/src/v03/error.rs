//! Errors as v0.3 peers expect them.

use crate::error::A2aError;
use crate::jsonrpc::JsonRpcError;
use crate::task::TaskState as V1State;

use super::{TaskState, state_to_v03};

impl TaskState {
    /// The v0.3 wire name (`input-required`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::Working => "working",
            Self::InputRequired => "input-required",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
            Self::AuthRequired => "auth-required",
            Self::Unknown => "unknown",
        }
    }
}

/// `err` as a v0.3 JSON-RPC error: no `data` array (v0.3 defines none), and task states named
/// the way v0.3 names them (`completed`, not `TASK_STATE_COMPLETED`).
pub fn jsonrpc_error(err: &A2aError) -> JsonRpcError {
    JsonRpcError {
        code: err.code().0,
        message: v03_state_names(&err.message()),
        data: None,
    }
}

/// Rewrites every v1.0 state name (`TASK_STATE_INPUT_REQUIRED`) in `text` to its v0.3 name
/// (`input-required`).
pub fn v03_state_names(text: &str) -> String {
    const PREFIX: &str = "TASK_STATE_";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(PREFIX) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let len = tail
            .bytes()
            .position(|b| !(b.is_ascii_uppercase() || b == b'_'))
            .unwrap_or(tail.len());
        let name = &tail[..len];
        match V1State::from_name(name) {
            Some(state) => out.push_str(state_to_v03(state).as_str()),
            None => out.push_str(name),
        }
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_are_rewritten() {
        assert_eq!(
            v03_state_names("task t is in state TASK_STATE_COMPLETED."),
            "task t is in state completed."
        );
        assert_eq!(
            v03_state_names("TASK_STATE_INPUT_REQUIRED or TASK_STATE_AUTH_REQUIRED"),
            "input-required or auth-required"
        );
        assert_eq!(v03_state_names("TASK_STATE_BOGUS x"), "TASK_STATE_BOGUS x");
        assert_eq!(v03_state_names("no state"), "no state");
        let err = A2aError::TaskNotCancelable {
            task_id: "t1".into(),
            state: V1State::Canceled,
        };
        let e = jsonrpc_error(&err);
        assert_eq!(e.code, -32002);
        assert_eq!(
            e.message,
            "Task cannot be canceled: t1 is in state canceled"
        );
        assert!(e.data.is_none());
    }
}
