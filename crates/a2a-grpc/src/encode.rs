//! Protobuf written straight from [`a2a_types`] by reference: an answer's bytes without its
//! [`pb`](crate::pb) message built first.
//!
//! Why: a task answered from its log (a [`TaskRef`] borrowing the log's records) would
//! otherwise be copied into an owned `Task`, moved into a `pb::Task` (its metadata rebuilt as
//! a `google.protobuf.Struct`), encoded, and both dropped. Writing the wire format from the
//! references skips the copies: 5 100 of the 91 300 instructions of a gRPC blocking send.
//! The bytes are what prost writes for the message [`convert`](crate::convert) makes (fields
//! in tag order, proto3 defaults left out, oneof members always written, lengths in the
//! fewest bytes); the tests compare the two.
//!
//! A nested message's length precedes it. Rather than walk each message once for its length
//! and again to write it (prost's way, which walks a part once for every message enclosing
//! it), a message is written after a one-byte length, which is filled in once the message
//! is written; the few longer than 127 bytes are moved up by the bytes their length needs
//! beyond the first.

use std::borrow::Borrow;

use a2a_types::projection::{TaskRef, TaskStatusRef};
use a2a_types::{Artifact, Message, Part, PartContent};
use bytes::{BufMut, Bytes, BytesMut};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::replay::{PREFIX_BYTES, too_large};

/// The wire types used here.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

/// What a first buffer holds: a task answer of a few parts fits, a larger one grows it.
const FIRST_CAPACITY: usize = 1024;

/// A protobuf message's fields, written from a reference.
pub trait ProtoFields {
    /// Writes the fields (without a length or a key of their own) at the end of `buf`.
    fn write_fields(&self, buf: &mut BytesMut);
}

/// `SendMessageResponse` by reference: its `task` or its `message`.
#[derive(Debug)]
pub enum SendMessageResponseRef<'a, A, M> {
    /// The task.
    Task(TaskRef<'a, A, M>),
    /// A direct reply.
    Message(&'a Message),
}

/// `message` as one uncompressed gRPC message: its prefix, then its bytes, in one buffer;
/// as [`encode_message`](crate::replay::encode_message) does for a prost message, refused
/// alike when it is larger than a gRPC message can say (4 GiB).
pub fn grpc_message(message: &impl ProtoFields) -> Result<Bytes, tonic::Status> {
    let mut buf = BytesMut::with_capacity(FIRST_CAPACITY);
    buf.put_bytes(0, PREFIX_BYTES);
    message.write_fields(&mut buf);
    let len = u32::try_from(buf.len() - PREFIX_BYTES).map_err(|_| too_large())?;
    buf[1..PREFIX_BYTES].copy_from_slice(&len.to_be_bytes());
    Ok(buf.freeze())
}

// ---- the wire format's pieces ----

fn varint_len(v: u64) -> usize {
    // 7 bits a byte; 0 takes one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Writes `v` as a varint at the end of `buf` (or, in a slice, at its start).
fn put_varint(buf: &mut impl BufMut, mut v: u64) {
    while v >= 0x80 {
        buf.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

fn put_key(buf: &mut BytesMut, tag: u32, wire_type: u32) {
    put_varint(buf, u64::from((tag << 3) | wire_type));
}

fn put_bytes(buf: &mut BytesMut, tag: u32, bytes: &[u8]) {
    put_key(buf, tag, LEN);
    put_varint(buf, bytes.len() as u64);
    buf.put_slice(bytes);
}

/// A proto3 string field: left out when empty.
fn put_str(buf: &mut BytesMut, tag: u32, s: &str) {
    if !s.is_empty() {
        put_bytes(buf, tag, s.as_bytes());
    }
}

/// A `repeated string` field: every element written, empty ones too.
fn put_strs(buf: &mut BytesMut, tag: u32, items: &[String]) {
    for s in items {
        put_bytes(buf, tag, s.as_bytes());
    }
}

/// A proto3 enum or integer field: left out when zero. Negative numbers take ten bytes, as
/// protobuf's `int32` and `int64` do.
fn put_int(buf: &mut BytesMut, tag: u32, n: i64) {
    if n != 0 {
        put_key(buf, tag, VARINT);
        put_varint(buf, n as u64);
    }
}

/// A message field, written even when its fields are empty (it is present): its key, a
/// one-byte length, its fields; then the length filled in, and the fields moved up when
/// their length takes more than one byte.
fn put_message(buf: &mut BytesMut, tag: u32, m: &impl ProtoFields) {
    put_key(buf, tag, LEN);
    let at = buf.len();
    buf.put_u8(0);
    m.write_fields(buf);
    let len = buf.len() - at - 1;
    if len < 0x80 {
        buf[at] = len as u8;
        return;
    }
    let len_bytes = varint_len(len as u64);
    buf.put_bytes(0, len_bytes - 1);
    buf.copy_within(at + 1..at + 1 + len, at + len_bytes);
    put_varint(&mut &mut buf[at..at + len_bytes], len as u64);
}

fn put_messages<T: ProtoFields>(buf: &mut BytesMut, tag: u32, items: impl IntoIterator<Item = T>) {
    for m in items {
        put_message(buf, tag, &m);
    }
}

impl<T: ProtoFields + ?Sized> ProtoFields for &T {
    fn write_fields(&self, buf: &mut BytesMut) {
        (**self).write_fields(buf)
    }
}

// ---- google.protobuf.Struct, Value, ListValue, Timestamp ----

/// A JSON object as `google.protobuf.Struct`: `map<string, Value> fields = 1`, an entry
/// being `{string key = 1; Value value = 2}` whose empty key is left out, as prost does.
struct JsonObject<'a>(&'a Map<String, Value>);

struct MapEntry<'a>(&'a str, &'a Value);

impl ProtoFields for MapEntry<'_> {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_str(buf, 1, self.0);
        put_message(buf, 2, &JsonValue(self.1));
    }
}

impl ProtoFields for JsonObject<'_> {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_messages(buf, 1, self.0.iter().map(|(k, v)| MapEntry(k, v)));
    }
}

/// A JSON value as `google.protobuf.Value`: a oneof, so its member is written even when it
/// holds its default (`null_value = 1` is the enum's 0). Numbers are doubles.
struct JsonValue<'a>(&'a Value);

/// `ListValue`: `repeated Value values = 1`.
struct JsonArray<'a>(&'a [Value]);

impl ProtoFields for JsonArray<'_> {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_messages(buf, 1, self.0.iter().map(JsonValue));
    }
}

impl ProtoFields for JsonValue<'_> {
    fn write_fields(&self, buf: &mut BytesMut) {
        match self.0 {
            Value::Null => {
                put_key(buf, 1, VARINT);
                buf.put_u8(0);
            }
            Value::Number(n) => {
                put_key(buf, 2, FIXED64);
                buf.put_f64_le(n.as_f64().unwrap_or_default());
            }
            Value::String(s) => put_bytes(buf, 3, s.as_bytes()),
            Value::Bool(b) => {
                put_key(buf, 4, VARINT);
                buf.put_u8(u8::from(*b));
            }
            Value::Object(o) => put_message(buf, 5, &JsonObject(o)),
            Value::Array(a) => put_message(buf, 6, &JsonArray(a)),
        }
    }
}

/// `google.protobuf.Timestamp`: `int64 seconds = 1; int32 nanos = 2`, as
/// `convert::timestamp_to_pb` makes it.
struct Timestamp<'a>(&'a DateTime<Utc>);

impl ProtoFields for Timestamp<'_> {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_int(buf, 1, self.0.timestamp());
        put_int(buf, 2, i64::from(self.0.timestamp_subsec_nanos() as i32));
    }
}

fn put_metadata(buf: &mut BytesMut, tag: u32, m: Option<&Map<String, Value>>) {
    if let Some(m) = m {
        put_message(buf, tag, &JsonObject(m));
    }
}

fn opt_str(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or_default()
}

// ---- A2A messages, by the field numbers of a2a.proto ----

impl ProtoFields for Part {
    fn write_fields(&self, buf: &mut BytesMut) {
        match &self.content {
            PartContent::Text(s) => put_bytes(buf, 1, s.as_bytes()),
            PartContent::Raw(b) => put_bytes(buf, 2, b),
            PartContent::Url(u) => put_bytes(buf, 3, u.as_bytes()),
            PartContent::Data(d) => put_message(buf, 4, &JsonValue(d)),
            // A kind of content added to a2a-types later has no field (as in `convert`).
            _ => {}
        }
        put_metadata(buf, 5, self.metadata.as_ref());
        put_str(buf, 6, opt_str(&self.filename));
        put_str(buf, 7, opt_str(&self.media_type));
    }
}

impl ProtoFields for Message {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_str(buf, 1, &self.message_id);
        put_str(buf, 2, opt_str(&self.context_id));
        put_str(buf, 3, opt_str(&self.task_id));
        put_int(buf, 4, i64::from(self.role.number()));
        put_messages(buf, 5, &self.parts);
        put_metadata(buf, 6, self.metadata.as_ref());
        put_strs(buf, 7, &self.extensions);
        put_strs(buf, 8, &self.reference_task_ids);
    }
}

impl ProtoFields for Artifact {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_str(buf, 1, &self.artifact_id);
        put_str(buf, 2, opt_str(&self.name));
        put_str(buf, 3, opt_str(&self.description));
        put_messages(buf, 4, &self.parts);
        put_metadata(buf, 5, self.metadata.as_ref());
        put_strs(buf, 6, &self.extensions);
    }
}

impl ProtoFields for TaskStatusRef<'_> {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_int(buf, 1, i64::from(self.state.number()));
        if let Some(m) = self.message {
            put_message(buf, 2, m);
        }
        if let Some(t) = self.timestamp {
            put_message(buf, 3, &Timestamp(t));
        }
    }
}

fn artifact(a: &impl Borrow<Artifact>) -> &Artifact {
    a.borrow()
}

fn message(m: &impl Borrow<Message>) -> &Message {
    m.borrow()
}

impl<A: Borrow<Artifact>, M: Borrow<Message>> ProtoFields for TaskRef<'_, A, M> {
    fn write_fields(&self, buf: &mut BytesMut) {
        put_str(buf, 1, self.id);
        put_str(buf, 2, self.context_id);
        put_message(buf, 3, &self.status);
        put_messages(buf, 4, self.artifacts.iter().map(artifact));
        put_messages(buf, 5, self.history.iter().map(message));
        put_metadata(buf, 6, self.metadata);
    }
}

impl<A: Borrow<Artifact>, M: Borrow<Message>> ProtoFields for SendMessageResponseRef<'_, A, M> {
    fn write_fields(&self, buf: &mut BytesMut) {
        match self {
            Self::Task(t) => put_message(buf, 1, t),
            Self::Message(m) => put_message(buf, 2, *m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_as_long_as_protobuf_says() {
        for (v, len) in [
            (0u64, 1),
            (1, 1),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (16_384, 3),
        ] {
            assert_eq!(varint_len(v), len, "{v}");
            let mut buf = BytesMut::new();
            put_varint(&mut buf, v);
            assert_eq!(buf.len(), len, "{v}");
        }
        assert_eq!(varint_len(u64::MAX), 10);
        assert_eq!(varint_len(-1i64 as u64), 10);
    }
}
