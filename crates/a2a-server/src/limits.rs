//! Per-caller bounds: how many streams one caller may hold open at once, and how many
//! requests it may make per second.
//!
//! A caller is its authenticated principal, or else its network: its IPv4 address, or the
//! `/64` (by default; see [`CallerKeying`]) its IPv6 address lies in, since one IPv6 host
//! commonly holds a whole `/64` and could otherwise take a new address for every request.
//! Behind a proxy or a NAT many people share one address, so the bounds are off unless
//! configured.
//!
//! The tables are bounded and sharded: each shard has its own lock, held for one lookup and
//! never across an `.await`, and nothing scans a table on the request path. When the rate
//! table is full, the caller used least recently is forgotten (it starts again with a full
//! burst, which is what it would have after being idle); when the stream table is full, a
//! new caller's stream is refused until a caller's last stream closes.

use std::hash::BuildHasher;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};

use a2a_types::A2aError;

/// The address a connection came from, put in each request's extensions by the accept
/// loop; read into [`CallContext::peer`](crate::CallContext::peer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// How callers without a principal are told apart, and how many a table keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallerKeying {
    /// IPv6 callers are keyed by this many leading bits of their address (default 64; 128
    /// keys each address). IPv4 callers, and IPv4-mapped IPv6 addresses, by their address.
    pub ipv6_prefix: u8,
    /// Most callers a table keeps (default 65 536).
    pub max_callers: usize,
}

impl Default for CallerKeying {
    fn default() -> Self {
        Self {
            ipv6_prefix: 64,
            max_callers: 65_536,
        }
    }
}

impl CallerKeying {
    /// Keys IPv6 callers by their first `bits` bits (at most 128).
    pub fn with_ipv6_prefix(mut self, bits: u8) -> Self {
        self.ipv6_prefix = bits.min(128);
        self
    }

    /// Keeps at most `n` callers per table (at least one per shard).
    pub fn with_max_callers(mut self, n: usize) -> Self {
        self.max_callers = n;
        self
    }

    /// Who `call` is counted against: its principal, else its network (none in process).
    fn key(&self, call: &crate::CallContext) -> Option<CallerKey> {
        match (&call.principal, call.peer) {
            (Some(p), _) => Some(CallerKey::Principal(p.shared_id().clone())),
            (None, Some(peer)) => Some(self.network(peer.ip())),
            (None, None) => None,
        }
    }

    fn network(&self, ip: IpAddr) -> CallerKey {
        match ip.to_canonical() {
            IpAddr::V4(v4) => CallerKey::Ipv4(v4.to_bits()),
            IpAddr::V6(v6) => CallerKey::Ipv6(prefix(v6, self.ipv6_prefix)),
        }
    }

    fn per_shard(&self) -> NonZeroUsize {
        NonZeroUsize::new(self.max_callers.div_ceil(SHARDS)).unwrap_or(NonZeroUsize::MIN)
    }
}

/// The first `bits` bits of `addr`, the rest zero.
fn prefix(addr: Ipv6Addr, bits: u8) -> u128 {
    match bits {
        0 => 0,
        b if b >= 128 => addr.to_bits(),
        b => addr.to_bits() & (u128::MAX << (128 - u32::from(b))),
    }
}

/// Who a stream or a request is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CallerKey {
    Principal(Arc<str>),
    Ipv4(u32),
    Ipv6(u128),
}

/// Shards per table: enough that two cores rarely meet on one lock.
const SHARDS: usize = 16;

/// A table of callers split in [`SHARDS`] independently locked parts.
#[derive(Debug)]
struct Sharded<T> {
    shards: Box<[Mutex<T>]>,
    hasher: foldhash::fast::FixedState,
}

impl<T> Sharded<T> {
    fn new(make: impl Fn() -> T) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(make())).collect(),
            hasher: foldhash::fast::FixedState::with_seed(0xca11),
        }
    }

    fn shard(&self, key: &CallerKey) -> MutexGuard<'_, T> {
        let i = (self.hasher.hash_one(key) % SHARDS as u64) as usize;
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts the open streams of each caller against a bound; shared by every agent of a server.
#[derive(Debug)]
pub struct CallerStreams {
    max: usize,
    keying: CallerKeying,
    /// Callers with at least one open stream (others are removed).
    open: Sharded<std::collections::HashMap<CallerKey, usize>>,
}

impl CallerStreams {
    /// At most `max` open streams per caller, callers keyed as by default.
    pub fn new(max: usize) -> Arc<Self> {
        Self::with_keying(max, CallerKeying::default())
    }

    /// At most `max` open streams per caller, callers keyed by `keying`.
    pub fn with_keying(max: usize, keying: CallerKeying) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            keying,
            open: Sharded::new(std::collections::HashMap::new),
        })
    }

    /// The bound.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A slot for one more stream of the caller of `call` (none needed for calls from this
    /// process), or `ResourceExhausted` when the caller already holds the most allowed, or
    /// when the table is full of other callers holding streams.
    pub(crate) fn acquire(
        self: &Arc<Self>,
        call: &crate::CallContext,
    ) -> Result<Option<StreamSlot>, A2aError> {
        let Some(caller) = self.keying.key(call) else {
            return Ok(None);
        };
        let mut open = self.open.shard(&caller);
        let full = open.len() >= self.keying.per_shard().get();
        let refused = match open.get_mut(&caller) {
            Some(count) if *count >= self.max => Some(format!(
                "this caller already has {} open streams, the most allowed; close one or retry later",
                self.max
            )),
            Some(count) => {
                *count += 1;
                None
            }
            None if full => {
                Some("too many callers hold streams open right now; retry later".to_owned())
            }
            None => {
                open.insert(caller.clone(), 1);
                None
            }
        };
        drop(open);
        if let Some(detail) = refused {
            crate::metrics::global().connection_refused("streams_per_caller");
            return Err(A2aError::ResourceExhausted { detail });
        }
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
    keying: CallerKeying,
    buckets: Sharded<lru::LruCache<CallerKey, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: std::time::Instant,
}

impl CallerRate {
    /// `rate` requests a second per caller, with bursts of `burst` (at least 1), callers
    /// keyed as by default.
    pub fn new(rate: f64, burst: f64) -> Arc<Self> {
        Self::with_keying(rate, burst, CallerKeying::default())
    }

    /// `rate` requests a second per caller, with bursts of `burst`, callers keyed by
    /// `keying`.
    pub fn with_keying(rate: f64, burst: f64, keying: CallerKeying) -> Arc<Self> {
        let per_shard = keying.per_shard();
        Arc::new(Self {
            rate: rate.max(f64::MIN_POSITIVE),
            burst: burst.max(1.0),
            keying,
            buckets: Sharded::new(|| lru::LruCache::new(per_shard)),
        })
    }

    /// Takes a token for the caller of `call` (calls from this process are not limited), or
    /// `ResourceExhausted` when its bucket is empty.
    pub(crate) fn admit(&self, call: &crate::CallContext) -> Result<(), A2aError> {
        let Some(caller) = self.keying.key(call) else {
            return Ok(());
        };
        let now = std::time::Instant::now();
        let tokens = {
            let mut buckets = self.buckets.shard(&caller);
            // A new caller pushes out the one used least recently when the shard is full.
            let bucket = buckets.get_or_insert_mut(caller, || Bucket {
                tokens: self.burst,
                at: now,
            });
            let refilled = now.duration_since(bucket.at).as_secs_f64() * self.rate;
            bucket.tokens = (bucket.tokens + refilled).min(self.burst);
            bucket.at = now;
            if bucket.tokens >= 1.0 {
                bucket.tokens -= 1.0;
                return Ok(());
            }
            bucket.tokens
        };
        crate::metrics::global().connection_refused("rate_per_caller");
        let wait = (1.0 - tokens) / self.rate;
        Err(A2aError::ResourceExhausted {
            detail: format!(
                "this caller exceeds {} requests per second; retry in {:.1} s",
                self.rate, wait
            ),
        })
    }

    /// Callers remembered (at most [`CallerKeying::max_callers`], rounded up to whole shards).
    pub fn callers(&self) -> usize {
        self.buckets
            .shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
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
        let mut open = self.streams.open.shard(&self.caller);
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
    use crate::auth::Principal;

    fn from(addr: &str, principal: Option<&str>) -> crate::CallContext {
        let mut call = crate::CallContext::default();
        call.peer = Some(addr.parse::<SocketAddr>().unwrap());
        call.principal = principal.map(|p| Principal::new("token", p));
        call
    }

    /// An address in `2001:db8:{net}::/64`, host part `host`.
    fn v6(net: u16, host: u64) -> crate::CallContext {
        let ip = Ipv6Addr::from_bits(
            (0x2001_0db8_u128 << 96) | (u128::from(net) << 64) | u128::from(host),
        );
        from(&SocketAddr::from((ip, 443)).to_string(), None)
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

    #[test]
    fn ipv6_callers_are_keyed_by_their_prefix() {
        let rate = CallerRate::new(1.0, 3.0);
        // Rotating through 10 000 addresses of one /64 is still one caller.
        let mut admitted = 0;
        for host in 0..10_000 {
            admitted += usize::from(rate.admit(&v6(7, host * 7919 + 1)).is_ok());
        }
        assert_eq!(admitted, 3);
        // Another /64 is another caller; an IPv4-mapped address is its IPv4 address.
        rate.admit(&v6(8, 1)).unwrap();
        for _ in 0..3 {
            rate.admit(&from("[::ffff:192.0.2.1]:1", None)).unwrap();
        }
        assert!(rate.admit(&from("192.0.2.1:2", None)).is_err());

        let streams = CallerStreams::new(1);
        let _held = streams.acquire(&v6(7, 1)).unwrap();
        assert!(streams.acquire(&v6(7, 0xffff_ffff)).is_err());
        assert!(streams.acquire(&v6(9, 1)).is_ok());

        // Configurable: /128 keys each address.
        let exact =
            CallerRate::with_keying(1.0, 1.0, CallerKeying::default().with_ipv6_prefix(128));
        exact.admit(&v6(7, 1)).unwrap();
        exact.admit(&v6(7, 2)).unwrap();
        assert!(exact.admit(&v6(7, 1)).is_err());
    }

    #[test]
    fn the_rate_table_stays_bounded_and_forgets_the_least_recent() {
        let keying = CallerKeying::default().with_max_callers(1_024);
        let rate = CallerRate::with_keying(1.0, 2.0, keying);
        // A caller that keeps calling is remembered (and limited) while 100 000 others,
        // each calling once, pass through.
        let busy = from("198.51.100.7:1", None);
        rate.admit(&busy).unwrap();
        rate.admit(&busy).unwrap();
        for i in 0..100_000u32 {
            let ip = std::net::Ipv4Addr::from_bits(0x0a00_0000 | i);
            rate.admit(&from(&format!("{ip}:1"), None)).unwrap();
            if i % 512 == 0 {
                assert!(rate.admit(&busy).is_err(), "the busy caller was forgotten");
            }
            assert!(rate.callers() <= 1_024, "{} callers kept", rate.callers());
        }
        // Distinct /64s are distinct callers, and bounded the same way.
        for net in 0..5_000u16 {
            rate.admit(&v6(net, 1)).unwrap();
        }
        assert!(rate.callers() <= 1_024);
    }

    #[test]
    fn the_stream_table_is_bounded() {
        let keying = CallerKeying::default().with_max_callers(SHARDS);
        let streams = CallerStreams::with_keying(4, keying);
        let mut held = Vec::new();
        let mut refused = 0;
        for i in 0..1_000u32 {
            let ip = std::net::Ipv4Addr::from_bits(0x0a00_0000 | i);
            match streams.acquire(&from(&format!("{ip}:1"), None)) {
                Ok(slot) => held.push(slot),
                Err(e) => {
                    assert!(matches!(e, A2aError::ResourceExhausted { .. }));
                    refused += 1;
                }
            }
        }
        // One caller per shard at most; the rest refused until streams close.
        assert!(held.len() <= SHARDS, "{}", held.len());
        assert_eq!(held.len() + refused, 1_000);
        held.clear();
        assert!(
            streams
                .acquire(&from("10.9.9.9:1", None))
                .unwrap()
                .is_some()
        );
    }
}
