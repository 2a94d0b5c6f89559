//! A map of live objects keyed by task id whose entries disappear with their last user.

use std::collections::HashMap;

use foldhash::fast::RandomState;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

type Map<T> = Mutex<HashMap<Arc<str>, Weak<Registered<T>>, RandomState>>;

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
            let mut map = lock(&map);
            // A newer value may already sit under the key; only remove a dead entry.
            if map.get(&*self.key).is_some_and(|w| w.strong_count() == 0) {
                map.remove(&*self.key);
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
            map: Arc::new(Mutex::new(HashMap::default())),
        }
    }
}

fn lock<T>(m: &Map<T>) -> MutexGuard<'_, HashMap<Arc<str>, Weak<Registered<T>>, RandomState>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T> WeakRegistry<T> {
    /// The live value under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<Registered<T>>> {
        let map = lock(&self.map);
        // Most lookups find an empty map (nobody follows any task): skip hashing the key.
        if map.is_empty() {
            return None;
        }
        map.get(key).and_then(Weak::upgrade)
    }

    /// The live value under `key`, or a new one made by `make`.
    pub(crate) fn get_or_insert_with(
        &self,
        key: &str,
        make: impl FnOnce() -> T,
    ) -> Arc<Registered<T>> {
        let mut map = lock(&self.map);
        if let Some(v) = map.get(key).and_then(Weak::upgrade) {
            return v;
        }
        let key: Arc<str> = Arc::from(key);
        let v = Arc::new(Registered {
            key: key.clone(),
            value: make(),
            map: Arc::downgrade(&self.map),
        });
        map.insert(key, Arc::downgrade(&v));
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
