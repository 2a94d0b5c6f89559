//! Each thread's last few accepted credentials, asked before an authenticator's shared state.
//!
//! A client sends the same credential on every request, and every worker thread sees it.
//! Looked up in state shared by all threads, each request wrote to cache lines that the
//! other threads wrote too: a lock's word, a key set's and the principal's reference counts,
//! a cache's recency list. On two cores those lines moved between the cores on nearly every
//! request, which cost more time than the instructions suggest (a profile of a JWT server
//! under load put 1.4 % of its time in the shared cache's lookup, most of it on those
//! lines). Here each thread keeps the last [`SLOTS`] credentials it accepted, each with a
//! principal of its own allocation, so a request whose credential its thread accepted
//! lately touches no line another thread writes.
//!
//! Only accepted credentials are kept, each with the [`Stamp`] its authenticator checks
//! again on every recall (a JWT's expiry and key set); an authenticator whose accepted set
//! changes takes a new [`Owner`] id, so what an earlier one accepted is never recalled for
//! it. Credentials are compared in time that depends on their length only.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::Principal;

/// Credentials each thread keeps: a client usually sends one, a gateway a few.
pub(crate) const SLOTS: usize = 4;

/// Who accepted a credential: an id never given twice in a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner(u64);

impl Owner {
    pub(crate) fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// What a credential was accepted with, checked again when it is recalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The key set it was verified with (0 for credentials that need none).
    pub(crate) generation: u64,
    /// Until when that key set counts as fresh (`None`: always).
    pub(crate) fresh_until: Option<Instant>,
    /// `exp` and `nbf`, seconds since the epoch (`u64::MAX` and `None` when it has none).
    pub(crate) exp: u64,
    pub(crate) nbf: Option<u64>,
}

impl Stamp {
    /// For a credential that holds for as long as its authenticator accepts it.
    pub(crate) const FOREVER: Self = Self {
        generation: 0,
        fresh_until: None,
        exp: u64::MAX,
        nbf: None,
    };
}

struct Entry {
    owner: Owner,
    credential: Box<[u8]>,
    principal: Principal,
    stamp: Stamp,
}

struct Recent {
    entries: [Option<Entry>; SLOTS],
    /// The slot the next new credential takes.
    next: usize,
}

thread_local! {
    static RECENT: RefCell<Recent> = const {
        RefCell::new(Recent { entries: [const { None }; SLOTS], next: 0 })
    };
}

/// Whether `a` and `b` are the same bytes, in time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The principal `owner` accepted `credential` as on this thread lately, if its stamp still
/// `holds`; a credential whose stamp no longer holds is forgotten.
pub(crate) fn recall(
    owner: Owner,
    credential: &[u8],
    holds: impl FnOnce(&Stamp) -> bool,
) -> Option<Principal> {
    RECENT
        .try_with(|recent| {
            let mut recent = recent.try_borrow_mut().ok()?;
            let slot = recent.entries.iter_mut().find(|e| {
                e.as_ref()
                    .is_some_and(|e| e.owner == owner && same(&e.credential, credential))
            })?;
            let entry = slot.as_ref()?;
            if holds(&entry.stamp) {
                return Some(entry.principal.clone());
            }
            *slot = None;
            None
        })
        .ok()
        .flatten()
}

/// Keeps, on this thread, that `owner` accepted `credential` as `principal` with `stamp`.
pub(crate) fn remember(owner: Owner, credential: &[u8], principal: &Principal, stamp: Stamp) {
    let _ = RECENT.try_with(|recent| {
        let Ok(mut recent) = recent.try_borrow_mut() else {
            return;
        };
        let entry = Entry {
            owner,
            credential: credential.into(),
            // An allocation of its own: clones of it count references on this thread's
            // line, not on the one every thread's clones of `principal` count on.
            principal: Principal::new(principal.source(), principal.name()),
            stamp,
        };
        let known = recent.entries.iter().position(|e| {
            e.as_ref()
                .is_some_and(|e| e.owner == owner && same(&e.credential, credential))
        });
        let i = match known {
            Some(i) => i,
            None => {
                let i = recent.next;
                recent.next = (i + 1) % SLOTS;
                i
            }
        };
        recent.entries[i] = Some(entry);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_compares_every_byte() {
        assert!(same(b"", b""));
        assert!(same(b"token", b"token"));
        assert!(!same(b"token", b"tokem"));
        assert!(!same(b"token", b"Token"));
        assert!(!same(b"token", b"token "));
        assert!(!same(b"token", b""));
    }

    #[test]
    fn a_credential_is_recalled_for_its_owner_only_while_it_holds() {
        let (alice, other) = (Owner::fresh(), Owner::fresh());
        let principal = Principal::new("token", "alice");
        assert_eq!(recall(alice, b"t-alice", |_| true), None);
        remember(alice, b"t-alice", &principal, Stamp::FOREVER);

        let recalled = recall(alice, b"t-alice", |s| *s == Stamp::FOREVER).unwrap();
        assert_eq!(recalled, principal);
        // A copy of its own, not the caller's allocation.
        assert!(!std::sync::Arc::ptr_eq(
            recalled.shared_id(),
            principal.shared_id()
        ));
        assert_eq!(recall(other, b"t-alice", |_| true), None);
        assert_eq!(recall(alice, b"t-alicf", |_| true), None);
        assert_eq!(recall(alice, b"t-alic", |_| true), None);

        // A stamp that no longer holds forgets the credential.
        assert_eq!(recall(alice, b"t-alice", |_| false), None);
        assert_eq!(recall(alice, b"t-alice", |_| true), None);
    }

    #[test]
    fn each_thread_keeps_its_own_and_the_first_kept_is_forgotten_first() {
        let owner = Owner::fresh();
        let p = |n: usize| Principal::new("token", &format!("p{n}"));
        for n in 0..SLOTS {
            remember(owner, format!("t{n}").as_bytes(), &p(n), Stamp::FOREVER);
        }
        // Remembered again: the same slot, not a new one.
        remember(owner, b"t0", &p(0), Stamp::FOREVER);
        for n in 0..SLOTS {
            assert_eq!(
                recall(owner, format!("t{n}").as_bytes(), |_| true),
                Some(p(n))
            );
        }
        std::thread::spawn(move || assert_eq!(recall(owner, b"t0", |_| true), None))
            .join()
            .unwrap();

        remember(owner, b"new", &p(99), Stamp::FOREVER);
        assert_eq!(recall(owner, b"t0", |_| true), None);
        assert_eq!(recall(owner, b"new", |_| true), Some(p(99)));
        for n in 1..SLOTS {
            assert!(recall(owner, format!("t{n}").as_bytes(), |_| true).is_some());
        }
    }
}
