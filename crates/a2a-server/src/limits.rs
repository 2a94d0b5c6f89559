//! Per-caller bounds: how many streams one caller may hold open at once.
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
        let caller = match (&call.principal, call.peer) {
            (Some(p), _) => CallerKey::Principal(p.0.clone()),
            (None, Some(peer)) => CallerKey::Address(peer.ip()),
            (None, None) => return Ok(None),
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
}
