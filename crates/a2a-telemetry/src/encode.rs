//! OTLP protobuf encoding of span records, written directly (the lengths of nested messages
//! are computed first, so nothing is encoded twice or copied).
//!
//! Message and field numbers are those of `opentelemetry/proto/trace/v1/trace.proto`,
//! `common/v1/common.proto` and `collector/trace/v1/trace_service.proto`.

use bytes::Bytes;

use crate::attr::AttrValue;
use crate::record::{EventRecord, SpanRecord, Val};

const VARINT: u64 = 0;
const I64: u64 = 1;
const LEN: u64 = 2;
const I32: u64 = 5;

fn varint_len(v: u64) -> usize {
    // 1 byte per started 7 bits; 0 takes one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key_len(field: u64) -> usize {
    varint_len(field << 3)
}

fn put_key(out: &mut Vec<u8>, field: u64, wire: u64) {
    put_varint(out, (field << 3) | wire);
}

/// The encoded size of a length-delimited field holding `n` bytes.
fn len_field(field: u64, n: usize) -> usize {
    key_len(field) + varint_len(n as u64) + n
}

fn put_len(out: &mut Vec<u8>, field: u64, n: usize) {
    put_key(out, field, LEN);
    put_varint(out, n as u64);
}

fn put_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    put_len(out, field, bytes.len());
    out.extend_from_slice(bytes);
}

fn put_fixed64(out: &mut Vec<u8>, field: u64, v: u64) {
    put_key(out, field, I64);
    out.extend_from_slice(&v.to_le_bytes());
}

// AnyValue { string_value = 1; bool_value = 2; int_value = 3; double_value = 4 }
fn any_value_len(v: &Val, text: &str) -> usize {
    match v {
        Val::Bool(_) => key_len(2) + 1,
        Val::I64(i) => key_len(3) + varint_len(*i as u64),
        Val::F64(_) => key_len(4) + 8,
        s => len_field(1, s.str(text).unwrap_or("").len()),
    }
}

fn put_any_value(out: &mut Vec<u8>, v: &Val, text: &str) {
    match v {
        Val::Bool(b) => {
            put_key(out, 2, VARINT);
            out.push(u8::from(*b));
        }
        Val::I64(i) => {
            put_key(out, 3, VARINT);
            put_varint(out, *i as u64);
        }
        Val::F64(f) => put_fixed64(out, 4, f.to_bits()),
        s => put_bytes(out, 1, s.str(text).unwrap_or("").as_bytes()),
    }
}

// KeyValue { key = 1; value = 2 }
fn key_value_len(key: &str, v: &Val, text: &str) -> usize {
    len_field(1, key.len()) + len_field(2, any_value_len(v, text))
}

fn put_key_value(out: &mut Vec<u8>, field: u64, key: &str, v: &Val, text: &str) {
    let value_len = any_value_len(v, text);
    put_len(
        out,
        field,
        len_field(1, key.len()) + len_field(2, value_len),
    );
    put_bytes(out, 1, key.as_bytes());
    put_len(out, 2, value_len);
    put_any_value(out, v, text);
}

fn attrs_len(field: u64, attrs: &[(&str, Val)], text: &str) -> usize {
    attrs
        .iter()
        .map(|(k, v)| len_field(field, key_value_len(k, v, text)))
        .sum()
}

fn put_attrs(out: &mut Vec<u8>, field: u64, attrs: &[(&str, Val)], text: &str) {
    for (k, v) in attrs {
        put_key_value(out, field, k, v, text);
    }
}

fn text_of<'a>(v: &'a Val, text: &'a str) -> &'a str {
    v.str(text).unwrap_or("")
}

// Span.Event { time_unix_nano = 1 (fixed64); name = 2; attributes = 3 }
fn event_len(e: &EventRecord, text: &str) -> usize {
    key_len(1) + 8 + len_field(2, text_of(&e.name, text).len()) + attrs_len(3, &e.attrs, text)
}

// Status { message = 2; code = 3 }
fn status_len(s: &SpanRecord) -> usize {
    s.status_message
        .as_ref()
        .map_or(0, |m| len_field(2, text_of(m, &s.text).len()))
        + if s.status == 0 {
            0
        } else {
            key_len(3) + varint_len(u64::from(s.status))
        }
}

/// `SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK` and `SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK`.
fn span_flags(s: &SpanRecord) -> u32 {
    let remote = if s.remote_parent { 0x300 } else { 0x100 };
    remote | u32::from(s.ids.sampled)
}

// Span { trace_id = 1; span_id = 2; trace_state = 3; parent_span_id = 4; name = 5; kind = 6;
//        start_time_unix_nano = 7; end_time_unix_nano = 8; attributes = 9; events = 11;
//        status = 15; flags = 16 (fixed32) }
fn put_span(out: &mut Vec<u8>, s: &SpanRecord) {
    put_bytes(out, 1, &s.ids.trace_id);
    put_bytes(out, 2, &s.ids.span_id);
    if let Some(state) = s.ids.trace_state.as_deref().filter(|t| !t.is_empty()) {
        put_bytes(out, 3, state.as_bytes());
    }
    if s.parent_span_id != [0; 8] {
        put_bytes(out, 4, &s.parent_span_id);
    }
    let text = s.text.as_str();
    put_bytes(out, 5, text_of(&s.name, text).as_bytes());
    put_key(out, 6, VARINT);
    put_varint(out, s.kind as u64);
    put_fixed64(out, 7, s.start_ns);
    put_fixed64(out, 8, s.end_ns);
    put_attrs(out, 9, &s.attrs, text);
    for e in &s.events {
        put_len(out, 11, event_len(e, text));
        put_fixed64(out, 1, e.time_ns);
        put_bytes(out, 2, text_of(&e.name, text).as_bytes());
        put_attrs(out, 3, &e.attrs, text);
    }
    let status = status_len(s);
    if status != 0 {
        put_len(out, 15, status);
        if let Some(m) = &s.status_message {
            put_bytes(out, 2, text_of(m, text).as_bytes());
        }
        if s.status != 0 {
            put_key(out, 3, VARINT);
            put_varint(out, u64::from(s.status));
        }
    }
    put_key(out, 16, I32);
    out.extend_from_slice(&span_flags(s).to_le_bytes());
}

/// The encoded `Resource` (its attributes) and `InstrumentationScope`, made once.
#[derive(Debug, Clone)]
pub(crate) struct Preamble {
    resource: Vec<u8>,
    scope: Vec<u8>,
}

impl Preamble {
    pub(crate) fn new(
        resource: &[(&str, AttrValue)],
        scope_name: &str,
        scope_version: &str,
    ) -> Self {
        let mut r = Vec::new();
        let resource: Vec<(&str, Val)> = resource
            .iter()
            .map(|(k, v)| (*k, v.clone().into()))
            .collect();
        put_attrs(&mut r, 1, &resource, "");
        let mut scope = Vec::new();
        put_bytes(&mut scope, 1, scope_name.as_bytes());
        put_bytes(&mut scope, 2, scope_version.as_bytes());
        Self { resource: r, scope }
    }
}

/// Encodes an `ExportTraceServiceRequest` with `spans`. Each span is encoded once (into
/// `scratch`, then behind its length); the message's head, whose lengths are known only at
/// the end, goes into room left before the spans, so the batch is not copied again.
// ExportTraceServiceRequest { resource_spans = 1 }
// ResourceSpans { resource = 1; scope_spans = 2 }  ScopeSpans { scope = 1; spans = 2 }
pub(crate) fn encode_request(pre: &Preamble, spans: &[SpanRecord], scratch: &mut Vec<u8>) -> Bytes {
    // Three length-delimited headers (key + a varint of at most 10 bytes) and the preamble.
    let room = 3 * 11 + len_field(1, pre.resource.len()) + len_field(1, pre.scope.len());
    let mut buf = Vec::with_capacity(room + spans.len() * 512);
    buf.resize(room, 0);
    for s in spans {
        scratch.clear();
        put_span(scratch, s);
        put_len(&mut buf, 2, scratch.len());
        buf.extend_from_slice(scratch);
    }
    let scope_spans = len_field(1, pre.scope.len()) + (buf.len() - room);
    let resource_spans = len_field(1, pre.resource.len()) + len_field(2, scope_spans);
    let mut head = Vec::with_capacity(room);
    put_len(&mut head, 1, resource_spans);
    put_bytes(&mut head, 1, &pre.resource);
    put_len(&mut head, 2, scope_spans);
    put_bytes(&mut head, 1, &pre.scope);
    let start = room - head.len();
    buf[start..room].copy_from_slice(&head);
    Bytes::from(buf).slice(start..)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use prost::Message as _;

    use super::*;
    use crate::record::{Ids, SpanKind};

    fn span(i: u8) -> SpanRecord {
        SpanRecord {
            ids: Ids {
                trace_id: [i; 16],
                span_id: [i + 1; 8],
                sampled: true,
                trace_state: i.is_multiple_of(2).then(|| Arc::from("k=v")),
            },
            parent_span_id: if i == 0 { [0; 8] } else { [9; 8] },
            remote_parent: i == 1,
            name: Val::Owned(format!("span-{i}")),
            kind: SpanKind::Server,
            start_ns: 1_700_000_000_000_000_000 + u64::from(i),
            end_ns: 1_700_000_000_500_000_000,
            attrs: vec![
                ("a2a.task_id", Val::Text(0, 200)),
                ("a2a.binding", Val::Static("jsonrpc")),
                ("n", Val::I64(-5)),
                ("ok", Val::Bool(true)),
                ("x", Val::F64(1.5)),
            ],
            events: vec![EventRecord {
                time_ns: 42,
                name: Val::Static("a2a.task.status"),
                attrs: vec![("a2a.state", Val::Text(200, 20))],
            }],
            status: if i == 1 { 2 } else { 0 },
            status_message: (i == 1).then_some(Val::Text(220, 4)),
            text: format!("{}TASK_STATE_COMPLETEDboom", "t".repeat(200)),
        }
    }

    #[test]
    fn decodes_as_otlp() {
        let pre = Preamble::new(
            &[("service.name", AttrValue::Static("svc"))],
            "a2a",
            "0.1.0",
        );
        let spans: Vec<_> = (0..3).map(span).collect();
        let out = encode_request(&pre, &spans, &mut Vec::new());
        let req = ExportTraceServiceRequest::decode(out).expect("valid protobuf");
        let rs = &req.resource_spans[0];
        let res = rs.resource.as_ref().unwrap();
        assert_eq!(res.attributes[0].key, "service.name");
        let ss = &rs.scope_spans[0];
        assert_eq!(ss.scope.as_ref().unwrap().name, "a2a");
        assert_eq!(ss.spans.len(), 3);
        let s0 = &ss.spans[0];
        assert_eq!(s0.trace_id, vec![0; 16]);
        assert_eq!(s0.span_id, vec![1; 8]);
        assert!(s0.parent_span_id.is_empty());
        assert_eq!(s0.trace_state, "k=v");
        assert_eq!(s0.name, "span-0");
        assert_eq!(s0.kind, 2);
        assert_eq!(s0.start_time_unix_nano, 1_700_000_000_000_000_000);
        assert_eq!(s0.end_time_unix_nano, 1_700_000_000_500_000_000);
        assert_eq!(s0.flags, 0x101);
        assert_eq!(s0.attributes.len(), 5);
        let val = |i: usize| {
            s0.attributes[i]
                .value
                .as_ref()
                .unwrap()
                .value
                .clone()
                .unwrap()
        };
        assert_eq!(val(0), Value::StringValue("t".repeat(200)));
        assert_eq!(val(1), Value::StringValue("jsonrpc".into()));
        assert_eq!(val(2), Value::IntValue(-5));
        assert_eq!(val(3), Value::BoolValue(true));
        assert_eq!(val(4), Value::DoubleValue(1.5));
        assert_eq!(s0.events[0].name, "a2a.task.status");
        assert_eq!(s0.events[0].time_unix_nano, 42);
        assert!(s0.status.is_none());
        let s1 = &ss.spans[1];
        assert_eq!(s1.parent_span_id, vec![9; 8]);
        assert_eq!(s1.flags, 0x301);
        let st = s1.status.as_ref().unwrap();
        assert_eq!((st.code, st.message.as_str()), (2, "boom"));
    }

    /// Random spans and batches, some large enough for three-byte length prefixes (a span
    /// over 16 KiB, a batch over 2 MiB), encoded here and decoded by the official protobuf
    /// types: every field comes back as it went in.
    #[test]
    fn random_batches_round_trip_through_the_official_types() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..40 {
            let count = 1 + (next() % 60) as usize;
            let mut spans = Vec::with_capacity(count);
            for i in 0..count {
                // Now and then a span whose text is long: its length prefix takes 3 bytes.
                let long = if next() % 7 == 0 {
                    20_000 + (next() % 50_000) as usize
                } else {
                    (next() % 300) as usize
                };
                let text: String = (0..long)
                    .map(|k| char::from(b'a' + ((k as u64 + next()) % 26) as u8))
                    .collect();
                let cut = (next() as usize) % (text.len() + 1);
                let ids = Ids {
                    trace_id: next().to_le_bytes().repeat(2).try_into().unwrap(),
                    span_id: next().to_le_bytes(),
                    sampled: true,
                    trace_state: (next() % 2 == 0).then(|| Arc::from(format!("k{i}=v{round}"))),
                };
                let parent = if next() % 3 == 0 {
                    [0; 8]
                } else {
                    next().to_le_bytes()
                };
                spans.push(SpanRecord {
                    ids,
                    parent_span_id: parent,
                    remote_parent: next() % 2 == 0,
                    name: Val::Owned(format!("span-{round}-{i}")),
                    kind: SpanKind::Client,
                    start_ns: next(),
                    end_ns: next(),
                    attrs: vec![
                        ("head", Val::Text(0, cut as u32)),
                        ("tail", Val::Text(cut as u32, (text.len() - cut) as u32)),
                        ("n", Val::I64(next() as i64)),
                        ("f", Val::F64((next() % 1000) as f64 / 7.0)),
                        ("b", Val::Bool(next() % 2 == 0)),
                    ],
                    events: (0..next() % 4)
                        .map(|e| EventRecord {
                            time_ns: next(),
                            name: Val::Owned(format!("event-{e}")),
                            attrs: vec![("e", Val::I64(e as i64))],
                        })
                        .collect(),
                    status: (next() % 3) as u8,
                    status_message: None,
                    text,
                });
            }
            let pre = Preamble::new(
                &[("service.name", AttrValue::Static("svc"))],
                "a2a",
                "0.1.0",
            );
            let out = encode_request(&pre, &spans, &mut Vec::new());
            let req = ExportTraceServiceRequest::decode(out).expect("valid protobuf");
            let got = &req.resource_spans[0].scope_spans[0].spans;
            assert_eq!(got.len(), spans.len(), "round {round}");
            for (g, s) in got.iter().zip(&spans) {
                assert_eq!(g.trace_id, s.ids.trace_id.to_vec());
                assert_eq!(g.span_id, s.ids.span_id.to_vec());
                assert_eq!(g.trace_state, s.ids.trace_state.as_deref().unwrap_or(""));
                let parent = if s.parent_span_id == [0; 8] {
                    Vec::new()
                } else {
                    s.parent_span_id.to_vec()
                };
                assert_eq!(g.parent_span_id, parent);
                assert_eq!(
                    (g.start_time_unix_nano, g.end_time_unix_nano),
                    (s.start_ns, s.end_ns)
                );
                let text =
                    |i: usize| match g.attributes[i].value.as_ref().and_then(|v| v.value.clone()) {
                        Some(Value::StringValue(t)) => t,
                        other => panic!("{other:?}"),
                    };
                assert_eq!(text(0) + &text(1), s.text);
                let Val::I64(n) = s.attrs[2].1 else {
                    unreachable!()
                };
                assert_eq!(
                    g.attributes[2].value.as_ref().unwrap().value,
                    Some(Value::IntValue(n))
                );
                assert_eq!(g.events.len(), s.events.len());
                for (ge, se) in g.events.iter().zip(&s.events) {
                    assert_eq!(ge.time_unix_nano, se.time_ns);
                }
                assert_eq!(
                    g.status.as_ref().map_or(0, |st| st.code),
                    i32::from(s.status)
                );
            }
        }
    }

    #[test]
    fn varint_lengths() {
        for v in [0u64, 1, 127, 128, 16_383, 16_384, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
        }
    }
}
