//! One replica's log: records, log start and end offsets, the high watermark, the
//! leader-epoch cache and the two checkpoint files.
//!
//! Offsets are next-offset boundaries, as in Kafka: a log holding 0..=9 has LEO 10, and a HW
//! of 10 makes offsets 0..=9 visible to consumers.

use crate::record::Record;
use crate::record_chunks::RecordChunks;
use crate::types::TimeMs;

/// Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.
pub const UNDEFINED_EPOCH: i32 = -1;
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// The producer fields of a batch: producerId, producerEpoch, baseSequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchProducer {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
}

impl Default for BatchProducer {
    fn default() -> Self {
        BatchProducer::NONE
    }
}

impl BatchProducer {
    /// A batch from a producer without idempotence.
    pub const NONE: BatchProducer = BatchProducer {
        producer_id: crate::record::NO_PRODUCER_ID,
        producer_epoch: crate::record::NO_PRODUCER_EPOCH,
        base_sequence: crate::record::NO_SEQUENCE,
    };
}

/// An entry of LeaderEpochFileCache: epoch `epoch` starts at `start_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    pub epoch: i32,
    pub start_offset: u64,
}

/// LeaderEpochFileCache: the `epoch startOffset` entries of `leader-epoch-checkpoint`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochCache {
    pub entries: Vec<EpochEntry>,
}

impl EpochCache {
    pub fn latest(&self) -> Option<EpochEntry> {
        self.entries.last().copied()
    }

    pub fn latest_epoch(&self) -> Option<i32> {
        self.latest().map(|e| e.epoch)
    }

    /// LeaderEpochFileCache.assign: record that `epoch` starts at `start_offset`.
    ///
    /// As Kafka's `assign(EpochEntry)`: the entry is needed unless the latest entry has the
    /// same epoch and a start offset at or before this one (`isUpdateNeeded`). Before it is
    /// added, `maybeTruncateNonMonotonicEntries` removes, from the newest entry backwards,
    /// every entry whose epoch is at or above the new epoch or whose start offset is at or
    /// after the new start offset, so the cache stays monotonic in both. An older epoch than
    /// the latest is therefore not ignored: it wipes the newer entries it conflicts with
    /// (LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs). Returns whether
    /// the cache changed.
    pub fn assign(&mut self, epoch: i32, start_offset: u64) -> bool {
        let needed = self
            .latest()
            .is_none_or(|l| epoch != l.epoch || start_offset < l.start_offset);
        if !needed {
            return false;
        }
        while self
            .entries
            .last()
            .is_some_and(|e| e.epoch >= epoch || e.start_offset >= start_offset)
        {
            self.entries.pop();
        }
        self.entries.push(EpochEntry {
            epoch,
            start_offset,
        });
        true
    }

    /// LeaderEpochFileCache.endOffsetFor: the largest epoch ≤ `requested` and where it ends
    /// (the start offset of the next epoch, or the log end offset for the latest epoch).
    /// Returns (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) when the requested epoch is newer
    /// than any known epoch or the cache is empty.
    pub fn end_offset_for(&self, requested: i32, log_end_offset: u64) -> (i32, i64) {
        if requested == UNDEFINED_EPOCH || self.entries.is_empty() {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        }
        if self.latest_epoch() == Some(requested) {
            return (requested, log_end_offset as i64);
        }
        let higher = self.entries.iter().find(|e| e.epoch > requested);
        let floor = self.entries.iter().rev().find(|e| e.epoch <= requested);
        match (higher, floor) {
            (None, _) => (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET),
            // The requested epoch is older than any known epoch.
            (Some(h), None) => (requested, h.start_offset as i64),
            (Some(h), Some(f)) => (f.epoch, h.start_offset as i64),
        }
    }

    /// LeaderEpochFileCache.truncateFromEndAsyncFlush: drop entries starting at or after
    /// `offset`.
    pub fn truncate_from_end(&mut self, offset: u64) {
        self.entries.retain(|e| e.start_offset < offset);
    }

    /// The leader-epoch-checkpoint file's contents joined on one line: version 0, the entry
    /// count, then `epoch startOffset` pairs (`0 2 0 0 1 10`).
    pub fn checkpoint_line(&self) -> String {
        use std::fmt::Write;
        let mut s = format!("0 {}", self.entries.len());
        for e in &self.entries {
            let _ = write!(s, " {} {}", e.epoch, e.start_offset);
        }
        s
    }
}

/// What a truncation did, for the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    pub to_offset: u64,
    pub removed: Vec<Record>,
    /// The HW before truncation, when the truncation went below it (data loss territory).
    pub below_high_watermark: Option<u64>,
}

/// One replica's log on one broker's disk, plus the in-memory HW.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaLog {
    pub log_start_offset: u64,
    /// Shared with clones of the log (each rewind checkpoint holds one): see `RecordChunks`.
    pub records: RecordChunks,
    /// In memory; lost on kill -9 and read back from the checkpoint on restart.
    pub high_watermark: u64,
    /// leader-epoch-checkpoint is flushed whenever the cache changes, so it is the cache.
    pub epoch_cache: EpochCache,
    /// The HW as last written to replication-offset-checkpoint, if ever.
    pub hw_checkpoint: Option<u64>,
    /// ProducerStateManager: derived from the records (see `producer_state.rs`).
    pub producers: crate::producer_state::ProducerStateManager,
    /// The page cache's dirty tail, for a power loss: each append still within
    /// `sim.writeback.delay.ms` as (its first offset, its time), oldest first. Kept only in a run that can lose power (`Config::track_writeback`).
    pub unwritten: Vec<(u64, TimeMs)>,
    /// LocalLog's recovery point: the offset up to which the log was last flushed (fsync),
    /// by `log.flush.interval.messages`, the log flusher or a clean shutdown. What is
    /// below it survives a power loss whatever the OS wrote back.
    pub recovery_point: u64,
    /// LocalLog's lastFlushedTime: the last flush that moved the recovery point, or the
    /// log's load (the broker's start).
    pub last_flush_ms: TimeMs,
}

impl ReplicaLog {
    pub fn log_end_offset(&self) -> u64 {
        self.records
            .last()
            .map_or(self.log_start_offset, |r| r.offset + 1)
    }

    pub fn record_at(&self, offset: u64) -> Option<&Record> {
        if offset < self.log_start_offset {
            return None;
        }
        self.records.get((offset - self.log_start_offset) as usize)
    }

    /// Records from `from` up to `to` (exclusive), clamped to the log.
    pub fn read(&self, from: u64, to: u64) -> Vec<Record> {
        let start = from.max(self.log_start_offset) - self.log_start_offset;
        let end = to
            .min(self.log_end_offset())
            .saturating_sub(self.log_start_offset);
        self.records.copy_range(start as usize..end as usize)
    }

    /// The batch starting at record index `i` (or holding it): the index past its last
    /// record, and its bytes (DefaultRecordBatch.sizeInBytes over the whole batch).
    fn batch_at(&self, i: usize) -> (usize, u64) {
        let base = self.records[i].batch_base;
        let (mut end, mut bytes) = (i, crate::record::RECORD_BATCH_OVERHEAD);
        // The batch's records before `i` (a read from inside a batch starts at the batch).
        let mut j = i;
        while j > 0 && self.records[j - 1].batch_base == base {
            j -= 1;
            bytes += self.records[j].size_in_bytes();
        }
        while end < self.records.len() && self.records[end].batch_base == base {
            bytes += self.records[end].size_in_bytes();
            end += 1;
        }
        (end, bytes)
    }

    /// LocalLog.read → LogSegment.read up to offset `to` (`maxPosition`: the log end for a
    /// follower, FetchIsolation.LOG_END; the HW for a consumer, HIGH_WATERMARK), with
    /// `max_bytes` and `min_one_message` (KIP-74): the bytes read from the batch holding
    /// `from` are `min(bytes up to to, max)`, where max is `max_bytes`, or that first
    /// batch's size if larger and `min_one_message` ("adjustedMaxSize"). Kafka sends that
    /// slice of the file, whose last batch may be cut off; the reader keeps whole batches
    /// only, so the records are those of the whole batches within the slice. Returns the
    /// records from `from` and the slice's bytes (`records.sizeInBytes`, which the response
    /// limit counts). (A batch that `to` cuts is read up to `to`, counted whole.)
    pub fn read_bytes(
        &self,
        from: u64,
        to: u64,
        max_bytes: u64,
        min_one_message: bool,
    ) -> (Vec<Record>, u64) {
        let to = to.min(self.log_end_offset());
        if from < self.log_start_offset || from >= to {
            return (Vec::new(), 0);
        }
        let stop = (to - self.log_start_offset) as usize;
        let first = (from - self.log_start_offset) as usize;
        let (end, first_bytes) = self.batch_at(first);
        let mut end = end.min(stop);
        let max = if min_one_message {
            max_bytes.max(first_bytes)
        } else {
            max_bytes
        };
        if max < first_bytes {
            // Not even the first batch: a slice of `max` bytes that holds no whole batch.
            return (Vec::new(), max);
        }
        let mut bytes = first_bytes;
        while end < stop {
            let (next, b) = self.batch_at(end);
            if bytes + b > max {
                return (self.records.copy_range(first..end), max);
            }
            bytes += b;
            end = next.min(stop);
        }
        (self.records.copy_range(first..end), bytes)
    }

    /// UnifiedLog.appendAsLeader: assign offsets to a new batch stamped with `epoch`, with
    /// no producer fields (tests write logs with it). Returns (first offset, last offset).
    #[cfg(test)]
    pub fn append_as_leader(&mut self, epoch: i32, values: &[String]) -> (u64, u64) {
        self.append_batch_as_leader(epoch, values, BatchProducer::NONE, &Default::default())
    }

    /// appendAsLeader for a batch with producer fields; the producer state takes the batch
    /// (ProducerStateManager.update).
    pub fn append_batch_as_leader(
        &mut self,
        epoch: i32,
        values: &[String],
        producer: BatchProducer,
        shape: &crate::record::RecordShape,
    ) -> (u64, u64) {
        let base = self.log_end_offset();
        for (i, v) in values.iter().enumerate() {
            let r = Record {
                offset: base + i as u64,
                epoch,
                batch_base: base,
                value: v.clone(),
                producer_id: producer.producer_id,
                producer_epoch: producer.producer_epoch,
                sequence: crate::producer_state::increment_sequence(
                    producer.base_sequence,
                    i as u32,
                ),
                key: shape.key.clone(),
                size: shape.size,
            };
            self.producers.apply(&r);
            self.records.push(r);
        }
        (base, base + values.len() as u64 - 1)
    }

    /// UnifiedLog.appendAsFollower: append batches as the leader wrote them, and record each
    /// batch's epoch in the epoch cache (assignEpochStartOffset(batch.partitionLeaderEpoch,
    /// batch.baseOffset)).
    pub fn append_as_follower(&mut self, records: &[Record]) {
        for r in records {
            debug_assert_eq!(r.offset, self.log_end_offset(), "follower appends in order");
            if r.offset != self.log_end_offset() {
                continue;
            }
            if r.offset == r.batch_base || self.epoch_cache.latest_epoch() != Some(r.epoch) {
                self.epoch_cache.assign(r.epoch, r.batch_base.max(r.offset));
            }
            self.producers.apply(r);
            self.records.push(r.clone());
        }
    }

    /// UnifiedLog.updateHighWatermark: clamp to [log start, LEO].
    pub fn update_high_watermark(&mut self, hw: u64) -> u64 {
        let hw = hw.max(self.log_start_offset).min(self.log_end_offset());
        self.high_watermark = hw;
        hw
    }

    /// UnifiedLog.maybeIncrementHighWatermark: only ever raises it.
    pub fn maybe_increment_high_watermark(&mut self, hw: u64) -> bool {
        if hw > self.high_watermark {
            self.high_watermark = hw.min(self.log_end_offset());
            true
        } else {
            false
        }
    }

    /// UnifiedLog.truncateTo: drop records at and after `offset`; the epoch cache loses the
    /// entries that start there; the HW drops to the new LEO if it was above it.
    pub fn truncate_to(&mut self, offset: u64) -> Option<Truncation> {
        if offset >= self.log_end_offset() {
            // "Always truncate epoch cache since we may have a conflicting epoch entry at the
            // end of the log from the leader. This could happen if this broker was a leader
            // and inserted the first start offset entry, but then failed to append any
            // entries before another leader was elected." (UnifiedLog.truncateTo)
            let leo = self.log_end_offset();
            self.epoch_cache.truncate_from_end(leo);
            return None;
        }
        let offset = offset.max(self.log_start_offset);
        let keep = (offset - self.log_start_offset) as usize;
        let removed = self.records.split_off(keep);
        // UnifiedLog.truncateTo → rebuildProducerState: only needed when an idempotent
        // producer's record went.
        if removed
            .iter()
            .any(|r| r.producer_id != crate::record::NO_PRODUCER_ID)
        {
            self.producers = crate::producer_state::ProducerStateManager::rebuild(&self.records);
        }
        self.epoch_cache.truncate_from_end(offset);
        // LocalLog.updateLogEndOffset: a recovery point past the new end comes down to it.
        self.recovery_point = self.recovery_point.min(offset);
        // The appends that began at or past `offset` are gone with their records.
        while self
            .unwritten
            .last()
            .is_some_and(|&(from, _)| from >= offset)
        {
            self.unwritten.pop();
        }
        let below = (self.high_watermark > offset).then_some(self.high_watermark);
        if self.high_watermark > offset {
            self.high_watermark = offset;
        }
        Some(Truncation {
            to_offset: offset,
            removed,
            below_high_watermark: below,
        })
    }

    /// The OS took an append, from offset `from` to the log end, into its page cache at
    /// `now`: the kernel writes it back `delay_ms` later (Linux's flusher writes the pages
    /// older than `vm.dirty_expire_centisecs`). Appends already written back leave the list.
    pub fn note_append(&mut self, from: u64, now: TimeMs, delay_ms: u64) {
        let written = self
            .unwritten
            .iter()
            .take_while(|(_, t)| t + delay_ms <= now)
            .count();
        self.unwritten.drain(..written);
        if self.unwritten.last().is_none_or(|&(_, t)| t != now) {
            self.unwritten.push((from, now));
        }
    }

    /// What UnifiedLog.append does once an append (`from` to the log end, as leader or
    /// follower) is written: the OS holds its pages (`note_append`, in a run that tracks
    /// them), and "if (localLog.unflushedMessages >= config.flushInterval) flush(false)",
    /// where unflushedMessages is the log end minus the recovery point (LocalLog) and
    /// flushInterval is `log.flush.interval.messages`.
    /// `flush_interval` is the topic's `flush.messages` or the broker's default
    /// (`Topics::flush_messages`).
    pub fn appended(
        &mut self,
        from: u64,
        now: TimeMs,
        config: &crate::config::Config,
        flush_interval: u64,
    ) {
        if config.track_writeback {
            self.note_append(from, now, config.writeback_delay_ms);
        }
        let unflushed = self.log_end_offset().saturating_sub(self.recovery_point);
        if unflushed >= flush_interval {
            self.flush(now);
        }
    }

    /// UnifiedLog.flush up to the log end: only "if (flushOffset > localLog.recoveryPoint)",
    /// the segments are fsynced (nothing is left for a power loss to take) and
    /// LocalLog.markFlushed moves the recovery point and lastFlushedTime.
    pub fn flush(&mut self, now: TimeMs) {
        let end = self.log_end_offset();
        if end > self.recovery_point {
            self.unwritten.clear();
            self.recovery_point = end;
            self.last_flush_ms = now;
        }
    }

    /// The machine lost power at `now`: the records appended less than `delay_ms` ago were
    /// only in the page cache and are gone, so the log ends where the oldest of those
    /// appends began. Kafka's log recovery at the next start finds the shorter file (its
    /// LogLoader truncates the leader-epoch cache and rebuilds the producer state to the
    /// recovered end, as `truncate_to` does). The HW checkpoint is fsynced
    /// (CheckpointFile.write syncs the file), so it survives and may be above the new end.
    pub fn lose_unwritten(&mut self, now: TimeMs, delay_ms: u64) -> Option<Truncation> {
        let &(end, _) = self.unwritten.iter().find(|(_, t)| t + delay_ms > now)?;
        self.unwritten.clear();
        self.truncate_to(end)
    }

    /// The disk is lost: nothing remains.
    pub fn wipe(&mut self) {
        *self = ReplicaLog::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(prefix: &str, n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("{prefix}{i}")).collect()
    }

    #[test]
    fn end_offset_for_follows_leader_epoch_file_cache() {
        // Article 000, example 3: new leader broker 2 has (0, 0) (1, 10), LEO 13.
        let mut c = EpochCache::default();
        c.assign(0, 0);
        c.assign(1, 10);
        assert_eq!(c.end_offset_for(0, 13), (0, 10));
        assert_eq!(c.end_offset_for(1, 13), (1, 13));
        assert_eq!(
            c.end_offset_for(2, 13),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        assert_eq!(c.checkpoint_line(), "0 2 0 0 1 10");
        // An epoch older than any known: the requested epoch ends where the first starts.
        let mut d = EpochCache::default();
        d.assign(3, 20);
        assert_eq!(d.end_offset_for(1, 25), (1, 20));
        // A gap: epoch 1 unknown, floor is 0, which ends where 2 starts.
        let mut g = EpochCache::default();
        g.assign(0, 0);
        g.assign(2, 7);
        assert_eq!(g.end_offset_for(1, 9), (0, 7));
    }

    fn entries(c: &EpochCache) -> Vec<(i32, u64)> {
        c.entries
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    }

    fn cache(assigned: &[(i32, u64)]) -> EpochCache {
        let mut c = EpochCache::default();
        for &(epoch, offset) in assigned {
            c.assign(epoch, offset);
        }
        c
    }

    /// Expectations ported from Kafka's LeaderEpochFileCacheTest (core/src/test/scala/unit/
    /// kafka/server/epoch/LeaderEpochFileCacheTest.scala), one block per Kafka test.
    #[test]
    fn assign_and_end_offset_for_follow_leader_epoch_file_cache_test() {
        // shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned: (2, 9) then
        // (2, 10) keeps 9.
        assert_eq!(entries(&cache(&[(2, 9), (2, 10)])), [(2, 9)]);
        // shouldEnforceMonotonicallyIncreasingStartOffsets: (2, 9) then (3, 9) → [(3, 9)].
        assert_eq!(entries(&cache(&[(2, 9), (3, 9)])), [(3, 9)]);
        // shouldNotUpdateEpochAndStartOffsetIfItDidNotChange: (2, 6), (2, 7) → [(2, 6)].
        let mut c = cache(&[(2, 6)]);
        assert!(
            !c.assign(2, 7),
            "the same epoch at a later offset changes nothing"
        );
        assert_eq!(entries(&c), [(2, 6)]);
        // shouldEnforceMonotonicallyIncreasingEpochs: (1, 5), (2, 6), then (1, 7): the older
        // epoch is not ignored; it wipes every entry it conflicts with.
        let mut c = cache(&[(1, 5), (2, 6)]);
        assert!(c.assign(1, 7));
        assert_eq!(entries(&c), [(1, 7)]);
        assert_eq!(c.latest_epoch(), Some(1));
        assert_eq!(c.end_offset_for(1, 8), (1, 8));
        assert_eq!(
            c.end_offset_for(2, 8),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        // shouldEnforceOffsetsIncreaseMonotonically: (2, 6) then (3, 5) → [(3, 5)].
        assert_eq!(entries(&cache(&[(2, 6), (3, 5)])), [(3, 5)]);
        // shouldTruncateIfMatchingEpochButEarlierStartingOffset: (5, 11), (6, 12), (7, 13),
        // then (7, 12) removes 6 and 7 and leaves (5, 11), (7, 12).
        let c = cache(&[(5, 11), (6, 12), (7, 13), (7, 12)]);
        assert_eq!(entries(&c), [(5, 11), (7, 12)]);
        assert_eq!(c.end_offset_for(5, 0), (5, 12));
        assert_eq!(c.end_offset_for(6, 0), (5, 12));
        // shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch.
        let c = cache(&[(5, 11), (6, 12), (7, 13)]);
        assert_eq!(c.end_offset_for(4, 0), (4, 11));
        // shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch.
        let c = cache(&[(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)]);
        assert_eq!(c.end_offset_for(2, 17), (2, 15));
        // shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested.
        let c = cache(&[(0, 10), (2, 13), (4, 17)]);
        assert_eq!(c.end_offset_for(1, 0), (0, 13));
        assert_eq!(c.end_offset_for(2, 0), (2, 17));
        assert_eq!(c.end_offset_for(3, 0), (2, 17));
        // shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked.
        let c = cache(&[(2, 100)]);
        assert_eq!(
            c.end_offset_for(3, 100),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        // shouldReturnUnsupportedIfNoEpochRecorded, ...AndUndefinedEpochRequested.
        let c = EpochCache::default();
        assert_eq!(
            c.end_offset_for(0, 0),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        let c = cache(&[(2, 11), (3, 12)]);
        assert_eq!(
            c.end_offset_for(UNDEFINED_EPOCH, 5),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        // shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes.
        let mut c = cache(&[(0, 0), (1, 0)]);
        assert_eq!(entries(&c), [(1, 0)]);
        assert_eq!(c.end_offset_for(0, 0), (0, 0));
        c.assign(2, 5);
        assert_eq!(c.end_offset_for(2, 10), (2, 10));
        assert_eq!(c.end_offset_for(1, 10), (1, 5));
        assert_eq!(c.end_offset_for(0, 10), (0, 0));
        // shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages.
        let c = cache(&[
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 3),
            (1, 4),
            (1, 5),
            (2, 6),
            (2, 7),
            (2, 8),
        ]);
        assert_eq!(c.end_offset_for(0, 9), (0, 3));
        assert_eq!(c.end_offset_for(1, 9), (1, 6));
        assert_eq!(c.end_offset_for(2, 9), (2, 9));
        // shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries: truncateFromEnd(8).
        let mut c = cache(&[(2, 6), (3, 8), (4, 11)]);
        c.truncate_from_end(8);
        assert_eq!(entries(&c), [(2, 6)]);
    }

    #[test]
    fn leader_append_follower_append_and_truncate() {
        let mut leader = ReplicaLog::default();
        leader.epoch_cache.assign(0, 0);
        assert_eq!(leader.append_as_leader(0, &values("ok-", 10)), (0, 9));
        assert_eq!(leader.log_end_offset(), 10);
        let mut follower = ReplicaLog::default();
        follower.append_as_follower(&leader.read(0, 10));
        assert_eq!(follower.log_end_offset(), 10);
        assert_eq!(follower.epoch_cache.checkpoint_line(), "0 1 0 0");
        assert_eq!(
            follower.update_high_watermark(25),
            10,
            "HW clamps to the LEO"
        );
        leader.append_as_leader(0, &values("lost-", 5));
        follower.append_as_follower(&leader.read(10, 15));
        let t = follower.truncate_to(10).unwrap();
        assert_eq!(t.removed.len(), 5);
        assert_eq!(t.below_high_watermark, None, "HW 10 is not above offset 10");
        assert_eq!(follower.log_end_offset(), 10);
        assert!(
            follower.truncate_to(10).is_none(),
            "nothing to truncate at the LEO"
        );
        // A leader that assigned an epoch but appended nothing in it: truncating at the LEO
        // still drops that empty epoch's entry.
        follower.epoch_cache.assign(3, 10);
        assert!(follower.truncate_to(12).is_none());
        assert_eq!(follower.epoch_cache.latest_epoch(), Some(0));
        follower.high_watermark = 10;
        let t = follower.truncate_to(4).unwrap();
        assert_eq!(t.below_high_watermark, Some(10));
        assert_eq!(follower.high_watermark, 4);
    }

    #[test]
    fn truncation_rebuilds_the_producer_state_from_what_remains() {
        // UnifiedLog.truncateTo → rebuildProducerState (UnifiedLogTest
        // .testProducerIdMapTruncateTo): a batch truncated away is no longer a duplicate; its
        // retry appends again, and the producer's last sequence is the one that remains.
        use crate::producer_state::ClientBatch;
        let mut log = ReplicaLog::default();
        let p = |seq| BatchProducer {
            producer_id: 5,
            producer_epoch: 0,
            base_sequence: seq,
        };
        log.append_batch_as_leader(0, &values("a", 2), p(0), &Default::default());
        log.append_batch_as_leader(0, &values("b", 2), p(2), &Default::default());
        log.append_as_leader(0, &values("c", 1));
        assert!(matches!(
            log.producers.check_client_batch(5, 0, 2, 3),
            ClientBatch::Duplicate(_)
        ));
        log.truncate_to(2);
        assert_eq!(
            log.producers.check_client_batch(5, 0, 2, 3),
            ClientBatch::Append
        );
        assert_eq!(log.producers.entry(5).unwrap().last_seq(), 1);
        // A follower that replicates the remaining records builds the same state.
        let mut follower = ReplicaLog::default();
        follower.append_as_follower(&log.read(0, 2));
        assert_eq!(follower.producers, log.producers);
    }

    #[test]
    fn a_power_loss_keeps_only_what_was_written_back() {
        let mut log = ReplicaLog::default();
        let delay = 1_000;
        // Three appends at 0, 600 and 1 200 ms; a truncation drops the last one's record,
        // and an append at 1 300 writes offset 3 again.
        for (at, v) in [(0, "a"), (600, "b"), (1_200, "c")] {
            let from = log.log_end_offset();
            log.append_as_leader(0, &[v.to_string(), format!("{v}2")]);
            log.note_append(from, at, delay);
        }
        // The append at 0 was written back by 1 200 and left the list.
        assert_eq!(log.unwritten, [(2, 600), (4, 1_200)]);
        log.truncate_to(5);
        assert_eq!(
            log.unwritten,
            [(2, 600), (4, 1_200)],
            "offset 4 is still there"
        );
        log.truncate_to(4);
        assert_eq!(
            log.unwritten,
            [(2, 600)],
            "the append at 4 went with its records"
        );
        log.append_as_leader(0, &["d".to_string()]);
        log.note_append(4, 1_300, delay);
        // At 1 650 the append at 600 is on disk: the log ends where the one at 1 300 began.
        let mut a = log.clone();
        let t = a.lose_unwritten(1_650, delay).expect("a loss");
        assert_eq!((t.to_offset, a.log_end_offset()), (4, 4));
        assert!(a.unwritten.is_empty());
        // At 1 500 the append at 600 is not: offsets 2.. go.
        let t = log.lose_unwritten(1_500, delay).expect("a loss");
        assert_eq!((t.to_offset, t.removed.len()), (2, 3));
        // Everything written back: nothing to lose.
        let mut b = ReplicaLog::default();
        b.append_as_leader(0, &["x".to_string()]);
        b.note_append(0, 0, delay);
        assert!(b.lose_unwritten(1_000, delay).is_none());
        assert_eq!(b.log_end_offset(), 1);
    }

    /// UnifiedLog.append's flush by `log.flush.interval.messages` (unflushed = log end −
    /// recovery point, counted in messages whatever the OS wrote back), LocalLog's recovery
    /// point under a truncation, and what a power loss then takes.
    #[test]
    fn an_append_that_reaches_the_flush_interval_flushes_the_log() {
        let config = crate::config::Config {
            track_writeback: true,
            ..Default::default()
        };
        let mut log = ReplicaLog::default();
        // Batches of two: 2 unflushed after the first, 4 ≥ 3 after the second: flushed.
        let (first, _) = log.append_as_leader(0, &values("a", 2));
        log.appended(first, 100, &config, 3);
        assert_eq!((log.recovery_point, log.unwritten.len()), (0, 1));
        let (second, _) = log.append_as_leader(0, &values("b", 2));
        log.appended(second, 200, &config, 3);
        assert_eq!((log.recovery_point, log.last_flush_ms), (4, 200));
        assert!(
            log.unwritten.is_empty(),
            "flushed: nothing for a power loss"
        );
        let (third, _) = log.append_as_leader(0, &values("c", 2));
        log.appended(third, 300, &config, 3);
        assert_eq!(log.recovery_point, 4);
        // A truncation below the recovery point brings it down (updateLogEndOffset).
        let mut t = log.clone();
        t.truncate_to(3);
        assert_eq!(t.recovery_point, 3);
        // A flush with nothing new changes nothing, not even lastFlushedTime.
        t.flush(400);
        assert_eq!((t.recovery_point, t.last_flush_ms), (3, 200));
        // A power loss takes the records after the recovery point still in the page cache.
        let loss = log.lose_unwritten(1_000, 30_000).expect("a loss");
        assert_eq!((loss.to_offset, log.log_end_offset()), (4, 4));
    }

    #[test]
    fn leader_hw_only_rises() {
        let mut l = ReplicaLog::default();
        l.append_as_leader(0, &values("v", 5));
        assert!(l.maybe_increment_high_watermark(3));
        assert!(!l.maybe_increment_high_watermark(2));
        assert_eq!(l.high_watermark, 3);
    }
}

#[cfg(test)]
mod read_bytes_tests {
    use super::*;
    use crate::record::RecordShape;

    /// A log of four batches of three records with 1024-byte values: each record is
    /// DefaultRecord.sizeInBytes = 1 + 1 + 1 + 1 + 2 + 1024 + 1 = 1031, with its varint
    /// length 2: 1033 bytes; a batch 61 + 3 × 1033 = 3160 bytes.
    fn log() -> ReplicaLog {
        let mut log = ReplicaLog::default();
        let shape = RecordShape {
            key: None,
            size: Some(1024),
        };
        for b in 0..4 {
            let values: Vec<String> = (0..3).map(|i| format!("v{}", b * 3 + i)).collect();
            log.append_batch_as_leader(0, &values, BatchProducer::NONE, &shape);
        }
        log
    }

    fn offsets(records: &[Record]) -> Vec<u64> {
        records.iter().map(|r| r.offset).collect()
    }

    /// LogSegment.read: whole batches within the limit; the slice's bytes are
    /// `min(bytes to the log end, max)`.
    #[test]
    fn a_read_takes_the_whole_batches_within_its_bytes() {
        let log = log();
        // 7000 bytes: batches 1 and 2 (6320), not 3 (9480); Kafka's slice is 7000 bytes,
        // its last 680 a cut-off batch the reader drops.
        let (records, bytes) = log.read_bytes(0, 12, 7_000, true);
        assert_eq!(offsets(&records), [0, 1, 2, 3, 4, 5]);
        assert_eq!(bytes, 7_000);
        // Exactly two batches' bytes: both, and the slice ends there.
        let (records, bytes) = log.read_bytes(0, 12, 6_320, true);
        assert_eq!((records.len(), bytes), (6, 6_320));
        // More than the log: everything, 4 × 3160 bytes.
        let (records, bytes) = log.read_bytes(3, 12, 1_048_576, true);
        assert_eq!((offsets(&records)[0], records.len(), bytes), (3, 9, 9_480));
        // At the log end: nothing.
        assert_eq!(log.read_bytes(12, 12, 1_048_576, true), (vec![], 0));
    }

    /// KIP-74: with minOneMessage a first batch larger than the limit still comes, alone
    /// ("adjustedMaxSize = max(maxSize, startOffsetAndSize.size)"); without it, nothing whole
    /// fits and the slice is the limit's bytes.
    #[test]
    fn a_first_batch_larger_than_the_limit_comes_alone_with_min_one_message() {
        let log = log();
        let (records, bytes) = log.read_bytes(6, 12, 1_000, true);
        assert_eq!((offsets(&records), bytes), (vec![6, 7, 8], 3_160));
        let (records, bytes) = log.read_bytes(6, 12, 1_000, false);
        assert_eq!((records.len(), bytes), (0, 1_000));
        // adjustedMaxSize 0: empty records.
        assert_eq!(log.read_bytes(6, 12, 0, false), (vec![], 0));
    }

    /// A consumer reads up to the HW (FetchIsolation.HIGH_WATERMARK: `maxPosition` is the
    /// HW's): with the HW at 6, two batches (6320 bytes) whatever the limit above.
    #[test]
    fn a_read_stops_at_its_max_position() {
        let log = log();
        let (records, bytes) = log.read_bytes(0, 6, 1_048_576, true);
        assert_eq!((records.len(), bytes), (6, 6_320));
        assert_eq!(log.read_bytes(6, 6, 1_048_576, true), (vec![], 0));
    }
}
