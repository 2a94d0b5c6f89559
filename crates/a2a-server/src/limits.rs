//! Per-caller bounds: how many streams one caller may hold open at once, and how many
//! requests it may make per second.
//!
//! A caller is its authenticated principal, or else its network address. Behind a proxy or
//! a NAT many people share one address, so the bound is off unless configured.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use a2a_types::A2aError;

/// The address a connection came from, put in each request's extensions by the accept
/// loop; read into [`CallContext::peer`](crate::CallContext::peer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// Counts the open streams of each caller against a bound; shared by every agent of a server.
#[derive(Debug)]
pub struct CallerStreams {
    max: usize,
    open: Mutex<HashMap<CallerKey, usize>>,
}

/// Who a stream is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CallerKey {
    Principal(Arc<str>),
    Address(IpAddr),
}

impl CallerStreams {
    /// At most `max` open streams per caller.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// The bound.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A slot for one more stream of the caller of `call` (none needed for calls from this
    /// process), or `ResourceExhausted` when the caller already holds the most allowed.
    pub(crate) fn acquire(
        self: &Arc<Self>,
        call: &crate::CallContext,
    ) -> Result<Option<StreamSlot>, A2aError> {
        let Some(caller) = caller_key(call) else {
            return Ok(None);
        };
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(caller.clone()).or_insert(0);
        if *count >= self.max {
            crate::metrics::global().connection_refused("streams_per_caller");
            return Err(A2aError::ResourceExhausted {
                detail: format!(
                    "this caller already has {} open streams, the most allowed; close one or retry later",
                    self.max
                ),
            });
        }
        *count += 1;
        Ok(Some(StreamSlot {
            streams: self.clone(),
            caller,
        }))
    }
}

/// A token bucket per caller: `rate` requests a second on average, bursts of up to `burst`.
/// Shared by every agent of a server.
#[derive(Debug)]
pub struct CallerRate {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<CallerKey, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: std::time::Instant,
}

/// Buckets kept before full (idle) ones are dropped.
const MAX_BUCKETS: usize = 10_000;

impl CallerRate {
    /// `rate` requests a second per caller, with bursts of `burst` (at least 1).
    pub fn new(rate: f64, burst: f64) -> Arc<Self> {
        Arc::new(Self {
            rate: rate.max(f64::MIN_POSITIVE),
            burst: burst.max(1.0),
            buckets: Mutex::new(HashMap::new()),
        })
    }

    /// Takes a token for the caller of `call` (calls from this process are not limited), or
    /// `ResourceExhausted` when its bucket is empty.
    pub(crate) fn admit(&self, call: &crate::CallContext) -> Result<(), A2aError> {
        let Some(caller) = caller_key(call) else {
            return Ok(());
        };
        let now = std::time::Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(&caller) {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket = buckets.entry(caller).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let refilled = now.duration_since(bucket.at).as_secs_f64() * self.rate;
        bucket.tokens = (bucket.tokens + refilled).min(self.burst);
        bucket.at = now;
        if bucket.tokens < 1.0 {
            crate::metrics::global().connection_refused("rate_per_caller");
            let wait = (1.0 - bucket.tokens) / self.rate;
            return Err(A2aError::ResourceExhausted {
                detail: format!(
                    "this caller exceeds {} requests per second; retry in {:.1} s",
                    self.rate, wait
                ),
            });
        }
        bucket.tokens -= 1.0;
        Ok(())
    }
}

/// Who `call` is counted against: its principal, else its address (none in process).
fn caller_key(call: &crate::CallContext) -> Option<CallerKey> {
    match (&call.principal, call.peer) {
        (Some(p), _) => Some(CallerKey::Principal(p.0.clone())),
        (None, Some(peer)) => Some(CallerKey::Address(peer.ip())),
        (None, None) => None,
    }
}

/// Equal when the same counter (servers share one).
impl PartialEq for CallerStreams {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for CallerStreams {}

/// One open stream of a caller, given back when dropped.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    streams: Arc<CallerStreams>,
    caller: CallerKey,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.streams.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.caller) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(addr: &str, principal: Option<&str>) -> crate::CallContext {
        let mut call = crate::CallContext::default();
        call.peer = Some(addr.parse::<SocketAddr>().unwrap());
        call.principal = principal.map(crate::auth::Principal::new);
        call
    }

    #[test]
    fn slots_are_counted_per_caller_and_given_back() {
        let streams = CallerStreams::new(2);
        let a = from("10.0.0.1:1000", None);
        let first = streams.acquire(&a).unwrap();
        let _second = streams.acquire(&from("10.0.0.1:2000", None)).unwrap();
        let err = streams.acquire(&a).unwrap_err();
        assert!(matches!(err, A2aError::ResourceExhausted { .. }), "{err}");
        assert!(
            streams
                .acquire(&from("10.0.0.2:1000", None))
                .unwrap()
                .is_some()
        );
        // An authenticated caller is counted by principal, wherever it calls from.
        let _alice = streams
            .acquire(&from("10.0.0.1:3000", Some("alice")))
            .unwrap();
        let _alice2 = streams
            .acquire(&from("10.0.0.9:3000", Some("alice")))
            .unwrap();
        assert!(streams.acquire(&from("10.0.0.8:1", Some("alice"))).is_err());
        assert!(
            streams
                .acquire(&crate::CallContext::default())
                .unwrap()
                .is_none()
        );
        drop(first);
        assert!(streams.acquire(&a).unwrap().is_some());
    }

    #[test]
    fn a_caller_gets_its_burst_then_its_rate() {
        let rate = CallerRate::new(1.0, 3.0);
        let a = from("10.0.0.1:1", None);
        for _ in 0..3 {
            rate.admit(&a).unwrap();
        }
        let err = rate.admit(&a).unwrap_err();
        assert!(matches!(err, A2aError::ResourceExhausted { .. }), "{err}");
        // Others have their own buckets; calls from this process are not counted.
        rate.admit(&from("10.0.0.2:1", None)).unwrap();
        rate.admit(&from("10.0.0.1:1", Some("alice"))).unwrap();
        for _ in 0..10 {
            rate.admit(&crate::CallContext::default()).unwrap();
        }
    }
}
