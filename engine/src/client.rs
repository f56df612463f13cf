//! Clients: a producer (acks, retries, retry.backoff.ms, request.timeout.ms,
//! delivery.timeout.ms with Kafka's retriable errors) and a consumer that reads from the
//! leader below the HW, keeps a position, and notices when an unclean election rewrote what
//! it had read.
//!
//! The idempotent producer (`enable.idempotence`, on by default): a producer id and epoch,
//! a sequence number per batch assigned once when the batch is first drained, retries of the
//! same batch with the same producer id, epoch and base sequence, and the TransactionManager's
//! rules for OUT_OF_ORDER_SEQUENCE_NUMBER, unresolved sequences and epoch bumps
//! (clients/.../producer/internals/{TransactionManager,Sender,RecordAccumulator}.java).
//!
//! Simplifications (said in the UI): clients always know the controller's current leader, as
//! if their metadata were refreshed instantly (the router below hands it to each call, the
//! one place this is done); InitProducerId is not sent: the producer has
//! producer id 0 and epoch 0 at once (the first id a new cluster's controller hands out),
//! and bumps its epoch locally, as Kafka's idempotent producer does (KIP-360).

use crate::effect::Ctx;
use crate::effect::{ClientTimer, Scheduled};
use crate::event::{Event, ProduceOutcome};
use crate::log::BatchProducer;
use crate::network::{Outstanding, Payload};
use crate::producer_state::increment_sequence;
use crate::record::{NO_PRODUCER_ID, NO_SEQUENCE};
use crate::scenario::ProduceSpec;
use crate::types::{Acks, BrokerId, ErrorCode, Node, TimeMs, Tp};
use crate::vec_map::VecMap;

/// The node of the producer and the consumer.
pub const PRODUCER: Node = Node::Client(1);
pub const CONSUMER: Node = Node::Client(2);

/// The partition the clients write and read: the first partition of the first topic.
/// (Issue 14's step 6 gives each send and read its own partition, by the partitioner or
/// the partition named.)
pub const CLIENT_TP: Tp = Tp {
    topic: 0,
    partition: 0,
};

/// Extra time the client waits beyond request.timeout.ms before giving up on its own, so the
/// broker's REQUEST_TIMED_OUT (from the purgatory) normally arrives first.
const CLIENT_TIMEOUT_SLACK_MS: u64 = 50;

/// How long after sending a request the producer gives up on it: request.timeout.ms, the
/// round trip, and the slack above.
pub fn request_deadline_ms(config: &crate::Config) -> TimeMs {
    config.request_timeout_ms + config.network_latency_ms * 2 + CLIENT_TIMEOUT_SLACK_MS
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
}

impl Attempt {
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
    pub acks: Acks,
    pub retries: u32,
    /// Whether this produce's batches are idempotent (`Config::idempotence_for`).
    pub idempotent: bool,
    pub to: Option<BrokerId>,
    /// The batches not yet sent, the next one last (a `Vec` popped from its end: a
    /// `VecDeque` is more code in the wasm).
    pub pending: Vec<Vec<String>>,
    pub current: Option<Attempt>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Producer {
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
}

/// A request whose batch was expired (failed with a TimeoutException) while it was in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredRequest {
    pub target: BrokerId,
    /// The batch's ProducerBatch.lastSequence (NO_SEQUENCE without idempotence).
    pub last_sequence: i32,
    /// `attempts < retries` when it expired: the adjustSequenceNumbers of a later failBatch.
    pub retries_left: bool,
}

/// TransactionManager for a producer without transactional.id, and its TxnPartitionEntry for
/// the one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotence {
    /// NO_PRODUCER_ID until the first idempotent send.
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// TxnPartitionEntry.nextSequence.
    pub next_sequence: i32,
    /// TxnPartitionEntry.lastAckedSequence (NO_LAST_ACKED_SEQUENCE_NUMBER is -1).
    pub last_acked_sequence: i32,
    /// partitionsWithUnresolvedSequences: the sequence after a batch that expired after it
    /// was sent, so whether the broker has it is unknown.
    pub unresolved: Option<i32>,
    /// epochBumpRequired.
    pub epoch_bump_required: bool,
}

impl Default for Idempotence {
    fn default() -> Self {
        Idempotence {
            producer_id: NO_PRODUCER_ID,
            producer_epoch: crate::record::NO_PRODUCER_EPOCH,
            next_sequence: 0,
            last_acked_sequence: -1,
            unresolved: None,
            epoch_bump_required: false,
        }
    }
}

impl Idempotence {
    /// TransactionManager.markSequenceUnresolved for a batch whose last sequence is `last`.
    fn mark_sequence_unresolved(&mut self, last: i32) {
        let next = last.wrapping_add(1);
        self.unresolved = Some(self.unresolved.map_or(next, |v| v.max(next)));
    }

    /// TransactionManager.isNextSequence.
    fn is_next_sequence(&self, sequence: i32) -> bool {
        i64::from(sequence) - i64::from(self.last_acked_sequence) == 1
    }

    /// TransactionManager.canRetry for OUT_OF_ORDER_SEQUENCE_NUMBER (the idempotent
    /// producer retries it always; it asks for an epoch bump when the gap is real).
    fn can_retry_out_of_order(&mut self, a: &Attempt) -> bool {
        let base = a.batch.map_or(NO_SEQUENCE, |b| b.base_sequence);
        if self.unresolved.is_none() && (a.sequence_reset || !self.is_next_sequence(base)) {
            return true;
        }
        if self.unresolved.is_none() || self.unresolved == Some(base) {
            self.epoch_bump_required = true;
        }
        true
    }
}

impl Producer {
    /// RecordAccumulator.shouldStopDrainBatchesForPartition for the job's current batch: a new
    /// batch waits while a sequence is unresolved; a retried batch waits until it is the first
    /// in flight ("This effectively reduces our in flight request count to 1").
    fn should_stop_draining(&self, job: u64) -> bool {
        let Some(a) = self.jobs.get(&job).and_then(|j| j.current.as_ref()) else {
            return false;
        };
        match a.batch {
            None => self.idempotence.unresolved.is_some(),
            Some(b) => self
                .in_flight_sequences()
                .map(|(_, s)| s)
                .min()
                .is_some_and(|first| first != b.base_sequence),
        }
    }

    /// RecordAccumulator.drainBatchesForOneNode takes only the head of the partition's deque
    /// and skips the partition while the head backs off; a retried batch goes back to the head
    /// (reenqueue). Jobs are appended in the order they were produced, so the job's batch
    /// waits while an older job's batch is in the accumulator (not in flight): waiting,
    /// backing off or without a leader.
    fn behind_an_older_batch(&self, job: u64) -> bool {
        self.jobs
            .range(..job)
            .any(|(_, j)| j.current.as_ref().is_some_and(|a| a.request_id.is_none()))
    }

    /// The batches with a sequence that are not yet done: TxnPartitionEntry's
    /// inflightBatchesBySequence (in flight or waiting to be retried).
    fn in_flight_sequences(&self) -> impl Iterator<Item = (u64, i32)> + '_ {
        self.jobs.iter().filter_map(|(&id, j)| {
            let a = j.current.as_ref()?;
            Some((id, a.batch?.base_sequence))
        })
    }

    /// TransactionManager.maybeResolveSequences and bumpIdempotentEpochAndResetIdIfNeeded,
    /// run before each send as Sender.runOnce does. Returns the new producer id and epoch
    /// when the epoch was bumped.
    fn resolve_and_bump(&mut self) -> Option<(i64, i16)> {
        if self.idempotence.unresolved.is_some() && self.in_flight_sequences().next().is_none() {
            if !self
                .idempotence
                .is_next_sequence(self.idempotence.next_sequence)
            {
                // "No inflight batches remaining ... Going to bump epoch and reset sequence
                // numbers."
                self.idempotence.epoch_bump_required = true;
            }
            self.idempotence.unresolved = None;
        }
        if !self.idempotence.epoch_bump_required {
            return None;
        }
        let i = &mut self.idempotence;
        if i.producer_epoch == i16::MAX {
            // resetIdempotentProducerId, then a new InitProducerId: the next id.
            i.producer_id += 1;
            i.producer_epoch = 0;
        } else {
            i.producer_epoch += 1;
        }
        i.epoch_bump_required = false;
        i.unresolved = None;
        i.last_acked_sequence = -1;
        // startSequencesAtBeginning: the batches in flight get sequences from 0 under the new
        // epoch, in their sequence order.
        // (By insertion: a handful of batches, and no sort instantiated in the wasm for it.)
        let mut order: Vec<(i32, u64)> = vec![];
        for (job, seq) in self.in_flight_sequences() {
            let at = order
                .iter()
                .position(|&(s, _)| s > seq)
                .unwrap_or(order.len());
            order.insert(at, (seq, job));
        }
        let (pid, epoch) = (
            self.idempotence.producer_id,
            self.idempotence.producer_epoch,
        );
        let mut next = 0i32;
        for (_, job) in order {
            if let Some(a) = self.jobs.get_mut(&job).and_then(|j| j.current.as_mut()) {
                a.batch = Some(BatchProducer {
                    producer_id: pid,
                    producer_epoch: epoch,
                    base_sequence: next,
                });
                a.sequence_reset = true;
                next = increment_sequence(next, a.values.len() as u32);
            }
        }
        self.idempotence.next_sequence = next;
        Some((pid, epoch))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consumer {
    /// The next offset to read; None until the first read.
    pub position: Option<u64>,
    /// What the consumer read: offset → (leader epoch, value).
    pub seen: VecMap<u64, (i32, String)>,
    pub requests: VecMap<u64, ConsumerRequest>,
}

/// A consumer fetch waiting for its response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRequest {
    pub max_records: u32,
    /// The broker it went to.
    pub target: BrokerId,
}

/// Most records the consumer remembers.
pub const MAX_SEEN: usize = 100_000;

/// The producer's handlers: each takes the [`Ctx`] and touches only the producer's state.
impl Producer {
    /// KafkaProducer.send for each record of a produce action: one job, its batches queued
    /// (one by one or as one batch), and a send at once.
    pub(crate) fn on_produce(&mut self, ctx: &mut Ctx, spec: &ProduceSpec) {
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
                    outcome: ProduceOutcome::ConfigException { message },
                });
                return;
            }
        };
        let values = spec.values();
        let pending: Vec<Vec<String>> = if spec.one_by_one {
            let mut pending = Vec::new();
            for v in values.into_iter().rev() {
                pending.push(vec![v]);
            }
            pending
        } else {
            vec![values]
        };
        let id = self.next_job;
        self.next_job += 1;
        self.jobs.insert(
            id,
            ProduceJob {
                acks,
                retries,
                idempotent,
                to: spec.to,
                pending,
                current: None,
            },
        );
        ctx.set_timer(
            ctx.now,
            Scheduled::Client(ClientTimer::ProducerSend { job: id }),
        );
    }

    /// One of the producer's timers fired.
    pub(crate) fn on_timer(&mut self, ctx: &mut Ctx, leader: Option<BrokerId>, t: ClientTimer) {
        match t {
            ClientTimer::ProducerSend { job } => self.send_batch(ctx, leader, job),
            ClientTimer::ProducerRequestTimeout { job, request_id } => {
                let current = self
                    .jobs
                    .get(&job)
                    .and_then(|j| j.current.as_ref())
                    .and_then(|a| a.request_id);
                if current == Some(request_id) {
                    self.result(
                        ctx,
                        job,
                        request_id,
                        ErrorCode::REQUEST_TIMED_OUT,
                        None,
                        None,
                    );
                } else if self.expired_requests.contains_key(&request_id) {
                    self.late_result(ctx, request_id, ErrorCode::REQUEST_TIMED_OUT, None);
                }
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
                        last_sequence: attempt.last_sequence(),
                        retries_left: attempt.retries_done < retries,
                    },
                );
            }
        }
        if attempt.batch.is_some() && attempt.retries_done > 0 {
            let last = attempt.last_sequence();
            self.idempotence.mark_sequence_unresolved(last);
        }
        // Sender.sendProducerData's message, as Kafka writes it (no space after the colon).
        let outcome = ProduceOutcome::Expired {
            records: attempt.values.len(),
            tp: ctx.tp_name(CLIENT_TP),
            elapsed_ms: now - attempt.created_ms,
        };
        ctx.metrics.produce_errors += 1;
        ctx.metrics.record_errors += attempt.values.len() as u64;
        ctx.emit(Event::ProduceResult { acks, outcome });
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
    fn late_result(&mut self, ctx: &mut Ctx, request_id: u64, error: ErrorCode, base: Option<u64>) {
        let Some(late) = self.expired_requests.remove(&request_id) else {
            return;
        };
        let idempotent = late.last_sequence != NO_SEQUENCE;
        if error == ErrorCode::NONE {
            let i = &mut self.idempotence;
            if idempotent && late.last_sequence > i.last_acked_sequence {
                i.last_acked_sequence = late.last_sequence;
            }
            ctx.emit(Event::ProduceSucceededAfterExpiry {
                tp: ctx.tp_name(CLIENT_TP),
                base_offset: base,
            });
        } else if idempotent
            && (error == ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER || late.retries_left)
        {
            self.idempotence.epoch_bump_required = true;
        }
        self.wake(ctx);
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

    fn send_batch(&mut self, ctx: &mut Ctx, leader: Option<BrokerId>, job_id: u64) {
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
            let Some(values) = job.pending.pop() else {
                self.jobs.remove(&job_id);
                return;
            };
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
        let Some(attempt) = job.current.as_mut() else {
            return;
        };
        if attempt.request_id.is_some() {
            return;
        }
        if now >= attempt.created_ms + delivery_timeout {
            // Its expiry timer is due at this very time (or the batch is older).
            self.expire_batch(ctx, job_id);
            return;
        }
        let Some(target) = to.or(leader) else {
            // No leader in the metadata: the batch waits (not a retry) and metadata is
            // refreshed after retry.backoff.ms.
            let backoff = ctx.config.retry_backoff_ms;
            ctx.set_timer(
                now + backoff,
                Scheduled::Client(ClientTimer::ProducerSend { job: job_id }),
            );
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
        let Some(attempt) = self.jobs.get_mut(&job_id).and_then(|j| j.current.as_mut()) else {
            return;
        };
        if in_flight_to_target >= max_in_flight || stop_draining {
            if !self.blocked.contains(&job_id) {
                self.blocked.push(job_id);
            }
            return;
        }
        if idempotent && attempt.batch.is_none() {
            let i = &mut self.idempotence;
            if i.producer_id == NO_PRODUCER_ID {
                // InitProducerId, simplified: the first id of a new cluster, epoch 0. (Kafka
                // logs "ProducerId set to 0 with epoch 0" here; the transcript leaves it out
                // and shows the id on each batch instead.)
                i.producer_id = 0;
                i.producer_epoch = 0;
            }
            // RecordAccumulator.drain: setProducerState, then incrementSequenceNumber.
            attempt.batch = Some(BatchProducer {
                producer_id: i.producer_id,
                producer_epoch: i.producer_epoch,
                base_sequence: i.next_sequence,
            });
            i.next_sequence = increment_sequence(i.next_sequence, attempt.values.len() as u32);
        }
        let producer = attempt.batch.unwrap_or(BatchProducer::NONE);
        let request_id = ctx.next_request_id();
        attempt.request_id = Some(request_id);
        attempt.target = Some(target);
        attempt.sent_ms = now;
        let values = attempt.values.clone();
        self.requests.insert(request_id, job_id);
        let timeout_ms = ctx.config.request_timeout_ms;
        ctx.send(
            PRODUCER,
            Node::Broker(target),
            Payload::Produce {
                tp: CLIENT_TP,
                request_id,
                acks,
                values,
                timeout_ms,
                producer,
            },
        );
        if acks == Acks::Zero {
            // acks=0: the producer does not wait for any response.
            self.result(ctx, job_id, request_id, ErrorCode::NONE, None, None);
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

    fn result(
        &mut self,
        ctx: &mut Ctx,
        job_id: u64,
        request_id: u64,
        error: ErrorCode,
        base: Option<u64>,
        last: Option<u64>,
    ) {
        let now = ctx.now;
        self.requests.remove(&request_id);
        let backoff = ctx.config.retry_backoff_ms;
        let delivery_timeout = ctx.config.delivery_timeout_ms;
        let tp = ctx.tp_name(CLIENT_TP);
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
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
            // handleCompletedBatch → maybeUpdateLastAckedSequence.
            let i = &mut self.idempotence;
            if idempotent && last_sequence > i.last_acked_sequence {
                i.last_acked_sequence = last_sequence;
            }
            ctx.metrics.produce_ok += 1;
            if acks == Acks::All {
                ctx.metrics.acks_all_latencies_ms.push(waited);
                if ctx.metrics.acks_all_latencies_ms.len() > 1000 {
                    ctx.metrics.acks_all_latencies_ms.remove(0);
                }
            }
            ctx.emit(Event::ProduceResult { acks, outcome });
        } else if retriable && retries_left && in_time {
            if idempotent && out_of_order {
                self.idempotence.can_retry_out_of_order(attempt);
            }
            attempt.retries_done += 1;
            attempt.last_error = Some((error, now));
            ctx.metrics.record_retries += attempt.values.len() as u64;
            let attempts_left = retries - attempt.retries_done;
            ctx.emit(Event::ProduceRetry {
                acks,
                tp,
                attempts_left,
                error,
            });
            ctx.set_timer(
                now + backoff,
                Scheduled::Client(ClientTimer::ProducerSend { job: job_id }),
            );
            self.wake(ctx);
            return;
        } else {
            // handleFailedBatch: OutOfOrderSequenceException, or a failure with retries left
            // (adjustSequenceNumbers), bumps the idempotent producer's epoch; a batch that
            // exhausted its retries may or may not be in the log, so its sequence stays.
            if idempotent && (out_of_order || retries_left) {
                self.idempotence.epoch_bump_required = true;
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
                outcome: ProduceOutcome::Error { error, written_at },
            });
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
            let current = job.current.as_ref().map(|a| &a.values);
            for values in current.into_iter().chain(job.pending.iter().rev()) {
                ctx.metrics.produce_errors += 1;
                ctx.metrics.record_errors += values.len() as u64;
                ctx.emit(Event::ProduceResult {
                    acks: job.acks,
                    outcome: ProduceOutcome::ClosedForcefully {
                        records: values.len(),
                    },
                });
            }
        }
        self.requests.clear();
        self.expired_requests.clear();
        self.blocked.clear();
        let id = self.idempotence.producer_id;
        self.idempotence = Idempotence::default();
        if id != NO_PRODUCER_ID {
            self.idempotence.producer_id = id + 1;
            self.idempotence.producer_epoch = 0;
        }
    }

    /// A message to the producer: the answer to one of its Produce requests, or the reset of
    /// the connection it went on.
    pub(crate) fn on_message(&mut self, ctx: &mut Ctx, payload: Payload) {
        match payload {
            // NetworkClient: the connection to the broker was reset. The producer's in-flight
            // batch fails with NETWORK_EXCEPTION (Sender.handleProduceResponse, disconnected),
            // a retriable error: it is retried after retry.backoff.ms, with fresh metadata.
            Payload::ConnectionReset {
                request: Outstanding::Produce { request_id },
            } => {
                if let Some(&job) = self.requests.get(&request_id) {
                    self.result(
                        ctx,
                        job,
                        request_id,
                        ErrorCode::NETWORK_EXCEPTION,
                        None,
                        None,
                    );
                } else {
                    self.late_result(ctx, request_id, ErrorCode::NETWORK_EXCEPTION, None);
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
                    self.result(ctx, job, request_id, error, base_offset, last_offset);
                } else {
                    self.late_result(ctx, request_id, error, base_offset);
                }
            }
            _ => {}
        }
    }
}

impl Consumer {
    /// KafkaConsumer.poll, once: one Fetch to the leader it is told of, from its position (the
    /// log start offset before the first read, as auto.offset.reset=earliest).
    pub(crate) fn on_consume(
        &mut self,
        ctx: &mut Ctx,
        leader: Option<PartitionLeader>,
        max_records: Option<u32>,
        from_beginning: bool,
    ) {
        if from_beginning {
            self.position = None;
        }
        let Some(leader) = leader else {
            ctx.emit(Event::ConsumerLeaderNotAvailable {
                tp: ctx.tp_name(CLIENT_TP),
            });
            return;
        };
        let offset = self.position.unwrap_or(leader.log_start_offset);
        let request_id = ctx.next_request_id();
        let max = max_records.unwrap_or(500);
        self.requests.insert(
            request_id,
            ConsumerRequest {
                max_records: max,
                target: leader.broker,
            },
        );
        ctx.send(
            CONSUMER,
            Node::Broker(leader.broker),
            Payload::ConsumerFetch {
                tp: CLIENT_TP,
                request_id,
                offset,
                max_records: max,
            },
        );
    }

    /// Whether `request_id` is a fetch the consumer still waits for.
    pub(crate) fn awaits(&self, request_id: u64) -> bool {
        self.requests.contains_key(&request_id)
    }

    /// A message to the consumer: the answer to its fetch, or the reset of its connection.
    pub(crate) fn on_message(&mut self, ctx: &mut Ctx, payload: Payload) {
        match payload {
            Payload::ConnectionReset {
                request: Outstanding::ConsumerFetch { request_id },
            } => {
                if let Some(r) = self.requests.remove(&request_id) {
                    ctx.emit(Event::ConsumerConnectionReset { target: r.target });
                }
            }
            Payload::ConsumerFetchResponse {
                request_id,
                error,
                records,
                high_watermark,
                log_end_offset,
                ..
            } => {
                if self.requests.remove(&request_id).is_none() {
                    return;
                }
                self.on_fetch_response(ctx, error, records, high_watermark, log_end_offset);
            }
            _ => {}
        }
    }

    /// The answer to the consumer's fetch: the records move its position past the last one;
    /// OFFSET_OUT_OF_RANGE moves it to the leader's log end.
    fn on_fetch_response(
        &mut self,
        ctx: &mut Ctx,
        error: ErrorCode,
        records: Vec<crate::record::Record>,
        hw: u64,
        leo: u64,
    ) {
        let position = self.position.unwrap_or(0);
        match error {
            ErrorCode::NONE => {
                for r in &records {
                    if self.seen.len() < MAX_SEEN || self.seen.contains_key(&r.offset) {
                        self.seen.insert(r.offset, (r.epoch, r.value.clone()));
                    }
                }
                if let (Some(first), Some(last)) = (records.first(), records.last()) {
                    let (first_offset, last_offset) = (first.offset, last.offset);
                    self.position = Some(last_offset + 1);
                    // The values moved out of the records (no copy of them).
                    let mut values = Vec::with_capacity(records.len());
                    for r in records {
                        values.push(r.value);
                    }
                    ctx.emit(Event::ConsumerRead {
                        first_offset,
                        last_offset,
                        values,
                        position: last_offset + 1,
                    });
                } else {
                    self.position = Some(position);
                    ctx.emit(Event::ConsumerNoRecords {
                        high_watermark: hw,
                        position,
                    });
                }
            }
            ErrorCode::OFFSET_OUT_OF_RANGE => {
                // The first and last offsets read at or past the log end (no Vec of them).
                let mut gone = self.seen.range(leo..).map(|(o, _)| *o);
                let first_gone = gone.next();
                let last_gone = gone.next_back().or(first_gone);
                let gone = first_gone.zip(last_gone);
                self.position = Some(leo);
                ctx.emit(Event::ConsumerOffsetOutOfRange {
                    position,
                    log_end_offset: leo,
                    gone,
                });
            }
            other => ctx.emit(Event::ConsumerError { error: other }),
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
    use crate::types::TP0;
    use crate::Config;

    /// What a node's handler gets besides its own state, over local values.
    type Harness = crate::effect::Locals;

    fn harness() -> Harness {
        Harness::new(Config::default(), "orders", 40)
    }

    fn producer_send(job: u64) -> Effect {
        Effect::SetTimer {
            at: 1_000,
            scheduled: Scheduled::Client(ClientTimer::ProducerSend { job }),
        }
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
        p.on_produce(&mut h.ctx(1_000), &spec);
        assert_eq!(h.take(), vec![producer_send(0)], "a send at once");

        p.on_timer(
            &mut h.ctx(1_000),
            Some(2),
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
                        tp: CLIENT_TP,
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
        assert_eq!(p.idempotence.next_sequence, 2);
        let a = p.jobs[&0].current.as_ref().unwrap();
        assert_eq!((a.request_id, a.target), (Some(40), Some(2)));
    }

    #[test]
    fn with_no_leader_the_batch_waits_retry_backoff_without_a_retry() {
        // Sender.sendProducerData: a partition with no known leader is not drained, and
        // metadata is refreshed (here: the leader is asked again after retry.backoff.ms).
        let mut h = harness();
        let mut p = Producer::default();
        let spec = ProduceSpec {
            values: vec!["a".into()],
            ..ProduceSpec::default()
        };
        p.on_produce(&mut h.ctx(1_000), &spec);
        h.take();
        p.on_timer(
            &mut h.ctx(1_000),
            None,
            ClientTimer::ProducerSend { job: 0 },
        );
        assert_eq!(
            h.take(),
            vec![
                Effect::SetTimer {
                    at: 1_000 + h.config.delivery_timeout_ms,
                    scheduled: Scheduled::Client(ClientTimer::ProducerExpire { job: 0, batch: 0 }),
                },
                Effect::SetTimer {
                    at: 1_000 + h.config.retry_backoff_ms,
                    scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 0 }),
                },
            ]
        );
        let a = p.jobs[&0].current.as_ref().unwrap();
        assert_eq!((a.request_id, a.retries_done, a.batch), (None, 0, None));
        assert_eq!(h.next_request_id, 40, "no request id taken");
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
                Effect::SetTimer {
                    at: now + h.config.retry_backoff_ms,
                    scheduled: Scheduled::Client(ClientTimer::ProducerSend { job: 0 }),
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
        }
    }

    #[test]
    fn the_first_poll_fetches_from_the_log_start_offset_of_the_leader_it_is_told_of() {
        // auto.offset.reset=earliest: with no position, the consumer starts at the log start.
        let mut h = harness();
        let mut c = Consumer::default();
        c.on_consume(&mut h.ctx(0), None, None, false);
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
        c.on_consume(&mut h.ctx(0), Some(leader), Some(2), false);
        assert_eq!(
            h.take(),
            vec![Effect::Send {
                from: CONSUMER,
                to: Node::Broker(3),
                payload: Payload::ConsumerFetch {
                    tp: CLIENT_TP,
                    request_id: 40,
                    offset: 7,
                    max_records: 2,
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
        let mut c = Consumer {
            position: Some(3),
            ..Consumer::default()
        };
        c.requests.insert(
            9,
            ConsumerRequest {
                max_records: 500,
                target: 1,
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
        };
        c.on_message(&mut h.ctx(0), response(9));
        assert_eq!(
            h.take(),
            vec![Effect::Emit(Event::ConsumerRead {
                first_offset: 3,
                last_offset: 4,
                values: vec!["x".into(), "y".into()],
                position: 5,
            })]
        );
        assert_eq!(c.position, Some(5));
        assert_eq!(c.seen.get(&4), Some(&(3, "y".to_string())));
        assert!(c.requests.is_empty());
        c.on_message(&mut h.ctx(0), response(9));
        assert_eq!(
            h.take(),
            vec![],
            "a response it no longer waits for is ignored"
        );
        assert_eq!(c.position, Some(5));
    }

    /// A producer with producer id 15, epoch 5 (as TransactionManagerTest's) and one job per
    /// batch of `counts` records, each with the next sequences (writeIdempotentBatchWithValue).
    fn producer(counts: &[usize]) -> Producer {
        let mut p = Producer::default();
        p.idempotence.producer_id = 15;
        p.idempotence.producer_epoch = 5;
        for (job, &n) in counts.iter().enumerate() {
            let base = p.idempotence.next_sequence;
            p.idempotence.next_sequence = increment_sequence(base, n as u32);
            p.jobs.insert(
                job as u64,
                ProduceJob {
                    acks: Acks::All,
                    retries: 5,
                    idempotent: true,
                    to: None,
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
                    }),
                },
            );
        }
        p
    }

    /// The batch of `job` times out after it was sent: its sequence is unresolved, and it is
    /// done (handleFailedBatch with adjustSequenceNumbers false).
    fn expire(p: &mut Producer, job: u64) {
        let last = p.jobs[&job].current.as_ref().unwrap().last_sequence();
        p.idempotence.mark_sequence_unresolved(last);
        p.jobs.remove(&job);
    }

    fn complete(p: &mut Producer, job: u64) {
        let last = p.jobs[&job].current.as_ref().unwrap().last_sequence();
        p.idempotence.last_acked_sequence = p.idempotence.last_acked_sequence.max(last);
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
        assert!(p.idempotence.unresolved.is_some());
        p.jobs.remove(&1); // fails with a timeout, retries exhausted
        assert_eq!(p.resolve_and_bump(), None);
        complete(&mut p, 2);
        assert_eq!(p.resolve_and_bump(), None, "sequence 2 acked: 3 is next");
        assert_eq!(p.idempotence.unresolved, None);
        assert_eq!(
            (p.idempotence.producer_epoch, p.idempotence.next_sequence),
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
        assert!(p.idempotence.unresolved.is_some());
        p.jobs.remove(&2);
        assert_eq!(p.resolve_and_bump(), Some((15, 6)));
        assert_eq!(p.idempotence.unresolved, None);
        assert_eq!(p.idempotence.next_sequence, 0);
        assert_eq!(p.idempotence.last_acked_sequence, -1);
    }

    #[test]
    fn an_epoch_bump_rewrites_the_in_flight_batches_from_sequence_0() {
        // TxnPartitionEntry.startSequencesAtBeginning, in sequence order.
        let mut p = producer(&[2, 3, 1]);
        p.jobs.remove(&0);
        p.idempotence.epoch_bump_required = true;
        assert_eq!(p.resolve_and_bump(), Some((15, 6)));
        let seq = |p: &Producer, j: u64| p.jobs[&j].current.as_ref().unwrap().batch.unwrap();
        assert_eq!(
            (seq(&p, 1).producer_epoch, seq(&p, 1).base_sequence),
            (6, 0)
        );
        assert_eq!(seq(&p, 2).base_sequence, 3);
        assert!(p.jobs[&2].current.as_ref().unwrap().sequence_reset);
        assert_eq!(p.idempotence.next_sequence, 4);
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
}
