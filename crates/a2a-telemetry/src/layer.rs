//! The `tracing` layer: a compact record per span, kept in the span's registry extensions
//! and handed to the exporter when the span closes.

use std::sync::Arc;

use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::context::take_remote_parent;
use crate::queue::Queue;
use crate::record::{
    EventRecord, EventVisitor, Ids, SpanKind, SpanRecord, SpanVisitor, Val, now_ns,
};
use crate::sampler::Sampler;

/// Records the spans it is given (put a filter on it) and queues them for export when they
/// close. Made by [`ExportConfig::start`](crate::ExportConfig::start).
///
/// Fields named `otel.name`, `otel.kind`, `otel.status_code` and `otel.status_description`
/// set the exported span's name, kind and status (as with `tracing-opentelemetry`); events
/// inside a recorded span become its span events, named by their message.
#[derive(Debug, Clone)]
pub struct OtlpLayer {
    sampler: Sampler,
    queue: Arc<Queue>,
}

impl OtlpLayer {
    pub(crate) fn new(sampler: Sampler, queue: Arc<Queue>) -> Self {
        crate::record::note_layer_made();
        Self { sampler, queue }
    }
}

impl<S> tracing_subscriber::Layer<S> for OtlpLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let remote = take_remote_parent();
        let local = if remote.is_some() {
            None
        } else {
            // An own span running on this thread is the parent when nothing recorded was
            // entered inside it; otherwise the nearest recorded `tracing` span is.
            let parent = span.parent();
            let own = if attrs.is_contextual() {
                crate::own::with_own_if_innermost(
                    || parent.as_ref().map(|p| p.id()),
                    |rec| rec.ids.clone(),
                )
            } else {
                None
            };
            own.or_else(|| {
                parent.and_then(|p| p.extensions().get::<SpanRecord>().map(|r| r.ids.clone()))
            })
        };
        let remote_parent = remote.is_some();
        let mut rec = SpanRecord::begin(
            remote.map(Ids::remote).or(local),
            remote_parent,
            Val::Static(attrs.metadata().name()),
            SpanKind::Internal,
            &self.sampler,
            attrs.fields().len(),
        );
        if rec.ids.sampled {
            attrs.record(&mut SpanVisitor {
                rec: &mut rec,
                fresh: true,
            });
        }
        span.extensions_mut().insert(rec);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(rec) = span.extensions_mut().get_mut::<SpanRecord>()
            && rec.ids.sampled
        {
            values.record(&mut SpanVisitor { rec, fresh: false });
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        // An own span running here, with nothing entered inside it, is the event's span.
        let span = ctx.event_span(event);
        if event.is_contextual()
            && crate::own::with_own_if_innermost(
                || span.as_ref().map(|s| s.id()),
                |rec| record_event(rec, event),
            )
            .is_some()
        {
            return;
        }
        let Some(span) = span else {
            return;
        };
        let mut ext = span.extensions_mut();
        if let Some(rec) = ext.get_mut::<SpanRecord>() {
            record_event(rec, event);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(mut rec) = span.extensions_mut().remove::<SpanRecord>() else {
            return;
        };
        if rec.ids.sampled {
            rec.end_ns = now_ns();
            self.queue.push(rec);
        }
    }
}

/// Adds `event` to a recorded span's events, named by its message.
fn record_event(rec: &mut SpanRecord, event: &Event<'_>) {
    if !rec.ids.sampled {
        return;
    }
    let meta = event.metadata();
    // As `tracing-opentelemetry` does: an ERROR event marks its span as failed.
    if *meta.level() == tracing::Level::ERROR && rec.status == 0 {
        rec.status = 2;
    }
    let mut ev = EventRecord {
        time_ns: now_ns(),
        name: Val::Static(meta.name()),
        attrs: vec![
            ("level", Val::Static(meta.level().as_str())),
            ("target", Val::Static(meta.target())),
        ],
    };
    event.record(&mut EventVisitor {
        text: &mut rec.text,
        event: &mut ev,
    });
    rec.events.push(ev);
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;
    use crate::attr::AttrValue;
    use crate::trace_parent::TraceParent;

    fn spans_of(sampler: Sampler, f: impl FnOnce()) -> Vec<SpanRecord> {
        let queue = Arc::new(Queue::new(100, 10));
        let subscriber =
            tracing_subscriber::registry().with(OtlpLayer::new(sampler, queue.clone()));
        tracing::subscriber::with_default(subscriber, f);
        let mut out = Vec::new();
        queue.take(&mut out);
        out
    }

    /// An attribute's value, its string resolved.
    fn attr(s: &SpanRecord, key: &str) -> Option<AttrValue> {
        let (_, v) = s.attrs.iter().find(|(k, _)| *k == key)?;
        Some(match v {
            Val::I64(i) => AttrValue::I64(*i),
            Val::Bool(b) => AttrValue::Bool(*b),
            Val::F64(f) => AttrValue::F64(*f),
            other => AttrValue::Str(other.str(&s.text)?.to_owned()),
        })
    }

    #[test]
    fn records_ids_names_fields_events_and_context() {
        let remote = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut seen = None;
        let spans = spans_of(Sampler::default(), || {
            let parent = TraceParent::parse(remote, Some("a=b"));
            let outer = crate::span_with_parent(parent, || {
                tracing::info_span!(
                    "req",
                    otel.name = "SendMessage",
                    otel.kind = "server",
                    otel.status_code = tracing::field::Empty,
                    id = 7u64,
                    later = tracing::field::Empty,
                )
            });
            outer.record("later", "x");
            outer.record("otel.status_code", "error");
            let _g = outer.enter();
            let inner = tracing::info_span!("inner");
            let _i = inner.enter();
            tracing::info!(n = 1, "step");
            crate::add_event("custom", || vec![("k", AttrValue::Static("v"))]);
            seen = crate::current_trace_context();
        });
        assert_eq!(spans.len(), 2, "{spans:#?}");
        let (inner, outer) = (&spans[0], &spans[1]);
        assert_eq!(outer.name.str(&outer.text), Some("SendMessage"));
        assert_eq!(outer.kind, crate::record::SpanKind::Server);
        assert_eq!(outer.status, 2);
        assert!(outer.remote_parent);
        assert_eq!(
            outer.parent_span_id,
            [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        assert_eq!(attr(outer, "id"), Some(AttrValue::I64(7)));
        assert_eq!(attr(outer, "later"), Some(AttrValue::Str("x".into())));
        assert_eq!(inner.ids.trace_id, outer.ids.trace_id);
        assert_eq!(inner.parent_span_id, outer.ids.span_id);
        assert!(!inner.remote_parent);
        assert_eq!(inner.ids.trace_state.as_deref(), Some("a=b"));
        let names: Vec<_> = inner
            .events
            .iter()
            .map(|e| e.name.str(&inner.text))
            .collect();
        assert_eq!(names, [Some("step"), Some("custom")]);
        let (parent, state) = seen.expect("a current trace context");
        assert_eq!(
            TraceParent::parse(&parent, None).map(|p| (p.trace_id, p.span_id)),
            Some((inner.ids.trace_id, inner.ids.span_id))
        );
        assert_eq!(state.as_deref(), Some("a=b"));
        assert!(inner.start_ns <= inner.end_ns && outer.start_ns <= inner.start_ns);
    }

    #[test]
    fn unsampled_traces_are_not_queued_but_still_propagate() {
        let mut seen = None;
        let spans = spans_of(
            Sampler::parse("parentbased_always_off", None).unwrap(),
            || {
                let span = tracing::info_span!("root");
                let _g = span.enter();
                seen = crate::current_trace_context();
            },
        );
        assert!(spans.is_empty());
        let (parent, _) = seen.expect("ids are kept for propagation");
        assert!(parent.ends_with("-00"), "{parent}");

        // A sampled caller wins over the local default under a parent-based sampler.
        let spans = spans_of(
            Sampler::parse("parentbased_always_off", None).unwrap(),
            || {
                let parent = TraceParent::parse(
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    None,
                );
                let _span = crate::span_with_parent(parent, || tracing::info_span!("req", a = 1));
            },
        );
        assert_eq!(spans.len(), 1);
        assert_eq!(attr(&spans[0], "a"), Some(AttrValue::I64(1)));
    }

    #[test]
    fn a_full_queue_drops_and_counts() {
        let queue = Arc::new(Queue::new(3, 2));
        let subscriber =
            tracing_subscriber::registry().with(OtlpLayer::new(Sampler::default(), queue.clone()));
        tracing::subscriber::with_default(subscriber, || {
            for _ in 0..5 {
                let _s = tracing::info_span!("s");
            }
        });
        assert_eq!(queue.dropped.load(std::sync::atomic::Ordering::Relaxed), 2);
        let mut out = Vec::new();
        queue.take(&mut out);
        assert_eq!(out.len(), 2, "one batch at a time");
    }
}
