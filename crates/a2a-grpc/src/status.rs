//! A2A errors as gRPC statuses (spec §10.6): the status code of spec §5.4, the error's
//! message, and a `google.rpc.ErrorInfo` detail (domain `a2a-protocol.org`, the A2A reason,
//! string metadata) plus a `google.rpc.BadRequest` for invalid fields. And back again.

use std::collections::HashMap;

use a2a_types::A2aError;
use a2a_types::error::ERROR_DOMAIN;
use serde_json::Value;
use tonic::{Code, Status};
use tonic_types::{BadRequest, ErrorDetail, ErrorInfo, FieldViolation, StatusExt};

/// The gRPC code for `err`.
pub fn code_of(err: &A2aError) -> Code {
    match err.grpc_status() {
        "NOT_FOUND" => Code::NotFound,
        "INVALID_ARGUMENT" => Code::InvalidArgument,
        "UNIMPLEMENTED" => Code::Unimplemented,
        "INTERNAL" => Code::Internal,
        "FAILED_PRECONDITION" => Code::FailedPrecondition,
        "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
        "UNAUTHENTICATED" => Code::Unauthenticated,
        "UNAVAILABLE" => Code::Unavailable,
        _ => Code::Unknown,
    }
}

/// `err` as a gRPC status with its `ErrorInfo` (and `BadRequest`) details.
pub fn to_status(err: &A2aError) -> Status {
    let mut details = Vec::with_capacity(2);
    for d in err.details() {
        match d.get("@type").and_then(Value::as_str) {
            Some(t) if t.ends_with("google.rpc.ErrorInfo") => {
                let metadata: HashMap<String, String> = d
                    .get("metadata")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| {
                                let s = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                                (k.clone(), s)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let reason = d.get("reason").and_then(Value::as_str).unwrap_or_default();
                let domain = d
                    .get("domain")
                    .and_then(Value::as_str)
                    .unwrap_or(ERROR_DOMAIN);
                details.push(ErrorDetail::ErrorInfo(ErrorInfo::new(
                    reason, domain, metadata,
                )));
            }
            Some(t) if t.ends_with("google.rpc.BadRequest") => {
                let violations: Vec<FieldViolation> = d
                    .get("fieldViolations")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|v| {
                        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
                        FieldViolation::new(text("field"), text("description"))
                    })
                    .collect();
                details.push(ErrorDetail::BadRequest(BadRequest::new(violations)));
            }
            _ => {}
        }
    }
    Status::with_error_details_vec(code_of(err), err.message(), details)
}

/// Rebuilds the A2A error a peer's status carries: its `ErrorInfo` reason says which one.
/// A status without one becomes [`A2aError::Other`] with a code for its gRPC code.
pub fn from_status(status: &Status) -> A2aError {
    if let Some(info) = status.get_details_error_info() {
        let metadata: serde_json::Map<String, Value> = info
            .metadata
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        if let Some(err) =
            A2aError::from_error_info(&info.reason, status.message(), Some(&metadata))
        {
            return err;
        }
    }
    let detail = status.message().to_owned();
    match status.code() {
        Code::InvalidArgument => A2aError::invalid_params(detail),
        Code::NotFound => A2aError::task_not_found(detail),
        Code::Unimplemented => A2aError::MethodNotFound { method: detail },
        Code::Internal => A2aError::internal(detail),
        code => A2aError::Other {
            code: a2a_types::ErrorCode::INTERNAL_ERROR,
            message: format!("gRPC {code:?}: {detail}"),
            data: None,
        },
    }
}
