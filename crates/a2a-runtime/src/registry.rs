//! A map of live objects keyed by task id whose entries disappear with their last user.

use std::collections::HashMap;

use foldhash::fast::RandomState;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

type Entries<T> = HashMap<Arc<str>, Weak<Registered<T>>, RandomState>;

#[derive(Debug)]
struct Map<T> {
    entries: Mutex<Entries<T>>,
    /// How many entries `entries` holds (dead ones included), written under its lock: a
    /// lookup reads it without the lock. Most lookups find the map empty (the bus's, when
    /// nobody follows any task: two a send), and a process-wide lock taken by every
    /// request moves its line between the cores each time; a count that does not change
    /// stays in every core's cache.
    len: AtomicUsize,
}

impl<T> Map<T> {
    /// Notes the entries' number after a change (under their lock).
    fn counted(&self, entries: &Entries<T>) {
        self.len.store(entries.len(), Ordering::Release);
    }
}

/// A value registered under a key; dropping the last `Arc` removes the entry.
#[derive(Debug)]
pub(crate) struct Registered<T> {
    key: Arc<str>,
    value: T,
    map: Weak<Map<T>>,
}

impl<T> Deref for Registered<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> Drop for Registered<T> {
    fn drop(&mut self) {
        if let Some(map) = self.map.upgrade() {
            let mut entries = lock(&map);
            // Taken out in one lookup; put back in the rare case that a newer value already
            // sits under the key (made after this one's last `Arc` went, before this lock).
            if let Some((key, entry)) = entries.remove_entry(&*self.key) {
                if entry.strong_count() > 0 {
                    entries.insert(key, entry);
                } else {
                    map.counted(&entries);
                }
            }
        }
    }
}

/// Weakly-held values by key: lookups are O(1) and the map only holds what is in use.
#[derive(Debug)]
pub(crate) struct WeakRegistry<T> {
    map: Arc<Map<T>>,
}

impl<T> Default for WeakRegistry<T> {
    fn default() -> Self {
        Self {
            map: Arc::new(Map {
                entries: Mutex::new(HashMap::default()),
                len: AtomicUsize::new(0),
            }),
        }
    }
}

fn lock<T>(m: &Map<T>) -> MutexGuard<'_, Entries<T>> {
    m.entries.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T> WeakRegistry<T> {
    /// The live value under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<Registered<T>>> {
        // An entry made before this call (by a caller this one follows) is counted: the
        // count is written after the entry, under the lock, and read here with `Acquire`.
        if self.map.len.load(Ordering::Acquire) == 0 {
            return None;
        }
        lock(&self.map).get(key).and_then(Weak::upgrade)
    }

    /// The live value under `key`, or a new one made by `make`.
    pub(crate) fn get_or_insert_with(
        &self,
        key: &str,
        make: impl FnOnce() -> T,
    ) -> Arc<Registered<T>> {
        let mut entries = lock(&self.map);
        if let Some(v) = entries.get(key).and_then(Weak::upgrade) {
            return v;
        }
        self.insert(&mut entries, key, make())
    }

    /// Registers `value` under `key` in `entries` (this registry's, locked), in place of
    /// whatever sits there.
    fn insert(&self, entries: &mut Entries<T>, key: &str, value: T) -> Arc<Registered<T>> {
        let key: Arc<str> = Arc::from(key);
        let v = Arc::new(Registered {
            key: key.clone(),
            value,
            map: Arc::downgrade(&self.map),
        });
        entries.insert(key, Arc::downgrade(&v));
        self.map.counted(entries);
        v
    }

    /// The live values.
    pub(crate) fn values(&self) -> Vec<Arc<Registered<T>>> {
        lock(&self.map).values().filter_map(Weak::upgrade).collect()
    }

    /// Number of live entries.
    pub(crate) fn len(&self) -> usize {
        lock(&self.map)
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_goes_with_its_last_user() {
        let registry = WeakRegistry::default();
        let first = registry.get_or_insert_with("k", || 1);
        let again = registry.get_or_insert_with("k", || 2);
        assert_eq!((**first, **again, registry.len()), (1, 1, 1));
        drop(first);
        assert!(registry.get("k").is_some(), "a user is left");
        drop(again);
        assert!(registry.get("k").is_none());
        assert_eq!(lock(&registry.map).len(), 0, "the dead entry was removed");
    }

    /// A value whose last user went, while a newer one was registered under its key before
    /// its drop took the lock: the drop leaves the newer one in place.
    #[test]
    fn a_late_drop_leaves_the_newer_value() {
        let registry = WeakRegistry::default();
        let old = registry.get_or_insert_with("k", || 1);
        let entries = lock(&registry.map);
        let dropped = std::thread::spawn(move || drop(old));
        // The old value's count reaches zero, then its drop waits for the lock held here.
        while entries.get("k").is_some_and(|w| w.strong_count() > 0) {
            std::thread::yield_now();
        }
        let mut entries = entries;
        let newer = registry.insert(&mut entries, "k", 2);
        drop(entries);
        dropped.join().unwrap();
        assert_eq!(registry.get("k").map(|v| **v), Some(2));
        drop(newer);
        assert!(registry.get("k").is_none());
    }
}
