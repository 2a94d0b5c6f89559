//! Without this crate's exporter, `record_current` and `mark_current_error` record on the
//! current `tracing` span (its fields must be declared): what an application's own layer
//! (a log formatter, `tracing-opentelemetry`) then sees.

use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

/// Every field value recorded after a span was made, as `name=value`.
#[derive(Clone, Default)]
struct Recorded(Arc<Mutex<Vec<String>>>);

impl Visit for Recorded {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{}={value}", field.name()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{}={value:?}", field.name()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Recorded {
    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: Context<'_, S>,
    ) {
        values.record(&mut self.clone());
    }
}

#[test]
fn attributes_reach_the_current_info_span() {
    let recorded = Recorded::default();
    let subscriber = tracing_subscriber::registry().with(recorded.clone());
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!(
            "a2a.request",
            a2a.state = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let _entered = span.enter();
        a2a_telemetry::record_current(&[("a2a.state", "TASK_STATE_FAILED")]);
        a2a_telemetry::mark_current_error();
    });
    assert_eq!(
        *recorded.0.lock().unwrap(),
        ["a2a.state=TASK_STATE_FAILED", "otel.status_code=error"]
    );
}
