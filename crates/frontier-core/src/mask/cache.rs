//! The mask cache: one mask per recogniser key, computed once and then copied.
//!
//! By the [`Recognizer`](crate::recognizer::Recognizer) laws, two states with equal
//! `mask_key(h)` (`h` the vocabulary's longest token) accept the same token bytes and agree on
//! `accepting`, so they have the same mask. The cache maps a key to its mask; a hit is a copy
//! of `ceil(V/32)` words (25 KB for a 200k vocabulary).
//!
//! Bounds: at most `capacity` masks, fixed when the cache is made. The keys and their hashes
//! (`capacity` each) and the index, an open-addressing table of slot numbers at least twice as
//! large, probed linearly, whose deletions shift entries back instead of leaving tombstones (so
//! it never grows or rehashes), are made with the cache. A slot's mask buffer is allocated the
//! first time the slot is filled: **one allocation per slot in the cache's life**, the only
//! allocation an insertion makes (`docs/masks.md` says why the buffers are not reserved up
//! front: fresh pages cost more to first write than the recycled memory an allocator hands
//! out). Once all slots are full, a new key takes the oldest filled slot (first in, first
//! out) and overwrites its buffer: a full cache allocates nothing. Thread-safe: lookups share a read lock (many threads copy at once); an
//! insertion takes the write lock for one copy. A mask is computed outside any lock, so two
//! threads missing the same key at once both compute it and the second insertion is dropped.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

/// The most masks a cache holds, whatever it is asked for (65,536): the default's 64 MiB is
/// at most this many masks for every vocabulary of 8,192 ids or more, and the keys, hashes and
/// index reserved for a tiny test vocabulary's millions of masks would be waste.
pub const MAX_CACHE_MASKS: usize = 1 << 16;

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

/// The slots and their index, behind the cache's lock.
struct Slots<K, S> {
    /// Buckets of slot numbers plus one (0: empty); a power of two, at least twice the slots.
    index: Box<[u32]>,
    /// Each filled slot's key, by slot.
    keys: Vec<K>,
    /// Each filled slot's key's hash, by slot.
    hashes: Vec<u64>,
    /// Each filled slot's mask, by slot.
    masks: Vec<Box<[u32]>>,
    /// The slot the next insertion into a full cache replaces.
    oldest: usize,
    hasher: S,
}

impl<K: Copy + Eq + Hash, S: BuildHasher> Slots<K, S> {
    /// Empty slots for `capacity` keys, their index made.
    fn new(capacity: usize, hasher: S) -> Slots<K, S> {
        let buckets = if capacity == 0 {
            0
        } else {
            (2 * capacity).next_power_of_two()
        };
        Slots {
            index: vec![0u32; buckets].into_boxed_slice(),
            keys: Vec::with_capacity(capacity),
            hashes: Vec::with_capacity(capacity),
            masks: Vec::with_capacity(capacity),
            oldest: 0,
            hasher,
        }
    }

    fn bucket_mask(&self) -> usize {
        self.index.len() - 1
    }

    /// The slot holding `key` (whose hash is `hash`).
    fn find(&self, key: &K, hash: u64) -> Option<usize> {
        if self.index.is_empty() {
            return None;
        }
        let mask = self.bucket_mask();
        let mut bucket = hash as usize & mask;
        // The table is at most half full, so an empty bucket ends every probe.
        loop {
            let slot = self.index[bucket].checked_sub(1)? as usize;
            if self.hashes[slot] == hash && self.keys[slot] == *key {
                return Some(slot);
            }
            bucket = (bucket + 1) & mask;
        }
    }

    /// Puts `slot` (whose key hashes to `hash`) in the first empty bucket from its home.
    fn link(&mut self, slot: usize, hash: u64) {
        let mask = self.bucket_mask();
        let mut bucket = hash as usize & mask;
        while self.index[bucket] != 0 {
            bucket = (bucket + 1) & mask;
        }
        self.index[bucket] = slot as u32 + 1;
    }

    /// Takes `slot` out of the index, shifting back the entries after it that its bucket kept
    /// from their home, so that every probe still finds its key (no tombstones).
    fn unlink(&mut self, slot: usize) {
        let mask = self.bucket_mask();
        let mut hole = self.hashes[slot] as usize & mask;
        while self.index[hole] != slot as u32 + 1 {
            hole = (hole + 1) & mask;
        }
        let mut next = (hole + 1) & mask;
        while let Some(moved) = self.index[next].checked_sub(1) {
            let home = self.hashes[moved as usize] as usize & mask;
            // The entry at `next` may fill the hole when its home is not in (hole, next].
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                self.index[hole] = self.index[next];
                hole = next;
            }
            next = (next + 1) & mask;
        }
        self.index[hole] = 0;
    }

    /// Keeps `mask` for `key`: in the next unused slot (its buffer allocated), else over the
    /// oldest.
    fn insert(&mut self, key: K, mask: &[u32], capacity: usize) {
        let hash = self.hasher.hash_one(key);
        if self.find(&key, hash).is_some() {
            return;
        }
        let slot = if self.keys.len() < capacity {
            // The vectors are within the capacity `new` gave them; the buffer is the one
            // allocation.
            self.keys.push(key);
            self.hashes.push(hash);
            self.masks.push(mask.into());
            self.keys.len() - 1
        } else {
            let slot = self.oldest;
            self.oldest = (slot + 1) % capacity;
            self.unlink(slot);
            self.keys[slot] = key;
            self.hashes[slot] = hash;
            self.masks[slot].copy_from_slice(mask);
            slot
        };
        self.link(slot, hash);
    }

    fn clear(&mut self) {
        self.index.fill(0);
        self.keys.clear();
        self.hashes.clear();
        self.masks.clear();
        self.oldest = 0;
    }
}

/// A bounded, thread-safe map from recogniser key to mask (see the module docs).
pub struct MaskCache<K, S = RandomState> {
    inner: RwLock<Slots<K, S>>,
    capacity: usize,
    words: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Copy + Eq + Hash> MaskCache<K> {
    /// An empty cache of at most `capacity` masks of `words` words (0 turns caching off;
    /// more than [`MAX_CACHE_MASKS`] is that many).
    pub fn new(capacity: usize, words: usize) -> MaskCache<K> {
        MaskCache::with_hasher(capacity, words, RandomState::new())
    }
}

impl<K: Copy + Eq + Hash, S: BuildHasher> MaskCache<K, S> {
    /// [`MaskCache::new`] with keys hashed by `hasher`.
    pub fn with_hasher(capacity: usize, words: usize, hasher: S) -> MaskCache<K, S> {
        let capacity = capacity.min(MAX_CACHE_MASKS);
        let slots = Slots::new(capacity, hasher);
        MaskCache {
            inner: RwLock::new(slots),
            capacity,
            words,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Copies the mask of `key` into `out` and returns `true`, or returns `false` if the cache
    /// has none (or `out` is not a mask's length).
    pub fn get(&self, key: &K, out: &mut [u32]) -> bool {
        if out.len() == self.words {
            let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
            let hash = inner.hasher.hash_one(key);
            if let Some(slot) = inner.find(key, hash) {
                out.copy_from_slice(&inner.masks[slot]);
                self.hits.fetch_add(1, Ordering::Relaxed);
                return true;
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Keeps `mask` as the mask of `key` (a mask of another length is not kept).
    pub fn insert(&self, key: K, mask: &[u32]) {
        if self.capacity == 0 || mask.len() != self.words {
            return;
        }
        self.inner
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, mask, self.capacity);
    }

    /// Hits, misses and size so far.
    pub fn stats(&self) -> CacheStats {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: inner.keys.len(),
            capacity: self.capacity,
        }
    }

    /// Drops every mask and its buffer (the counters stay).
    pub fn clear(&self) {
        self.inner
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::hash::Hasher;

    /// A hasher that sends every key to a few buckets: long probes and shifts everywhere.
    #[derive(Clone, Default)]
    struct Crowded(u64);

    impl Hasher for Crowded {
        fn finish(&self) -> u64 {
            self.0 % 3
        }
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = self.0.wrapping_mul(31).wrapping_add(u64::from(b));
            }
        }
    }

    #[derive(Clone, Default)]
    struct CrowdedState;

    impl BuildHasher for CrowdedState {
        type Hasher = Crowded;
        fn build_hasher(&self) -> Crowded {
            Crowded(0)
        }
    }

    /// A mask that says which key it is.
    fn mask_of(key: u64, words: usize) -> Vec<u32> {
        (0..words as u64).map(|w| (key * 7 + w) as u32).collect()
    }

    /// Random insertions and lookups against a model of the FIFO cache.
    fn against_the_model<S: BuildHasher>(cache: MaskCache<u64, S>, keys: u64, rounds: usize) {
        let (capacity, words) = (cache.capacity, cache.words);
        let mut model: HashMap<u64, ()> = HashMap::new();
        let mut order: std::collections::VecDeque<u64> = Default::default();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut out = vec![0u32; words];
        for _ in 0..rounds {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let key = seed % keys;
            let found = cache.get(&key, &mut out);
            assert_eq!(found, model.contains_key(&key), "key {key}");
            if found {
                assert_eq!(out, mask_of(key, words));
                continue;
            }
            cache.insert(key, &mask_of(key, words));
            if capacity > 0 {
                if order.len() == capacity {
                    model.remove(&order.pop_front().unwrap());
                }
                order.push_back(key);
                model.insert(key, ());
            }
            assert_eq!(cache.stats().entries, model.len());
        }
        for key in 0..keys {
            assert_eq!(cache.get(&key, &mut out), model.contains_key(&key));
        }
    }

    #[test]
    fn fifo_eviction_matches_a_model_with_long_probes() {
        for capacity in [1, 2, 3, 7, 16] {
            let cache = MaskCache::with_hasher(capacity, 3, CrowdedState);
            against_the_model(cache, 40, 4000);
        }
    }

    #[test]
    fn fifo_eviction_matches_a_model_with_real_hashes() {
        against_the_model(MaskCache::new(100, 2), 300, 20_000);
        against_the_model(MaskCache::new(0, 2), 10, 100);
    }

    #[test]
    fn a_second_insertion_of_a_key_is_dropped() {
        let cache: MaskCache<u64> = MaskCache::new(4, 1);
        cache.insert(5, &[1]);
        cache.insert(5, &[2]);
        let mut out = [0];
        assert!(cache.get(&5, &mut out));
        assert_eq!(out, [1]);
        assert_eq!(cache.stats().entries, 1);
    }

    #[test]
    fn wrong_lengths_are_neither_kept_nor_answered() {
        let cache: MaskCache<u64> = MaskCache::new(4, 2);
        cache.insert(1, &[1]);
        assert_eq!(cache.stats().entries, 0);
        cache.insert(1, &[1, 2]);
        assert!(!cache.get(&1, &mut [0u32; 3]));
        let mut out = [0u32; 2];
        assert!(cache.get(&1, &mut out));
        assert_eq!(out, [1, 2]);
    }

    #[test]
    fn clear_empties_and_the_slots_fill_again() {
        let cache: MaskCache<u64> = MaskCache::new(2, 1);
        for key in 0..5 {
            cache.insert(key, &[key as u32]);
        }
        cache.clear();
        assert_eq!(cache.stats().entries, 0);
        assert!(!cache.get(&4, &mut [0]));
        cache.insert(9, &[9]);
        let mut out = [0];
        assert!(cache.get(&9, &mut out) && out == [9]);
    }

    #[test]
    fn capacity_is_capped_and_the_index_at_most_half_full() {
        let cache: MaskCache<u64> = MaskCache::new(usize::MAX, 1);
        assert_eq!(cache.stats().capacity, MAX_CACHE_MASKS);
        let inner = cache.inner.read().unwrap();
        assert!(inner.index.len() >= 2 * MAX_CACHE_MASKS);
        assert!(inner.keys.capacity() >= MAX_CACHE_MASKS);
    }
}
