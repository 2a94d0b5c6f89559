//! Spans a runtime records itself, without a `tracing` span: for the two spans of every
//! request on a busy server (the request and the agent's run), the `tracing` registry's
//! bookkeeping (a slot per span, per-layer filter state on every call, reference counting on
//! every enter and exit) cost more than recording them. An [`OwnSpan`] is a record behind a
//! lock that only its own request touches; while a future runs in it ([`OwnSpan::in_span`]),
//! `tracing` spans made there become its children, and [`add_event`](crate::add_event),
//! [`record_current`](crate::record_current) and
//! [`current_trace_context`](crate::current_trace_context) find it.
//!
//! Own spans are made only once an exporter has been told to accept them
//! ([`Exporter::record_own_spans`](crate::Exporter::record_own_spans)); otherwise
//! [`OwnSpan::start`] answers `None` and the caller makes a `tracing` span as usual.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, TryLockError};

use std::task::{Context, Poll};
use tracing_subscriber::registry::{LookupSpan as _, Registry};

use crate::queue::Queue;
use crate::record::{Ids, SpanKind, SpanRecord, Val, now_ns};
use crate::sampler::Sampler;
use crate::trace_parent::TraceParent;

/// Which own spans are wanted, by target.
type Wants = Box<dyn Fn(&'static str) -> bool + Send + Sync>;

pub(crate) struct Installed {
    pub(crate) queue: Arc<Queue>,
    pub(crate) sampler: Sampler,
    pub(crate) wants: Wants,
}

impl std::fmt::Debug for Installed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installed")
            .field("sampler", &self.sampler)
            .finish_non_exhaustive()
    }
}

pub(crate) static INSTALLED: OnceLock<Installed> = OnceLock::new();

type Shared = Arc<Mutex<Option<SpanRecord>>>;

fn lock(rec: &Shared) -> std::sync::MutexGuard<'_, Option<SpanRecord>> {
    rec.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The own span a future runs in on this thread, and the nearest recorded `tracing` span
/// when its poll began (a different one nearest now was entered inside the own span, and is
/// the innermost).
struct Current {
    span: Shared,
    base: Option<tracing::span::Id>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// The nearest span, from the current `tracing` span outwards, that this crate records (its
/// layer made a record for it): spans only a log layer sees do not count.
fn nearest_recorded() -> Option<tracing::span::Id> {
    tracing::dispatcher::get_default(|d| {
        let current = d.current_span();
        let registry = d.downcast_ref::<Registry>()?;
        let span = registry.span(current.id()?)?;
        span.scope()
            .find(|s| s.extensions().get::<SpanRecord>().is_some())
            .map(|s| s.id())
    })
}

/// Locks an own span's record from inside `tracing` callbacks: `None` when this thread
/// already holds it (an event emitted while the record is being written), instead of a
/// deadlock.
fn try_lock(rec: &Shared) -> Option<std::sync::MutexGuard<'_, Option<SpanRecord>>> {
    match rec.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Runs `f` on the record of the own span running on this thread, when it is the innermost
/// recorded span for something made there with no explicit parent (a `tracing` span or
/// event) whose nearest recorded `tracing` ancestor is `nearest`: when that is the one that
/// was nearest as the own span's poll began (nothing recorded was entered inside it).
/// (`nearest` is only called when an own span runs here.)
pub(crate) fn with_own_if_innermost<R>(
    nearest: impl FnOnce() -> Option<tracing::span::Id>,
    f: impl FnOnce(&mut SpanRecord) -> R,
) -> Option<R> {
    CURRENT.with(|c| {
        let c = c.borrow();
        let c = c.as_ref()?;
        if c.base != nearest() {
            return None;
        }
        try_lock(&c.span)?.as_mut().map(f)
    })
}

/// Runs `f` on the record of the innermost recorded span, own or `tracing`.
pub(crate) fn with_innermost<R>(f: impl FnOnce(&mut SpanRecord) -> R) -> Option<R> {
    let own = CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .map(|c| (c.span.clone(), c.base.clone()))
    });
    let mut f = Some(f);
    let base = own.as_ref().and_then(|(_, base)| base.as_ref());
    let in_tracing = crate::record::with_current_record(|id, rec| {
        // The nearest recorded `tracing` span, unless it was already nearest when the own
        // span's poll began (then the own span is inside it).
        if own.is_some() && base == Some(id) {
            return None;
        }
        f.take().map(|f| f(rec))
    });
    if let Some(Some(found)) = in_tracing {
        return Some(found);
    }
    let (span, _) = own?;
    let f = f.take()?;
    try_lock(&span)?.as_mut().map(f)
}

/// The target of own spans (as a `tracing` target: what export filters match), with the
/// exporter's decision about it remembered. Declare one `static` per target.
#[derive(Debug)]
pub struct OwnTarget {
    name: &'static str,
    /// 0: not decided yet; 1: not wanted; 2: wanted.
    decision: AtomicU8,
}

impl OwnTarget {
    /// A target named `name` (say `"a2a::server"`).
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            decision: AtomicU8::new(0),
        }
    }

    /// The target's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    fn wanted(&self, installed: &Installed) -> bool {
        match self.decision.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                let wanted = (installed.wants)(self.name);
                self.decision
                    .store(if wanted { 2 } else { 1 }, Ordering::Relaxed);
                wanted
            }
        }
    }
}

/// A span recorded without `tracing`; it ends (and is queued for export) when dropped.
#[derive(Debug)]
pub struct OwnSpan {
    rec: Shared,
    /// The exporter the span goes to when it ends.
    installed: &'static Installed,
}

impl OwnSpan {
    /// Starts a span named `name`, a child of `remote` when given, else of the innermost
    /// current span. `None` when no exporter accepts own spans of `target` (make a
    /// `tracing` span then). A span of a trace that is not sampled records nothing.
    pub fn start(
        target: &'static OwnTarget,
        name: &'static str,
        kind: SpanKind,
        remote: Option<TraceParent>,
    ) -> Option<Self> {
        let installed = INSTALLED.get()?;
        if !target.wanted(installed) {
            return None;
        }
        let remote_parent = remote.is_some();
        let parent = match remote {
            Some(r) => Some(Ids::remote(r)),
            None => with_innermost(|rec| rec.ids.clone()),
        };
        let rec = SpanRecord::begin(
            parent,
            remote_parent,
            Val::Static(name),
            kind,
            &installed.sampler,
            8,
        );
        Some(Self {
            rec: Arc::new(Mutex::new(Some(rec))),
            installed,
        })
    }

    /// Sets a string attribute (replacing an earlier value).
    pub fn record_str(&self, key: &'static str, value: &str) {
        self.record_strs(&[(key, value)]);
    }

    /// Sets string attributes (replacing earlier values), all at once.
    pub fn record_strs(&self, attributes: &[(&'static str, &str)]) {
        if let Some(rec) = lock(&self.rec).as_mut().filter(|r| r.ids.sampled) {
            for (key, value) in attributes {
                set_str(rec, key, value);
            }
        }
    }

    /// Sets an integer attribute.
    pub fn record_i64(&self, key: &'static str, value: i64) {
        if let Some(rec) = lock(&self.rec).as_mut().filter(|r| r.ids.sampled) {
            set(rec, key, Val::I64(value));
        }
    }

    /// Marks the span as failed, with a description.
    pub fn set_error(&self, description: impl std::fmt::Display) {
        if let Some(rec) = lock(&self.rec).as_mut().filter(|r| r.ids.sampled) {
            rec.status = 2;
            let start = rec.text.len();
            let _ = write!(rec.text, "{description}");
            rec.status_message = Some(Val::range(&rec.text, start));
        }
    }

    /// Runs `future` in this span: `tracing` spans made while it runs are its children,
    /// and events and the current trace context find it. The span still ends when this
    /// handle is dropped.
    pub fn in_span<F: Future>(&self, future: F) -> InOwnSpan<F> {
        InOwnSpan {
            future,
            span: Some(self.rec.clone()),
            owner: None,
        }
    }

    /// Like [`in_span`](Self::in_span), and the span ends when the future is dropped.
    pub fn run<F: Future>(self, future: F) -> InOwnSpan<F> {
        InOwnSpan {
            future,
            span: Some(self.rec.clone()),
            owner: Some(self),
        }
    }
}

pub(crate) fn set(rec: &mut SpanRecord, key: &'static str, value: Val) {
    match rec
        .attrs
        .iter()
        .position(|(k, _)| std::ptr::eq(*k, key) || *k == key)
    {
        Some(i) => rec.attrs[i].1 = value,
        None => rec.attrs.push((key, value)),
    }
}

pub(crate) fn set_str(rec: &mut SpanRecord, key: &'static str, value: &str) {
    // The same value again (a request's conversation, learnt as it starts and from its
    // answer) is not appended a second time.
    if rec
        .attrs
        .iter()
        .any(|(k, v)| std::ptr::eq(*k, key) && v.str(&rec.text) == Some(value))
    {
        return;
    }
    let v = Val::push(&mut rec.text, value);
    set(rec, key, v);
}

impl Drop for OwnSpan {
    fn drop(&mut self) {
        if let Some(mut rec) = lock(&self.rec).take()
            && rec.ids.sampled
        {
            rec.end_ns = now_ns();
            self.installed.queue.push(rec);
        }
    }
}

pin_project_lite::pin_project! {
    /// A future running in an [`OwnSpan`].
    #[derive(Debug)]
    pub struct InOwnSpan<F> {
        #[pin]
        future: F,
        // Lent to this thread's `CURRENT` while the future is polled (no reference count
        // traffic per poll).
        span: Option<Shared>,
        owner: Option<OwnSpan>,
    }
}

/// Puts back what was current on this thread and returns the lent span, even when the poll
/// panics.
struct Restore<'a> {
    previous: Option<Current>,
    span: &'a mut Option<Shared>,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        let previous = self.previous.take();
        let lent = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), previous));
        *self.span = lent.map(|c| c.span);
    }
}

impl<F: Future> Future for InOwnSpan<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let Some(span) = this.span.take() else {
            return this.future.poll(cx);
        };
        let current = Current {
            span,
            base: nearest_recorded(),
        };
        let previous = CURRENT.with(|c| c.borrow_mut().replace(current));
        let _restore = Restore {
            previous,
            span: this.span,
        };
        this.future.poll(cx)
    }
}
