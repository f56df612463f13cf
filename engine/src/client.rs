//! Clients: a producer (acks, retries, retry.backoff.ms and retry.backoff.max.ms (KIP-580,
//! KIP-951), request.timeout.ms, delivery.timeout.ms with Kafka's retriable errors) and a
//! consumer that reads from the leader below the HW, keeps a position, and notices when an
//! unclean election rewrote what it had read.
//!
//! The idempotent producer (`enable.idempotence`, on by default): a producer id and epoch
//! (one per producer), a sequence number per batch assigned once when the batch is first
//! drained and counted per partition (each partition's TxnPartitionEntry), retries of the
//! same batch with the same producer id, epoch and base sequence, and the TransactionManager's
//! rules for OUT_OF_ORDER_SEQUENCE_NUMBER, unresolved sequences and epoch bumps, each on the
//! batch's partition (clients/.../producer/internals/{TransactionManager,TxnPartitionMap,
//! TxnPartitionEntry,Sender,RecordAccumulator}.java). A produce action's batches go to the
//! partition it names, its key's, or its topic's sticky partitions (`partitioner.rs`).
//!
//! Simplifications (said in the UI): clients always know the controller's current leader, as
//! if their metadata were refreshed instantly (the router below hands it to each call, the
//! one place this is done), though the producer's refreshes are timed for what they set off
//! (a batch without a leader looks again, a backing-off batch goes to a new leader:
//! [`MetadataRefresh`]); InitProducerId is not sent: the producer has
//! producer id 0 and epoch 0 at once (the first id a new cluster's controller hands out),
//! and bumps its epoch locally, as Kafka's idempotent producer does (KIP-360).

use crate::effect::{ClientTimer, Scheduled};
use crate::effect::{Ctx, Effect};
use crate::event::{Event, ProduceOutcome};
use crate::log::BatchProducer;
use crate::network::{Outstanding, Payload};
use crate::partitioner::{append_records, BuiltInPartitioner};
use crate::producer_state::increment_sequence;
use crate::record::{RecordShape, NO_PRODUCER_ID, NO_SEQUENCE};
use crate::scenario::ProduceSpec;
use crate::types::{Acks, BrokerId, ErrorCode, Node, TimeMs, Tp};
use crate::vec_map::{VecMap, VecSet};

/// The node of the producer and the consumer.
pub const PRODUCER: Node = Node::Client(1);
pub const CONSUMER: Node = Node::Client(2);

/// What the producer's metadata holds of a partition (Metadata.LeaderAndEpoch): its leader,
/// if it has one, and its leader epoch, which a MetadataResponse carries with or without a
/// leader (KRaftMetadataCache.getPartitionMetadata: LEADER_NOT_AVAILABLE with the epoch);
/// `epoch` is None for a partition the metadata does not hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LeaderAndEpoch {
    pub leader: Option<BrokerId>,
    pub epoch: Option<i32>,
}

/// The leader a client knows of a partition (its metadata), handed in by the simulator.
pub(crate) type LeaderOf<'a> = &'a dyn Fn(Tp) -> LeaderAndEpoch;

/// Extra time the client waits beyond request.timeout.ms before giving up on its own, so the
/// broker's REQUEST_TIMED_OUT (from the purgatory) normally arrives first.
const CLIENT_TIMEOUT_SLACK_MS: u64 = 50;

/// How long after sending a request the producer gives up on it: request.timeout.ms, the
/// round trip, and the slack above.
pub fn request_deadline_ms(config: &crate::Config) -> TimeMs {
    config.request_timeout_ms + config.network_latency_ms * 2 + CLIENT_TIMEOUT_SLACK_MS
}

/// The producer's retry backoff after `attempts` earlier retries, as the lowest and highest
/// value it can draw: ExponentialBackoff(retry.backoff.ms, RETRY_BACKOFF_EXP_BASE 2,
/// retry.backoff.max.ms, RETRY_BACKOFF_JITTER 0.2).backoff(attempts) (KIP-580; the
/// RecordAccumulator's and the Metadata's refreshBackoff). Its term,
/// initial·2^min(attempts, log2(max/initial)), is min(initial·2^attempts, max) in integers;
/// the backoff is ⌊r·term⌋ for r uniform in [0.8, 1.2), at most max (the caller's ceiling,
/// [`backoff_timer`]). With retry.backoff.ms at or above retry.backoff.max.ms the backoff is
/// a static max, without jitter (the constructor's initialInterval = min(max, initial) and
/// expMax 0; CommonClientConfigs.warnDisablingExponentialBackoff warns, above it, that "a
/// static backoff with value retry.backoff.max.ms will be applied").
pub(crate) fn retry_backoff(
    retry_backoff_ms: u64,
    retry_backoff_max_ms: u64,
    attempts: u32,
) -> (u64, u64) {
    let max = retry_backoff_max_ms;
    let initial = retry_backoff_ms.min(max);
    if initial == max {
        return (max, max);
    }
    let term = initial
        .checked_shl(attempts)
        .filter(|t| t >> attempts == initial && *t <= max)
        .unwrap_or(max);
    (term * 4 / 5, (term * 6).div_ceil(5) - 1)
}

/// A timer at `from` plus the backoff after `attempts` ([`retry_backoff`]), its jitter drawn
/// from the seeded generator when applied, and never later than `from` plus
/// retry.backoff.max.ms (ExponentialBackoff.backoff's Math.min). A timer whose every draw
/// falls before `now` is due at once, without a draw.
fn backoff_timer(ctx: &Ctx, from: TimeMs, attempts: u32, scheduled: Scheduled) -> Effect {
    let max = ctx.config.retry_backoff_max_ms;
    let (lowest, highest) = retry_backoff(ctx.config.retry_backoff_ms, max, attempts);
    if from + highest.min(max) <= ctx.now {
        return Effect::SetTimer {
            at: ctx.now,
            scheduled,
        };
    }
    Effect::SetTimerJittered {
        at: from + lowest,
        max_phase: highest - lowest,
        at_most: from + max,
        scheduled,
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub values: Vec<String>,
    pub created_ms: TimeMs,
    pub retries_done: u32,
    pub request_id: Option<u64>,
    pub target: Option<BrokerId>,
    /// An idempotent batch's producer id, epoch and base sequence, set when it is first
    /// sent and kept by every retry (ProducerBatch.setProducerState); None before the first
    /// send and for a producer without idempotence.
    pub batch: Option<BatchProducer>,
    /// ProducerBatch.sequenceHasBeenReset: an epoch bump rewrote the sequence.
    pub sequence_reset: bool,
    /// Which batch this is (the producer numbers its batches), so the batch's expiry timer
    /// finds it and no later one.
    pub batch_id: u64,
    /// When the request in flight (`request_id`) was sent.
    pub sent_ms: TimeMs,
    /// The error of the last failed attempt, and when it came (for the view: the batch
    /// is being retried).
    pub last_error: Option<(ErrorCode, TimeMs)>,
    /// ProducerBatch.currentLeaderEpoch: the newest leader epoch of the partition the
    /// accumulator saw while the batch was its partition's head (None before the first look).
    pub current_leader_epoch: Option<i32>,
    /// ProducerBatch.attemptsWhenLeaderLastChanged: `retries_done` when
    /// `current_leader_epoch` last moved.
    pub attempts_when_leader_last_changed: u32,
    /// RecordAccumulator.shouldBackoff: the batch waits out its retry backoff; a
    /// [`ClientTimer::ProducerRetryBackoff`] ends it, or a new leader (KIP-951).
    pub backing_off: bool,
}

impl Attempt {
    /// ProducerBatch.maybeUpdateLeaderEpoch: a newer leader epoch than the batch's is
    /// recorded, with the attempt it came at. RecordAccumulator calls it with the metadata's
    /// epoch of the partition (MetadataSnapshot.leaderEpochFor) for the head of each
    /// partition's deque, at each readiness check (partitionReady) and drain
    /// (drainBatchesForOneNode), whether the partition has a leader or not.
    pub(crate) fn maybe_update_leader_epoch(&mut self, latest: Option<i32>) {
        if let Some(latest) = latest {
            if self.current_leader_epoch.is_none_or(|c| c < latest) {
                self.attempts_when_leader_last_changed = self.retries_done;
                self.current_leader_epoch = Some(latest);
            }
        }
    }

    /// ProducerBatch.hasLeaderChangedForTheOngoingRetry: a retry whose partition got a newer
    /// leader epoch since it last failed (KIP-951), which skips the backoff
    /// (RecordAccumulator.shouldBackoff: `!hasLeaderChanged && shouldWaitMore`).
    pub(crate) fn has_leader_changed_for_the_ongoing_retry(&self) -> bool {
        self.retries_done >= 1 && self.retries_done == self.attempts_when_leader_last_changed
    }

    /// ProducerBatch.lastSequence.
    pub fn last_sequence(&self) -> i32 {
        self.batch.map_or(NO_SEQUENCE, |b| {
            increment_sequence(b.base_sequence, self.values.len().saturating_sub(1) as u32)
        })
    }
}

/// One produce action: its batches, sent one after another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProduceJob {
    /// The partition its batches go to (ProducerBatch.topicPartition), resolved by the
    /// simulator when the records were sent.
    pub tp: Tp,
    pub acks: Acks,
    pub retries: u32,
    /// Whether this produce's batches are idempotent (`Config::idempotence_for`).
    pub idempotent: bool,
    pub to: Option<BrokerId>,
    /// The records' key and value size (the action's).
    pub shape: RecordShape,
    /// The batches not yet sent, each with its partition, the next one last (a `Vec` popped
    /// from its end: a `VecDeque` is more code in the wasm). `tp` becomes the partition of
    /// the batch taken from here.
    pub pending: Vec<(Tp, Vec<String>)>,
    pub current: Option<Attempt>,
}

/// How a produce action's keyless records without a partition find theirs: the topic's
/// partitions' leaders as the producer's metadata has them, and the partitioner's stream of
/// the seeded generator (ThreadLocalRandom's part).
pub(crate) struct Sticky<'a> {
    pub leaders: &'a [Option<BrokerId>],
    pub random: &'a mut crate::rng::Rng,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Producer {
    /// Each topic's built-in sticky partitioner (RecordAccumulator.TopicInfo), made at the
    /// topic's first keyless record without a partition.
    pub(crate) partitioners: VecMap<u16, BuiltInPartitioner>,
    pub jobs: VecMap<u64, ProduceJob>,
    pub next_job: u64,
    /// request id → job id
    pub requests: VecMap<u64, u64>,
    /// The idempotent producer's TransactionManager state.
    pub idempotence: Idempotence,
    /// Jobs waiting for a free in-flight slot or for the drain rules of the idempotent
    /// producer; every response wakes them.
    pub blocked: Vec<u64>,
    /// The next batch's id (`Attempt::batch_id`).
    pub next_batch: u64,
    /// Requests whose batch expired while they were in flight (Sender.getExpiredInflightBatches).
    /// The request stays in flight on its connection until its response, a reset or its
    /// timeout, and its response still reaches the TransactionManager.
    pub expired_requests: VecMap<u64, ExpiredRequest>,
    /// Its metadata refreshes: what they have seen, and the one requested.
    pub metadata: MetadataRefresh,
    /// How many refresh timers the producer set (the next one's id), over its whole life:
    /// a timer of a producer closed since is told apart.
    pub metadata_refreshes: u64,
}

/// The producer's metadata refreshes (ProducerMetadata, Metadata). The producer's metadata is
/// the controller's at every look (see the module's simplifications); what the refreshes
/// time is what Kafka's producer does when one comes: a batch without a leader is looked at
/// again (Sender.sendProducerData asks for a refresh with `metadata.requestUpdate(false)`),
/// and a batch backing off whose partition got a new leader goes at once (KIP-951). They are
/// requested as Kafka requests them, after a disconnect (NetworkClient's
/// handleServerDisconnect: a reset connection or a request timeout) and after an error that
/// is an InvalidMetadataException (Sender.completeBatch), and backed off as
/// Metadata.timeToAllowUpdate does. Kafka's metadata requests can fail (failedUpdate counts
/// `attempts`, also for a disconnect while an update is due); here a refresh is answered at
/// once and never fails, so `attempts` stays 0 and its term is backoff(0) after each refresh,
/// and what grows is the equivalent responses' term.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataRefresh {
    /// ProducerMetadata.topics: the topics the producer has sent to (by index; Kafka drops
    /// one unused for `metadata.max.idle.ms`, 5 minutes; not here).
    pub topics: VecSet<u16>,
    /// Metadata.lastSeenLeaderEpochs of those topics' partitions.
    pub last_seen_leader_epochs: VecMap<Tp, i32>,
    /// Metadata.lastRefreshMs, which is also lastSuccessfulRefreshMs (no refresh fails).
    pub last_refresh_ms: TimeMs,
    /// Metadata.equivalentResponseCount: refreshes in a row that brought no newer leader
    /// epoch.
    pub equivalent_responses: u32,
    /// The jobs whose batch waits for a leader from the next refresh.
    pub waiting: Vec<u64>,
    /// The refresh requested (Metadata.requestUpdate), by its timer's id.
    pub requested: Option<u64>,
}

/// What answers a Produce request: its response, or the error the client makes of a reset
/// connection or a timeout.
#[derive(Debug, Clone, Copy)]
struct Response {
    request_id: u64,
    error: ErrorCode,
    base: Option<u64>,
    last: Option<u64>,
    /// The connection was lost (reset, or closed at the request's timeout), which asks for a
    /// metadata refresh (NetworkClient's DefaultMetadataUpdater.handleServerDisconnect).
    disconnected: bool,
}

/// Sender.completeBatch: an error that is an InvalidMetadataException asks for a metadata
/// refresh (`metadata.requestUpdate(false)`), whether the batch is retried or not.
fn is_invalid_metadata(error: ErrorCode) -> bool {
    use ErrorCode::*;
    matches!(
        error,
        NOT_LEADER_OR_FOLLOWER
            | LEADER_NOT_AVAILABLE
            | FENCED_LEADER_EPOCH
            | UNKNOWN_TOPIC_OR_PARTITION
            | NETWORK_EXCEPTION
    )
}

/// A request whose batch was expired (failed with a TimeoutException) while it was in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredRequest {
    pub target: BrokerId,
    /// The batch's partition (ProducerBatch.topicPartition): its response still reaches that
    /// partition's TxnPartitionEntry.
    pub tp: Tp,
    /// The batch's ProducerBatch.lastSequence (NO_SEQUENCE without idempotence).
    pub last_sequence: i32,
    /// `attempts < retries` when it expired: the adjustSequenceNumbers of a later failBatch.
    pub retries_left: bool,
}

/// TransactionManager for a producer without transactional.id: the producer's id and epoch
/// (`producerIdAndEpoch`, one per producer), whether and for which partitions an epoch bump
/// is asked for, and per partition its `TxnPartitionMap` entry and its unresolved sequence
/// (`partitionsWithUnresolvedSequences`). The batches in flight of a partition
/// (TxnPartitionEntry.inflightBatchesBySequence) are not stored twice: they are the jobs of
/// that partition whose batch has a sequence (`Producer::in_flight_sequences`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotence {
    /// NO_PRODUCER_ID until the first idempotent send.
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// epochBumpRequired.
    pub epoch_bump_required: bool,
    /// partitionsToRewriteSequences: the partitions that asked for the bump
    /// (requestEpochBumpForPartition), whose batches in flight the bump rewrites.
    pub partitions_to_rewrite: VecSet<Tp>,
    /// txnPartitionMap: TxnPartitionMap.getOrCreate makes an entry at a partition's first
    /// drained batch.
    pub partitions: VecMap<Tp, TxnPartitionEntry>,
    /// partitionsWithUnresolvedSequences: per partition, the sequence after a batch that
    /// expired after it was sent, so whether the broker has it is unknown.
    pub unresolved: VecMap<Tp, i32>,
}

/// TxnPartitionEntry: the sequence state of one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnPartitionEntry {
    /// TxnPartitionEntry.producerIdAndEpoch: the id and epoch the partition's sequences count
    /// under (ProducerIdAndEpoch.NONE when the entry is made). After an epoch bump that did
    /// not rewrite this partition it is stale (hasStaleProducerIdAndEpoch) until its batches
    /// in flight are done and the next batch starts its sequences again.
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// TxnPartitionEntry.nextSequence.
    pub next_sequence: i32,
    /// TxnPartitionEntry.lastAckedSequence (NO_LAST_ACKED_SEQUENCE_NUMBER is -1).
    pub last_acked_sequence: i32,
}

/// TxnPartitionEntry.NO_LAST_ACKED_SEQUENCE_NUMBER.
const NO_LAST_ACKED_SEQUENCE_NUMBER: i32 = -1;

impl Default for TxnPartitionEntry {
    /// The TxnPartitionEntry constructor.
    fn default() -> Self {
        TxnPartitionEntry {
            producer_id: NO_PRODUCER_ID,
            producer_epoch: crate::record::NO_PRODUCER_EPOCH,
            next_sequence: 0,
            last_acked_sequence: NO_LAST_ACKED_SEQUENCE_NUMBER,
        }
    }
}

impl Default for Idempotence {
    fn default() -> Self {
        Idempotence {
            producer_id: NO_PRODUCER_ID,
            producer_epoch: crate::record::NO_PRODUCER_EPOCH,
            epoch_bump_required: false,
            partitions_to_rewrite: VecSet::default(),
            partitions: VecMap::default(),
            unresolved: VecMap::default(),
        }
    }
}

impl Idempotence {
    /// The entry of `tp` as TxnPartitionMap.getOrCreate would give it, read only (a partition
    /// never drained reads as a new entry).
    pub fn entry(&self, tp: Tp) -> TxnPartitionEntry {
        self.partitions.get(&tp).copied().unwrap_or_default()
    }

    /// TxnPartitionMap.getOrCreate.
    fn entry_mut(&mut self, tp: Tp) -> &mut TxnPartitionEntry {
        if !self.partitions.contains_key(&tp) {
            self.partitions.insert(tp, TxnPartitionEntry::default());
        }
        &mut self.partitions[&tp]
    }

    /// TransactionManager.hasStaleProducerIdAndEpoch: the partition's sequences count under
    /// another producer id or epoch than the producer's.
    fn has_stale_producer_id_and_epoch(&self, tp: Tp) -> bool {
        let e = self.entry(tp);
        (e.producer_id, e.producer_epoch) != (self.producer_id, self.producer_epoch)
    }

    /// TransactionManager.markSequenceUnresolved for a batch of `tp` whose last sequence is
    /// `last`.
    fn mark_sequence_unresolved(&mut self, tp: Tp, last: i32) {
        let next = last.wrapping_add(1);
        let sequence = self.unresolved.get(&tp).map_or(next, |&v| v.max(next));
        self.unresolved.insert(tp, sequence);
    }

    /// TransactionManager.isNextSequence: `sequence` follows the partition's last acked one.
    fn is_next_sequence(&self, tp: Tp, sequence: i32) -> bool {
        i64::from(sequence) - i64::from(self.entry(tp).last_acked_sequence) == 1
    }

    /// TransactionManager.handleCompletedBatch → TxnPartitionMap.maybeUpdateLastAckedSequence:
    /// the partition's last acked sequence only rises (a partition without an entry keeps
    /// none).
    fn maybe_update_last_acked_sequence(&mut self, tp: Tp, sequence: i32) {
        if let Some(e) = self.partitions.get_mut(&tp) {
            if sequence > e.last_acked_sequence {
                e.last_acked_sequence = sequence;
            }
        }
    }

    /// TransactionManager.requestEpochBumpForPartition.
    fn request_epoch_bump_for_partition(&mut self, tp: Tp) {
        self.epoch_bump_required = true;
        self.partitions_to_rewrite.insert(tp);
    }

    /// TransactionManager.canRetry for OUT_OF_ORDER_SEQUENCE_NUMBER on a batch of `tp` (the
    /// idempotent producer retries it always; it asks for an epoch bump for the partition when
    /// the gap is real).
    fn can_retry_out_of_order(&mut self, tp: Tp, a: &Attempt) -> bool {
        let base = a.batch.map_or(NO_SEQUENCE, |b| b.base_sequence);
        let unresolved = self.unresolved.get(&tp).copied();
        if unresolved.is_none() && (a.sequence_reset || !self.is_next_sequence(tp, base)) {
            return true;
        }
        // isNextSequenceForUnresolvedPartition.
        if unresolved.is_none() || unresolved == Some(base) {
            self.request_epoch_bump_for_partition(tp);
        }
        true
    }
}

impl Producer {
    /// RecordAccumulator.shouldStopDrainBatchesForPartition for the job's current batch, on
    /// the job's partition: a new batch waits while the partition has batches in flight under
    /// a stale producer id or epoch, or while its sequence is unresolved; a retried batch waits
    /// until it is the partition's first in flight (firstInFlightSequence: "This effectively
    /// reduces our in flight request count to 1"). Another partition's sequences hold nothing
    /// back. (Not modelled: Kafka's drainBatchesForOneNode `break`s out of the node's loop at a
    /// partition that must stop, and its next drain of that node starts there again, so the
    /// same leader's other partitions wait with it; here each batch is sent on its own.)
    fn should_stop_draining(&self, job: u64) -> bool {
        let Some(j) = self.jobs.get(&job) else {
            return false;
        };
        let Some(a) = j.current.as_ref() else {
            return false;
        };
        let tp = j.tp;
        match a.batch {
            None => {
                (self.in_flight_sequences(tp).next().is_some()
                    && self.idempotence.has_stale_producer_id_and_epoch(tp))
                    || self.idempotence.unresolved.contains_key(&tp)
            }
            Some(b) => self
                .first_in_flight(tp)
                .is_some_and(|first| first.base_sequence != b.base_sequence),
        }
    }

    /// RecordAccumulator.drainBatchesForOneNode takes only the head of the partition's deque
    /// and skips the partition while the head backs off; a retried batch goes back to the head
    /// (reenqueue). Jobs are appended in the order they were produced and the deques are per
    /// partition (RecordAccumulator.getOrCreateDeque), so the job's batch waits while an older
    /// job's batch for the same partition is in the accumulator (not in flight): waiting,
    /// backing off or without a leader.
    fn behind_an_older_batch(&self, job: u64) -> bool {
        let Some(tp) = self.jobs.get(&job).map(|j| j.tp) else {
            return false;
        };
        self.jobs
            .range(..job)
            .any(|(_, j)| j.tp == tp && j.current.as_ref().is_some_and(|a| a.request_id.is_none()))
    }

    /// The batches of partition `tp` with a sequence that are not yet done: its
    /// TxnPartitionEntry's inflightBatchesBySequence (in flight or waiting to be retried), as
    /// (job, the batch's producer id, epoch and base sequence).
    fn in_flight_sequences(&self, tp: Tp) -> impl Iterator<Item = (u64, BatchProducer)> + '_ {
        self.jobs.iter().filter_map(move |(&id, j)| {
            if j.tp != tp {
                return None;
            }
            Some((id, j.current.as_ref()?.batch?))
        })
    }

    /// TxnPartitionEntry.nextBatchBySequence: the first of the partition's batches in flight in
    /// PRODUCER_BATCH_COMPARATOR's order (producer id, epoch, base sequence).
    fn first_in_flight(&self, tp: Tp) -> Option<BatchProducer> {
        let key = |b: &BatchProducer| (b.producer_id, b.producer_epoch, b.base_sequence);
        let mut first: Option<BatchProducer> = None;
        for (_, b) in self.in_flight_sequences(tp) {
            if first.is_none_or(|f| key(&b) < key(&f)) {
                first = Some(b);
            }
        }
        first
    }

    /// TxnPartitionEntry.startSequencesAtBeginning for `tp`: the partition's batches in flight
    /// get sequences from 0 under the producer's id and epoch, in PRODUCER_BATCH_COMPARATOR's
    /// order (resetSequenceNumbers), and the entry counts on from there under that id and
    /// epoch with nothing acked.
    fn start_sequences_at_beginning(&mut self, tp: Tp) {
        // (By insertion: a handful of batches, and no sort instantiated in the wasm for it.)
        let key = |b: &BatchProducer| (b.producer_id, b.producer_epoch, b.base_sequence);
        let mut order: Vec<(BatchProducer, u64)> = vec![];
        for (job, b) in self.in_flight_sequences(tp) {
            let at = order
                .iter()
                .position(|(o, _)| key(o) > key(&b))
                .unwrap_or(order.len());
            order.insert(at, (b, job));
        }
        let (pid, epoch) = (
            self.idempotence.producer_id,
            self.idempotence.producer_epoch,
        );
        let mut next = 0i32;
        for (_, job) in order {
            if let Some(a) = self.jobs.get_mut(&job).and_then(|j| j.current.as_mut()) {
                // ProducerBatch.resetProducerState.
                a.batch = Some(BatchProducer {
                    producer_id: pid,
                    producer_epoch: epoch,
                    base_sequence: next,
                });
                a.sequence_reset = true;
                next = increment_sequence(next, a.values.len() as u32);
            }
        }
        *self.idempotence.entry_mut(tp) = TxnPartitionEntry {
            producer_id: pid,
            producer_epoch: epoch,
            next_sequence: next,
            last_acked_sequence: NO_LAST_ACKED_SEQUENCE_NUMBER,
        };
    }

    /// TransactionManager.maybeResolveSequences and bumpIdempotentEpochAndResetIdIfNeeded,
    /// run before each send as Sender.runOnce does. Returns the new producer id and epoch
    /// when the epoch was bumped.
    fn resolve_and_bump(&mut self) -> Option<(i64, i16)> {
        // maybeResolveSequences: a partition whose batches in flight are all done is resolved
        // if its last acked sequence is just before its next one, and asks for a bump if not.
        let mut index = 0;
        while let Some((&tp, _)) = self.idempotence.unresolved.iter().nth(index) {
            if self.in_flight_sequences(tp).next().is_some() {
                index += 1;
                continue;
            }
            let next = self.idempotence.entry(tp).next_sequence;
            if !self.idempotence.is_next_sequence(tp, next) {
                // "No inflight batches remaining for {}, ... Going to bump epoch and reset
                // sequence numbers."
                self.idempotence.request_epoch_bump_for_partition(tp);
            }
            self.idempotence.unresolved.remove(&tp);
        }
        if !self.idempotence.epoch_bump_required {
            return None;
        }
        // bumpIdempotentProducerEpoch.
        let i = &mut self.idempotence;
        if i.producer_epoch == i16::MAX {
            // resetIdempotentProducerId, then a new InitProducerId: the next id.
            i.producer_id += 1;
            i.producer_epoch = 0;
        } else {
            i.producer_epoch += 1;
        }
        // "When the epoch is bumped, rewrite all in-flight sequences for the partition(s) that
        // triggered the epoch bump": the other partitions keep theirs under the old epoch and
        // start again at 0 with their next new batch, once none is in flight
        // (RecordAccumulator.drainBatchesForOneNode → maybeUpdateProducerIdAndEpoch).
        for tp in std::mem::take(&mut self.idempotence.partitions_to_rewrite) {
            self.start_sequences_at_beginning(tp);
            self.idempotence.unresolved.remove(&tp);
        }
        self.idempotence.epoch_bump_required = false;
        Some((
            self.idempotence.producer_id,
            self.idempotence.producer_epoch,
        ))
    }
}

/// The consumer, assigned its partitions without a group: as SubscriptionState keeps an
/// assigned partition's state (TopicPartitionState.position), it keeps a position per
/// partition, and what it read per partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consumer {
    /// The next offset to read, per partition; a partition has none until its first read.
    pub positions: VecMap<Tp, u64>,
    /// What the consumer read, per partition: offset → (leader epoch, value).
    pub seen: VecMap<Tp, VecMap<u64, (i32, String)>>,
    pub requests: VecMap<u64, ConsumerRequest>,
    /// `client.rack` (KIP-392), sent in each fetch's ClientMetadata.
    pub client_rack: Option<String>,
    /// Each partition's preferred read replica and when it expires
    /// (SubscriptionState.TopicPartitionState.preferredReadReplica and its expire time).
    pub preferred_read_replicas: VecMap<Tp, (BrokerId, TimeMs)>,
}

/// The clients' `metadata.max.age.ms` default (CommonClientConfigs: 5 minutes): how long
/// a consumer's preferred read replica holds (FetchCollector.updatePartitionState: "set to
/// expire at" now + `metadata.metadataExpireMs()`); a producer's refresh this long after its
/// last is a periodic one, which starts the equivalent responses' count afresh
/// (Metadata.timeToAllowUpdate).
pub const METADATA_MAX_AGE_MS: u64 = 300_000;

/// What the consumer is told of a partition when it picks a node to fetch from: its leader
/// (and the leader's log start offset), and whether a broker is online for it
/// (`Cluster.nodeIfOnline`: a replica of the partition whose broker is not fenced,
/// KRaftMetadataCache.getOfflineReplicas).
pub(crate) struct ConsumerView {
    pub leader: Option<PartitionLeader>,
    /// The partition's replicas that are online.
    pub online: Vec<BrokerId>,
}

/// A consumer fetch waiting for its response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRequest {
    /// The partition it reads.
    pub tp: Tp,
    pub max_records: u32,
    /// The broker it went to.
    pub target: BrokerId,
    /// The fetch offset it asked for.
    pub offset: u64,
    /// Sent to the partition's preferred read replica rather than its leader.
    pub to_read_replica: bool,
}

/// Most records the consumer remembers, over all its partitions.
pub const MAX_SEEN: usize = 100_000;

/// The producer's handlers: each takes the [`Ctx`] and touches only the producer's state.
impl Producer {
    /// KafkaProducer.send for each record of a produce action: the records appended to
    /// batches ([`append_records`]) of partition `tp` (the one the action names or its key's),
    /// or, with `sticky`, of `tp`'s topic's sticky partition; one job per partition, in the
    /// order of its first batch, each sent at once (the sender drains every partition), or
    /// with `one_by_one` one job whose batches go one after another.
    pub(crate) fn on_produce(
        &mut self,
        ctx: &mut Ctx,
        spec: &ProduceSpec,
        tp: Tp,
        sticky: Option<Sticky<'_>>,
        shape: RecordShape,
    ) {
        let acks = spec.acks.0;
        let retries = spec.retries.unwrap_or(ctx.config.retries);
        let idempotent = match ctx.config.idempotence_for(acks, retries) {
            Ok(i) => i,
            Err(message) => {
                // KafkaProducer's constructor throws: nothing is sent.
                ctx.metrics.produce_errors += 1;
                ctx.metrics.record_errors +=
                    spec.values.len() as u64 + u64::from(spec.count.unwrap_or(0));
                ctx.emit(Event::ProduceResult {
                    acks,
                    tp: None,
                    outcome: ProduceOutcome::ConfigException { message },
                });
                return;
            }
        };
        // KafkaProducer.waitOnMetadata: metadata.add(topic), kept for the refreshes.
        self.metadata.topics.insert(tp.topic);
        let batch_size = u64::from(ctx.config.batch_size);
        let single = [Some(0)];
        let (fixed, leaders, random) = match sticky {
            Some(s) => (None, s.leaders, Some(s.random)),
            None => (Some(0), &single[..], None),
        };
        if fixed.is_none() && !self.partitioners.contains_key(&tp.topic) {
            let p = BuiltInPartitioner::for_batch_size(batch_size);
            self.partitioners.insert(tp.topic, p);
        }
        // A partition named or keyed: the partitioner is not asked (`fixed`).
        let mut unused = BuiltInPartitioner::for_batch_size(1);
        let partitioner = match fixed {
            None => self.partitioners.get_mut(&tp.topic).unwrap_or(&mut unused),
            Some(_) => &mut unused,
        };
        let mut no_draws = crate::rng::Rng::new(0);
        let batches = append_records(
            partitioner,
            fixed,
            spec.values(),
            &shape,
            batch_size,
            spec.one_by_one,
            leaders,
            random.unwrap_or(&mut no_draws),
        );
        // One job per partition (one for all with one_by_one), in the order of their first
        // batch, each with its batches, the next one last.
        let mut jobs: Vec<ProduceJob> = Vec::new();
        for (partition, values) in batches {
            let batch_tp = match fixed {
                Some(_) => tp,
                None => Tp {
                    topic: tp.topic,
                    partition: partition as u16,
                },
            };
            let job = if spec.one_by_one {
                jobs.first_mut()
            } else {
                jobs.iter_mut().find(|j| j.tp == batch_tp)
            };
            match job {
                Some(j) => j.pending.push((batch_tp, values)),
                None => jobs.push(ProduceJob {
                    tp: batch_tp,
                    acks,
                    retries,
                    idempotent,
                    to: spec.to,
                    shape: shape.clone(),
                    pending: vec![(batch_tp, values)],
                    current: None,
                }),
            }
        }
        for mut job in jobs {
            job.pending.reverse();
            let id = self.next_job;
            self.next_job += 1;
            self.jobs.insert(id, job);
            ctx.set_timer(
                ctx.now,
                Scheduled::Client(ClientTimer::ProducerSend { job: id }),
            );
        }
    }

    /// One of the producer's timers fired. `leader_of` is the leader the producer knows of a
    /// partition (its metadata).
    pub(crate) fn on_timer(&mut self, ctx: &mut Ctx, leader_of: LeaderOf<'_>, t: ClientTimer) {
        match t {
            ClientTimer::ProducerSend { job } => self.send_batch(ctx, leader_of, job),
            ClientTimer::ProducerRequestTimeout { job, request_id } => {
                let current = self
                    .jobs
                    .get(&job)
                    .and_then(|j| j.current.as_ref())
                    .and_then(|a| a.request_id);
                if current == Some(request_id) {
                    let response = Response {
                        request_id,
                        error: ErrorCode::REQUEST_TIMED_OUT,
                        base: None,
                        last: None,
                        disconnected: true,
                    };
                    self.result(ctx, leader_of, job, response);
                } else if self.expired_requests.contains_key(&request_id) {
                    self.late_result(ctx, request_id, ErrorCode::REQUEST_TIMED_OUT, None, true);
                }
            }
            ClientTimer::ProducerRetryBackoff {
                job,
                batch,
                attempts,
            } => {
                // The backoff this timer timed is still on (KIP-951 may have ended it).
                let attempt = self.jobs.get_mut(&job).and_then(|j| j.current.as_mut());
                if let Some(a) = attempt
                    .filter(|a| a.batch_id == batch && a.retries_done == attempts && a.backing_off)
                {
                    a.backing_off = false;
                    self.send_batch(ctx, leader_of, job);
                }
            }
            ClientTimer::ProducerMetadataRefresh { id } => {
                self.on_metadata_refresh(ctx, leader_of, id);
            }
            ClientTimer::ProducerExpire { job, batch } => {
                let this_batch = self
                    .jobs
                    .get(&job)
                    .and_then(|j| j.current.as_ref())
                    .is_some_and(|a| a.batch_id == batch);
                if this_batch {
                    self.expire_batch(ctx, job);
                }
            }
        }
    }

    /// Sender.sendProducerData's expiry of one batch that reached `delivery.timeout.ms`
    /// (RecordAccumulator.expiredBatches for a batch waiting or backing off,
    /// getExpiredInflightBatches for one in flight): failBatch with a TimeoutException and
    /// adjustSequenceNumbers false (no epoch bump), and markSequenceUnresolved when the batch
    /// was in retry (`inRetry`: sent and failed at least once), so no new batch is drained
    /// until the ones in flight are resolved.
    fn expire_batch(&mut self, ctx: &mut Ctx, job_id: u64) {
        let now = ctx.now;
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        let acks = job.acks;
        let retries = job.retries;
        let tp = job.tp;
        let Some(attempt) = job.current.take() else {
            return;
        };
        if let Some(request_id) = attempt.request_id {
            // The request stays on its connection; only the batch is done.
            self.requests.remove(&request_id);
            if let Some(target) = attempt.target {
                self.expired_requests.insert(
                    request_id,
                    ExpiredRequest {
                        target,
                        tp,
                        last_sequence: attempt.last_sequence(),
                        retries_left: attempt.retries_done < retries,
                    },
                );
            }
        }
        if attempt.batch.is_some() && attempt.retries_done > 0 {
            let last = attempt.last_sequence();
            self.idempotence.mark_sequence_unresolved(tp, last);
        }
        // Sender.sendProducerData's message, as Kafka writes it (no space after the colon).
        let outcome = ProduceOutcome::Expired {
            records: attempt.values.len(),
            tp: ctx.tp_name(tp),
            elapsed_ms: now - attempt.created_ms,
        };
        ctx.metrics.produce_errors += 1;
        ctx.metrics.record_errors += attempt.values.len() as u64;
        ctx.emit(Event::ProduceResult {
            acks,
            tp: ctx.tp_label(tp),
            outcome,
        });
        ctx.set_timer(
            now,
            Scheduled::Client(ClientTimer::ProducerSend { job: job_id }),
        );
        self.wake(ctx);
    }

    /// The response (or reset, or timeout) of a request whose batch had expired in flight.
    /// Sender.completeBatch still runs: a success reaches
    /// TransactionManager.handleCompletedBatch (the last acked sequence moves on) while the
    /// batch stays failed (ProducerBatch.done logs that it succeeded after it had failed); an
    /// error cannot be retried (the batch is done) and goes to handleFailedBatch with
    /// adjustSequenceNumbers = attempts < retries, which asks for an epoch bump.
    fn late_result(
        &mut self,
        ctx: &mut Ctx,
        request_id: u64,
        error: ErrorCode,
        base: Option<u64>,
        disconnected: bool,
    ) {
        let Some(late) = self.expired_requests.remove(&request_id) else {
            return;
        };
        // A lost connection or an InvalidMetadataException asks for a metadata refresh, as
        // for a batch not expired.
        if disconnected || is_invalid_metadata(error) {
            self.request_metadata_update(ctx);
        }
        let idempotent = late.last_sequence != NO_SEQUENCE;
        if error == ErrorCode::NONE {
            if idempotent {
                self.idempotence
                    .maybe_update_last_acked_sequence(late.tp, late.last_sequence);
            }
            ctx.emit(Event::ProduceSucceededAfterExpiry {
                tp: ctx.tp_name(late.tp),
                base_offset: base,
            });
        } else if idempotent
            && (error == ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER || late.retries_left)
        {
            self.idempotence.request_epoch_bump_for_partition(late.tp);
        }
        self.wake(ctx);
    }

    /// Metadata.requestUpdate(false) (for a batch without a leader, a lost connection or an
    /// InvalidMetadataException error): the next refresh, unless one is requested already,
    /// at Metadata.timeToAllowUpdate: the larger of
    /// lastRefreshMs + backoff(attempts - 1 or 0) (`attempts` is 0: no refresh fails here)
    /// and lastRefreshMs + backoff(equivalentResponseCount - 1) (0 for a count of 0), drawn
    /// once from the larger term's range, or at once if that time has passed. A refresh
    /// `metadata.max.age.ms` after the last is a periodic one: the count starts afresh.
    fn request_metadata_update(&mut self, ctx: &mut Ctx) {
        if self.metadata.requested.is_some() {
            return;
        }
        let id = self.metadata_refreshes;
        self.metadata_refreshes += 1;
        let m = &mut self.metadata;
        m.requested = Some(id);
        if ctx.now >= m.last_refresh_ms + METADATA_MAX_AGE_MS {
            m.equivalent_responses = 0;
        }
        let attempts = m.equivalent_responses.saturating_sub(1);
        let scheduled = Scheduled::Client(ClientTimer::ProducerMetadataRefresh { id });
        let timer = backoff_timer(ctx, m.last_refresh_ms, attempts, scheduled);
        ctx.effects.push(timer);
    }

    /// A metadata refresh's response (Metadata.update, with the engine's metadata: the
    /// controller's at this moment): lastRefreshMs is now, equivalentResponseCount goes up
    /// by one, and back to 0 if a partition of the producer's topics shows a leader epoch
    /// newer than the last seen or one not seen before (updateLatestMetadata); then the
    /// sender looks at its batches again: each one that waited for a leader.
    fn on_metadata_refresh(&mut self, ctx: &mut Ctx, leader_of: LeaderOf<'_>, id: u64) {
        if self.metadata.requested != Some(id) {
            return;
        }
        let m = &mut self.metadata;
        m.requested = None;
        m.last_refresh_ms = ctx.now;
        m.equivalent_responses = m.equivalent_responses.saturating_add(1);
        for &topic in &m.topics {
            let count = ctx
                .topics
                .topics
                .get(usize::from(topic))
                .map_or(0, |t| t.partitions.len());
            for partition in 0..count as u16 {
                let tp = Tp { topic, partition };
                let Some(epoch) = leader_of(tp).epoch else {
                    // A partition without a leader epoch: remembered no more.
                    m.last_seen_leader_epochs.remove(&tp);
                    m.equivalent_responses = 0;
                    continue;
                };
                match m.last_seen_leader_epochs.get(&tp) {
                    Some(&seen) if epoch < seen => {}
                    Some(&seen) => {
                        if epoch > seen {
                            m.equivalent_responses = 0;
                        }
                        m.last_seen_leader_epochs.insert(tp, epoch);
                    }
                    None => {
                        m.equivalent_responses = 0;
                        m.last_seen_leader_epochs.insert(tp, epoch);
                    }
                }
            }
        }
        for job in std::mem::take(&mut self.metadata.waiting) {
            ctx.set_timer(
                ctx.now,
                Scheduled::Client(ClientTimer::ProducerSend { job }),
            );
        }
        self.end_backoffs_for_new_leaders(ctx, leader_of);
    }

    /// The sender's readiness check after a metadata refresh (RecordAccumulator.partitionReady
    /// → ProducerBatch.maybeUpdateLeaderEpoch) finds each backing-off batch whose partition
    /// got a newer leader epoch, and its backoff ends (KIP-951: shouldBackoff is false when
    /// hasLeaderChangedForTheOngoingRetry).
    fn end_backoffs_for_new_leaders(&mut self, ctx: &mut Ctx, leader_of: LeaderOf<'_>) {
        let mut ended = Vec::new();
        for (&job, j) in self.jobs.iter_mut() {
            let Some(a) = j.current.as_mut().filter(|a| a.backing_off) else {
                continue;
            };
            a.maybe_update_leader_epoch(leader_of(j.tp).epoch);
            if a.has_leader_changed_for_the_ongoing_retry() {
                a.backing_off = false;
                ended.push(job);
            }
        }
        for job in ended {
            ctx.set_timer(
                ctx.now,
                Scheduled::Client(ClientTimer::ProducerSend { job }),
            );
        }
    }

    /// Schedules a send for every job that waited for a response.
    fn wake(&mut self, ctx: &mut Ctx) {
        for job in std::mem::take(&mut self.blocked) {
            ctx.set_timer(
                ctx.now,
                Scheduled::Client(ClientTimer::ProducerSend { job }),
            );
        }
    }

    fn send_batch(&mut self, ctx: &mut Ctx, leader_of: LeaderOf<'_>, job_id: u64) {
        if let Some((pid, epoch)) = self.resolve_and_bump() {
            // TransactionManager.setProducerIdAndEpoch's log line.
            ctx.emit(Event::ProducerIdSet {
                producer_id: pid,
                epoch,
            });
        }
        let now = ctx.now;
        let delivery_timeout = ctx.config.delivery_timeout_ms;
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        if job.current.is_none() {
            let Some((tp, values)) = job.pending.pop() else {
                self.jobs.remove(&job_id);
                return;
            };
            job.tp = tp;
            let batch_id = self.next_batch;
            self.next_batch += 1;
            job.current = Some(Attempt {
                values,
                created_ms: now,
                retries_done: 0,
                request_id: None,
                target: None,
                batch: None,
                sequence_reset: false,
                batch_id,
                sent_ms: now,
                last_error: None,
                current_leader_epoch: None,
                attempts_when_leader_last_changed: 0,
                backing_off: false,
            });
            ctx.set_timer(
                now + delivery_timeout,
                Scheduled::Client(ClientTimer::ProducerExpire {
                    job: job_id,
                    batch: batch_id,
                }),
            );
        }
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        let acks = job.acks;
        let to = job.to;
        let tp = job.tp;
        let Some(attempt) = job.current.as_mut() else {
            return;
        };
        // In flight, or backing off (RecordAccumulator.shouldBackoff: not drained).
        if attempt.request_id.is_some() || attempt.backing_off {
            return;
        }
        if now >= attempt.created_ms + delivery_timeout {
            // Its expiry timer is due at this very time (or the batch is older).
            self.expire_batch(ctx, job_id);
            return;
        }
        let metadata = leader_of(tp);
        // RecordAccumulator.partitionReady and drainBatchesForOneNode, for the head of the
        // partition's deque: the metadata's leader epoch is the batch's if newer.
        if !self.behind_an_older_batch(job_id) {
            if let Some(a) = self.jobs.get_mut(&job_id).and_then(|j| j.current.as_mut()) {
                a.maybe_update_leader_epoch(metadata.epoch);
            }
        }
        // Sender.sendProducerData: the partition's leader in the producer's metadata.
        let Some(target) = to.or(metadata.leader) else {
            // No leader in the metadata: the batch waits (not a retry) for a metadata
            // refresh (RecordAccumulator.ready's unknownLeaderTopics: metadata.requestUpdate).
            if !self.metadata.waiting.contains(&job_id) {
                self.metadata.waiting.push(job_id);
            }
            self.request_metadata_update(ctx);
            return;
        };
        // NetworkClient.canSendMoreRequests: max.in.flight.requests.per.connection.
        let max_in_flight = ctx.config.max_in_flight_requests_per_connection as usize;
        // Requests whose batch expired are still in flight on the connection.
        let in_flight_to_target = self
            .jobs
            .values()
            .filter_map(|j| j.current.as_ref())
            .filter(|a| a.request_id.is_some() && a.target == Some(target))
            .count()
            + self
                .expired_requests
                .values()
                .filter(|r| r.target == target)
                .count();
        let idempotent = self.jobs[&job_id].idempotent;
        let stop_draining =
            (idempotent && self.should_stop_draining(job_id)) || self.behind_an_older_batch(job_id);
        if in_flight_to_target >= max_in_flight || stop_draining {
            if !self.blocked.contains(&job_id) {
                self.blocked.push(job_id);
            }
            return;
        }
        if idempotent {
            self.set_producer_state(job_id, tp);
        }
        let Some(attempt) = self.jobs.get_mut(&job_id).and_then(|j| j.current.as_mut()) else {
            return;
        };
        let producer = attempt.batch.unwrap_or(BatchProducer::NONE);
        let request_id = ctx.next_request_id();
        attempt.request_id = Some(request_id);
        attempt.target = Some(target);
        attempt.sent_ms = now;
        let values = attempt.values.clone();
        let shape = self.jobs[&job_id].shape.clone();
        self.requests.insert(request_id, job_id);
        let timeout_ms = ctx.config.request_timeout_ms;
        ctx.send(
            PRODUCER,
            Node::Broker(target),
            Payload::Produce {
                tp,
                request_id,
                acks,
                values,
                shape,
                timeout_ms,
                producer,
            },
        );
        if acks == Acks::Zero {
            // acks=0: the producer does not wait for any response.
            let response = Response {
                request_id,
                error: ErrorCode::NONE,
                base: None,
                last: None,
                disconnected: false,
            };
            self.result(ctx, leader_of, job_id, response);
        } else {
            ctx.set_timer(
                now + request_deadline_ms(ctx.config),
                Scheduled::Client(ClientTimer::ProducerRequestTimeout {
                    job: job_id,
                    request_id,
                }),
            );
            // The batch left the accumulator: the next one is the deque's head now.
            if !self.blocked.is_empty() {
                self.wake(ctx);
            }
        }
    }

    /// RecordAccumulator.drainBatchesForOneNode for an idempotent batch drained for the first
    /// time (one without a sequence; a retried batch keeps its own): the producer id and epoch,
    /// the partition's next sequence, and the partition's sequence moves on by the record count.
    fn set_producer_state(&mut self, job_id: u64, tp: Tp) {
        let unsequenced = self
            .jobs
            .get(&job_id)
            .and_then(|j| j.current.as_ref())
            .is_some_and(|a| a.batch.is_none());
        if !unsequenced {
            return;
        }
        let i = &mut self.idempotence;
        if i.producer_id == NO_PRODUCER_ID {
            // InitProducerId, simplified: the first id of a new cluster, epoch 0. (Kafka logs
            // "ProducerId set to 0 with epoch 0" here; the transcript leaves it out and shows
            // the id on each batch instead.)
            i.producer_id = 0;
            i.producer_epoch = 0;
        }
        // TransactionManager.maybeUpdateProducerIdAndEpoch: a partition whose sequences count
        // under a stale id or epoch, with nothing in flight (shouldStopDrainBatchesForPartition
        // made sure), starts again at 0 under the producer's. A partition's first batch too:
        // its entry starts with no producer id (TxnPartitionEntry's constructor).
        if self.idempotence.has_stale_producer_id_and_epoch(tp)
            && self.in_flight_sequences(tp).next().is_none()
        {
            self.start_sequences_at_beginning(tp);
        }
        let Some(attempt) = self.jobs.get_mut(&job_id).and_then(|j| j.current.as_mut()) else {
            return;
        };
        let i = &mut self.idempotence;
        let entry = i.entry_mut(tp);
        // ProducerBatch.setProducerState with TransactionManager.sequenceNumber(tp), then
        // incrementSequenceNumber(tp, recordCount).
        let base_sequence = entry.next_sequence;
        entry.next_sequence = increment_sequence(base_sequence, attempt.values.len() as u32);
        attempt.batch = Some(BatchProducer {
            producer_id: i.producer_id,
            producer_epoch: i.producer_epoch,
            base_sequence,
        });
    }

    fn result(&mut self, ctx: &mut Ctx, leader_of: LeaderOf<'_>, job_id: u64, response: Response) {
        let Response {
            request_id,
            error,
            base,
            last,
            disconnected,
        } = response;
        let now = ctx.now;
        if disconnected {
            self.request_metadata_update(ctx);
        }
        self.requests.remove(&request_id);
        let delivery_timeout = ctx.config.delivery_timeout_ms;
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        let tp = job.tp;
        let acks = job.acks;
        let retries = job.retries;
        let Some(attempt) = job.current.as_mut() else {
            return;
        };
        if attempt.request_id != Some(request_id) {
            return;
        }
        attempt.request_id = None;
        let waited = now - attempt.created_ms;
        let idempotent = attempt.batch.is_some();
        let last_sequence = attempt.last_sequence();
        let out_of_order = error == ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER;
        // Sender.canRetry: the idempotent producer retries OUT_OF_ORDER_SEQUENCE_NUMBER
        // (TransactionManager.canRetry); other errors by RetriableException.
        let retriable = error.is_retriable() || (idempotent && out_of_order);
        let retries_left = attempt.retries_done < retries;
        // Sender.canRetry: !batch.hasReachedDeliveryTimeout(deliveryTimeoutMs, now). A batch
        // that is retried is expired by its timer if the deadline comes while it backs off.
        let in_time = now < attempt.created_ms + delivery_timeout;
        if error == ErrorCode::NONE {
            let outcome = match acks {
                Acks::Zero => ProduceOutcome::Sent {
                    records: attempt.values.len(),
                },
                _ => ProduceOutcome::Ok {
                    offsets: base.zip(last),
                    waited_ms: waited,
                },
            };
            job.current = None;
            // handleCompletedBatch → maybeUpdateLastAckedSequence of the batch's partition.
            if idempotent {
                self.idempotence
                    .maybe_update_last_acked_sequence(tp, last_sequence);
            }
            ctx.metrics.produce_ok += 1;
            if acks == Acks::All {
                ctx.metrics.acks_all_latencies_ms.push(waited);
                if ctx.metrics.acks_all_latencies_ms.len() > 1000 {
                    ctx.metrics.acks_all_latencies_ms.remove(0);
                }
            }
            ctx.emit(Event::ProduceResult {
                acks,
                tp: ctx.tp_label(tp),
                outcome,
            });
        } else if retriable && retries_left && in_time {
            if idempotent && out_of_order {
                self.idempotence.can_retry_out_of_order(tp, attempt);
            }
            attempt.retries_done += 1;
            attempt.last_error = Some((error, now));
            ctx.metrics.record_retries += attempt.values.len() as u64;
            let attempts_left = retries - attempt.retries_done;
            ctx.emit(Event::ProduceRetry {
                acks,
                tp: ctx.tp_name(tp),
                attempts_left,
                error,
            });
            // RecordAccumulator.reenqueue puts the batch back at its deque's head, and the
            // sender's next readiness check (partitionReady, at once) looks at it with the
            // metadata's leader epoch; for NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH the
            // Sender has already taken the new leader from the response
            // (handleProduceResponse → metadata.updatePartitionLeadership, KIP-951).
            attempt.maybe_update_leader_epoch(leader_of(tp).epoch);
            let attempts = attempt.retries_done;
            if attempt.has_leader_changed_for_the_ongoing_retry() {
                // KIP-951: a new leader, no backoff.
                ctx.set_timer(
                    now,
                    Scheduled::Client(ClientTimer::ProducerSend { job: job_id }),
                );
            } else {
                // RecordAccumulator.shouldBackoff: the batch waits
                // retryBackoff.backoff(attempts - 1), drawn (KIP-580).
                attempt.backing_off = true;
                let batch = attempt.batch_id;
                let scheduled = Scheduled::Client(ClientTimer::ProducerRetryBackoff {
                    job: job_id,
                    batch,
                    attempts,
                });
                let timer = backoff_timer(ctx, now, attempts - 1, scheduled);
                ctx.effects.push(timer);
            }
            if is_invalid_metadata(error) {
                self.request_metadata_update(ctx);
            }
            self.wake(ctx);
            return;
        } else {
            // handleFailedBatch: OutOfOrderSequenceException, or a failure with retries left
            // (adjustSequenceNumbers), asks for an epoch bump for the batch's partition
            // (requestEpochBumpForPartition); a batch that exhausted its retries may or may not
            // be in the log, so its sequence stays.
            if idempotent && (out_of_order || retries_left) {
                self.idempotence.request_epoch_bump_for_partition(tp);
            }
            // A NOT_ENOUGH_REPLICAS_AFTER_APPEND batch is on the leader's log at `base`.
            let written_at = match error {
                ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND => base,
                _ => None,
            };
            ctx.metrics.produce_errors += 1;
            ctx.metrics.record_errors += attempt.values.len() as u64;
            job.current = None;
            ctx.emit(Event::ProduceResult {
                acks,
                tp: ctx.tp_label(tp),
                outcome: ProduceOutcome::Error { error, written_at },
            });
            if is_invalid_metadata(error) {
                self.request_metadata_update(ctx);
            }
        }
        ctx.set_timer(
            now,
            Scheduled::Client(ClientTimer::ProducerSend { job: job_id }),
        );
        self.wake(ctx);
    }

    /// KafkaProducer.close(Duration.ZERO): the Sender is closed forcefully and
    /// RecordAccumulator.abortIncompleteBatches fails every batch not yet done, sent or not
    /// ("Producer is closed forcefully."). A request in flight may still be written by its
    /// broker; its answer is ignored. The application's next send comes from a new producer:
    /// the next producer id, epoch 0, sequences from 0. With nothing pending, nothing is
    /// logged.
    pub(crate) fn on_close(&mut self, ctx: &mut Ctx) {
        let jobs = std::mem::take(&mut self.jobs);
        for job in jobs.values() {
            let current = job.current.as_ref().map(|a| (job.tp, &a.values));
            for (tp, values) in current
                .into_iter()
                .chain(job.pending.iter().rev().map(|(tp, values)| (*tp, values)))
            {
                ctx.metrics.produce_errors += 1;
                ctx.metrics.record_errors += values.len() as u64;
                ctx.emit(Event::ProduceResult {
                    acks: job.acks,
                    tp: ctx.tp_label(tp),
                    outcome: ProduceOutcome::ClosedForcefully {
                        records: values.len(),
                    },
                });
            }
        }
        self.requests.clear();
        self.expired_requests.clear();
        self.blocked.clear();
        // The next producer's Metadata is a new one (its refresh timer ids go on counting).
        self.metadata = MetadataRefresh::default();
        // The next producer has an accumulator of its own: each topic's sticky partition is
        // chosen afresh (RecordAccumulator.topicInfoMap is the producer's).
        self.partitioners.clear();
        let id = self.idempotence.producer_id;
        self.idempotence = Idempotence::default();
        if id != NO_PRODUCER_ID {
            self.idempotence.producer_id = id + 1;
            self.idempotence.producer_epoch = 0;
        }
    }

    /// A message to the producer: the answer to one of its Produce requests, or the reset of
    /// the connection it went on.
    pub(crate) fn on_message(&mut self, ctx: &mut Ctx, leader_of: LeaderOf<'_>, payload: Payload) {
        match payload {
            // NetworkClient: the connection to the broker was reset. The producer's in-flight
            // batch fails with NETWORK_EXCEPTION (Sender.handleProduceResponse, disconnected),
            // a retriable error: it is retried after retry.backoff.ms, with fresh metadata.
            Payload::ConnectionReset {
                request: Outstanding::Produce { request_id },
            } => {
                if let Some(&job) = self.requests.get(&request_id) {
                    let response = Response {
                        request_id,
                        error: ErrorCode::NETWORK_EXCEPTION,
                        base: None,
                        last: None,
                        disconnected: true,
                    };
                    self.result(ctx, leader_of, job, response);
                } else {
                    self.late_result(ctx, request_id, ErrorCode::NETWORK_EXCEPTION, None, true);
                }
            }
            Payload::ProduceResponse {
                request_id,
                tp: _,
                error,
                base_offset,
                last_offset,
            } => {
                if let Some(&job) = self.requests.get(&request_id) {
                    let response = Response {
                        request_id,
                        error,
                        base: base_offset,
                        last: last_offset,
                        disconnected: false,
                    };
                    self.result(ctx, leader_of, job, response);
                } else {
                    self.late_result(ctx, request_id, error, base_offset, false);
                }
            }
            _ => {}
        }
    }
}

impl Consumer {
    /// KafkaConsumer.poll of partition `tp`, once: one Fetch to the node it reads from
    /// ([`Consumer::select_read_replica`]: the partition's leader it is told of, or its
    /// preferred read replica), from the partition's position (the log start offset before
    /// its first read, as auto.offset.reset=earliest). `from_beginning`: seekToBeginning of
    /// that partition.
    pub(crate) fn on_consume(
        &mut self,
        ctx: &mut Ctx,
        view: &ConsumerView,
        max_records: Option<u32>,
        from_beginning: bool,
        tp: Tp,
    ) {
        if from_beginning {
            self.positions.remove(&tp);
        }
        self.fetch(ctx, view, max_records.unwrap_or(500), tp);
    }

    /// One Fetch of partition `tp` to the node [`Consumer::select_read_replica`] picks.
    fn fetch(&mut self, ctx: &mut Ctx, view: &ConsumerView, max: u32, tp: Tp) {
        let Some(leader) = view.leader else {
            ctx.emit(Event::ConsumerLeaderNotAvailable {
                tp: ctx.tp_name(tp),
            });
            return;
        };
        let target = self.select_read_replica(ctx, view, tp, leader.broker);
        let offset = self.position(tp).unwrap_or(leader.log_start_offset);
        let request_id = ctx.next_request_id();
        self.requests.insert(
            request_id,
            ConsumerRequest {
                tp,
                max_records: max,
                target,
                offset,
                to_read_replica: target != leader.broker,
            },
        );
        ctx.send(
            CONSUMER,
            Node::Broker(target),
            Payload::ConsumerFetch {
                tp,
                request_id,
                offset,
                max_records: max,
                client_rack: self.client_rack.clone(),
            },
        );
    }

    /// AbstractFetch.selectReadReplica: the preferred read replica while it has not expired
    /// (SubscriptionState.preferredReadReplica: `timeMs > expireTimeMs` clears it) and is
    /// online; one that is not online is cleared ("Note that this condition may happen due
    /// to stale metadata, so we clear preferred replica and refresh metadata") and the
    /// leader is used; with none, the leader.
    fn select_read_replica(
        &mut self,
        ctx: &mut Ctx,
        view: &ConsumerView,
        tp: Tp,
        leader: BrokerId,
    ) -> BrokerId {
        let Some(&(replica, expires_ms)) = self.preferred_read_replicas.get(&tp) else {
            return leader;
        };
        if ctx.now > expires_ms {
            self.preferred_read_replicas.remove(&tp);
            return leader;
        }
        if view.online.contains(&replica) {
            return replica;
        }
        self.preferred_read_replicas.remove(&tp);
        ctx.emit(Event::ConsumerReadReplicaUnset {
            tp: ctx.tp_name(tp),
            replica,
            error: None,
            fetch_offset: self.position(tp).unwrap_or(0),
        });
        leader
    }

    /// SubscriptionState.clearPreferredReadReplica of `tp`, said in the trace when there
    /// was one: FetchCollector.handleInitializeErrors after OFFSET_OUT_OF_RANGE ("Unset the
    /// preferred read replica ... since we got ..."), requestMetadataUpdate after the other
    /// errors, AbstractFetch.handleFetchFailure after a failed request.
    fn clear_preferred_read_replica(
        &mut self,
        ctx: &mut Ctx,
        tp: Tp,
        error: ErrorCode,
        fetch_offset: u64,
    ) -> bool {
        let Some((replica, _)) = self.preferred_read_replicas.remove(&tp) else {
            return false;
        };
        ctx.emit(Event::ConsumerReadReplicaUnset {
            tp: ctx.tp_name(tp),
            replica,
            error: Some(error),
            fetch_offset,
        });
        true
    }

    /// Whether `request_id` is a fetch the consumer still waits for.
    pub(crate) fn awaits(&self, request_id: u64) -> bool {
        self.requests.contains_key(&request_id)
    }

    /// The position of partition `tp` (SubscriptionState.position): None until its first read.
    pub fn position(&self, tp: Tp) -> Option<u64> {
        self.positions.get(&tp).copied()
    }

    /// A message to the consumer: the answer to its fetch, or the reset of its connection.
    /// `view` is what it is told of the partition the message concerns.
    pub(crate) fn on_message(
        &mut self,
        ctx: &mut Ctx,
        view: &dyn Fn(Tp) -> ConsumerView,
        payload: Payload,
    ) {
        match payload {
            Payload::ConnectionReset {
                request: Outstanding::ConsumerFetch { request_id },
            } => {
                if let Some(r) = self.requests.remove(&request_id) {
                    ctx.emit(Event::ConsumerConnectionReset {
                        tp: ctx.tp_label(r.tp),
                        target: r.target,
                    });
                    // AbstractFetch.handleFetchFailure: the session's partitions lose their
                    // preferred read replica.
                    self.clear_preferred_read_replica(
                        ctx,
                        r.tp,
                        ErrorCode::NETWORK_EXCEPTION,
                        r.offset,
                    );
                }
            }
            Payload::ConsumerFetchResponse {
                request_id,
                tp,
                error,
                records,
                high_watermark,
                log_end_offset,
                preferred_read_replica,
                ..
            } => {
                let Some(request) = self.requests.remove(&request_id) else {
                    return;
                };
                debug_assert_eq!(tp, request.tp, "a fetch is answered for its partition");
                if let (ErrorCode::NONE, Some(replica)) = (error, preferred_read_replica) {
                    // FetchCollector.updatePartitionState → tryUpdatingPreferredReadReplica:
                    // a new replica gets a new expiry, the same one keeps its own
                    // (TopicPartitionState.updatePreferredReadReplica). The answer has no
                    // records, and the poll goes on: the next Fetch goes to that replica.
                    let expires_ms = ctx.now + METADATA_MAX_AGE_MS;
                    let same = self
                        .preferred_read_replicas
                        .get(&tp)
                        .is_some_and(|&(r, _)| r == replica);
                    if !same {
                        self.preferred_read_replicas
                            .insert(tp, (replica, expires_ms));
                        ctx.emit(Event::ConsumerPreferredReadReplica {
                            tp: ctx.tp_name(tp),
                            leader: request.target,
                            replica,
                            expires_ms,
                        });
                    }
                    self.fetch(ctx, &view(tp), request.max_records, tp);
                    return;
                }
                self.on_fetch_response(
                    ctx,
                    &request,
                    error,
                    records,
                    high_watermark,
                    log_end_offset,
                );
            }
            _ => {}
        }
    }

    /// The answer to the consumer's fetch of partition `tp`: the records move that partition's
    /// position past the last one; OFFSET_OUT_OF_RANGE moves it to the leader's log end
    /// (auto.offset.reset=latest), as SubscriptionState keeps each partition's own.
    fn on_fetch_response(
        &mut self,
        ctx: &mut Ctx,
        request: &ConsumerRequest,
        error: ErrorCode,
        records: Vec<crate::record::Record>,
        hw: u64,
        leo: u64,
    ) {
        let tp = request.tp;
        let position = self.position(tp).unwrap_or(0);
        // The broker it read from, when that was its preferred read replica (a follower).
        let from = request.to_read_replica.then_some(request.target);
        match error {
            ErrorCode::NONE => {
                let mut seen_count = 0;
                for seen in self.seen.values() {
                    seen_count += seen.len();
                }
                if !records.is_empty() && !self.seen.contains_key(&tp) {
                    self.seen.insert(tp, VecMap::default());
                }
                if let Some(seen) = self.seen.get_mut(&tp) {
                    for r in &records {
                        let known = seen.contains_key(&r.offset);
                        if seen_count < MAX_SEEN || known {
                            seen.insert(r.offset, (r.epoch, r.value.clone()));
                            seen_count += usize::from(!known);
                        }
                    }
                }
                if let (Some(first), Some(last)) = (records.first(), records.last()) {
                    let (first_offset, last_offset) = (first.offset, last.offset);
                    self.positions.insert(tp, last_offset + 1);
                    // The values moved out of the records (no copy of them).
                    let mut values = Vec::with_capacity(records.len());
                    for r in records {
                        values.push(r.value);
                    }
                    ctx.emit(Event::ConsumerRead {
                        tp: ctx.tp_label(tp),
                        first_offset,
                        last_offset,
                        values,
                        position: last_offset + 1,
                        from,
                        broker: request.target,
                    });
                } else {
                    self.positions.insert(tp, position);
                    ctx.emit(Event::ConsumerNoRecords {
                        tp: ctx.tp_label(tp),
                        high_watermark: hw,
                        position,
                        from,
                    });
                }
            }
            // FetchCollector.handleInitializeErrors: OFFSET_OUT_OF_RANGE from a preferred
            // read replica only clears it ("If there's no preferred replica to clear, we're
            // fetching from the leader so handle this error normally").
            ErrorCode::OFFSET_OUT_OF_RANGE
                if self.clear_preferred_read_replica(ctx, tp, error, request.offset) => {}
            ErrorCode::OFFSET_OUT_OF_RANGE => {
                // The first and last offsets read at or past the log end (no Vec of them).
                let (mut first_gone, mut last_gone) = (None, None);
                if let Some(seen) = self.seen.get(&tp) {
                    let mut gone = seen.range(leo..).map(|(o, _)| *o);
                    first_gone = gone.next();
                    last_gone = gone.next_back().or(first_gone);
                }
                let gone = first_gone.zip(last_gone);
                self.positions.insert(tp, leo);
                ctx.emit(Event::ConsumerOffsetOutOfRange {
                    tp: ctx.tp_label(tp),
                    position,
                    log_end_offset: leo,
                    gone,
                });
            }
            other => {
                ctx.emit(Event::ConsumerError {
                    tp: ctx.tp_label(tp),
                    error: other,
                });
                // NOT_LEADER_OR_FOLLOWER and the other errors: requestMetadataUpdate, which
                // clears the preferred read replica.
                self.clear_preferred_read_replica(ctx, tp, other, request.offset);
            }
        }
    }
}

/// What a client is told of the partition's leader, and the leader's log start offset (where
/// a consumer with no position starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionLeader {
    pub broker: BrokerId,
    pub log_start_offset: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::Effect;
    use crate::record::Record;
    use crate::types::{TopicPartition, TP0};
    use crate::Config;

    /// What a node's handler gets besides its own state, over local values.
    type Harness = crate::effect::Locals;

    /// What the consumer is told of a partition: its leader, no replica online.
    fn told(leader: Option<PartitionLeader>) -> ConsumerView {
        ConsumerView {
            leader,
            online: vec![],
        }
    }

    fn untold(_: Tp) -> ConsumerView {
        told(None)
    }

    /// A partition led by `broker` at `epoch`, as the producer's metadata has it.
    fn led_by(broker: BrokerId, epoch: i32) -> LeaderAndEpoch {
        LeaderAndEpoch {
            leader: Some(broker),
            epoch: Some(epoch),
        }
    }

    fn harness() -> Harness {
        Harness::new(Config::default(), "orders", 40)
    }

    fn producer_send(job: u64) -> Effect {
        Effect::SetTimer {
            at: 1_000,
            scheduled: Scheduled::Client(ClientTimer::ProducerSend { job }),
        }
    }

    /// The sticky partitioner's draws from `seed`'s generator, as BuiltInPartitioner.nextPartition
    /// takes them over three partitions with a leader: `toPositive(nextInt()) % 3`, nextInt
    /// being the generator's high 32 bits.
    fn draws(seed: u64, n: usize) -> Vec<u16> {
        let mut r = crate::rng::Rng::new(seed);
        (0..n)
            .map(|_| ((((r.next_u64() >> 32) as u32 as i32) & 0x7fff_ffff) as u32 % 3) as u16)
            .collect()
    }

    /// 31 keyless 1 KiB records (1033 bytes each; batch.size 16384): RecordAccumulator.append
    /// puts 15 in a batch and 15 in a second on the first sticky partition, and the 31st
    /// (which closes the second batch with 31112 bytes produced) on the next partition
    /// drawn (docs: partitioner.rs). One job per partition, each with its batches; a send
    /// timer for each, in the order of their first batch.
    #[test]
    fn a_keyless_produce_spreads_over_the_sticky_partitions_a_job_each() {
        let mut h = harness();
        let mut p = Producer::default();
        let spec = ProduceSpec {
            prefix: Some("v".into()),
            count: Some(31),
            ..ProduceSpec::default()
        };
        let shape = RecordShape {
            key: None,
            size: Some(1024),
        };
        // A seed whose two draws differ: the switch is seen.
        let seed = (0..100)
            .find(|&s| draws(s, 2)[0] != draws(s, 2)[1])
            .expect("a seed");
        let d = draws(seed, 2);
        let mut random = crate::rng::Rng::new(seed);
        let leaders = [Some(1), Some(2), Some(3)];
        let sticky = Sticky {
            leaders: &leaders,
            random: &mut random,
        };
        p.on_produce(&mut h.ctx(1_000), &spec, TP0, Some(sticky), shape.clone());
        assert_eq!(h.take(), vec![producer_send(0), producer_send(1)]);
        let tp = |partition| Tp {
            topic: 0,
            partition,
        };
        let batches = |p: &Producer, job: u64| -> Vec<(Tp, usize)> {
            p.jobs[&job]
                .pending
                .iter()
                .rev()
                .map(|(tp, values)| (*tp, values.len()))
                .collect()
        };
        assert_eq!(batches(&p, 0), [(tp(d[0]), 15), (tp(d[0]), 15)]);
        assert_eq!(batches(&p, 1), [(tp(d[1]), 1)]);
        assert_eq!((p.jobs[&0].tp, p.jobs[&1].tp), (tp(d[0]), tp(d[1])));
        assert_eq!(p.jobs[&1].pending[0].1, ["v31"]);
        // The next action goes on from the partitioner's state: it sticks to d[1].
        let mut random = crate::rng::Rng::new(seed);
        random.next_u64();
        random.next_u64();
        let one = ProduceSpec {
            values: vec!["w".into()],
            ..ProduceSpec::default()
        };
        let sticky = Sticky {
            leaders: &leaders,
            random: &mut random,
        };
        p.on_produce(&mut h.ctx(1_000), &one, TP0, Some(sticky), shape);
        assert_eq!(batches(&p, 2), [(tp(d[1]), 1)]);
    }

    #[test]
    fn a_produce_sends_one_idempotent_batch_to_the_leader_it_is_told_of() {
        // RecordAccumulator.drain: the batch gets the producer id, epoch and base sequence
        // when it is first drained (setProducerState), and the sequence moves on by its
        // record count; Sender then sends it to the partition's leader.
        let mut h = harness();
        let mut p = Producer::default();
        let spec = ProduceSpec {
            values: vec!["a".into(), "b".into()],
            ..ProduceSpec::default()
        };
        p.on_produce(&mut h.ctx(1_000), &spec, TP0, None, RecordShape::default());
        assert_eq!(h.take(), vec![producer_send(0)], "a send at once");

        p.on_timer(
            &mut h.ctx(1_000),
            &|_| led_by(2, 0),
            ClientTimer::ProducerSend { job: 0 },
        );
        let deadline = 1_000 + request_deadline_ms(&h.config);
        assert_eq!(
            h.take(),
            vec![
                Effect::SetTimer {
                    at: 1_000 + h.config.delivery_timeout_ms,
                    scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job: 0, batch: 0 }),
                },
                Effect::Send {
                    from: PRODUCER,
                    to: Node::Broker(2),
                    payload: Payload::Produce {
                        shape: Default::default(),
                        tp: TP0,
                        request_id: 40,
                        acks: Acks::All,
                        values: vec!["a".into(), "b".into()],
                        timeout_ms: h.config.request_timeout_ms,
                        producer: BatchProducer {
                            producer_id: 0,
                            producer_epoch: 0,
                            base_sequence: 0,
                        },
                    },
                },
                Effect::SetTimer {
                    at: deadline,
                    scheduled: Scheduled::Client(ClientTimer::ProducerRequestTimeout {
                        job: 0,
                        request_id: 40,
                    }),
                },
            ]
        );
        assert_eq!(h.next_request_id, 41);
        assert_eq!(p.requests.get(&40), Some(&0));
        assert_eq!(p.idempotence.entry(TP0).next_sequence, 2);
        let a = p.jobs[&0].current.as_ref().unwrap();
        assert_eq!((a.request_id, a.target), (Some(40), Some(2)));
        assert_eq!(
            (a.current_leader_epoch, a.attempts_when_leader_last_changed),
            (Some(0), 0),
            "drainBatchesForOneNode: maybeUpdateLeaderEpoch at the first send, no retry"
        );
    }

    /// No leader at `epoch`, as a MetadataResponse has it (LEADER_NOT_AVAILABLE).
    fn leaderless(epoch: i32) -> impl Fn(Tp) -> LeaderAndEpoch {
        move |_| LeaderAndEpoch {
            leader: None,
            epoch: Some(epoch),
        }
    }

    fn refresh_timer(at: TimeMs, id: u64) -> Effect {
        Effect::SetTimer {
            at,
            scheduled: Scheduled::Client(ClientTimer::ProducerMetadataRefresh { id }),
        }
    }

    #[test]
    fn with_no_leader_the_batch_waits_for_a_metadata_refresh_without_a_retry() {
        // Sender.sendProducerData: a partition with no known leader is not drained, and its
        // topic's metadata is asked for (metadata.requestUpdate(false)); the last refresh (none
        // yet: lastRefreshMs 0) is longer ago than any backoff, so the refresh goes at once
        // (Metadata.timeToAllowUpdate is 0), and its response wakes the batch.
        let mut h = harness();
        let mut p = Producer::default();
        let spec = ProduceSpec {
            values: vec!["a".into()],
            ..ProduceSpec::default()
        };
        p.on_produce(&mut h.ctx(1_000), &spec, TP0, None, RecordShape::default());
        h.take();
        p.on_timer(
            &mut h.ctx(1_000),
            &leaderless(1),
            ClientTimer::ProducerSend { job: 0 },
        );
        assert_eq!(
            h.take(),
            vec![
                Effect::SetTimer {
                    at: 1_000 + h.config.delivery_timeout_ms,
                    scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job: 0, batch: 0 }),
                },
                refresh_timer(1_000, 0),
            ]
        );
        let a = p.jobs[&0].current.as_ref().unwrap();
        assert_eq!((a.request_id, a.retries_done, a.batch), (None, 0, None));
        assert_eq!(
            a.current_leader_epoch,
            Some(1),
            "partitionReady looked at it"
        );
        assert_eq!(h.next_request_id, 40, "no request id taken");
        assert_eq!(
            (p.metadata.waiting.clone(), p.metadata.requested),
            (vec![0], Some(0))
        );

        // The response: the partition's epoch is one the metadata had not seen (the count of
        // equivalent responses starts at 0), and the batch looks again.
        p.on_timer(
            &mut h.ctx(1_000),
            &leaderless(1),
            ClientTimer::ProducerMetadataRefresh { id: 0 },
        );
        assert_eq!(h.take(), vec![producer_send(0)]);
        let m = &p.metadata;
        assert_eq!((m.last_refresh_ms, m.equivalent_responses), (1_000, 0));
        assert_eq!(m.last_seen_leader_epochs.get(&TP0), Some(&1));
        assert_eq!((m.waiting.len(), m.requested), (0, None));

        // Still no leader: the next refresh is allowed backoff(0) after this one, ⌊r·100⌋.
        p.on_timer(
            &mut h.ctx(1_000),
            &leaderless(1),
            ClientTimer::ProducerSend { job: 0 },
        );
        assert_eq!(
            h.take(),
            vec![Effect::SetTimerJittered {
                at: 1_080,
                max_phase: 39,
                at_most: 2_000,
                scheduled: Scheduled::Client(ClientTimer::ProducerMetadataRefresh { id: 1 }),
            }]
        );
        // A refresh timer of a request that is no longer the one (a closed producer's) does
        // nothing.
        p.on_timer(
            &mut h.ctx(1_050),
            &leaderless(1),
            ClientTimer::ProducerMetadataRefresh { id: 0 },
        );
        assert_eq!(h.take(), vec![]);
        assert_eq!(p.metadata.equivalent_responses, 0);
    }

    #[test]
    fn the_metadata_refresh_backs_off_exponentially_while_the_responses_bring_nothing_new() {
        // Metadata.update counts equivalentResponseCount up by one per response, and
        // updateLatestMetadata puts it back to 0 when a partition's leader epoch is newer;
        // timeToAllowUpdate waits backoff(count - 1) after the last refresh (and at least
        // backoff(0): `attempts` is 0). Two batches without a leader share each refresh.
        let mut h = two_partitions();
        // Long enough for the batches to live past a periodic refresh.
        h.config.delivery_timeout_ms = 3_600_000;
        let mut p = Producer::default();
        for (value, tp) in [("a", P0), ("b", P1)] {
            p.on_produce(
                &mut h.ctx(1_000),
                &one_record(value),
                tp,
                None,
                RecordShape::default(),
            );
        }
        h.take();
        p.metadata.last_seen_leader_epochs.insert(P0, 4);
        p.metadata.last_seen_leader_epochs.insert(P1, 4);
        let mut now = 1_000;
        let mut id = p.metadata_refreshes;
        // Each refresh's response, the count it leaves, and the backoff's range then.
        let mut step = |p: &mut Producer, h: &mut Harness, now: TimeMs, epoch: i32| {
            for job in [0, 1] {
                p.on_timer(
                    &mut h.ctx(now),
                    &leaderless(epoch),
                    ClientTimer::ProducerSend { job },
                );
            }
            let timer = h.take();
            p.on_timer(
                &mut h.ctx(now + 2_000),
                &leaderless(epoch),
                ClientTimer::ProducerMetadataRefresh { id },
            );
            assert_eq!(
                h.take(),
                vec![
                    Effect::SetTimer {
                        at: now + 2_000,
                        scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 0 }),
                    },
                    Effect::SetTimer {
                        at: now + 2_000,
                        scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 1 }),
                    },
                ],
                "the response wakes both"
            );
            id += 1;
            (timer, p.metadata.equivalent_responses)
        };
        let jittered = |from: TimeMs, lowest: u64, phase: u64, id: u64| Effect::SetTimerJittered {
            at: from + lowest,
            max_phase: phase,
            at_most: from + 1_000,
            scheduled: Scheduled::Client(ClientTimer::ProducerMetadataRefresh { id }),
        };
        // The first wait: the count is 0 and the last refresh long ago, so at once.
        let (timer, count) = step(&mut p, &mut h, now, 4);
        let expire = |job| Effect::SetTimer {
            at: 1_000 + h.config.delivery_timeout_ms,
            scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job, batch: job }),
        };
        assert_eq!(
            (timer, count),
            (vec![expire(0), refresh_timer(now, 0), expire(1)], 1),
            "one refresh for both"
        );
        now += 2_000;
        let mut seen = vec![];
        for _ in 0..6 {
            let last = p.metadata.last_refresh_ms;
            let (timer, count) = step(&mut p, &mut h, now, 4);
            seen.push((timer.into_iter().next(), count));
            assert_eq!(last, now, "each response is the last refresh");
            now += 2_000;
        }
        let ids: Vec<u64> = (1..7).collect();
        assert_eq!(
            seen,
            [
                (Some(jittered(3_000, 80, 39, ids[0])), 2),
                (Some(jittered(5_000, 160, 79, ids[1])), 3),
                (Some(jittered(7_000, 320, 159, ids[2])), 4),
                (Some(jittered(9_000, 640, 319, ids[3])), 5),
                (Some(jittered(11_000, 800, 399, ids[4])), 6),
                (Some(jittered(13_000, 800, 399, ids[5])), 7),
            ]
        );
        // A response with a newer leader epoch of one partition: the count starts again.
        let (_, count) = step(&mut p, &mut h, now, 5);
        assert_eq!(count, 0);
        assert_eq!(p.metadata.last_seen_leader_epochs.get(&P1), Some(&5));
        // A periodic refresh (metadata.max.age.ms after the last) starts the count afresh.
        p.metadata.equivalent_responses = 6;
        let last = p.metadata.last_refresh_ms;
        p.on_timer(
            &mut h.ctx(last + METADATA_MAX_AGE_MS),
            &leaderless(5),
            ClientTimer::ProducerSend { job: 0 },
        );
        assert_eq!(p.metadata.equivalent_responses, 0);
        assert_eq!(h.take(), vec![refresh_timer(last + METADATA_MAX_AGE_MS, 8)]);
    }

    /// ExponentialBackoffTest.testExponentialBackoff's rule with the producer's values
    /// (CommonClientConfigs: retry.backoff.ms 100, retry.backoff.max.ms 1000, base 2, jitter
    /// 0.2): attempt n waits ⌊r·100·2^n⌋ for r in [0.8, 1.2), the term capped at 1000 from
    /// n = 4 (expMax = log2(10) ≈ 3.32), the value capped at 1000 by the caller's at_most.
    /// retry.backoff.ms at or above the maximum: a static 1000 (warnDisablingExponentialBackoff).
    #[test]
    fn the_retry_backoff_doubles_with_jitter_up_to_retry_backoff_max_ms() {
        let ranges: Vec<(u64, u64)> = (0..6).map(|n| retry_backoff(100, 1_000, n)).collect();
        assert_eq!(
            ranges,
            [
                (80, 119),
                (160, 239),
                (320, 479),
                (640, 959),
                (800, 1_199),
                (800, 1_199)
            ]
        );
        assert_eq!(retry_backoff(100, 1_000, 64), (800, 1_199));
        assert_eq!(retry_backoff(100, 1_000, u32::MAX), (800, 1_199));
        assert_eq!(retry_backoff(1_000, 1_000, 0), (1_000, 1_000));
        assert_eq!(retry_backoff(5_000, 1_000, 3), (1_000, 1_000));
        assert_eq!(retry_backoff(333, 1_000, 1), (532, 799));
        // retry.backoff.max.ms 400: the term stops at 400 from the third retry
        // (expMax = log2(4) = 2).
        let ranges: Vec<(u64, u64)> = (0..4).map(|n| retry_backoff(100, 400, n)).collect();
        assert_eq!(ranges, [(80, 119), (160, 239), (320, 479), (320, 479)]);
        // At or below retry.backoff.ms: a static retry.backoff.max.ms (expMax 0).
        assert_eq!(retry_backoff(100, 100, 0), (100, 100));
        assert_eq!(retry_backoff(500, 300, 3), (300, 300));
    }

    /// The response to request `request_id` of job 0's batch, as the producer's metadata
    /// has the partition then.
    fn respond(
        p: &mut Producer,
        h: &mut Harness,
        now: TimeMs,
        (request_id, error): (u64, ErrorCode),
        metadata: LeaderAndEpoch,
    ) {
        p.requests.insert(request_id, 0);
        p.on_message(
            &mut h.ctx(now),
            &|_| metadata,
            produce_response(request_id, TP0, error, None),
        );
    }

    fn retry_line(h: &Harness, attempts_left: u32, error: ErrorCode) -> Effect {
        Effect::Emit(Event::ProduceRetry {
            acks: Acks::All,
            tp: h.topics.name(TP0).clone(),
            attempts_left,
            error,
        })
    }

    fn backoff_end(attempts: u32) -> ClientTimer {
        ClientTimer::ProducerRetryBackoff {
            job: 0,
            batch: 0,
            attempts,
        }
    }

    #[test]
    fn the_retry_backoff_stops_at_retry_backoff_max_ms_and_is_static_at_or_below_retry_backoff_ms()
    {
        // RecordAccumulator's ExponentialBackoff(retry.backoff.ms, 2, retry.backoff.max.ms,
        // 0.2): the third retry waits backoff(2), its term capped at retry.backoff.max.ms, and
        // never more than it.
        let mut h = harness();
        h.config.retry_backoff_max_ms = 400;
        let mut p = producer(&[1]);
        p.jobs[&0].current.as_mut().unwrap().retries_done = 2;
        let error = ErrorCode::NOT_ENOUGH_REPLICAS;
        respond(&mut p, &mut h, 1_000, (0, error), led_by(1, 0));
        let jittered = |lowest: u64, max_phase: u64, at_most: u64| Effect::SetTimerJittered {
            at: 1_000 + lowest,
            max_phase,
            at_most: 1_000 + at_most,
            scheduled: Scheduled::Client(backoff_end(3)),
        };
        assert_eq!(
            h.take(),
            vec![retry_line(&h, 2, error), jittered(320, 159, 400)]
        );
        // retry.backoff.ms above retry.backoff.max.ms: a static 300 from the first retry
        // (warnDisablingExponentialBackoff's case).
        let mut h = harness();
        (h.config.retry_backoff_ms, h.config.retry_backoff_max_ms) = (500, 300);
        let mut p = producer(&[1]);
        respond(&mut p, &mut h, 1_000, (0, error), led_by(1, 0));
        let mut static_300 = jittered(300, 0, 300);
        if let Effect::SetTimerJittered { scheduled, .. } = &mut static_300 {
            *scheduled = Scheduled::Client(backoff_end(1));
        }
        assert_eq!(h.take(), vec![retry_line(&h, 4, error), static_300]);
    }

    #[test]
    fn a_retry_whose_partition_has_a_new_leader_skips_the_backoff() {
        // KIP-951: the batch was drained at leader epoch 0 (maybeUpdateLeaderEpoch,
        // attemptsWhenLeaderLastChanged 0); NOT_LEADER_OR_FOLLOWER comes with the new leader,
        // broker 2 at epoch 1, which the Sender puts in the metadata before it re-enqueues
        // the batch; the readiness check then records epoch 1 at attempt 1, so
        // hasLeaderChangedForTheOngoingRetry and shouldBackoff is false: the retry goes at
        // once (SenderTest.testWhenProduceResponseReturnsWithALeaderShipChangeErrorAndNewLeaderInformation).
        let mut h = harness();
        let mut p = producer(&[1]);
        let error = ErrorCode::NOT_LEADER_OR_FOLLOWER;
        respond(&mut p, &mut h, 1_000, (0, error), led_by(2, 1));
        assert_eq!(
            h.take(),
            vec![
                retry_line(&h, 4, error),
                Effect::SetTimer {
                    at: 1_000,
                    scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 0 }),
                },
                // Sender.completeBatch: an InvalidMetadataException asks for a refresh.
                refresh_timer(1_000, 0),
            ]
        );
        let a = p.jobs[&0].current.as_ref().unwrap();
        assert_eq!(
            (
                a.current_leader_epoch,
                a.attempts_when_leader_last_changed,
                a.backing_off
            ),
            (Some(1), 1, false)
        );
        p.on_timer(
            &mut h.ctx(1_000),
            &|_| led_by(2, 1),
            ClientTimer::ProducerSend { job: 0 },
        );
        assert_eq!(
            h.take(),
            resend(&h, 1_000, (0, 40), (TP0, 2), &["v0"], idempotent(15, 5, 0)),
            "to the new leader, with its sequence"
        );
        // The next retry, at the same leader epoch, backs off: backoff(1).
        let error = ErrorCode::NOT_ENOUGH_REPLICAS;
        respond(&mut p, &mut h, 1_010, (40, error), led_by(2, 1));
        assert_eq!(
            h.take(),
            vec![
                retry_line(&h, 3, error),
                Effect::SetTimerJittered {
                    at: 1_010 + 160,
                    max_phase: 79,
                    at_most: 1_010 + 1_000,
                    scheduled: Scheduled::Client(backoff_end(2)),
                },
            ]
        );
        // The same error at the leader epoch the batch was drained at backs off too.
        let mut h = harness();
        let mut p = producer(&[1]);
        respond(
            &mut p,
            &mut h,
            1_000,
            (0, ErrorCode::NOT_LEADER_OR_FOLLOWER),
            led_by(1, 0),
        );
        assert!(p.jobs[&0].current.as_ref().unwrap().backing_off);
    }

    /// ProducerBatchTest.testWithLeaderChangesAcrossRetries, step by step.
    #[test]
    fn the_batch_keeps_its_leader_epoch_and_the_attempt_it_changed_at() {
        let mut a = producer(&[1]).jobs[&0].current.take().unwrap();
        (a.current_leader_epoch, a.attempts_when_leader_last_changed) = (None, 0);
        let state = |a: &Attempt| {
            (
                a.has_leader_changed_for_the_ongoing_retry(),
                a.current_leader_epoch,
                a.attempts_when_leader_last_changed,
            )
        };
        a.maybe_update_leader_epoch(None);
        assert_eq!(state(&a), (false, None, 0), "not sent yet");
        a.maybe_update_leader_epoch(Some(100));
        assert_eq!(
            state(&a),
            (false, Some(100), 0),
            "the first attempt is no retry"
        );
        a.retries_done += 1; // reenqueued
        a.maybe_update_leader_epoch(Some(101));
        assert_eq!(
            state(&a),
            (true, Some(101), 1),
            "the first retry, to a new leader"
        );
        a.maybe_update_leader_epoch(Some(101));
        assert_eq!(state(&a), (true, Some(101), 1), "still that retry");
        a.retries_done += 1;
        a.maybe_update_leader_epoch(Some(101));
        assert_eq!(
            state(&a),
            (false, Some(101), 1),
            "the second, to the same leader"
        );
        a.maybe_update_leader_epoch(Some(100));
        assert_eq!(
            state(&a),
            (false, Some(101), 1),
            "an older epoch changes nothing"
        );
        a.maybe_update_leader_epoch(None);
        assert_eq!(state(&a), (false, Some(101), 1), "nor an unknown one");
    }

    #[test]
    fn a_metadata_refresh_with_a_new_leader_during_the_backoff_ends_it() {
        // A reset connection asks for a metadata refresh (handleServerDisconnect:
        // requestUpdate), due backoff(0) after the last one (10 ms ago); the batch's third
        // retry backs off longer. The refresh brings broker 2 at epoch 1, and the sender's
        // readiness check after it (partitionReady → maybeUpdateLeaderEpoch at attempt 3)
        // finds the batch no longer backing off; the backoff's own timer then ends nothing.
        let mut h = harness();
        let mut p = producer(&[1]);
        p.jobs[&0].current.as_mut().unwrap().retries_done = 2;
        p.metadata.last_refresh_ms = 990;
        p.requests.insert(0, 0);
        p.on_message(
            &mut h.ctx(1_000),
            &|_| led_by(1, 0),
            Payload::ConnectionReset {
                request: Outstanding::Produce { request_id: 0 },
            },
        );
        let error = ErrorCode::NETWORK_EXCEPTION;
        assert_eq!(
            h.take(),
            vec![
                Effect::SetTimerJittered {
                    at: 990 + 80,
                    max_phase: 39,
                    at_most: 990 + 1_000,
                    scheduled: Scheduled::Client(ClientTimer::ProducerMetadataRefresh { id: 0 }),
                },
                retry_line(&h, 2, error),
                Effect::SetTimerJittered {
                    at: 1_000 + 320,
                    max_phase: 159,
                    at_most: 1_000 + 1_000,
                    scheduled: Scheduled::Client(backoff_end(3)),
                },
            ]
        );
        let refresh = ClientTimer::ProducerMetadataRefresh { id: 0 };
        // The same refresh, had it brought the leader the batch was sent to: it backs off on.
        let mut same = p.clone();
        same.on_timer(&mut h.ctx(1_090), &|_| led_by(1, 0), refresh.clone());
        assert_eq!(h.take(), vec![]);
        assert!(same.jobs[&0].current.as_ref().unwrap().backing_off);
        // Nor does any other look drain it while it backs off (drainBatchesForOneNode:
        // shouldBackoff, `continue`).
        same.on_timer(
            &mut h.ctx(1_095),
            &|_| led_by(1, 0),
            ClientTimer::ProducerSend { job: 0 },
        );
        assert_eq!(h.take(), vec![]);

        p.on_timer(&mut h.ctx(1_090), &|_| led_by(2, 1), refresh);
        assert_eq!(
            h.take(),
            vec![Effect::SetTimer {
                at: 1_090,
                scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 0 }),
            }]
        );
        let a = p.jobs[&0].current.as_ref().unwrap();
        assert_eq!(
            (
                a.backing_off,
                a.current_leader_epoch,
                a.attempts_when_leader_last_changed
            ),
            (false, Some(1), 3)
        );
        p.on_timer(
            &mut h.ctx(1_090),
            &|_| led_by(2, 1),
            ClientTimer::ProducerSend { job: 0 },
        );
        assert_eq!(
            h.take(),
            resend(&h, 1_090, (0, 40), (TP0, 2), &["v0"], idempotent(15, 5, 0))
        );
        // That retry fails too and backs off (attempt 4); the first backoff's timer does not
        // end the second one, its own does.
        respond(
            &mut p,
            &mut h,
            1_100,
            (40, ErrorCode::NOT_ENOUGH_REPLICAS),
            led_by(2, 1),
        );
        h.take();
        p.on_timer(&mut h.ctx(1_320), &|_| led_by(2, 1), backoff_end(3));
        assert_eq!(h.take(), vec![]);
        p.on_timer(&mut h.ctx(1_800), &|_| led_by(2, 1), backoff_end(4));
        assert_eq!(
            h.take(),
            resend(&h, 1_800, (0, 41), (TP0, 2), &["v0"], idempotent(15, 5, 0))
        );
    }

    #[test]
    fn not_enough_replicas_is_retried_after_retry_backoff() {
        // SenderTest.testRetries: a retriable error with retries left re-enqueues the batch,
        // which is sent again after retry.backoff.ms (Sender.canRetry, RecordAccumulator
        // .reenqueue); its sequence is kept.
        let mut h = harness();
        let mut p = producer(&[1]);
        p.requests.insert(0, 0);
        let now = 1_000;
        p.on_message(
            &mut h.ctx(now),
            &leaders,
            Payload::ProduceResponse {
                tp: TP0,
                request_id: 0,
                error: ErrorCode::NOT_ENOUGH_REPLICAS,
                base_offset: None,
                last_offset: None,
            },
        );
        assert_eq!(
            h.take(),
            vec![
                Effect::Emit(Event::ProduceRetry {
                    acks: Acks::All,
                    tp: h.topics.name(TP0).clone(),
                    attempts_left: 4,
                    error: ErrorCode::NOT_ENOUGH_REPLICAS,
                }),
                // The first retry's backoff: retry.backoff.ms (100) jittered by ±20%,
                // ⌊r·100⌋ for r in [0.8, 1.2): 80..=119 ms.
                Effect::SetTimerJittered {
                    at: now + 80,
                    max_phase: 39,
                    at_most: now + 1_000,
                    scheduled: Scheduled::Client(ClientTimer::ProducerRetryBackoff {
                        job: 0,
                        batch: 0,
                        attempts: 1,
                    }),
                },
            ]
        );
        let a = p.jobs[&0].current.as_ref().unwrap();
        assert_eq!(a.request_id, None);
        assert_eq!(a.retries_done, 1);
        assert_eq!(a.last_error, Some((ErrorCode::NOT_ENOUGH_REPLICAS, now)));
        assert_eq!(
            a.batch.unwrap().base_sequence,
            0,
            "the retry keeps its sequence"
        );
        assert!(p.requests.is_empty());
        assert_eq!(h.metrics.record_retries, 1);
        assert_eq!(h.metrics.produce_errors, 0);
    }

    fn record(offset: u64, value: &str) -> Record {
        Record {
            offset,
            epoch: 3,
            batch_base: offset,
            value: value.into(),
            producer_id: NO_PRODUCER_ID,
            producer_epoch: crate::record::NO_PRODUCER_EPOCH,
            sequence: NO_SEQUENCE,
            key: None,
            size: None,
        }
    }

    #[test]
    fn the_first_poll_fetches_from_the_log_start_offset_of_the_leader_it_is_told_of() {
        // auto.offset.reset=earliest: with no position, the consumer starts at the log start.
        let mut h = harness();
        let mut c = Consumer::default();
        c.on_consume(&mut h.ctx(0), &told(None), None, false, TP0);
        assert_eq!(
            h.take(),
            vec![Effect::Emit(Event::ConsumerLeaderNotAvailable {
                tp: h.topics.name(TP0).clone()
            })]
        );
        assert!(c.requests.is_empty());
        let leader = PartitionLeader {
            broker: 3,
            log_start_offset: 7,
        };
        c.on_consume(&mut h.ctx(0), &told(Some(leader)), Some(2), false, TP0);
        assert_eq!(
            h.take(),
            vec![Effect::Send {
                from: CONSUMER,
                to: Node::Broker(3),
                payload: Payload::ConsumerFetch {
                    tp: TP0,
                    request_id: 40,
                    offset: 7,
                    max_records: 2,
                    client_rack: None,
                },
            }]
        );
        assert!(c.awaits(40));
        assert_eq!(c.requests[&40].target, 3);
    }

    #[test]
    fn a_fetch_response_moves_the_position_past_the_last_record() {
        // FetcherTest.testFetchNormal: the records of the response are returned in order and
        // the position moves to the offset after the last one.
        let mut h = harness();
        let mut c = Consumer::default();
        c.positions.insert(TP0, 3);
        c.requests.insert(
            9,
            ConsumerRequest {
                tp: TP0,
                max_records: 500,
                target: 1,
                offset: 3,
                to_read_replica: false,
            },
        );
        let response = |request_id| Payload::ConsumerFetchResponse {
            tp: TP0,
            request_id,
            error: ErrorCode::NONE,
            records: vec![record(3, "x"), record(4, "y")],
            high_watermark: 5,
            log_start_offset: 0,
            log_end_offset: 6,
            preferred_read_replica: None,
        };
        c.on_message(&mut h.ctx(0), &untold, response(9));
        assert_eq!(
            h.take(),
            vec![Effect::Emit(Event::ConsumerRead {
                tp: None,
                first_offset: 3,
                last_offset: 4,
                values: vec!["x".into(), "y".into()],
                position: 5,
                from: None,
                broker: 1,
            })]
        );
        assert_eq!(c.position(TP0), Some(5));
        assert_eq!(c.seen[&TP0].get(&4), Some(&(3, "y".to_string())));
        assert!(c.requests.is_empty());
        c.on_message(&mut h.ctx(0), &untold, response(9));
        assert_eq!(
            h.take(),
            vec![],
            "a response it no longer waits for is ignored"
        );
        assert_eq!(c.position(TP0), Some(5));
    }

    /// A producer with producer id 15, epoch 5 (as TransactionManagerTest's) and one job per
    /// batch of `counts` records to the one partition, each with the next sequences
    /// (writeIdempotentBatchWithValue).
    fn producer(counts: &[usize]) -> Producer {
        let mut batches = Vec::new();
        for &n in counts {
            batches.push((TP0, n));
        }
        producer_on(&batches)
    }

    /// The same with each batch's partition and record count: each partition counts its own
    /// sequences (TxnPartitionEntry.nextSequence).
    fn producer_on(batches: &[(Tp, usize)]) -> Producer {
        let mut p = Producer::default();
        p.idempotence.producer_id = 15;
        p.idempotence.producer_epoch = 5;
        for (job, &(tp, n)) in batches.iter().enumerate() {
            let entry = p.idempotence.entry_mut(tp);
            (entry.producer_id, entry.producer_epoch) = (15, 5);
            let base = entry.next_sequence;
            entry.next_sequence = increment_sequence(base, n as u32);
            p.jobs.insert(
                job as u64,
                ProduceJob {
                    tp,
                    acks: Acks::All,
                    retries: 5,
                    idempotent: true,
                    to: None,
                    shape: RecordShape::default(),
                    pending: Vec::new(),
                    current: Some(Attempt {
                        values: (0..n).map(|i| format!("v{i}")).collect(),
                        created_ms: 0,
                        retries_done: 0,
                        request_id: Some(job as u64),
                        target: Some(1),
                        batch: Some(BatchProducer {
                            producer_id: 15,
                            producer_epoch: 5,
                            base_sequence: base,
                        }),
                        sequence_reset: false,
                        batch_id: job as u64,
                        sent_ms: 0,
                        last_error: None,
                        // Drained while its leader was at epoch 0.
                        current_leader_epoch: Some(0),
                        attempts_when_leader_last_changed: 0,
                        backing_off: false,
                    }),
                },
            );
        }
        p.next_job = batches.len() as u64;
        p.next_batch = batches.len() as u64;
        p
    }

    /// The batch of `job` times out after it was sent: its sequence is unresolved, and it is
    /// done (handleFailedBatch with adjustSequenceNumbers false).
    fn expire(p: &mut Producer, job: u64) {
        let tp = p.jobs[&job].tp;
        let last = p.jobs[&job].current.as_ref().unwrap().last_sequence();
        p.idempotence.mark_sequence_unresolved(tp, last);
        p.jobs.remove(&job);
    }

    /// The batch of `job` is acknowledged (handleCompletedBatch).
    fn complete(p: &mut Producer, job: u64) {
        let tp = p.jobs[&job].tp;
        let last = p.jobs[&job].current.as_ref().unwrap().last_sequence();
        p.idempotence.maybe_update_last_acked_sequence(tp, last);
        p.jobs.remove(&job);
    }

    #[test]
    fn no_epoch_bump_when_a_later_batch_resolves_the_sequence() {
        // TransactionManagerTest.testNoProducerIdResetAfterLastInFlightBatchSucceeds.
        let mut p = producer(&[1, 1, 1]);
        expire(&mut p, 0);
        assert_eq!(
            p.resolve_and_bump(),
            None,
            "not while batches are in flight"
        );
        assert!(p.idempotence.unresolved.contains_key(&TP0));
        p.jobs.remove(&1); // fails with a timeout, retries exhausted
        assert_eq!(p.resolve_and_bump(), None);
        complete(&mut p, 2);
        assert_eq!(p.resolve_and_bump(), None, "sequence 2 acked: 3 is next");
        assert_eq!(p.idempotence.unresolved.get(&TP0), None);
        assert_eq!(
            (
                p.idempotence.producer_epoch,
                p.idempotence.entry(TP0).next_sequence
            ),
            (5, 3)
        );
    }

    #[test]
    fn epoch_bump_when_the_last_in_flight_batch_fails() {
        // TransactionManagerTest.testEpochBumpAfterLastInflightBatchFails.
        let mut p = producer(&[1, 1, 1]);
        expire(&mut p, 0);
        complete(&mut p, 1);
        assert_eq!(p.resolve_and_bump(), None);
        assert!(p.idempotence.unresolved.contains_key(&TP0));
        p.jobs.remove(&2);
        assert_eq!(p.resolve_and_bump(), Some((15, 6)));
        assert_eq!(p.idempotence.unresolved.get(&TP0), None);
        assert_eq!(p.idempotence.entry(TP0).next_sequence, 0);
        assert_eq!(p.idempotence.entry(TP0).last_acked_sequence, -1);
    }

    #[test]
    fn an_epoch_bump_rewrites_the_in_flight_batches_from_sequence_0() {
        // TxnPartitionEntry.startSequencesAtBeginning, in sequence order.
        let mut p = producer(&[2, 3, 1]);
        p.jobs.remove(&0);
        p.idempotence.request_epoch_bump_for_partition(TP0);
        assert_eq!(p.resolve_and_bump(), Some((15, 6)));
        let seq = |p: &Producer, j: u64| p.jobs[&j].current.as_ref().unwrap().batch.unwrap();
        assert_eq!(
            (seq(&p, 1).producer_epoch, seq(&p, 1).base_sequence),
            (6, 0)
        );
        assert_eq!(seq(&p, 2).base_sequence, 3);
        assert!(p.jobs[&2].current.as_ref().unwrap().sequence_reset);
        assert_eq!(p.idempotence.entry(TP0).next_sequence, 4);
    }

    #[test]
    fn a_retry_waits_until_it_is_first_in_flight_and_new_batches_while_unresolved() {
        // RecordAccumulator.shouldStopDrainBatchesForPartition.
        let mut p = producer(&[1, 1]);
        assert!(!p.should_stop_draining(0), "the first in flight goes");
        assert!(p.should_stop_draining(1), "sequence 1 waits for sequence 0");
        p.jobs.insert(
            9,
            ProduceJob {
                current: Some(Attempt {
                    batch: None,
                    ..p.jobs[&0].current.clone().unwrap()
                }),
                ..p.jobs[&0].clone()
            },
        );
        assert!(!p.should_stop_draining(9), "a new batch goes");
        expire(&mut p, 0);
        assert!(
            p.should_stop_draining(9),
            "not while a sequence is unresolved"
        );
        assert!(!p.should_stop_draining(1), "sequence 1 is now first");
    }

    // ---- two partitions: each keeps its own sequences (TxnPartitionMap) -----------------

    const P0: Tp = Tp {
        topic: 0,
        partition: 0,
    };
    const P1: Tp = Tp {
        topic: 0,
        partition: 1,
    };

    /// Topic "t" with two partitions, request ids from 40.
    fn two_partitions() -> Harness {
        let mut h = Harness::new(Config::default(), "t", 40);
        h.topics = crate::metadata::Topics::new(0, &[("t".into(), 2)]);
        h
    }

    /// Partition 0 is led by broker 1, partition 1 by broker 2, both at leader epoch 0.
    fn leaders(tp: Tp) -> LeaderAndEpoch {
        match tp.partition {
            0 => led_by(1, 0),
            1 => led_by(2, 0),
            _ => LeaderAndEpoch::default(),
        }
    }

    fn one_record(value: &str) -> ProduceSpec {
        ProduceSpec {
            values: vec![value.into()],
            ..ProduceSpec::default()
        }
    }

    /// What a send of a new batch (`batch`, job `job`) asks for at `now`: its expiry timer,
    /// the Produce to `broker` and its request timeout.
    fn first_send(
        h: &Harness,
        now: TimeMs,
        (job, batch, request_id): (u64, u64, u64),
        (tp, broker): (Tp, BrokerId),
        values: &[&str],
        producer: BatchProducer,
    ) -> Vec<Effect> {
        let mut effects = vec![Effect::SetTimer {
            at: now + h.config.delivery_timeout_ms,
            scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job, batch }),
        }];
        effects.extend(resend(
            h,
            now,
            (job, request_id),
            (tp, broker),
            values,
            producer,
        ));
        effects
    }

    /// What a send of a batch that exists already asks for: the Produce and its timeout.
    fn resend(
        h: &Harness,
        now: TimeMs,
        (job, request_id): (u64, u64),
        (tp, broker): (Tp, BrokerId),
        values: &[&str],
        producer: BatchProducer,
    ) -> Vec<Effect> {
        vec![
            Effect::Send {
                from: PRODUCER,
                to: Node::Broker(broker),
                payload: Payload::Produce {
                    shape: Default::default(),
                    tp,
                    request_id,
                    acks: Acks::All,
                    values: values.iter().map(|v| v.to_string()).collect(),
                    timeout_ms: h.config.request_timeout_ms,
                    producer,
                },
            },
            Effect::SetTimer {
                at: now + request_deadline_ms(&h.config),
                scheduled: Scheduled::Client(ClientTimer::ProducerRequestTimeout {
                    job,
                    request_id,
                }),
            },
        ]
    }

    fn idempotent(producer_id: i64, producer_epoch: i16, base_sequence: i32) -> BatchProducer {
        BatchProducer {
            producer_id,
            producer_epoch,
            base_sequence,
        }
    }

    /// KafkaProducer.send to `tp` and the send it schedules at once.
    fn produce_and_send(
        p: &mut Producer,
        h: &mut Harness,
        now: TimeMs,
        spec: &ProduceSpec,
        tp: Tp,
    ) {
        p.on_produce(&mut h.ctx(now), spec, tp, None, RecordShape::default());
        let job = p.next_job - 1;
        assert_eq!(
            h.take(),
            vec![Effect::SetTimer {
                at: now,
                scheduled: Scheduled::Client(ClientTimer::ProducerSend { job }),
            }]
        );
        p.on_timer(&mut h.ctx(now), &leaders, ClientTimer::ProducerSend { job });
    }

    fn produce_response(request_id: u64, tp: Tp, error: ErrorCode, offset: Option<u64>) -> Payload {
        Payload::ProduceResponse {
            request_id,
            tp,
            error,
            base_offset: offset,
            last_offset: offset,
        }
    }

    #[test]
    fn each_partition_counts_its_own_sequences_from_0() {
        // TransactionManager.sequenceNumber(tp) is TxnPartitionMap.getOrCreate(tp).nextSequence:
        // a partition's entry is made at its first drained batch and starts at 0
        // (TxnPartitionEntry's constructor); incrementSequenceNumber(tp, recordCount) moves
        // only that partition on (SenderTest
        // .testEpochBumpOnOutOfOrderSequenceForNextBatchWhenThereIsNoBatchInFlight: "Partition
        // 1 - State is lazily initialized"). Each batch goes to its own partition's leader.
        let mut h = two_partitions();
        let mut p = Producer::default();
        let two = ProduceSpec {
            values: vec!["a".into(), "b".into()],
            ..ProduceSpec::default()
        };
        produce_and_send(&mut p, &mut h, 1_000, &two, P0);
        assert_eq!(
            h.take(),
            first_send(
                &h,
                1_000,
                (0, 0, 40),
                (P0, 1),
                &["a", "b"],
                idempotent(0, 0, 0)
            )
        );
        produce_and_send(&mut p, &mut h, 1_000, &one_record("c"), P1);
        assert_eq!(
            h.take(),
            first_send(&h, 1_000, (1, 1, 41), (P1, 2), &["c"], idempotent(0, 0, 0)),
            "partition 1 starts at 0 too"
        );
        produce_and_send(&mut p, &mut h, 1_000, &one_record("d"), P0);
        assert_eq!(
            h.take(),
            first_send(&h, 1_000, (2, 2, 42), (P0, 1), &["d"], idempotent(0, 0, 2)),
            "partition 0 counts on after its own two records"
        );
        let three = ProduceSpec {
            values: vec!["e".into(), "f".into(), "g".into()],
            ..ProduceSpec::default()
        };
        produce_and_send(&mut p, &mut h, 1_000, &three, P1);
        assert_eq!(
            h.take(),
            first_send(
                &h,
                1_000,
                (3, 3, 43),
                (P1, 2),
                &["e", "f", "g"],
                idempotent(0, 0, 1)
            ),
        );
        assert_eq!(p.idempotence.entry(P0).next_sequence, 3);
        assert_eq!(p.idempotence.entry(P1).next_sequence, 4);

        // handleCompletedBatch → maybeUpdateLastAckedSequence of the batch's partition only.
        p.on_message(
            &mut h.ctx(1_010),
            &leaders,
            produce_response(43, P1, ErrorCode::NONE, Some(7)),
        );
        assert_eq!(p.idempotence.entry(P1).last_acked_sequence, 3);
        assert_eq!(p.idempotence.entry(P0).last_acked_sequence, -1);
    }

    #[test]
    fn an_unresolved_sequence_holds_back_only_its_own_partition() {
        // TransactionManager.markSequenceUnresolved keeps the sequence per partition
        // (partitionsWithUnresolvedSequences), and RecordAccumulator
        // .shouldStopDrainBatchesForPartition stops a new batch only while its own partition
        // hasUnresolvedSequence(tp) (SenderTest
        // .testExpiryOfFirstBatchShouldNotCauseUnresolvedSequencesIfFutureBatchesSucceed, with a
        // second partition on another broker: on the same broker Kafka's drain loop would stop
        // at partition 0, see `should_stop_draining`).
        let mut h = two_partitions();
        let mut p = producer_on(&[(P0, 1), (P0, 1)]);
        p.jobs[&0].current.as_mut().unwrap().retries_done = 1; // in retry when it expires
        p.requests.insert(0, 0);
        p.requests.insert(1, 1);
        let expiry = p.jobs[&0].current.as_ref().unwrap().created_ms + h.config.delivery_timeout_ms;
        p.on_timer(
            &mut h.ctx(expiry),
            &leaders,
            ClientTimer::ProducerExpire { job: 0, batch: 0 },
        );
        h.take();
        assert_eq!(p.idempotence.unresolved.get(&P0), Some(&1));
        assert_eq!(p.idempotence.unresolved.get(&P1), None);

        // A new batch for partition 0 waits, with no sequence taken.
        produce_and_send(&mut p, &mut h, expiry, &one_record("x"), P0);
        assert_eq!(
            h.take(),
            vec![Effect::SetTimer {
                at: expiry + h.config.delivery_timeout_ms,
                scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job: 2, batch: 2 }),
            }]
        );
        assert_eq!(p.blocked, vec![2]);
        assert_eq!(p.jobs[&2].current.as_ref().unwrap().batch, None);

        // Partition 1's batch goes at once, from its own sequence 0 (and the send wakes the
        // waiting batches to look again: the accumulator's heads changed).
        produce_and_send(&mut p, &mut h, expiry, &one_record("y"), P1);
        let mut expected = first_send(
            &h,
            expiry,
            (3, 3, 40),
            (P1, 2),
            &["y"],
            idempotent(15, 5, 0),
        );
        expected.push(Effect::SetTimer {
            at: expiry,
            scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 2 }),
        });
        assert_eq!(h.take(), expected);
        p.on_timer(
            &mut h.ctx(expiry),
            &leaders,
            ClientTimer::ProducerSend { job: 2 },
        );
        assert_eq!(h.take(), vec![], "partition 0's batch still waits");
        assert_eq!(p.blocked, vec![2]);
    }

    #[test]
    fn an_out_of_order_retry_holds_back_only_its_own_partition() {
        // TransactionManager.canRetry: OUT_OF_ORDER_SEQUENCE_NUMBER for a batch that is not the
        // partition's next (its base sequence is not lastAckedSequence(tp) + 1) is retried
        // without an epoch bump; the retry waits until it is its partition's
        // firstInFlightSequence, and the partition's deque waits behind it
        // (RecordAccumulator.shouldStopDrainBatchesForPartition, drainBatchesForOneNode). The
        // other partition's deque and sequences are its own (SenderTest
        // .testIdempotenceWithMultipleInflightsRetriedInOrder, with a second partition on
        // another broker: on the same broker Kafka's drain loop would stop at partition 0).
        let mut h = two_partitions();
        let mut p = producer_on(&[(P0, 1), (P0, 1)]);
        p.requests.insert(1, 1);
        p.on_message(
            &mut h.ctx(1_000),
            &leaders,
            produce_response(1, P0, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER, None),
        );
        let backoff = h.config.retry_backoff_ms;
        assert_eq!(
            h.take(),
            vec![
                Effect::Emit(Event::ProduceRetry {
                    acks: Acks::All,
                    tp: h.topics.name(P0).clone(),
                    attempts_left: 4,
                    error: ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
                }),
                Effect::SetTimerJittered {
                    at: 1_000 + 80,
                    max_phase: 39,
                    at_most: 1_000 + 1_000,
                    scheduled: Scheduled::Client(ClientTimer::ProducerRetryBackoff {
                        job: 1,
                        batch: 1,
                        attempts: 1,
                    }),
                },
            ]
        );
        assert!(
            !p.idempotence.epoch_bump_required,
            "sequence 0 may still land"
        );
        let now = 1_000 + backoff;
        p.on_timer(
            &mut h.ctx(now),
            &leaders,
            ClientTimer::ProducerRetryBackoff {
                job: 1,
                batch: 1,
                attempts: 1,
            },
        );
        assert_eq!(h.take(), vec![], "sequence 1 waits for sequence 0");
        produce_and_send(&mut p, &mut h, now, &one_record("x"), P0);
        assert_eq!(
            h.take(),
            vec![Effect::SetTimer {
                at: now + h.config.delivery_timeout_ms,
                scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job: 2, batch: 2 }),
            }],
            "a new batch of partition 0 waits behind the retry"
        );
        assert_eq!(p.blocked, vec![1, 2]);

        produce_and_send(&mut p, &mut h, now, &one_record("y"), P1);
        let mut expected = first_send(&h, now, (3, 3, 40), (P1, 2), &["y"], idempotent(15, 5, 0));
        for job in [1, 2] {
            expected.push(Effect::SetTimer {
                at: now,
                scheduled: Scheduled::Client(ClientTimer::ProducerSend { job }),
            });
        }
        assert_eq!(h.take(), expected, "partition 1 drains at once");
        for job in [1, 2] {
            p.on_timer(&mut h.ctx(now), &leaders, ClientTimer::ProducerSend { job });
        }
        assert_eq!(h.take(), vec![], "partition 0's batches still wait");
        assert_eq!(p.blocked, vec![1, 2]);
    }

    #[test]
    fn an_epoch_bump_rewrites_the_partition_that_asked_and_the_others_restart_when_drained() {
        // TransactionManager.bumpIdempotentProducerEpoch: "rewrite all in-flight sequences
        // for the partition(s) that triggered the epoch bump" (partitionsToRewriteSequences,
        // TxnPartitionEntry.startSequencesAtBeginning); another partition keeps its batches in
        // flight under the old epoch and sequences, its new batches wait while it has any
        // (shouldStopDrainBatchesForPartition: hasInflightBatches && hasStaleProducerIdAndEpoch),
        // and its next new batch starts at 0 under the new epoch
        // (maybeUpdateProducerIdAndEpoch, KAFKA-12152). TransactionManagerTest
        // .testHealthyPartitionRetriesDuringEpochBump, with OUT_OF_ORDER_SEQUENCE_NUMBER for
        // the gap as SenderTest.testEpochBumpOnOutOfOrderSequenceForNextBatchWhenBatchInFlightFails.
        let mut h = two_partitions();
        let mut p = producer_on(&[(P0, 1), (P0, 1), (P1, 1), (P1, 1)]);
        for job in [2, 3] {
            p.jobs[&job].current.as_mut().unwrap().target = Some(2);
        }
        complete(&mut p, 0);
        complete(&mut p, 2);
        p.requests.insert(1, 1);
        p.requests.insert(3, 3);

        // Partition 0's sequence 1 follows its acked 0: the gap is real, partition 0 asks for
        // a bump.
        p.on_message(
            &mut h.ctx(1_000),
            &leaders,
            produce_response(1, P0, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER, None),
        );
        h.take();
        assert!(p.idempotence.epoch_bump_required);
        let now = 1_000 + h.config.retry_backoff_ms;
        p.on_timer(
            &mut h.ctx(now),
            &leaders,
            ClientTimer::ProducerRetryBackoff {
                job: 1,
                batch: 1,
                attempts: 1,
            },
        );
        let mut expected = vec![Effect::Emit(Event::ProducerIdSet {
            producer_id: 15,
            epoch: 6,
        })];
        expected.extend(resend(
            &h,
            now,
            (1, 40),
            (P0, 1),
            &["v0"],
            idempotent(15, 6, 0),
        ));
        assert_eq!(
            h.take(),
            expected,
            "partition 0 restarts at 0 under epoch 6"
        );
        assert!(p.jobs[&1].current.as_ref().unwrap().sequence_reset);
        assert_eq!(
            p.idempotence.entry(P0),
            TxnPartitionEntry {
                producer_id: 15,
                producer_epoch: 6,
                next_sequence: 1,
                last_acked_sequence: -1,
            }
        );
        // Partition 1 did not ask: its batch in flight keeps epoch 5, sequence 1.
        let p1 = p.jobs[&3].current.as_ref().unwrap();
        assert_eq!(
            (p1.batch, p1.sequence_reset),
            (Some(idempotent(15, 5, 1)), false)
        );
        assert_eq!(
            p.idempotence.entry(P1),
            TxnPartitionEntry {
                producer_id: 15,
                producer_epoch: 5,
                next_sequence: 2,
                last_acked_sequence: 0,
            }
        );

        // A new batch of partition 1 waits while partition 1 has a batch of epoch 5 in flight.
        produce_and_send(&mut p, &mut h, now, &one_record("z"), P1);
        assert_eq!(
            h.take(),
            vec![Effect::SetTimer {
                at: now + h.config.delivery_timeout_ms,
                scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job: 4, batch: 4 }),
            }]
        );
        assert_eq!(p.blocked, vec![4]);

        // Epoch 5's batch is acked (handleCompletedBatch: partition 1's last acked moves on,
        // still under epoch 5); the waiting batch is woken.
        p.on_message(
            &mut h.ctx(now + 5),
            &leaders,
            produce_response(3, P1, ErrorCode::NONE, Some(1)),
        );
        assert_eq!(
            h.take(),
            vec![
                // Two partitions: the result names its own (`Topics::label`).
                Effect::Emit(Event::ProduceResult {
                    tp: Some(TopicPartition {
                        topic: "t".into(),
                        partition: 1
                    }),
                    acks: Acks::All,
                    outcome: ProduceOutcome::Ok {
                        offsets: Some((1, 1)),
                        waited_ms: now + 5,
                    },
                }),
                Effect::SetTimer {
                    at: now + 5,
                    scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 3 }),
                },
                Effect::SetTimer {
                    at: now + 5,
                    scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 4 }),
                },
            ]
        );
        assert_eq!(p.idempotence.entry(P1).last_acked_sequence, 1);
        p.on_timer(
            &mut h.ctx(now + 5),
            &leaders,
            ClientTimer::ProducerSend { job: 3 },
        );
        assert_eq!(h.take(), vec![], "job 3 is done");
        p.on_timer(
            &mut h.ctx(now + 5),
            &leaders,
            ClientTimer::ProducerSend { job: 4 },
        );
        assert_eq!(
            h.take(),
            resend(&h, now + 5, (4, 41), (P1, 2), &["z"], idempotent(15, 6, 0)),
            "partition 1's next batch starts at 0 under epoch 6"
        );
        assert_eq!(
            p.idempotence.entry(P1),
            TxnPartitionEntry {
                producer_id: 15,
                producer_epoch: 6,
                next_sequence: 1,
                last_acked_sequence: -1,
            }
        );
    }

    #[test]
    fn the_consumer_keeps_a_position_per_partition() {
        // SubscriptionState keeps each assigned partition's state (TopicPartitionState
        // .position): a fetch of one partition moves only its position, OFFSET_OUT_OF_RANGE
        // resets only that partition (auto.offset.reset=latest), and seekToBeginning is per
        // partition.
        let mut h = two_partitions();
        let mut c = Consumer::default();
        let leader = |broker| {
            Some(PartitionLeader {
                broker,
                log_start_offset: 0,
            })
        };
        let fetch = |tp, request_id, offset, broker| Effect::Send {
            from: CONSUMER,
            to: Node::Broker(broker),
            payload: Payload::ConsumerFetch {
                tp,
                request_id,
                offset,
                max_records: 500,
                client_rack: None,
            },
        };
        c.on_consume(&mut h.ctx(0), &told(leader(1)), None, false, P0);
        c.on_consume(&mut h.ctx(0), &told(leader(2)), None, false, P1);
        assert_eq!(h.take(), vec![fetch(P0, 40, 0, 1), fetch(P1, 41, 0, 2)]);
        assert_eq!(c.requests[&41].tp, P1);

        let response =
            |request_id, tp, error, records: Vec<Record>, leo| Payload::ConsumerFetchResponse {
                request_id,
                tp,
                error,
                records,
                high_watermark: leo,
                log_start_offset: 0,
                log_end_offset: leo,
                preferred_read_replica: None,
            };
        c.on_message(
            &mut h.ctx(5),
            &untold,
            response(
                40,
                P0,
                ErrorCode::NONE,
                vec![record(0, "a"), record(1, "b"), record(2, "c")],
                3,
            ),
        );
        assert_eq!((c.position(P0), c.position(P1)), (Some(3), None));
        c.on_message(
            &mut h.ctx(5),
            &untold,
            response(41, P1, ErrorCode::NONE, vec![record(0, "x")], 1),
        );
        assert_eq!((c.position(P0), c.position(P1)), (Some(3), Some(1)));
        assert_eq!(c.seen[&P0].get(&2), Some(&(3, "c".to_string())));
        assert_eq!(c.seen[&P1].get(&0), Some(&(3, "x".to_string())));
        assert_eq!(
            c.seen[&P1].len(),
            1,
            "offset 0 of each partition is its own"
        );
        // Two partitions: each line names its own (`Topics::label`).
        let named = |partition| {
            Some(TopicPartition {
                topic: "t".into(),
                partition,
            })
        };
        assert_eq!(
            h.take(),
            vec![
                Effect::Emit(Event::ConsumerRead {
                    tp: named(0),
                    first_offset: 0,
                    last_offset: 2,
                    values: vec!["a".into(), "b".into(), "c".into()],
                    position: 3,
                    from: None,
                    broker: 1,
                }),
                Effect::Emit(Event::ConsumerRead {
                    tp: named(1),
                    first_offset: 0,
                    last_offset: 0,
                    values: vec!["x".into()],
                    position: 1,
                    from: None,
                    broker: 2,
                }),
            ]
        );
        assert_eq!(
            Event::ConsumerRead {
                tp: named(1),
                first_offset: 0,
                last_offset: 0,
                values: vec!["x".into()],
                position: 1,
                from: None,
                broker: 2,
            }
            .to_string(),
            "consumer: t-1: x (offsets 0..0, position 1)"
        );

        c.on_consume(&mut h.ctx(10), &told(leader(1)), None, false, P0);
        c.on_consume(&mut h.ctx(10), &told(leader(2)), None, false, P1);
        assert_eq!(h.take(), vec![fetch(P0, 42, 3, 1), fetch(P1, 43, 1, 2)]);

        // Partition 1's leader now ends at 0: only partition 1 moves to its log end.
        c.on_message(
            &mut h.ctx(15),
            &untold,
            response(43, P1, ErrorCode::OFFSET_OUT_OF_RANGE, vec![], 0),
        );
        assert_eq!(
            h.take(),
            vec![Effect::Emit(Event::ConsumerOffsetOutOfRange {
                tp: named(1),
                position: 1,
                log_end_offset: 0,
                gone: Some((0, 0)),
            })]
        );
        assert_eq!((c.position(P0), c.position(P1)), (Some(3), Some(0)));

        // seekToBeginning of partition 0 leaves partition 1's position.
        c.on_consume(&mut h.ctx(20), &told(leader(1)), None, true, P0);
        assert_eq!(h.take(), vec![fetch(P0, 44, 0, 1)]);
        assert_eq!((c.position(P0), c.position(P1)), (None, Some(0)));
    }

    /// Follower fetching on the consumer's side (KIP-392): SubscriptionState's preferred
    /// read replica, AbstractFetch.selectReadReplica and FetchCollector's handling.
    mod preferred_read_replica {
        use super::*;

        fn leader_1() -> ConsumerView {
            ConsumerView {
                leader: Some(PartitionLeader {
                    broker: 1,
                    log_start_offset: 0,
                }),
                online: vec![1, 2, 3],
            }
        }

        fn view(_: Tp) -> ConsumerView {
            leader_1()
        }

        fn fetch(request_id: u64, offset: u64, to: BrokerId) -> Effect {
            Effect::Send {
                from: CONSUMER,
                to: Node::Broker(to),
                payload: Payload::ConsumerFetch {
                    tp: TP0,
                    request_id,
                    offset,
                    max_records: 500,
                    client_rack: Some("b".into()),
                },
            }
        }

        fn response(
            request_id: u64,
            error: ErrorCode,
            records: Vec<Record>,
            preferred_read_replica: Option<BrokerId>,
        ) -> Payload {
            Payload::ConsumerFetchResponse {
                tp: TP0,
                request_id,
                error,
                records,
                high_watermark: 2,
                log_start_offset: 0,
                log_end_offset: 4,
                preferred_read_replica,
            }
        }

        /// A consumer in rack b at position 0 whose first fetch went to leader 1 (request
        /// 40), answered with preferred read replica 2 at time 100.
        fn told_replica_2(h: &mut Harness) -> Consumer {
            let mut c = Consumer {
                client_rack: Some("b".into()),
                ..Consumer::default()
            };
            c.on_consume(&mut h.ctx(0), &leader_1(), None, false, TP0);
            assert_eq!(h.take(), vec![fetch(40, 0, 1)]);
            c.on_message(
                &mut h.ctx(100),
                &view,
                response(40, ErrorCode::NONE, vec![], Some(2)),
            );
            c
        }

        #[test]
        fn a_named_replica_is_fetched_from_at_once_and_until_it_expires() {
            // FetchCollector.updatePartitionState: "Updating preferred read replica for
            // partition {} to {}, set to expire at {}" (now + metadata.max.age.ms); the poll
            // goes on, and AbstractFetch.selectReadReplica sends the next Fetch there.
            let mut h = harness();
            let mut c = told_replica_2(&mut h);
            assert_eq!(
                h.take(),
                vec![
                    Effect::Emit(Event::ConsumerPreferredReadReplica {
                        tp: h.topics.name(TP0).clone(),
                        leader: 1,
                        replica: 2,
                        expires_ms: 300_100,
                    }),
                    fetch(41, 0, 2),
                ]
            );
            // The follower's records: the read says where it came from.
            c.on_message(
                &mut h.ctx(102),
                &view,
                response(41, ErrorCode::NONE, vec![record(0, "x")], None),
            );
            assert_eq!(
                h.take(),
                vec![Effect::Emit(Event::ConsumerRead {
                    tp: None,
                    first_offset: 0,
                    last_offset: 0,
                    values: vec!["x".into()],
                    position: 1,
                    from: Some(2),
                    broker: 2,
                })]
            );
            // SubscriptionState.preferredReadReplica: still there at the expiry time ...
            c.on_consume(&mut h.ctx(300_100), &leader_1(), None, false, TP0);
            assert_eq!(h.take(), vec![fetch(42, 1, 2)]);
            // ... gone after it ("timeMs > preferredReadReplicaExpireTimeMs"): the leader.
            c.requests.clear();
            c.on_consume(&mut h.ctx(300_101), &leader_1(), None, false, TP0);
            assert_eq!(h.take(), vec![fetch(43, 1, 1)]);
            assert!(c.preferred_read_replicas.is_empty());
        }

        #[test]
        fn offset_out_of_range_from_the_replica_clears_it_without_a_reset() {
            // FetchCollector.handleInitializeErrors: OFFSET_OUT_OF_RANGE with a preferred
            // replica to clear is not handled as the leader's ("Unset the preferred read
            // replica {} for partition {} since we got {} when fetching {}"): the position
            // stays, and the next fetch goes to the leader.
            let mut h = harness();
            let mut c = told_replica_2(&mut h);
            h.take();
            c.on_message(
                &mut h.ctx(110),
                &view,
                response(41, ErrorCode::OFFSET_OUT_OF_RANGE, vec![], None),
            );
            assert_eq!(
                h.take(),
                vec![Effect::Emit(Event::ConsumerReadReplicaUnset {
                    tp: h.topics.name(TP0).clone(),
                    replica: 2,
                    error: Some(ErrorCode::OFFSET_OUT_OF_RANGE),
                    fetch_offset: 0,
                })]
            );
            assert_eq!(c.position(TP0), None, "no auto.offset.reset");
            c.on_consume(&mut h.ctx(120), &leader_1(), None, false, TP0);
            assert_eq!(h.take(), vec![fetch(42, 0, 1)]);
        }

        #[test]
        fn other_errors_and_a_reset_connection_clear_it_too() {
            // FetchUtils.requestMetadataUpdate (NOT_LEADER_OR_FOLLOWER and the like) and
            // AbstractFetch.handleFetchFailure clear the preferred read replica.
            let mut h = harness();
            let mut c = told_replica_2(&mut h);
            h.take();
            c.on_message(
                &mut h.ctx(110),
                &view,
                response(41, ErrorCode::NOT_LEADER_OR_FOLLOWER, vec![], None),
            );
            let unset = |error| {
                Effect::Emit(Event::ConsumerReadReplicaUnset {
                    tp: h.topics.name(TP0).clone(),
                    replica: 2,
                    error: Some(error),
                    fetch_offset: 0,
                })
            };
            let not_leader = unset(ErrorCode::NOT_LEADER_OR_FOLLOWER);
            let reset = unset(ErrorCode::NETWORK_EXCEPTION);
            assert_eq!(
                h.take(),
                vec![
                    Effect::Emit(Event::ConsumerError {
                        tp: None,
                        error: ErrorCode::NOT_LEADER_OR_FOLLOWER
                    }),
                    not_leader,
                ]
            );
            let mut h = harness();
            let mut c = told_replica_2(&mut h);
            h.take();
            c.on_message(
                &mut h.ctx(110),
                &view,
                Payload::ConnectionReset {
                    request: Outstanding::ConsumerFetch { request_id: 41 },
                },
            );
            assert_eq!(
                h.take(),
                vec![
                    Effect::Emit(Event::ConsumerConnectionReset {
                        tp: None,
                        target: 2,
                    }),
                    reset
                ]
            );
            assert!(c.preferred_read_replicas.is_empty());
        }

        #[test]
        fn an_offline_replica_is_skipped_for_the_leader() {
            // AbstractFetch.selectReadReplica: a preferred replica that Cluster.nodeIfOnline
            // does not give (fenced, KRaftMetadataCache.getOfflineReplicas) is cleared and the
            // leader is used: "Not fetching from {} for partition {} since it is marked
            // offline or is missing from our metadata, using the leader instead."
            let mut h = harness();
            let mut c = told_replica_2(&mut h);
            h.take();
            c.requests.clear();
            let fenced_2 = ConsumerView {
                online: vec![1, 3],
                ..leader_1()
            };
            c.on_consume(&mut h.ctx(200), &fenced_2, None, false, TP0);
            assert_eq!(
                h.take(),
                vec![
                    Effect::Emit(Event::ConsumerReadReplicaUnset {
                        tp: h.topics.name(TP0).clone(),
                        replica: 2,
                        error: None,
                        fetch_offset: 0,
                    }),
                    fetch(42, 0, 1),
                ]
            );
        }
    }
}
