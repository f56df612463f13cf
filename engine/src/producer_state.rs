//! The broker's producer state for one partition: what `ProducerStateManager`,
//! `ProducerStateEntry` and `ProducerAppendInfo` (storage/.../internals/log) keep and check
//! for idempotent producers.
//!
//! Per producer id: the producer epoch and the metadata (first and last sequence, first and
//! last offset) of its last [`NUM_BATCHES_TO_RETAIN`] batches. A client batch equal to one of
//! them is a duplicate, answered with the original offsets and not appended
//! (UnifiedLog.analyzeAndValidateProducerState); an older producer epoch is
//! INVALID_PRODUCER_EPOCH; a sequence that does not follow the last one is
//! OUT_OF_ORDER_SEQUENCE_NUMBER.
//!
//! The state is derived from the log: every append (leader or follower: a follower appends
//! the leader's batches with their producer fields byte for byte) adds to it, and a
//! truncation rebuilds it from what remains, as UnifiedLog does on truncateTo
//! (rebuildProducerState). So it survives kill -9 with the log (Kafka reloads it from its
//! snapshot and the log, loadProducerState) and a new leader recognises a retried batch.

use crate::record::{Record, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE};
use crate::record_chunks::RecordChunks;
use crate::types::ErrorCode;

/// ProducerStateEntry.NUM_BATCHES_TO_RETAIN.
pub const NUM_BATCHES_TO_RETAIN: usize = 5;

/// BatchMetadata: one batch of a producer as the partition holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMetadata {
    pub first_seq: i32,
    pub last_seq: i32,
    pub first_offset: u64,
    pub last_offset: u64,
}

/// ProducerStateEntry, without the transactional fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerStateEntry {
    pub producer_epoch: i16,
    /// Oldest first, at most NUM_BATCHES_TO_RETAIN.
    pub batches: Vec<BatchMetadata>,
}

impl ProducerStateEntry {
    /// ProducerStateEntry.lastSeq.
    pub fn last_seq(&self) -> i32 {
        self.batches.last().map_or(NO_SEQUENCE, |b| b.last_seq)
    }
}

/// What the leader does with a client batch (`Sim::leader_handle_produce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientBatch {
    /// Append it.
    Append,
    /// A retry of a batch already in the log: answer with its offsets, append nothing.
    Duplicate(BatchMetadata),
    /// Refuse it with this error.
    Reject(ErrorCode),
}

/// The sequence of the record `delta` places after `base` (DefaultRecordBatch.incrementSequence:
/// sequences wrap from Integer.MAX_VALUE to 0).
pub fn increment_sequence(base: i32, delta: u32) -> i32 {
    if base == NO_SEQUENCE {
        return NO_SEQUENCE;
    }
    ((i64::from(base) + i64::from(delta)) % (i64::from(i32::MAX) + 1)) as i32
}

/// ProducerAppendInfo.inSequence.
fn in_sequence(last_seq: i32, next_seq: i32) -> bool {
    i64::from(next_seq) == i64::from(last_seq) + 1 || (next_seq == 0 && last_seq == i32::MAX)
}

/// ProducerStateManager: producer id → its entry. A vector in the order the producers first
/// appended (deterministic; a scenario has one producer, and a vector is less code in the
/// wasm than another map).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerStateManager {
    pub producers: Vec<(i64, ProducerStateEntry)>,
}

impl ProducerStateManager {
    /// ProducerStateManager.lastEntry.
    pub fn entry(&self, producer_id: i64) -> Option<&ProducerStateEntry> {
        self.producers
            .iter()
            .find(|(p, _)| *p == producer_id)
            .map(|(_, e)| e)
    }

    /// UnifiedLog.analyzeAndValidateProducerState for one client batch (origin CLIENT): the
    /// duplicate check (ProducerStateEntry.findDuplicateBatch: same epoch, same first and last
    /// sequence), then ProducerAppendInfo.checkProducerEpoch and checkSequence.
    pub fn check_client_batch(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        first_seq: i32,
        last_seq: i32,
    ) -> ClientBatch {
        if producer_id == NO_PRODUCER_ID {
            return ClientBatch::Append;
        }
        let (current_epoch, current_last_seq) = match self.entry(producer_id) {
            Some(e) => {
                if e.producer_epoch == producer_epoch {
                    if let Some(b) = e
                        .batches
                        .iter()
                        .find(|b| b.first_seq == first_seq && b.last_seq == last_seq)
                    {
                        return ClientBatch::Duplicate(*b);
                    }
                }
                (e.producer_epoch, e.last_seq())
            }
            // ProducerStateEntry.empty: no epoch, no sequence.
            None => (NO_PRODUCER_EPOCH, NO_SEQUENCE),
        };
        // checkProducerEpoch
        if producer_epoch < current_epoch {
            return ClientBatch::Reject(ErrorCode::INVALID_PRODUCER_EPOCH);
        }
        // checkSequence
        if producer_epoch != current_epoch {
            // A new epoch must start at sequence 0, unless the partition knows no epoch for
            // this producer.
            if first_seq != 0 && current_epoch != NO_PRODUCER_EPOCH {
                return ClientBatch::Reject(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
            }
        } else if !(current_epoch == NO_PRODUCER_EPOCH || in_sequence(current_last_seq, first_seq))
        {
            return ClientBatch::Reject(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
        }
        ClientBatch::Append
    }

    /// ProducerAppendInfo.appendDataBatch → ProducerStateEntry.addBatch, one record at a time
    /// so that a follower's fetch that ends inside a batch extends that batch when the rest
    /// arrives. A batch of another epoch clears the entry's batches (maybeUpdateProducerEpoch);
    /// on replication an older epoch is only logged by Kafka, and taken as it is here too.
    pub fn apply(&mut self, r: &Record) {
        if r.producer_id == NO_PRODUCER_ID {
            return;
        }
        let i = match self.producers.iter().position(|(p, _)| *p == r.producer_id) {
            Some(i) => i,
            None => {
                self.producers.push((
                    r.producer_id,
                    ProducerStateEntry {
                        producer_epoch: NO_PRODUCER_EPOCH,
                        batches: vec![],
                    },
                ));
                self.producers.len() - 1
            }
        };
        let e = &mut self.producers[i].1;
        if e.producer_epoch != r.producer_epoch {
            e.batches.clear();
            e.producer_epoch = r.producer_epoch;
        }
        match e.batches.last_mut() {
            Some(b) if b.first_offset == r.batch_base && b.last_offset + 1 == r.offset => {
                b.last_seq = r.sequence;
                b.last_offset = r.offset;
            }
            _ => {
                if e.batches.len() == NUM_BATCHES_TO_RETAIN {
                    e.batches.remove(0);
                }
                e.batches.push(BatchMetadata {
                    first_seq: r.sequence,
                    last_seq: r.sequence,
                    first_offset: r.offset,
                    last_offset: r.offset,
                });
            }
        }
    }

    /// UnifiedLog.rebuildProducerState: the state the records imply, replayed from the start.
    pub fn rebuild(records: &RecordChunks) -> ProducerStateManager {
        let mut m = ProducerStateManager::default();
        for i in 0..records.len() {
            m.apply(&records[i]);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(offset: u64, batch_base: u64, pid: i64, epoch: i16, seq: i32) -> Record {
        Record {
            offset,
            epoch: 0,
            batch_base,
            value: format!("v{offset}"),
            producer_id: pid,
            producer_epoch: epoch,
            sequence: seq,
            key: None,
            size: None,
        }
    }

    /// Appends a batch of `n` records for producer `pid` at the end, as the leader does.
    fn append(
        m: &mut ProducerStateManager,
        next: &mut u64,
        pid: i64,
        epoch: i16,
        seq: i32,
        n: u32,
    ) {
        let base = *next;
        for i in 0..n {
            m.apply(&rec(
                base + u64::from(i),
                base,
                pid,
                epoch,
                increment_sequence(seq, i),
            ));
        }
        *next += u64::from(n);
    }

    #[test]
    fn a_retried_batch_among_the_last_five_is_a_duplicate_with_its_offsets() {
        // ProducerStateManagerTest.testDeduplicationOnlyWithinCachedBatches and UnifiedLogTest
        // .testDuplicateAppends: each of the last five batches is recognised, with its own
        // offsets; a sixth pushes the oldest out.
        let mut m = ProducerStateManager::default();
        let mut next = 0;
        for b in 0..5 {
            append(&mut m, &mut next, 7, 0, b * 2, 2);
        }
        assert_eq!(
            m.check_client_batch(7, 0, 0, 1),
            ClientBatch::Duplicate(BatchMetadata {
                first_seq: 0,
                last_seq: 1,
                first_offset: 0,
                last_offset: 1
            })
        );
        assert_eq!(
            m.check_client_batch(7, 0, 6, 7),
            ClientBatch::Duplicate(BatchMetadata {
                first_seq: 6,
                last_seq: 7,
                first_offset: 6,
                last_offset: 7
            })
        );
        append(&mut m, &mut next, 7, 0, 10, 2);
        assert_eq!(m.entry(7).unwrap().batches.len(), NUM_BATCHES_TO_RETAIN);
        // Batch 0-1 is no longer cached: its retry is out of order, not a duplicate.
        assert_eq!(
            m.check_client_batch(7, 0, 0, 1),
            ClientBatch::Reject(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER)
        );
        // Same sequences under another epoch are not duplicates (findDuplicateBatch checks
        // the epoch first); a bumped epoch must start at 0.
        assert_eq!(
            m.check_client_batch(7, 1, 10, 11),
            ClientBatch::Reject(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER)
        );
        assert_eq!(m.check_client_batch(7, 1, 0, 3), ClientBatch::Append);
        // The next sequence appends.
        assert_eq!(m.check_client_batch(7, 0, 12, 12), ClientBatch::Append);
    }

    #[test]
    fn sequences_must_follow_and_epochs_must_not_go_back() {
        // ProducerStateManagerTest.testProducerSequenceInvalidWrapAround / testBasicIdMapping:
        // a gap is OUT_OF_ORDER_SEQUENCE_NUMBER; testFenceProducerEpoch (an older epoch):
        // INVALID_PRODUCER_EPOCH.
        let mut m = ProducerStateManager::default();
        let mut next = 0;
        append(&mut m, &mut next, 3, 2, 0, 1);
        assert_eq!(
            m.check_client_batch(3, 2, 2, 2),
            ClientBatch::Reject(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER)
        );
        assert_eq!(m.check_client_batch(3, 2, 1, 1), ClientBatch::Append);
        assert_eq!(
            m.check_client_batch(3, 1, 1, 1),
            ClientBatch::Reject(ErrorCode::INVALID_PRODUCER_EPOCH)
        );
        // An unknown producer may start at any sequence (ProducerStateEntry.empty has no
        // epoch: "accept writes with any sequence number").
        assert_eq!(m.check_client_batch(9, 0, 42, 42), ClientBatch::Append);
        // Non-idempotent batches are never checked.
        assert_eq!(
            m.check_client_batch(NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_SEQUENCE),
            ClientBatch::Append
        );
        // Wrap-around: after Integer.MAX_VALUE comes 0 (testProducerSequenceWrapAround).
        let mut w = ProducerStateManager::default();
        let mut next = 0;
        append(&mut w, &mut next, 4, 0, i32::MAX - 1, 2);
        assert_eq!(w.entry(4).unwrap().last_seq(), i32::MAX);
        assert_eq!(w.check_client_batch(4, 0, 0, 0), ClientBatch::Append);
        assert_eq!(increment_sequence(i32::MAX, 1), 0);
    }

    #[test]
    fn a_follower_fetch_that_splits_a_batch_builds_the_same_state() {
        let mut whole = ProducerStateManager::default();
        let mut next = 0;
        append(&mut whole, &mut next, 1, 0, 0, 4);
        let mut split = ProducerStateManager::default();
        for o in 0..4 {
            split.apply(&rec(o, 0, 1, 0, o as i32));
        }
        assert_eq!(split, whole);
        assert_eq!(
            whole.entry(1).unwrap().batches[0],
            BatchMetadata {
                first_seq: 0,
                last_seq: 3,
                first_offset: 0,
                last_offset: 3
            }
        );
    }
}
