//! A map and a set kept as sorted `Vec`s, for the engine's state.
//!
//! Sorted `Vec`s, not `BTreeMap`/`BTreeSet`: each `BTreeMap<K, V>` brings its own node code
//! (search, insert with splits, remove with merges, its iterators, clone and drop: about
//! 3 kB of wasm per pair of types, 58 kB for the engine's seventeen). These maps hold a
//! handful to a few dozen entries, where a binary search over a `Vec` is as fast, and the
//! keys of the ones that grow (message, job and request ids, the offsets the consumer read)
//! come in increasing order, so an insert lands at the end and moves nothing. Iteration is
//! in key order, as a `BTreeMap`'s, so the engine's output does not change; the serialized
//! forms are those of `BTreeMap` and `BTreeSet`.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, Index, IndexMut, RangeBounds};

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A map with its entries sorted by key.
#[derive(Clone, PartialEq, Eq)]
pub struct VecMap<K, V> {
    entries: Vec<(K, V)>,
}

/// Where `key` is in `entries` (`Ok`), or where it would go (`Err`).
fn search<K: Ord, V>(entries: &[(K, V)], key: &K) -> Result<usize, usize> {
    entries.binary_search_by(|(k, _)| k.cmp(key))
}

/// The index of the first entry whose key is inside `bound` seen as a lower bound.
fn lower<K: Ord, V>(entries: &[(K, V)], bound: Bound<&K>) -> usize {
    match bound {
        Bound::Included(k) => search(entries, k).unwrap_or_else(|i| i),
        Bound::Excluded(k) => search(entries, k).map_or_else(|i| i, |i| i + 1),
        Bound::Unbounded => 0,
    }
}

/// The index past the last entry whose key is inside `bound` seen as an upper bound.
fn upper<K: Ord, V>(entries: &[(K, V)], bound: Bound<&K>) -> usize {
    match bound {
        Bound::Included(k) => search(entries, k).map_or_else(|i| i, |i| i + 1),
        Bound::Excluded(k) => search(entries, k).unwrap_or_else(|i| i),
        Bound::Unbounded => entries.len(),
    }
}

impl<K, V> VecMap<K, V> {
    pub const fn new() -> Self {
        VecMap {
            entries: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter(self.entries.iter())
    }

    pub fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        IterMut(self.entries.iter_mut())
    }

    pub fn keys(&self) -> Keys<'_, K, V> {
        Keys(self.entries.iter())
    }

    pub fn values(&self) -> Values<'_, K, V> {
        Values(self.entries.iter())
    }

    pub fn values_mut(&mut self) -> ValuesMut<'_, K, V> {
        ValuesMut(self.entries.iter_mut())
    }

    /// The entry with the smallest key.
    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.entries.first().map(|(k, v)| (k, v))
    }

    /// Keeps the entries for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }
}

impl<K: Ord, V> VecMap<K, V> {
    /// The value of `key`, looked for first at position `at` (where it is when two maps
    /// hold the same keys and `at` is its position in the other), then searched.
    pub fn get_near(&self, at: usize, key: &K) -> Option<&V> {
        match self.entries.get(at) {
            Some((k, v)) if k == key => Some(v),
            _ => self.get(key),
        }
    }

    /// The position of `key`, looked for first at `at` (as [`VecMap::get_near`]).
    pub fn position_near(&self, at: usize, key: &K) -> Option<usize> {
        match self.entries.get(at) {
            Some((k, _)) if k == key => Some(at),
            _ => search(&self.entries, key).ok(),
        }
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        let i = search(&self.entries, key).ok()?;
        Some(&self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let i = search(&self.entries, key).ok()?;
        Some(&mut self.entries[i].1)
    }

    pub fn contains_key(&self, key: &K) -> bool {
        search(&self.entries, key).is_ok()
    }

    /// Inserts or replaces; returns the value replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match search(&self.entries, &key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let i = search(&self.entries, key).ok()?;
        Some(self.entries.remove(i).1)
    }

    /// The entries whose keys are in `range`, in key order.
    pub fn range(&self, range: impl RangeBounds<K>) -> Iter<'_, K, V> {
        let start = lower(&self.entries, range.start_bound());
        let end = upper(&self.entries, range.end_bound()).max(start);
        Iter(self.entries[start..end].iter())
    }
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap::new()
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Ord, V> Index<&K> for VecMap<K, V> {
    type Output = V;

    fn index(&self, key: &K) -> &V {
        self.get(key).expect("key in map")
    }
}

/// `map[&key]` for a key that must be there: one panic site for all the engine's lookups
/// of a broker by id, not a `get_mut(..).expect(..)` (a message and a location) at each.
impl<K: Ord, V> IndexMut<&K> for VecMap<K, V> {
    fn index_mut(&mut self, key: &K) -> &mut V {
        self.get_mut(key).expect("key in map")
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = VecMap::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut VecMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = IterMut<'a, K, V>;

    fn into_iter(self) -> IterMut<'a, K, V> {
        self.iter_mut()
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

/// Iterators over a [`VecMap`], each a slice iterator that hands out references.
macro_rules! slice_iter {
    ($name:ident, $slice:ident, $item:ty, |$e:pat_param| $out:expr) => {
        pub struct $name<'a, K, V>(std::slice::$slice<'a, (K, V)>);

        impl<'a, K, V> Iterator for $name<'a, K, V> {
            type Item = $item;

            fn next(&mut self) -> Option<$item> {
                self.0.next().map(|$e| $out)
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<'a, K, V> DoubleEndedIterator for $name<'a, K, V> {
            fn next_back(&mut self) -> Option<$item> {
                self.0.next_back().map(|$e| $out)
            }
        }

        impl<K, V> ExactSizeIterator for $name<'_, K, V> {}
    };
}

slice_iter!(Iter, Iter, (&'a K, &'a V), |(k, v)| (k, v));
slice_iter!(IterMut, IterMut, (&'a K, &'a mut V), |(k, v)| (&*k, v));
slice_iter!(Keys, Iter, &'a K, |(k, _)| k);
slice_iter!(Values, Iter, &'a V, |(_, v)| v);
slice_iter!(ValuesMut, IterMut, &'a mut V, |(_, v)| v);

impl<K: Serialize, V: Serialize> Serialize for VecMap<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de, K: Ord + Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for VecMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapVisitor<K, V>(PhantomData<(K, V)>);

        impl<'de, K: Ord + Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for MapVisitor<K, V> {
            type Value = VecMap<K, V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = VecMap::new();
                while let Some((k, v)) = access.next_entry()? {
                    map.insert(k, v);
                }
                Ok(map)
            }
        }

        d.deserialize_map(MapVisitor(PhantomData))
    }
}

/// A set with its items sorted.
#[derive(Clone, PartialEq, Eq)]
pub struct VecSet<K> {
    items: Vec<K>,
}

impl<K> VecSet<K> {
    pub const fn new() -> Self {
        VecSet { items: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// The items in order.
    pub fn iter(&self) -> std::slice::Iter<'_, K> {
        self.items.iter()
    }

    /// Keeps the items for which `keep` is true, in order.
    pub fn retain(&mut self, keep: impl FnMut(&K) -> bool) {
        self.items.retain(keep);
    }
}

impl<K: Ord> VecSet<K> {
    pub fn contains(&self, item: &K) -> bool {
        self.items.binary_search(item).is_ok()
    }

    /// Adds `item`; returns whether it was not there.
    pub fn insert(&mut self, item: K) -> bool {
        match self.items.binary_search(&item) {
            Ok(_) => false,
            Err(i) => {
                self.items.insert(i, item);
                true
            }
        }
    }

    /// Takes `item` out; returns whether it was there.
    pub fn remove(&mut self, item: &K) -> bool {
        match self.items.binary_search(item) {
            Ok(i) => {
                self.items.remove(i);
                true
            }
            Err(_) => false,
        }
    }
}

impl<K> Default for VecSet<K> {
    fn default() -> Self {
        VecSet::new()
    }
}

impl<K: fmt::Debug> fmt::Debug for VecSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<K: Ord> FromIterator<K> for VecSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        let mut set = VecSet::new();
        for k in iter {
            set.insert(k);
        }
        set
    }
}

impl<K: Ord> Extend<K> for VecSet<K> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        for k in iter {
            self.insert(k);
        }
    }
}

impl<'a, K> IntoIterator for &'a VecSet<K> {
    type Item = &'a K;
    type IntoIter = std::slice::Iter<'a, K>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<K> IntoIterator for VecSet<K> {
    type Item = K;
    type IntoIter = std::vec::IntoIter<K>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<K: Serialize> Serialize for VecSet<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, K: Ord + Deserialize<'de>> Deserialize<'de> for VecSet<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SetVisitor<K>(PhantomData<K>);

        impl<'de, K: Ord + Deserialize<'de>> Visitor<'de> for SetVisitor<K> {
            type Value = VecSet<K>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut set = VecSet::new();
                while let Some(k) = access.next_element()? {
                    set.insert(k);
                }
                Ok(set)
            }
        }

        d.deserialize_seq(SetVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::rng::Rng;

    /// Random inserts, removals and reads agree with a `BTreeMap`'s, in order.
    #[test]
    fn map_agrees_with_btree_map() {
        let mut rng = Rng::new(7);
        let mut ours = VecMap::new();
        let mut theirs = BTreeMap::new();
        for _ in 0..5_000 {
            let k = rng.below_or_equal(60);
            let v = rng.below_or_equal(1_000);
            match rng.below_or_equal(3) {
                0 | 1 => assert_eq!(ours.insert(k, v), theirs.insert(k, v)),
                2 => assert_eq!(ours.remove(&k), theirs.remove(&k)),
                _ => {
                    if let Some(x) = ours.get_mut(&k) {
                        *x += 1;
                    }
                    if let Some(x) = theirs.get_mut(&k) {
                        *x += 1;
                    }
                }
            }
            assert_eq!(ours.get(&k), theirs.get(&k));
            assert_eq!(ours.contains_key(&v), theirs.contains_key(&v));
            let (lo, hi) = (k.min(v % 61), k.max(v % 61));
            assert!(ours.range(lo..hi).eq(theirs.range(lo..hi)));
            assert!(ours.range(lo..=hi).eq(theirs.range(lo..=hi)));
            assert!(ours.range(..hi).eq(theirs.range(..hi)));
            assert!(ours.range(lo..).eq(theirs.range(lo..)));
        }
        assert!(ours.iter().eq(theirs.iter()));
        assert!(ours.keys().rev().eq(theirs.keys().rev()));
        assert_eq!(ours.first_key_value(), theirs.first_key_value());
        assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
        ours.retain(|k, _| k % 2 == 0);
        theirs.retain(|k, _| k % 2 == 0);
        assert!(ours.into_iter().eq(theirs));
    }

    #[test]
    fn set_agrees_with_btree_set() {
        let mut rng = Rng::new(8);
        let mut ours = VecSet::new();
        let mut theirs = BTreeSet::new();
        for _ in 0..2_000 {
            let k = rng.below_or_equal(40);
            if rng.below_or_equal(1) == 0 {
                assert_eq!(ours.insert(k), theirs.insert(k));
            } else {
                assert_eq!(ours.remove(&k), theirs.remove(&k));
            }
            assert_eq!(ours.contains(&k), theirs.contains(&k));
        }
        assert!(ours.iter().eq(theirs.iter()));
        assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
    }

    #[test]
    fn serialized_as_btree_map_and_set() {
        let pairs = [(3u64, "c"), (1, "a"), (2, "b")];
        let ours: VecMap<u64, &str> = pairs.into_iter().collect();
        let theirs: BTreeMap<u64, &str> = pairs.into_iter().collect();
        let text = serde_json::to_string(&ours).expect("serializes");
        assert_eq!(text, serde_json::to_string(&theirs).expect("serializes"));
        let back: VecMap<u64, String> = serde_json::from_str(&text).expect("reads");
        assert!(back.keys().eq([1, 2, 3].iter()));
        let set: VecSet<u32> = [5, 1, 3, 1].into_iter().collect();
        assert_eq!(serde_json::to_string(&set).expect("serializes"), "[1,3,5]");
        let back: VecSet<u32> = serde_json::from_str("[5,1,3]").expect("reads");
        assert_eq!(back, set);
    }
}
