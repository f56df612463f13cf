//! What a handler asks of the simulator: send a message, set a timer, record an event.
//!
//! A handler (a broker's, the controller's, a client's rule, or a scenario action) does not
//! act on the network, the queue or the trace itself: it pushes [`Effect`]s, and the
//! simulator applies them after the handler returns, **in the order they were pushed**
//! (`Sim::flush_effects`). Applying a `Send` draws the link's jitter from the one seeded
//! generator, checks the link and the destination's process, and takes the next message id
//! and queue sequence number; applying a timer takes the next sequence number. So the order
//! of the pushes is the order of the draws and of the sequence numbers, exactly as when each
//! call acted at once, and every run stays byte-identical.
//!
//! The timers a node sets, and what the queue holds ([`Scheduled`]), live here too, so that
//! this module needs nothing from the simulator (`sim` imports it, not the other way).

use crate::config::Config;
use crate::event::Event;
use crate::metadata::Topics;
use crate::network::Payload;
use crate::snapshot::{Metrics, TruncationRecord};
use crate::types::{BrokerId, Node, TimeMs, TopicPartition, Tp};

/// One thing a handler asks for. Kept small: one inline payload, event or queue entry.
#[derive(Debug)]
#[cfg_attr(test, derive(PartialEq))] // Node tests assert the exact effects.
pub(crate) enum Effect {
    /// Put `payload` on the wire from `from` to `to` (what `Sim::send` did at once: the cut
    /// check, the destination process check and the connection reset, the jitter draw).
    Send {
        from: Node,
        to: Node,
        payload: Payload,
    },
    /// Queue `scheduled` at `at` (never before the time it is applied).
    SetTimer { at: TimeMs, scheduled: Scheduled },
    /// Queue `scheduled` at `at` plus a phase drawn, when applied, from the seeded generator
    /// in `0..=max_phase` (a periodic task's first run at a broker's start). The draw is part
    /// of applying, so it stays in order with the jitter draws of the sends pushed before it.
    SetTimerWithPhase {
        at: TimeMs,
        max_phase: TimeMs,
        scheduled: Scheduled,
    },
    /// Queue `scheduled` at `at` plus a draw in `0..=max_phase` from the seeded generator
    /// (when applied, as for [`Effect::SetTimerWithPhase`]), but not after `at_most`: the
    /// producer's retry backoff, a jittered interval with a ceiling (`client::retry_backoff`).
    SetTimerJittered {
        at: TimeMs,
        max_phase: TimeMs,
        at_most: TimeMs,
        scheduled: Scheduled,
    },
    /// Record `Event` in the trace, at the time it is applied (the handler's time).
    Emit(Event),
    /// Tell the simulator's observers what happened in a node (the committed history, the
    /// invariants, the truncations the view draws), at this point among the other effects.
    /// Observers read and record; nothing of a node changes.
    Observe(Observation),
    /// Broker `broker`'s process exits after a controlled shutdown (its last act): the
    /// simulator ends the process, as the kernel does.
    Exit { broker: BrokerId },
}

/// What a node tells the simulator's observers (an [`Effect::Observe`]).
#[derive(Debug)]
#[cfg_attr(test, derive(PartialEq))]
pub(crate) enum Observation {
    /// `broker` became leader at `leader_epoch` (Partition.makeLeader): does its log hold
    /// every committed record? `recovering`: the registration's LeaderRecoveryState is
    /// RECOVERING (an unclean election chose it).
    NewLeader {
        tp: Tp,
        broker: BrokerId,
        leader_epoch: i32,
        recovering: bool,
    },
    /// `broker`, leading at `leader_epoch`, raised its HW to `high_watermark`: the records
    /// below it are committed if the controller recognises this leadership.
    HighWatermark {
        tp: Tp,
        broker: BrokerId,
        leader_epoch: i32,
        high_watermark: u64,
    },
    /// `broker` appended offsets `first..=last` as leader (an idempotent batch appears in a
    /// leader's log at most once).
    LeaderAppend {
        tp: Tp,
        broker: BrokerId,
        first: u64,
        last: u64,
    },
    /// A replica's log was truncated (kept for the view to show the records falling away).
    Truncated(Tp, TruncationRecord),
}

/// What a node's handler has besides its own state (issue 13, step 4): the time, the
/// cluster's configuration, the topics table (partition names), the cluster-wide metric counters, the
/// simulator's request-id counter, and where its effects go. The simulator builds one for a
/// call with [`node_ctx!`] from its own disjoint fields, so the node can be borrowed mutably
/// beside it and reaches nothing else: not another node, the network, the queue or the
/// generator.
pub(crate) struct Ctx<'a> {
    pub now: TimeMs,
    pub config: &'a Config,
    pub topics: &'a Topics,
    pub metrics: &'a mut Metrics,
    pub next_request_id: &'a mut u64,
    pub effects: &'a mut Vec<Effect>,
}

impl Ctx<'_> {
    /// The name of partition `tp`, for an event.
    pub fn tp_name(&self, tp: Tp) -> TopicPartition {
        self.topics.name(tp).clone()
    }

    /// The name of partition `tp` where the cluster has more than one (`Topics::label`).
    pub fn tp_label(&self, tp: Tp) -> Option<TopicPartition> {
        self.topics.label(tp)
    }

    /// Asks for `payload` to go from `from` to `to`.
    pub fn send(&mut self, from: Node, to: Node, payload: Payload) {
        self.effects.push(Effect::Send { from, to, payload });
    }

    /// Asks for `scheduled` to be queued at `at`.
    pub fn set_timer(&mut self, at: TimeMs, scheduled: Scheduled) {
        self.effects.push(Effect::SetTimer { at, scheduled });
    }

    /// Asks for `scheduled` to be queued at a phase drawn, when applied, in
    /// `0..=max_phase` after now (a periodic task's first run at a process's start).
    pub fn set_timer_with_phase(&mut self, max_phase: TimeMs, scheduled: Scheduled) {
        self.effects.push(Effect::SetTimerWithPhase {
            at: self.now,
            max_phase,
            scheduled,
        });
    }

    /// Records what happened, now.
    pub fn emit(&mut self, event: Event) {
        self.effects.push(Effect::Emit(event));
    }

    /// Tells the simulator's observers what happened, at this point among the effects.
    pub fn observe(&mut self, observation: Observation) {
        self.effects.push(Effect::Observe(observation));
    }

    /// Broker `broker`'s process exits (the end of a controlled shutdown).
    pub fn exit(&mut self, broker: BrokerId) {
        self.effects.push(Effect::Exit { broker });
    }

    /// A fresh id for a request (a correlation id) or a proposal, from the one counter the
    /// whole simulation shares (so ids are what they were before nodes had their own state).
    pub fn next_request_id(&mut self) -> u64 {
        let id = *self.next_request_id;
        *self.next_request_id += 1;
        id
    }
}

/// The simulator's fields a [`Ctx`] borrows, as local values: a unit test drives one node
/// alone over them and reads back the effects it asked for (openraft's engine tests).
#[cfg(test)]
pub(crate) struct Locals {
    pub config: Config,
    pub topics: Topics,
    pub metrics: Metrics,
    pub next_request_id: u64,
    pub effects: Vec<Effect>,
}

#[cfg(test)]
impl Locals {
    /// One topic `topic` of one partition, no effects yet, request ids from
    /// `next_request_id`.
    pub fn new(config: Config, topic: &str, next_request_id: u64) -> Locals {
        Locals {
            config,
            topics: Topics::new(0, &[(topic.to_string(), 1)]),
            metrics: Metrics::default(),
            next_request_id,
            effects: Vec::new(),
        }
    }

    /// The topics `topics` (name, partition count), no effects yet.
    pub fn with_topics(config: Config, topics: &[(&str, u32)], next_request_id: u64) -> Locals {
        let mut names = Vec::new();
        for (name, count) in topics {
            names.push((name.to_string(), *count));
        }
        Locals {
            topics: Topics::new(0, &names),
            ..Locals::new(config, "t", next_request_id)
        }
    }

    pub fn ctx(&mut self, now: TimeMs) -> Ctx<'_> {
        Ctx {
            now,
            config: &self.config,
            topics: &self.topics,
            metrics: &mut self.metrics,
            next_request_id: &mut self.next_request_id,
            effects: &mut self.effects,
        }
    }

    /// The effects pushed since the last call, in push order.
    pub fn take(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }
}

/// A [`Ctx`] from the simulator's fields: `node_ctx!(self)` inside `impl Sim`.
macro_rules! node_ctx {
    ($sim:expr) => {
        $crate::effect::Ctx {
            now: $sim.now,
            config: &$sim.config,
            topics: &$sim.topics,
            metrics: &mut $sim.metrics,
            next_request_id: &mut $sim.next_request_id,
            effects: &mut $sim.effects,
        }
    };
}
pub(crate) use node_ctx;

/// Timers that belong to one broker process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokerTimer {
    /// Fetcher thread (`leader`, `fetcher_id`) sends its next Fetch (generation guards
    /// against stale timers).
    SendFetch {
        leader: BrokerId,
        fetcher_id: u32,
        generation: u64,
    },
    /// replica.socket.timeout.ms passed with no response to this thread's fetch.
    FetchTimeout {
        leader: BrokerId,
        fetcher_id: u32,
        fetch_id: u64,
    },
    /// replica.fetch.wait.max.ms passed for a fetch held by this leader (DelayedFetch).
    HeldFetchExpire { fetch_id: u64 },
    /// ReplicaManager's isr-expiration task (every replica.lag.time.max.ms / 2). The
    /// generation is the broker's `isr_expiration_generation` when it was scheduled; a change
    /// of replica.lag.time.max.ms bumps it, so the task queued at the old period is stale.
    IsrExpiration { generation: u64 },
    /// ReplicaManager's highwatermark-checkpoint task.
    HwCheckpoint,
    /// BrokerLifecycleManager's heartbeat.
    Heartbeat,
    /// One heartbeat out of turn (the periodic one keeps its own schedule).
    HeartbeatOnce,
    /// A DelayedProduce's request timeout.
    ProduceExpire { tp: Tp, request_id: u64 },
    /// Give up waiting for the controller during controlled shutdown.
    ShutdownTimeout,
    /// controller.socket.timeout.ms passed with no answer to this AlterPartition request.
    AlterPartitionTimeout { request_id: u64 },
    /// DefaultAlterPartitionManager retries after a top-level error.
    AlterPartitionRetry,
    /// BrokerLifecycleManager: (re)send the registration until it is answered.
    Register,
    /// LogManager's kafka-log-flusher task (flushDirtyLogs), scheduled only when a log
    /// could be flushed by time (`Config::log_flush_ms`); the generation is the broker's
    /// `log_flusher_generation` (a change of a `log.flush.*` config restarts the task).
    LogFlusher { generation: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControllerTimer {
    SessionCheck { broker: BrokerId },
    UncleanElection,
    PreferredRebalance,
}

// Every client timer today is the producer's; the consumer has none yet.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientTimer {
    /// The producer (re)sends the current batch of a job.
    ProducerSend { job: u64 },
    /// The producer's in-flight request got no answer in time.
    ProducerRequestTimeout { job: u64, request_id: u64 },
    /// A retried batch's backoff (`attempts` retries done) is over, unless a new leader
    /// ended it already (KIP-951).
    ProducerRetryBackoff { job: u64, batch: u64, attempts: u32 },
    /// The producer's metadata refresh `id` is answered (a batch without a leader waits for
    /// it; a backing-off batch whose partition got a new leader goes then, KIP-951).
    ProducerMetadataRefresh { id: u64 },
    /// A batch reaches `delivery.timeout.ms`: Sender.sendProducerData expires it wherever it
    /// is (held in the accumulator, backing off, or in flight), at that very time.
    ProducerExpire { job: u64, batch: u64 },
}

/// What the queue holds: a message to deliver or a node's timer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheduled {
    Deliver {
        message_id: u64,
    },
    Broker {
        broker: BrokerId,
        incarnation: u32,
        timer: BrokerTimer,
    },
    Controller(ControllerTimer),
    Client(ClientTimer),
}
