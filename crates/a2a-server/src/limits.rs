//! Per-caller bounds: how many streams one caller may hold open at once.
//!
//! A caller is known by its network address until requests are authenticated. Behind a
//! proxy or a NAT many people share one address, so the bound is off unless configured.

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
    open: Mutex<HashMap<IpAddr, usize>>,
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

    /// A slot for one more stream of `peer` (none needed for calls from this process), or
    /// `ResourceExhausted` when the caller already holds the most allowed.
    pub(crate) fn acquire(
        self: &Arc<Self>,
        peer: Option<SocketAddr>,
    ) -> Result<Option<StreamSlot>, A2aError> {
        let Some(peer) = peer else {
            return Ok(None);
        };
        let caller = peer.ip();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(caller).or_insert(0);
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
    caller: IpAddr,
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

    #[test]
    fn slots_are_counted_per_caller_and_given_back() {
        let streams = CallerStreams::new(2);
        let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
        let a_other_port: SocketAddr = "10.0.0.1:2000".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:1000".parse().unwrap();
        let first = streams.acquire(Some(a)).unwrap();
        let _second = streams.acquire(Some(a_other_port)).unwrap();
        let err = streams.acquire(Some(a)).unwrap_err();
        assert!(matches!(err, A2aError::ResourceExhausted { .. }), "{err}");
        assert!(streams.acquire(Some(b)).unwrap().is_some());
        assert!(streams.acquire(None).unwrap().is_none());
        drop(first);
        assert!(streams.acquire(Some(a)).unwrap().is_some());
    }
}
