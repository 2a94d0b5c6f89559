//! A JSON-RPC request read off its body: the envelope, checked as JSON-RPC 2.0 requires, and
//! its `params` as the method's type.
//!
//! A v1.0 send whose `method` comes before its `params` (as every client we know writes it)
//! is read in one pass: its `params` go straight into a [`SendMessageRequest`]. Any other
//! request keeps `params` as raw JSON, read once its method is known; that skips over them
//! once more (the one pass saved about 2 400 instructions a send of one text part,
//! `scripts/count-instructions.sh`). Whatever the one pass
//! cannot read, it leaves to the two passes, so that both answer alike, errors included.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use a2a_types::jsonrpc::method;
use a2a_types::{A2aError, SendMessageRequest};
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// A request's envelope: what JSON-RPC 2.0 puts around `params`.
#[derive(Debug, Default)]
pub(super) struct Envelope<'a> {
    pub(super) jsonrpc: Option<Cow<'a, str>>,
    pub(super) id: Option<&'a RawValue>,
    pub(super) method: Option<Cow<'a, str>>,
    /// `params` as sent, unless they were read into [`send`](Self::send).
    pub(super) params: Option<&'a RawValue>,
    /// Request metadata some v0.3 clients send beside `params` instead of inside it.
    pub(super) metadata: Option<&'a RawValue>,
    /// The `params` of a v1.0 send, when they were read with the envelope. Boxed: the
    /// envelope is moved a few times before the send takes them.
    pub(super) send: Option<Box<SendMessageRequest>>,
}

/// The envelope's members as `serde` reads them: the definition of a well-formed envelope,
/// and the reading whose errors the answer reports.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

impl<'a> From<Members<'a>> for Envelope<'a> {
    fn from(m: Members<'a>) -> Self {
        Self {
            jsonrpc: m.jsonrpc,
            id: m.id,
            method: m.method,
            params: m.params,
            metadata: m.metadata,
            send: None,
        }
    }
}

/// A request that is not a valid JSON-RPC request, with its `id` when that much was readable
/// (JSON-RPC 2.0 §5: the error answers with the request's id if it could be determined).
#[derive(Debug)]
pub(super) struct EnvelopeError<'a> {
    pub(super) id: Option<&'a RawValue>,
    pub(super) error: A2aError,
}

impl From<A2aError> for EnvelopeError<'_> {
    fn from(error: A2aError) -> Self {
        Self { id: None, error }
    }
}

#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

fn first_byte(s: &[u8]) -> Option<u8> {
    s.iter().copied().find(|b| !b.is_ascii_whitespace())
}

fn is_valid_id(id: &RawValue) -> bool {
    let raw = id.get();
    match first_byte(raw.as_bytes()) {
        // Echoed as sent, so it must be a string a JSON parser takes back: escapes such as a
        // lone surrogate (`"\ud800"`) are not.
        Some(b'"') => !raw.contains('\\') || serde_json::from_str::<String>(raw).is_ok(),
        // Likewise a number a parser can hold (not `1e400`); short integers need no check.
        Some(b'-' | b'0'..=b'9') => {
            (raw.len() <= 18 && raw.bytes().all(|b| b.is_ascii_digit()))
                || serde_json::from_str::<serde_json::Number>(raw).is_ok()
        }
        Some(b'n') => true,
        _ => false,
    }
}

/// The envelope of the request `body`, or why it is not a JSON-RPC request.
pub(super) fn parse_envelope(body: &[u8]) -> Result<Envelope<'_>, EnvelopeError<'_>> {
    parse_envelope_in(body, true)
}

/// [`parse_envelope`], trying the one pass first when `one_pass`.
fn parse_envelope_in(body: &[u8], one_pass: bool) -> Result<Envelope<'_>, EnvelopeError<'_>> {
    if first_byte(body) != Some(b'{') {
        // Valid JSON that is not an object (a batch, a string…) is an invalid request.
        return Err(match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => A2aError::InvalidRequest {
                detail: "the request must be a JSON object (batches are not supported)".into(),
            },
            Err(e) => A2aError::Parse {
                detail: e.to_string(),
            },
        }
        .into());
    }
    // Read from text: `serde_json` checks a slice's strings for UTF-8 one by one, which costs
    // more than one check of the whole body (a failed check leaves the body to two passes).
    let one = match std::str::from_utf8(body) {
        Ok(text) if one_pass => serde_json::from_str::<OnePass<'_>>(text).ok(),
        _ => None,
    };
    let env = match one {
        Some(OnePass(env)) => env,
        None => two_passes(body)?,
    };
    if let Some(id) = env.id
        && !is_valid_id(id)
    {
        return Err(A2aError::InvalidRequest {
            detail: "\"id\" must be a string, a number or null".into(),
        }
        .into());
    }
    // From here on the id is known, so the error carries it.
    let invalid = |detail: &str| EnvelopeError {
        id: env.id,
        error: A2aError::InvalidRequest {
            detail: detail.into(),
        },
    };
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid("\"jsonrpc\" must be \"2.0\""));
    }
    if env.method.as_deref().is_none_or(str::is_empty) {
        return Err(invalid("\"method\" is required"));
    }
    Ok(env)
}

/// The envelope with `params` left raw, or the error that reading gives.
fn two_passes(body: &[u8]) -> Result<Envelope<'_>, EnvelopeError<'_>> {
    match serde_json::from_slice::<Members<'_>>(body) {
        Ok(members) => Ok(members.into()),
        Err(e) => Err(match serde_json::from_slice::<IgnoredAny>(body) {
            Err(syntax) => A2aError::Parse {
                detail: syntax.to_string(),
            }
            .into(),
            Ok(_) => EnvelopeError {
                // Valid JSON with a member of the wrong type: answer with the id if it is one.
                id: serde_json::from_slice::<IdOnly<'_>>(body)
                    .ok()
                    .and_then(|i| i.id)
                    .filter(|id| is_valid_id(id)),
                error: A2aError::InvalidRequest {
                    detail: e.to_string(),
                },
            },
        }),
    }
}

/// `params` as `T`: an object is required.
pub(super) fn params<T: DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, A2aError> {
    let raw = raw.ok_or_else(|| A2aError::invalid_field("params", "is required"))?;
    if first_byte(raw.get().as_bytes()) != Some(b'{') {
        return Err(A2aError::invalid_field("params", "must be an object"));
    }
    serde_json::from_str(raw.get()).map_err(|e| A2aError::invalid_params(e.to_string()))
}

/// `params` as `T`, its default when absent or `null`.
pub(super) fn optional_params<T: DeserializeOwned + Default>(
    raw: Option<&RawValue>,
) -> Result<T, A2aError> {
    match raw {
        None => Ok(T::default()),
        Some(r) if r.get() == "null" => Ok(T::default()),
        r => params(r),
    }
}

/// A v1.0 send's `params`: those read with the envelope, else the raw ones read now.
pub(super) fn send_params(
    env_send: Option<Box<SendMessageRequest>>,
    raw: Option<&RawValue>,
) -> Result<SendMessageRequest, A2aError> {
    match env_send {
        Some(req) => Ok(*req),
        None => params(raw),
    }
}

/// The envelope read in one pass. It fails wherever [`Members`] would, and also on what it
/// leaves to [`two_passes`]: `params` of a send that are not a valid request, and a member
/// named twice.
struct OnePass<'a>(Envelope<'a>);

impl<'de> Deserialize<'de> for OnePass<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(OnePassVisitor)
    }
}

struct OnePassVisitor;

impl<'de> Visitor<'de> for OnePassVisitor {
    type Value = OnePass<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut env = Envelope::default();
        let mut seen = [false; Member::COUNT];
        while let Some(member) = map.next_key::<Member>()? {
            if member != Member::Other {
                if seen[member as usize] {
                    return Err(de::Error::custom("a member named twice"));
                }
                seen[member as usize] = true;
            }
            match member {
                Member::Jsonrpc => {
                    env.jsonrpc = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0)
                }
                Member::Id => env.id = map.next_value()?,
                Member::Method => env.method = map.next_value::<Option<Text<'de>>>()?.map(|t| t.0),
                Member::Params
                    if matches!(
                        env.method.as_deref(),
                        Some(method::SEND_MESSAGE | method::SEND_STREAMING_MESSAGE)
                    ) =>
                {
                    env.send = Some(Box::new(map.next_value_seed(AnObject(PhantomData))?));
                }
                Member::Params => env.params = map.next_value()?,
                Member::Metadata => env.metadata = map.next_value()?,
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(OnePass(env))
    }
}

/// An envelope member's name.
#[derive(Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Metadata,
    #[serde(other)]
    Other,
}

impl Member {
    /// How many names there are, `Other` the last.
    const COUNT: usize = Member::Other as usize + 1;
}

/// A string borrowed from the body when it holds no escape, as [`Members`] reads one.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

/// A `T` that must be written as a JSON object, as [`params`] requires (a derived struct
/// would also take an array).
struct AnObject<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for AnObject<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for AnObject<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_types::ErrorCode;

    fn error_of(body: &[u8]) -> (Option<String>, A2aError) {
        let e = parse_envelope(body).expect_err("an invalid envelope");
        (e.id.map(|i| i.get().to_owned()), e.error)
    }

    #[test]
    fn envelope_errors() {
        let cases: &[(&[u8], Option<&str>, ErrorCode)] = &[
            (b"{not json", None, ErrorCode::PARSE_ERROR),
            (b"[1,2]", None, ErrorCode::INVALID_REQUEST),
            (b"\"x\"", None, ErrorCode::INVALID_REQUEST),
            (
                br#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#,
                Some("1"),
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"GetTask"}"#,
                None,
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":"a","method":5}"#,
                Some("\"a\""),
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":7}"#,
                Some("7"),
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":2,"id":[1],"method":"GetTask"}"#,
                None,
                ErrorCode::INVALID_REQUEST,
            ),
        ];
        for (body, id, code) in cases {
            let (got_id, err) = error_of(body);
            assert_eq!(got_id.as_deref(), *id, "{}", String::from_utf8_lossy(body));
            assert_eq!(err.code(), *code, "{}", String::from_utf8_lossy(body));
        }
        let env =
            parse_envelope(br#"{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"x"}}"#)
                .unwrap();
        assert_eq!(env.id.unwrap().get(), "\"a\"");
        assert_eq!(env.method.as_deref(), Some("GetTask"));
    }

    /// What a request reads as: the envelope's error, or its members and its send's params.
    fn reading(body: &[u8], one_pass: bool) -> String {
        match parse_envelope_in(body, one_pass) {
            Err(e) => format!("{:?} {:?}", e.id.map(RawValue::get), e.error),
            Ok(env) => {
                let send = matches!(
                    env.method.as_deref(),
                    Some(method::SEND_MESSAGE | method::SEND_STREAMING_MESSAGE)
                );
                let params = if send {
                    format!("{:?}", send_params(env.send, env.params))
                } else {
                    assert!(env.send.is_none());
                    format!("{:?}", env.params.map(RawValue::get))
                };
                format!(
                    "{:?} {:?} {:?} {:?} {params}",
                    env.jsonrpc,
                    env.id.map(RawValue::get),
                    env.method,
                    env.metadata.map(RawValue::get),
                )
            }
        }
    }

    #[test]
    fn one_pass_reads_what_two_passes_read() {
        let message = r#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi \"you\"\n"}]},"metadata":{"k":[1,{"x":null}]}}"#;
        let bodies = [
            // Method first: the one pass.
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{message}}}"#),
            format!(r#"{{"id":"a","jsonrpc":"2.0","method":"SendStreamingMessage","params":{message},"extra":[1]}}"#),
            format!(r#" {{ "jsonrpc" : "2.0" , "method" : "SendMessage" , "params" : {message} , "metadata" : {{}} }} "#),
            // Params first, or another method: two passes.
            format!(r#"{{"jsonrpc":"2.0","id":1,"params":{message},"method":"SendMessage"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{message}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"message/send","params":{message}}}"#),
            // Escapes in names and values.
            format!(r#"{{"jsonrpc":"2.0","id":"\u0061","m\u0065thod":"SendMessage","p\u0061rams":{message}}}"#),
            format!(r#"{{"jsonrpc":"2.\u0030","id":1,"method":"Send\u004dessage","params":{message}}}"#),
            // Params that are not a valid request.
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":5}}}"#.to_owned(),
            // An array, which `params` refuses before reading it.
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[{"messageId":"m1","role":"ROLE_USER","parts":[]}]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":"x"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage"}"#.to_owned(),
            // Members named twice, envelopes that are wrong, JSON that is not.
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{message},"method":"GetTask"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{message},"params":{message}}}"#),
            format!(r#"{{"jsonrpc":"1.0","id":1,"method":"SendMessage","params":{message}}}"#),
            format!(r#"{{"id":{{}},"jsonrpc":"2.0","method":"SendMessage","params":{message}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"","params":{message}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":null,"params":{message}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{message}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{message}}} x"#),
        ];
        let mut one_pass_reads = 0;
        for body in &bodies {
            let one = reading(body.as_bytes(), true);
            assert_eq!(one, reading(body.as_bytes(), false), "{body}");
            if serde_json::from_slice::<OnePass<'_>>(body.as_bytes())
                .is_ok_and(|p| p.0.send.is_some())
            {
                one_pass_reads += 1;
            }
        }
        // The three method-first sends, the two with escapes, the wrong `jsonrpc` and `id`.
        assert_eq!(one_pass_reads, 7);
    }
}
