//! What is kept of a span while it runs and until it is exported: ids, name, times, its
//! attributes and events, in a form that encodes straight to OTLP.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string known at compile time.
    Static(&'static str),
    /// A string.
    Str(String),
    /// An integer.
    I64(i64),
    /// A floating-point number.
    F64(f64),
    /// A boolean.
    Bool(bool),
}

impl From<&'static str> for AttrValue {
    fn from(v: &'static str) -> Self {
        Self::Static(v)
    }
}

impl From<String> for AttrValue {
    fn from(v: String) -> Self {
        Self::Str(v)
    }
}

impl From<i64> for AttrValue {
    fn from(v: i64) -> Self {
        Self::I64(v)
    }
}

impl From<bool> for AttrValue {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

impl From<f64> for AttrValue {
    fn from(v: f64) -> Self {
        Self::F64(v)
    }
}

impl AttrValue {
    /// The string in a string value; empty for others.
    fn text(&self) -> &str {
        match self {
            Self::Static(s) => s,
            Self::Str(s) => s,
            _ => "",
        }
    }

    pub(crate) fn to_otel(&self) -> opentelemetry::Value {
        match self {
            Self::Static(s) => opentelemetry::Value::from(*s),
            Self::Str(s) => opentelemetry::Value::from(s.clone()),
            Self::I64(i) => opentelemetry::Value::I64(*i),
            Self::F64(f) => opentelemetry::Value::F64(*f),
            Self::Bool(b) => opentelemetry::Value::Bool(*b),
        }
    }
}

/// Attributes: `tracing` field names are static.
pub(crate) type Attrs = Vec<(&'static str, AttrValue)>;

/// OTLP span kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Internal = 1,
    Server = 2,
    Client = 3,
    Producer = 4,
    Consumer = 5,
}

/// An event of a span.
#[derive(Debug)]
pub(crate) struct EventRecord {
    pub(crate) time_ns: u64,
    pub(crate) name: Cow<'static, str>,
    pub(crate) attrs: Attrs,
}

/// The ids a span passes on to its children (and, as `traceparent`, to other processes).
#[derive(Debug, Clone)]
pub(crate) struct Ids {
    pub(crate) trace_id: [u8; 16],
    pub(crate) span_id: [u8; 8],
    pub(crate) sampled: bool,
    pub(crate) trace_state: Option<Arc<str>>,
}

/// One span, kept in its registry extensions while open.
#[derive(Debug)]
pub(crate) struct SpanRecord {
    pub(crate) ids: Ids,
    /// Zero for a root span.
    pub(crate) parent_span_id: [u8; 8],
    pub(crate) remote_parent: bool,
    pub(crate) name: Cow<'static, str>,
    pub(crate) kind: Kind,
    pub(crate) start_ns: u64,
    pub(crate) end_ns: u64,
    pub(crate) attrs: Attrs,
    pub(crate) events: Vec<EventRecord>,
    /// OTLP status code: 0 unset, 1 ok, 2 error.
    pub(crate) status: u8,
    pub(crate) status_message: Option<String>,
}

pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A random non-zero id.
pub(crate) fn random_span_id() -> [u8; 8] {
    fastrand::u64(1..).to_be_bytes()
}

pub(crate) fn random_trace_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&fastrand::u64(..).to_be_bytes());
    id[8..].copy_from_slice(&fastrand::u64(1..).to_be_bytes());
    id
}

fn set(attrs: &mut Attrs, key: &'static str, value: AttrValue) {
    match attrs.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => attrs.push((key, value)),
    }
}

/// Records a span's fields, reading the `otel.*` ones as its name, kind and status.
pub(crate) struct SpanVisitor<'a>(pub(crate) &'a mut SpanRecord);

impl SpanVisitor<'_> {
    fn put(&mut self, field: &Field, value: AttrValue) {
        let rec = &mut *self.0;
        match field.name() {
            "otel.name" => {
                rec.name = match value {
                    AttrValue::Static(s) => Cow::Borrowed(s),
                    AttrValue::Str(s) => Cow::Owned(s),
                    other => Cow::Owned(format!("{other:?}")),
                }
            }
            "otel.kind" => {
                rec.kind = match value.text().to_ascii_lowercase().as_str() {
                    "server" => Kind::Server,
                    "client" => Kind::Client,
                    "producer" => Kind::Producer,
                    "consumer" => Kind::Consumer,
                    _ => Kind::Internal,
                };
            }
            "otel.status_code" => {
                let text = value.text();
                rec.status = if text.eq_ignore_ascii_case("error") {
                    2
                } else if text.eq_ignore_ascii_case("ok") {
                    1
                } else {
                    0
                };
            }
            "otel.status_description" | "otel.status_message" => {
                rec.status_message = Some(match value {
                    AttrValue::Static(s) => s.to_owned(),
                    AttrValue::Str(s) => s,
                    other => format!("{other:?}"),
                });
            }
            name => set(&mut rec.attrs, name, value),
        }
    }
}

impl Visit for SpanVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, AttrValue::Str(value.to_owned()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, AttrValue::I64(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, unsigned(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, AttrValue::Bool(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, AttrValue::F64(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, AttrValue::Str(format!("{value:?}")));
    }
}

fn unsigned(value: u64) -> AttrValue {
    i64::try_from(value).map_or_else(|_| AttrValue::Str(value.to_string()), AttrValue::I64)
}

/// Records an event's fields; its `message` becomes the event's name.
pub(crate) struct EventVisitor<'a>(pub(crate) &'a mut EventRecord);

impl Visit for EventVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.name = Cow::Owned(value.to_owned());
        } else {
            self.0
                .attrs
                .push((field.name(), AttrValue::Str(value.to_owned())));
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.attrs.push((field.name(), AttrValue::I64(value)));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.attrs.push((field.name(), unsigned(value)));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.attrs.push((field.name(), AttrValue::Bool(value)));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.attrs.push((field.name(), AttrValue::F64(value)));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.0.name = Cow::Owned(text);
        } else {
            self.0.attrs.push((field.name(), AttrValue::Str(text)));
        }
    }
}
