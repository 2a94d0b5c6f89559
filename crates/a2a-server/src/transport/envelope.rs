//! JSON-RPC 2.0 response bodies, shared by plain responses and SSE events.

use a2a_types::{A2aError, ProtocolVersion, v03};
use serde::Serialize;
use serde_json::value::RawValue;

#[derive(Serialize)]
struct Success<'a, R> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    result: R,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    error: a2a_types::jsonrpc::JsonRpcError,
}

/// A success response body.
pub(crate) fn success_body<R: Serialize>(id: Option<&RawValue>, result: R) -> String {
    // Most answers are a task of a few hundred bytes; start big enough to not regrow.
    let mut out = String::with_capacity(1024);
    match a2a_json::write(
        &mut out,
        &Success {
            jsonrpc: "2.0",
            id,
            result,
        },
    ) {
        Ok(()) => out,
        Err(e) => {
            tracing::error!(error = %e, "could not serialize a result");
            error_body(
                id,
                &A2aError::internal("could not serialize the result"),
                ProtocolVersion::V1,
            )
        }
    }
}

/// An error response body in `version`'s terms (v0.3: no `data` array, v0.3 state names).
pub(crate) fn error_body(
    id: Option<&RawValue>,
    err: &A2aError,
    version: ProtocolVersion,
) -> String {
    let error = if version == ProtocolVersion::V03 {
        v03::jsonrpc_error(err)
    } else {
        err.to_jsonrpc()
    };
    a2a_json::to_string(&Failure {
        jsonrpc: "2.0",
        id,
        error,
    })
    .unwrap_or_else(|_| {
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#
            .to_owned()
    })
}
