//! A growing sequence of records whose clones share storage: each replica's log and the
//! committed history the invariant checks keep.
//!
//! Every rewind checkpoint is a clone of the whole simulation (`Sim::clone`), so a history
//! that a clone copies costs its length once per checkpoint. As the trace does (`trace.rs`),
//! records live in sealed, immutable chunks of [`RECORD_CHUNK_LEN`] behind an `Arc`, plus one
//! small mutable tail: a clone copies the chunk pointers and the tail (fewer than
//! [`RECORD_CHUNK_LEN`] records), never the whole history.

use std::ops::{Index, Range};
use std::sync::Arc;

use crate::record::Record;

/// Records per sealed, shared chunk: the trace's chunk size (`TRACE_CHUNK_EVENTS`).
pub const RECORD_CHUNK_LEN: usize = 256;

/// Records by index, oldest first, like a `Vec<Record>`.
///
/// Chunk k holds the records at indexes `k * RECORD_CHUNK_LEN .. (k + 1) * RECORD_CHUNK_LEN`;
/// every chunk is full, so an index finds its chunk by division. A chunk is sealed (moved
/// behind an `Arc`, never changed again) when the push that fills it happens; the records
/// after the last chunk are the mutable tail. Cloning shares every sealed chunk.
///
/// It serializes, compares and prints (`Debug`) as the plain sequence of its records, as the
/// `Vec<Record>` it replaced did.
#[derive(Clone, Default)]
pub struct RecordChunks {
    /// Sealed chunks, each exactly [`RECORD_CHUNK_LEN`] records.
    chunks: Vec<Arc<[Record]>>,
    /// The records after the last sealed chunk; never a whole chunk.
    tail: Vec<Record>,
}

impl RecordChunks {
    pub fn len(&self) -> usize {
        self.chunks.len() * RECORD_CHUNK_LEN + self.tail.len()
    }

    /// Appends a record; seals the tail when it makes a whole chunk.
    pub fn push(&mut self, record: Record) {
        self.tail.push(record);
        if self.tail.len() == RECORD_CHUNK_LEN {
            // One copy of the records into the shared allocation; the tail grows again
            // from empty. Less code in the wasm than collecting a `drain` into the `Arc`
            // (the shipped size is at its budget).
            self.chunks.push(Arc::from(std::mem::take(&mut self.tail)));
        }
    }

    pub fn get(&self, index: usize) -> Option<&Record> {
        (index < self.len()).then(|| &self[index])
    }

    pub fn last(&self) -> Option<&Record> {
        match self.tail.last() {
            Some(r) => Some(r),
            None => self.chunks.last().and_then(|c| c.last()),
        }
    }

    /// The records, oldest first.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            current: [].iter(),
            chunks: self.chunks.iter(),
            tail: &self.tail,
        }
    }

    /// A copy of the records at the indexes in `range`, as far as the sequence goes.
    pub fn copy_range(&self, range: Range<usize>) -> Vec<Record> {
        let end = range.end.min(self.len());
        let mut at = range.start.min(end);
        let mut out = Vec::with_capacity(end - at);
        while at < end {
            let (slice, base) = self.slice_at(at);
            let stop = (end - base).min(slice.len());
            out.extend_from_slice(&slice[at - base..stop]);
            at = base + stop;
        }
        out
    }

    /// Removes the records from index `at` on and returns them, as `Vec::split_off` does
    /// (`at` at or past the end removes nothing). Sealed chunks never change, and clones may
    /// share them: when `at` falls inside one, its kept part is copied into the tail.
    pub fn split_off(&mut self, at: usize) -> Vec<Record> {
        // Copies even the records it could move out of the tail: truncations are rare and
        // short, and one path is less code in the wasm.
        let removed = self.copy_range(at..self.len());
        let sealed = self.chunks.len() * RECORD_CHUNK_LEN;
        if at >= sealed {
            self.tail.truncate(at - sealed);
        } else {
            let k = at / RECORD_CHUNK_LEN;
            self.tail = self.copy_range(k * RECORD_CHUNK_LEN..at);
            self.chunks.truncate(k);
        }
        removed
    }

    /// The sealed chunks, oldest first: what clones share (tests check that they do).
    #[cfg(test)]
    pub fn sealed_chunks(&self) -> &[Arc<[Record]>] {
        &self.chunks
    }

    /// The chunk or the tail that holds `index` (the tail past the end), and the index of
    /// its first record.
    fn slice_at(&self, index: usize) -> (&[Record], usize) {
        let k = index / RECORD_CHUNK_LEN;
        match self.chunks.get(k) {
            Some(chunk) => (chunk, k * RECORD_CHUNK_LEN),
            None => (&self.tail, self.chunks.len() * RECORD_CHUNK_LEN),
        }
    }
}

/// Iterates over the records of a [`RecordChunks`], oldest first. Written out rather than a
/// `flatten` of the chunks chained with the tail, which is several times the code in the
/// wasm.
pub struct Iter<'a> {
    /// The rest of the chunk being read, or of the tail.
    current: std::slice::Iter<'a, Record>,
    /// The chunks after it.
    chunks: std::slice::Iter<'a, Arc<[Record]>>,
    /// The tail, until it is being read.
    tail: &'a [Record],
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Record;

    fn next(&mut self) -> Option<&'a Record> {
        loop {
            if let Some(r) = self.current.next() {
                return Some(r);
            }
            // Sealed chunks are never empty, so this moves on or ends.
            self.current = match self.chunks.next() {
                Some(chunk) => chunk.iter(),
                None if !self.tail.is_empty() => std::mem::take(&mut self.tail).iter(),
                None => return None,
            };
        }
    }
}

/// Panics when `index` is out of bounds, as a slice does.
impl Index<usize> for RecordChunks {
    type Output = Record;

    fn index(&self, index: usize) -> &Record {
        let (slice, base) = self.slice_at(index);
        &slice[index - base]
    }
}

impl FromIterator<Record> for RecordChunks {
    fn from_iter<I: IntoIterator<Item = Record>>(records: I) -> Self {
        let mut out = RecordChunks::default();
        for r in records {
            out.push(r);
        }
        out
    }
}

impl std::fmt::Debug for RecordChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for RecordChunks {
    fn eq(&self, other: &RecordChunks) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for RecordChunks {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::types::TP0;

    const N: usize = RECORD_CHUNK_LEN;

    fn record(i: usize) -> Record {
        Record {
            offset: i as u64,
            epoch: (i / 100) as i32,
            batch_base: (i - i % 3) as u64,
            value: format!("v{i}"),
            producer_id: -1,
            producer_epoch: -1,
            sequence: -1,
            key: None,
            size: None,
        }
    }

    fn records(range: Range<usize>) -> Vec<Record> {
        range.map(record).collect()
    }

    /// Every read agrees with the plain vector, and the layout is the documented one.
    fn assert_same(c: &RecordChunks, v: &[Record]) {
        assert_eq!(c.len(), v.len());
        assert_eq!(c.len() == 0, v.is_empty());
        assert_eq!(c.last(), v.last());
        assert!(c.iter().eq(v.iter()));
        assert_eq!(c, &v.iter().cloned().collect::<RecordChunks>());
        assert_eq!(format!("{c:?}"), format!("{v:?}"));
        assert!(c.chunks.iter().all(|k| k.len() == N));
        assert!(c.tail.len() < N);
        let len = v.len();
        for i in [
            0,
            1,
            N - 1,
            N,
            N + 1,
            len / 2,
            len.saturating_sub(1),
            len,
            len + 1,
        ] {
            assert_eq!(c.get(i), v.get(i), "get({i})");
            if i < len {
                assert_eq!(&c[i], &v[i]);
            }
        }
    }

    fn assert_range(c: &RecordChunks, v: &[Record], start: usize, end: usize) {
        let e = end.min(v.len());
        let s = start.min(e);
        assert_eq!(c.copy_range(start..end), v[s..e].to_vec());
    }

    #[test]
    fn pushes_across_chunk_boundaries() {
        let mut c = RecordChunks::default();
        let mut v = vec![];
        assert_same(&c, &v);
        for i in 0..3 * N + 7 {
            c.push(record(i));
            v.push(record(i));
            if i % N >= N - 2 || i % N <= 1 {
                assert_same(&c, &v);
            }
        }
        assert_eq!((c.chunks.len(), c.tail.len()), (3, 7));
        for (s, e) in [
            (0, 0),
            (0, 1),
            (N - 1, N + 1),
            (N, 2 * N),
            (5, 3 * N + 7),
            (3 * N, 9 * N),
        ] {
            assert_range(&c, &v, s, e);
        }
    }

    #[test]
    fn split_off_inside_a_chunk_in_the_tail_at_a_boundary_and_at_zero() {
        let all = records(0..3 * N + 10);
        let full: RecordChunks = all.iter().cloned().collect();
        for at in [
            N + 5,     // inside a sealed chunk, with a tail after it
            3 * N + 4, // inside the tail
            2 * N,     // on a chunk boundary
            3 * N,     // the boundary where the tail starts
            0,
            3 * N + 10, // the end: nothing removed
            5 * N,      // past the end
        ] {
            let mut c = full.clone();
            let removed = c.split_off(at);
            let mut v = all.clone();
            assert_eq!(removed, v.split_off(at.min(all.len())), "split_off({at})");
            assert_same(&c, &v);
            // The clone it was taken from is untouched, and the sequence grows on as a
            // plain vector would.
            assert_same(&full, &all);
            for i in 0..N + 3 {
                c.push(record(10_000 + i));
                v.push(record(10_000 + i));
            }
            assert_same(&c, &v);
        }
    }

    #[test]
    fn a_clone_shares_every_sealed_chunk_and_copies_only_the_tail() {
        let mut c: RecordChunks = records(0..10 * N + 100).into_iter().collect();
        let copy = c.clone();
        assert_eq!(copy.chunks.len(), 10);
        for (a, b) in copy.chunks.iter().zip(&c.chunks) {
            assert!(Arc::ptr_eq(a, b));
            assert_eq!(Arc::strong_count(a), 2);
        }
        assert_eq!(copy.tail.len(), 100);
        // Truncating the original inside chunk 4 leaves the copy whole, and chunks 0..4
        // still shared.
        c.split_off(4 * N + 17);
        assert_eq!(copy.len(), 10 * N + 100);
        assert!(copy.iter().eq(records(0..10 * N + 100).iter()));
        assert_eq!(c.chunks.len(), 4);
        assert!(c
            .chunks
            .iter()
            .zip(&copy.chunks)
            .all(|(a, b)| Arc::ptr_eq(a, b)));
    }

    /// Random pushes, truncations and reads against a plain `Vec` (the engine's own seeded
    /// generator, so a failure reproduces).
    #[test]
    fn random_operations_match_a_plain_vector() {
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            let mut c = RecordChunks::default();
            let mut v: Vec<Record> = vec![];
            let mut clones = vec![];
            let mut next = 0;
            for _ in 0..300 {
                match rng.below_or_equal(9) {
                    0..=5 => {
                        for _ in 0..rng.below_or_equal(80) {
                            c.push(record(next));
                            v.push(record(next));
                            next += 1;
                        }
                    }
                    6 | 7 => {
                        let at = rng.below_or_equal(v.len() as u64 + 3) as usize;
                        let removed = c.split_off(at);
                        assert_eq!(removed, v.split_off(at.min(v.len())), "seed {seed}");
                    }
                    8 => clones.push((c.clone(), v.clone())),
                    _ => {
                        let s = rng.below_or_equal(v.len() as u64 + 2) as usize;
                        let e = rng.below_or_equal(v.len() as u64 + 2) as usize;
                        assert_range(&c, &v, s, e.max(s));
                    }
                }
                assert_same(&c, &v);
            }
            // What was cloned along the way never changed.
            for (c, v) in &clones {
                assert_same(c, v);
            }
        }
    }

    #[test]
    fn a_simulation_clone_shares_its_logs_and_committed_history() {
        let mut s = crate::Scenario {
            brokers: 3,
            end_ms: Some(60_000),
            ..crate::Scenario::default()
        };
        s.timeline = (0..1_000)
            .map(|i| crate::TimedAction {
                at: i * 50,
                action: crate::Action::Produce(
                    serde_json::from_value(
                        serde_json::json!({"acks": "all", "values": [format!("v{i}")]}),
                    )
                    .unwrap(),
                ),
            })
            .collect();
        let sim = crate::run(&s, true).unwrap();
        let copy = sim.clone();
        let histories = std::iter::once((&copy.committed[&TP0], &sim.committed[&TP0])).chain(
            copy.brokers
                .values()
                .zip(sim.brokers.values())
                .map(|(a, b)| (&a.log(TP0).records, &b.log(TP0).records)),
        );
        for (a, b) in histories {
            assert!(a.len() >= 990 && a.chunks.len() == a.len() / N);
            assert!(a
                .chunks
                .iter()
                .zip(&b.chunks)
                .all(|(x, y)| Arc::ptr_eq(x, y)));
            assert_eq!(a, b);
        }
    }
}
