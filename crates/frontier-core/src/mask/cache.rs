//! The mask cache: one mask per recogniser key, computed once and then copied.
//!
//! By the [`Recognizer`](crate::recognizer::Recognizer) laws, two states with equal
//! `mask_key(h)` (`h` the vocabulary's longest token) accept the same token bytes and agree on
//! `accepting`, so they have the same mask. The cache maps a key to its mask; a hit is a copy
//! of `ceil(V/32)` words (25 KB for a 200k vocabulary).
//!
//! Bounds: at most `capacity` masks, fixed when the cache is made. The slots are allocated as
//! they are first filled (one allocation per slot in the cache's life); once all are full, a
//! new key takes the oldest filled slot (first in, first out) and reuses its buffer, so a full
//! cache allocates nothing more. Thread-safe: lookups share a read lock (many threads copy at
//! once); an insertion takes the write lock for one copy. A mask is computed outside any lock,
//! so two threads missing the same key at once both compute it and the second insertion is
//! dropped.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

/// Hits and misses so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that found nothing.
    pub misses: u64,
    /// Masks held now.
    pub entries: usize,
    /// The most masks the cache holds.
    pub capacity: usize,
}

struct Slots<K> {
    index: HashMap<K, usize>,
    /// Each slot's key and mask.
    slots: Vec<(K, Box<[u32]>)>,
    /// The slot the next insertion into a full cache replaces.
    oldest: usize,
}

/// A bounded, thread-safe map from recogniser key to mask (see the module docs).
pub struct MaskCache<K> {
    inner: RwLock<Slots<K>>,
    capacity: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Copy + Eq + Hash> MaskCache<K> {
    /// An empty cache of at most `capacity` masks (0 turns caching off).
    pub fn new(capacity: usize) -> MaskCache<K> {
        MaskCache {
            inner: RwLock::new(Slots {
                index: HashMap::with_capacity(capacity.min(1 << 16)),
                slots: Vec::new(),
                oldest: 0,
            }),
            capacity,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Copies the mask of `key` into `out` and returns `true`, or returns `false` if the cache
    /// has none (or its length differs from `out`'s).
    pub fn get(&self, key: &K, out: &mut [u32]) -> bool {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        let found = inner.index.get(key).and_then(|&slot| inner.slots.get(slot));
        match found {
            Some((_, mask)) if mask.len() == out.len() => {
                out.copy_from_slice(mask);
                self.hits.fetch_add(1, Ordering::Relaxed);
                true
            }
            _ => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Keeps `mask` as the mask of `key`.
    pub fn insert(&self, key: K, mask: &[u32]) {
        if self.capacity == 0 {
            return;
        }
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        if inner.index.contains_key(&key) {
            return;
        }
        let slot = if inner.slots.len() < self.capacity {
            inner.slots.push((key, mask.into()));
            inner.slots.len() - 1
        } else {
            let slot = inner.oldest;
            inner.oldest = (slot + 1) % self.capacity;
            let old_key = inner.slots[slot].0;
            inner.index.remove(&old_key);
            let entry = &mut inner.slots[slot];
            entry.0 = key;
            if entry.1.len() == mask.len() {
                entry.1.copy_from_slice(mask);
            } else {
                entry.1 = mask.into();
            }
            slot
        };
        inner.index.insert(key, slot);
    }

    /// Hits, misses and size so far.
    pub fn stats(&self) -> CacheStats {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: inner.index.len(),
            capacity: self.capacity,
        }
    }

    /// Drops every mask (the counters stay).
    pub fn clear(&self) {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        inner.index.clear();
        inner.slots.clear();
        inner.oldest = 0;
    }
}
