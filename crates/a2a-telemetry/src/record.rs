//! What is kept of a span while it runs and until it is exported: ids, name, times, its
//! attributes and events, in a form that encodes straight to OTLP.

use std::fmt::{self, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing_subscriber::registry::{LookupSpan as _, Registry};

use crate::attr::AttrValue;
use crate::trace_parent::TraceParent;

/// A stored value: strings recorded from fields live in their span's `text` (one buffer per
/// span, so a span's strings cost one allocation, not one each).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Static(&'static str),
    /// A range of the span's `text`.
    Text(u32, u32),
    Owned(String),
    I64(i64),
    F64(f64),
    Bool(bool),
}

impl Val {
    /// The string in a string value (`text`: its span's buffer).
    pub(crate) fn str<'a>(&'a self, text: &'a str) -> Option<&'a str> {
        match self {
            Self::Static(s) => Some(s),
            Self::Text(start, len) => text.get(*start as usize..(*start + *len) as usize),
            Self::Owned(s) => Some(s),
            _ => None,
        }
    }

    /// Appends `s` to `text` and refers to it.
    pub(crate) fn push(text: &mut String, s: &str) -> Self {
        let start = text.len();
        text.push_str(s);
        Self::range(text, start)
    }

    /// Refers to what was appended to `text` since `start`.
    pub(crate) fn range(text: &str, start: usize) -> Self {
        match (u32::try_from(start), u32::try_from(text.len() - start)) {
            (Ok(a), Ok(n)) if a.checked_add(n).is_some() => Self::Text(a, n),
            _ => Self::Owned(text[start..].to_owned()),
        }
    }
}

impl From<AttrValue> for Val {
    fn from(v: AttrValue) -> Self {
        match v {
            AttrValue::Static(s) => Self::Static(s),
            AttrValue::Str(s) => Self::Owned(s),
            AttrValue::I64(i) => Self::I64(i),
            AttrValue::F64(f) => Self::F64(f),
            AttrValue::Bool(b) => Self::Bool(b),
        }
    }
}

/// Attributes: `tracing` field names are static.
pub(crate) type Attrs = Vec<(&'static str, Val)>;

/// What a span stands for (OTLP span kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside a process.
    Internal = 1,
    /// Handling a request from another process.
    Server = 2,
    /// A request to another process.
    Client = 3,
    /// Sending a message that is handled later.
    Producer = 4,
    /// Handling such a message.
    Consumer = 5,
}

/// An event of a span.
#[derive(Debug)]
pub(crate) struct EventRecord {
    pub(crate) time_ns: u64,
    pub(crate) name: Val,
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
    pub(crate) name: Val,
    pub(crate) kind: SpanKind,
    pub(crate) start_ns: u64,
    pub(crate) end_ns: u64,
    pub(crate) attrs: Attrs,
    pub(crate) events: Vec<EventRecord>,
    /// OTLP status code: 0 unset, 1 ok, 2 error.
    pub(crate) status: u8,
    pub(crate) status_message: Option<Val>,
    /// The strings of this span's attributes, events, name and status.
    pub(crate) text: String,
}

impl Ids {
    /// The context to pass on to children of this span.
    pub(crate) fn trace_parent(&self) -> TraceParent {
        TraceParent {
            trace_id: self.trace_id,
            span_id: self.span_id,
            flags: u8::from(self.sampled),
            trace_state: self.trace_state.clone(),
        }
    }

    /// The ids of a caller's span in another process.
    pub(crate) fn remote(parent: TraceParent) -> Self {
        Self {
            sampled: parent.sampled(),
            trace_id: parent.trace_id,
            span_id: parent.span_id,
            trace_state: parent.trace_state,
        }
    }
}

impl SpanRecord {
    /// A new span, the child of `parent` (a root without), sampled as `sampler` decides. A
    /// sampled span starts its clock and has room for `attrs` attributes; an unsampled one
    /// only carries its ids on (to its children, and as `traceparent` with the sampled flag
    /// off).
    pub(crate) fn begin(
        parent: Option<Ids>,
        remote_parent: bool,
        name: Val,
        kind: SpanKind,
        sampler: &crate::sampler::Sampler,
        attrs: usize,
    ) -> Self {
        let (trace_id, parent_span_id, parent_sampled, trace_state) = match parent {
            Some(p) => (p.trace_id, p.span_id, Some(p.sampled), p.trace_state),
            None => (random_trace_id(), [0; 8], None, None),
        };
        let sampled = sampler.decide(&trace_id, parent_sampled);
        let (attrs, text) = if sampled { (attrs, 256) } else { (0, 0) };
        Self {
            ids: Ids {
                trace_id,
                span_id: random_span_id(),
                sampled,
                trace_state,
            },
            parent_span_id,
            remote_parent,
            name,
            kind,
            start_ns: if sampled { now_ns() } else { 0 },
            end_ns: 0,
            attrs: Vec::with_capacity(attrs),
            events: Vec::new(),
            status: 0,
            status_message: None,
            text: String::with_capacity(text),
        }
    }
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

/// Records a span's fields, reading the `otel.*` ones as its name, kind and status.
pub(crate) struct SpanVisitor<'a> {
    pub(crate) rec: &'a mut SpanRecord,
    /// The span's first fields (from its callsite, each once): nothing to replace.
    pub(crate) fresh: bool,
}

impl SpanVisitor<'_> {
    fn set(&mut self, key: &'static str, value: Val) {
        let attrs = &mut self.rec.attrs;
        // A field recorded again has the same (static) name as before: compare addresses
        // first, contents only when that finds nothing.
        let slot = if self.fresh {
            None
        } else {
            match attrs.iter().position(|(k, _)| std::ptr::eq(*k, key)) {
                Some(i) => Some(i),
                None => attrs.iter().position(|(k, _)| *k == key),
            }
        };
        match slot {
            Some(i) => attrs[i].1 = value,
            None => attrs.push((key, value)),
        }
    }

    fn put(&mut self, field: &Field, value: Val) {
        match field.name() {
            "otel.name"
            | "otel.kind"
            | "otel.status_code"
            | "otel.status_description"
            | "otel.status_message" => {}
            name => self.set(name, value),
        }
    }
}

impl Visit for SpanVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let rec = &mut *self.rec;
        match field.name() {
            "otel.name" => rec.name = Val::push(&mut rec.text, value),
            "otel.kind" => {
                rec.kind = [
                    ("server", SpanKind::Server),
                    ("client", SpanKind::Client),
                    ("producer", SpanKind::Producer),
                    ("consumer", SpanKind::Consumer),
                ]
                .into_iter()
                .find(|(n, _)| value.eq_ignore_ascii_case(n))
                .map_or(SpanKind::Internal, |(_, k)| k);
            }
            "otel.status_code" => {
                rec.status = if value.eq_ignore_ascii_case("error") {
                    2
                } else if value.eq_ignore_ascii_case("ok") {
                    1
                } else {
                    0
                };
            }
            "otel.status_description" | "otel.status_message" => {
                rec.status_message = Some(Val::push(&mut rec.text, value));
            }
            name => {
                let v = Val::push(&mut rec.text, value);
                self.set(name, v);
            }
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Val::I64(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        let v = unsigned(&mut self.rec.text, value);
        self.put(field, v);
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Val::Bool(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Val::F64(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name().starts_with("otel.") {
            self.record_str(field, &format!("{value:?}"));
            return;
        }
        let text = &mut self.rec.text;
        let start = text.len();
        let _ = write!(text, "{value:?}");
        let v = Val::range(text, start);
        self.set(field.name(), v);
    }
}

fn unsigned(text: &mut String, value: u64) -> Val {
    i64::try_from(value).map_or_else(|_| Val::push(text, &value.to_string()), Val::I64)
}

/// Records an event's fields (strings into its span's `text`); its `message` becomes the
/// event's name.
pub(crate) struct EventVisitor<'a> {
    pub(crate) text: &'a mut String,
    pub(crate) event: &'a mut EventRecord,
}

impl Visit for EventVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let v = Val::push(self.text, value);
        if field.name() == "message" {
            self.event.name = v;
        } else {
            self.event.attrs.push((field.name(), v));
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.event.attrs.push((field.name(), Val::I64(value)));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        let v = unsigned(self.text, value);
        self.event.attrs.push((field.name(), v));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.event.attrs.push((field.name(), Val::Bool(value)));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.event.attrs.push((field.name(), Val::F64(value)));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let start = self.text.len();
        let _ = write!(self.text, "{value:?}");
        let v = Val::range(self.text, start);
        if field.name() == "message" {
            self.event.name = v;
        } else {
            self.event.attrs.push((field.name(), v));
        }
    }
}

/// Whether an `OtlpLayer` was made in this process. Until one is, no `tracing` span
/// carries a record, and looking for one (the dispatcher, a downcast through every layer of
/// the subscriber, the current span: about 170 instructions) is all a lookup would do, four
/// times a send.
static LAYER_MADE: AtomicBool = AtomicBool::new(false);

/// Notes that an `OtlpLayer` was made: from now on `tracing` spans may carry records.
pub(crate) fn note_layer_made() {
    LAYER_MADE.store(true, Ordering::Release);
}

/// Runs `f` on the id and record of the nearest span, from the current `tracing` span
/// outwards, that this crate records.
/// (Reads the current span's id without `Span::current()`, which would take and release a
/// reference to it.)
pub(crate) fn with_current_record<R>(
    f: impl FnOnce(&tracing::span::Id, &mut SpanRecord) -> R,
) -> Option<R> {
    if !LAYER_MADE.load(Ordering::Acquire) {
        return None;
    }
    let mut f = Some(f);
    tracing::dispatcher::get_default(|dispatch| {
        let registry = dispatch.downcast_ref::<Registry>()?;
        let current = dispatch.current_span();
        let span = registry.span(current.id()?)?;
        for s in span.scope() {
            let mut ext = s.extensions_mut();
            if let Some(rec) = ext.get_mut::<SpanRecord>() {
                return f.take().map(|f| f(&s.id(), rec));
            }
        }
        None
    })
}
