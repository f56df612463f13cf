//! The broker node: what one Kafka broker process holds and does (BrokerServer), as a plain
//! struct whose handlers take the time and one input and push effects.
//!
//! It holds the replica of the partition (`Partition`: the log, which is the broker's
//! files, and the role), the replica fetcher (`ReplicaFetcher`), the alter-partition
//! manager, the metadata image it last applied (the metadata cache), and what
//! BrokerLifecycleManager keeps (registration, broker epoch, controlled shutdown). Its entry
//! points:
//!
//! - [`Broker::on_message`] and [`Broker::on_timer`]: one input, as KafkaApis and the
//!   broker's scheduled tasks receive them;
//! - the process's own: [`Broker::form`] (the cluster forms at time 0), [`Broker::start`]
//!   (a new process recovers from its files), [`Broker::on_sigterm`],
//!   [`Broker::lose_memory`] (the process ended: everything but the files is gone),
//!   [`Broker::lose_disk`], [`Broker::set_slow`], [`Broker::restart_isr_expiration`].
//!
//! It never reads another node, the network, the queue or its own process state: the
//! simulator decides whether an input reaches it (a frozen or dead process receives
//! nothing), and applies its effects.

use std::sync::Arc;

use crate::effect::{BrokerTimer, Ctx, Observation};
use crate::event::{Event, FetcherRemovedReason};
use crate::fetcher::ReplicaFetcher;
use crate::log::ReplicaLog;
use crate::metadata::{MetadataImage, PartitionRegistration};
use crate::network::{AlterPartitionResult, FetchPartition, Outstanding, Payload};
use crate::partition::{
    AlterPartitionManager, BrokerMeters, FetchLimits, Host, Partition, Role,
    ALTER_PARTITION_RETRY_MS,
};
use crate::quota::ReplicationQuota;
use crate::types::{BrokerId, ErrorCode, Node, TimeMs, Tp};
use crate::vec_map::VecMap;

/// One broker: its files (the partition's log and the clean-shutdown marker) and the memory
/// of its running process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    pub id: BrokerId,
    /// This process's incarnation (Kafka's incarnation id), given at its start: its
    /// registration carries it, and its timers belong to it.
    pub incarnation: u32,
    /// Its replica of each partition: the log (the files) and the role (memory)
    /// (ReplicaManager.allPartitions).
    pub partitions: VecMap<Tp, Partition>,
    pub fetcher: ReplicaFetcher,
    pub registered: bool,
    pub broker_epoch: i64,
    /// The broker epoch written at a clean shutdown (-1: none, so the next registration is
    /// an unclean one). A file, as Kafka's clean-shutdown marker.
    pub clean_shutdown_epoch: i64,
    pub metadata: Option<Arc<MetadataImage>>,
    /// In controlled shutdown.
    pub shutting_down: bool,
    /// The controller has answered that this broker is in controlled shutdown.
    pub got_controlled_shutdown_response: bool,
    /// DefaultAlterPartitionManager: the proposal waiting for an answer, and the request in
    /// flight. It belongs to the process, not to the partition's role.
    pub alter_partition: AlterPartitionManager,
    /// The follower fetches this broker holds as a leader, waiting for records
    /// (the DelayedFetch purgatory), oldest first.
    pub delayed_fetches: Vec<DelayedFetch>,
    /// The current isr-expiration task: bumped when replica.lag.time.max.ms changes, so the
    /// task scheduled at the old period dies and one at the new period takes its place.
    pub isr_expiration_generation: u64,
    /// The current log-flusher task: bumped when a `log.flush.*` config changes.
    pub log_flusher_generation: u64,
    /// The previous broker epoch this process registers with (kept across retries).
    pub registering_with_previous_epoch: i64,
    /// The process's meters (`metrics.rs`): gone with its memory.
    pub meters: BrokerMeters,
    /// QuotaManagers.leader: the leader side of the replication throttle (`quota.rs`); the
    /// follower side is the fetcher's.
    pub leader_quota: ReplicationQuota,
}

/// A follower's Fetch held by this leader until one of its partitions has records past the
/// fetch offset or `replica.fetch.wait.max.ms` passes (DelayedFetch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayedFetch {
    pub fetch_id: u64,
    pub replica_id: BrokerId,
    /// Each partition of the request: its fetch offset and the fetch's current leader epoch
    /// (if this leader moved to a newer epoch meanwhile, the answer is FENCED_LEADER_EPOCH,
    /// DelayedFetch's "Case E").
    pub partitions: Vec<(Tp, u64, i32)>,
    pub since_ms: TimeMs,
    pub deadline_ms: TimeMs,
}

/// The [`Host`] a partition's handler gets: the broker's id, incarnation, epoch, metadata
/// and alter-partition manager, borrowed beside `$b.partitions` and `$b.fetcher`.
macro_rules! host {
    ($b:expr) => {
        Host {
            id: $b.id,
            incarnation: $b.incarnation,
            broker_epoch: $b.broker_epoch,
            metadata: $b.metadata.as_deref(),
            alter_partition: &mut $b.alter_partition,
            meters: &mut $b.meters,
        }
    };
}

impl Broker {
    /// Broker `id` as the cluster forms at time 0: registered with `broker_epoch`, an empty
    /// log for each partition of `partitions`, no metadata yet.
    pub(crate) fn new(
        id: BrokerId,
        broker_epoch: i64,
        partitions: impl Iterator<Item = Tp>,
    ) -> Broker {
        Broker {
            id,
            incarnation: 0,
            partitions: partitions
                .map(|tp| (tp, Partition::new(tp, ReplicaLog::default())))
                .collect(),
            fetcher: ReplicaFetcher::default(),
            registered: true,
            broker_epoch,
            clean_shutdown_epoch: -1,
            metadata: None,
            shutting_down: false,
            got_controlled_shutdown_response: false,
            alter_partition: AlterPartitionManager::default(),
            delayed_fetches: Vec::new(),
            isr_expiration_generation: 0,
            log_flusher_generation: 0,
            registering_with_previous_epoch: -1,
            meters: BrokerMeters::default(),
            leader_quota: ReplicationQuota::default(),
        }
    }

    /// This broker's replica of `tp` (it holds one of every partition of the cluster).
    pub fn partition(&self, tp: Tp) -> &Partition {
        &self.partitions[&tp]
    }

    pub fn log(&self, tp: Tp) -> &ReplicaLog {
        &self.partitions[&tp].log
    }

    pub fn role(&self, tp: Tp) -> &Role {
        &self.partitions[&tp].role
    }

    // ---- entry points ----------------------------------------------------------------

    /// A message reached this broker's process.
    pub(crate) fn on_message(&mut self, ctx: &mut Ctx, from: Node, payload: Payload) {
        match payload {
            Payload::Fetch {
                fetch_id,
                replica_id,
                broker_epoch,
                partitions,
                ..
            } => self.handle_fetch(ctx, from, fetch_id, replica_id, broker_epoch, partitions),
            Payload::FetchResponse {
                fetch_id,
                partitions,
            } => {
                let host = host!(self);
                self.fetcher.on_response(
                    ctx,
                    &host,
                    &mut self.partitions,
                    from,
                    fetch_id,
                    partitions,
                );
            }
            Payload::Produce {
                request_id,
                tp,
                acks,
                values,
                shape,
                timeout_ms,
                producer,
            } => {
                let mut host = host!(self);
                let Some(partition) = self.partitions.get_mut(&tp) else {
                    return;
                };
                let leo = partition.log.log_end_offset();
                partition.handle_produce(
                    ctx, &mut host, from, request_id, acks, values, shape, timeout_ms, producer,
                );
                // ReplicaManager.appendRecords → addCompletePurgatoryAction: the fetches
                // waiting for this partition's records complete after the request is handled
                // (KafkaApis: `replicaManager.tryCompleteActions()`).
                if self.partitions[&tp].log.log_end_offset() > leo {
                    self.complete_delayed_fetches(ctx, tp);
                }
            }
            Payload::ConsumerFetch {
                request_id,
                tp,
                offset,
                max_records,
                client_rack,
            } => {
                let host = host!(self);
                if let Some(partition) = self.partitions.get_mut(&tp) {
                    partition.handle_consumer_fetch(
                        ctx,
                        &host,
                        from,
                        request_id,
                        offset,
                        max_records,
                        client_rack.as_deref(),
                    );
                }
            }
            Payload::BrokerRegistrationResponse { broker_epoch } => {
                if broker_epoch < 0 {
                    return; // refused: the Register timer tries again
                }
                self.broker_epoch = broker_epoch;
                self.registered = true;
                self.set_timer(ctx, 0, BrokerTimer::Heartbeat);
            }
            Payload::BrokerHeartbeatResponse {
                should_shut_down: true,
                ..
            } if self.shutting_down => self.finish_shutdown(ctx),
            // BrokerLifecycleManager in PENDING_CONTROLLED_SHUTDOWN: "If this is the first
            // pending controlled shutdown response we got, schedule our next heartbeat a
            // little bit sooner than we usually would" (50 ms).
            Payload::BrokerHeartbeatResponse {
                in_controlled_shutdown: true,
                should_shut_down: false,
                ..
            } if self.shutting_down && !self.got_controlled_shutdown_response => {
                self.got_controlled_shutdown_response = true;
                self.set_timer(ctx, 50, BrokerTimer::HeartbeatOnce);
            }
            Payload::AlterPartitionResponse {
                request_id,
                top_error,
                partitions,
            } => self.on_alter_partition_response(ctx, request_id, top_error, partitions),
            Payload::Metadata { image } => self.apply_metadata(ctx, image),
            Payload::ConnectionReset {
                request:
                    Outstanding::Fetch {
                        fetcher_id,
                        fetch_id,
                    },
            } => {
                let Node::Broker(leader) = from else { return };
                let host = host!(self);
                let key = (leader, fetcher_id);
                self.fetcher
                    .on_disconnected(ctx, &host, &mut self.partitions, key, fetch_id);
            }
            _ => {}
        }
    }

    /// One of this process's timers fired.
    pub(crate) fn on_timer(&mut self, ctx: &mut Ctx, timer: BrokerTimer) {
        match timer {
            BrokerTimer::SendFetch {
                leader,
                fetcher_id,
                generation,
            } => {
                let host = host!(self);
                let key = (leader, fetcher_id);
                self.fetcher
                    .send_fetch(ctx, &host, &mut self.partitions, key, generation);
            }
            BrokerTimer::FetchTimeout {
                leader,
                fetcher_id,
                fetch_id,
            } => {
                let host = host!(self);
                let key = (leader, fetcher_id);
                self.fetcher
                    .on_timeout(ctx, &host, &mut self.partitions, key, fetch_id);
            }
            BrokerTimer::HeldFetchExpire { fetch_id } => {
                // DelayedFetch.onExpiration: answer with what there is (usually nothing).
                if let Some(i) = self
                    .delayed_fetches
                    .iter()
                    .position(|d| d.fetch_id == fetch_id)
                {
                    let d = self.delayed_fetches.remove(i);
                    self.answer_delayed_fetch(ctx, d);
                }
            }
            BrokerTimer::IsrExpiration { generation } => {
                if generation != self.isr_expiration_generation {
                    return; // scheduled at an earlier replica.lag.time.max.ms
                }
                // ReplicaManager.maybeShrinkIsr: every partition this broker leads.
                let mut host = host!(self);
                for partition in self.partitions.values_mut() {
                    partition.maybe_shrink_isr(ctx, &mut host);
                }
                let period = isr_expiration_period(ctx);
                self.set_timer(ctx, period, BrokerTimer::IsrExpiration { generation });
            }
            BrokerTimer::LogFlusher { generation } => {
                if generation != self.log_flusher_generation {
                    return; // scheduled under earlier log.flush.* configs
                }
                // LogManager.flushDirtyLogs: "if (timeSinceLastFlush >= log.config.flushMs)
                // log.flush(false)", for every log of the broker.
                let broker_flush_ms = ctx.config.log_flush_ms();
                for (&tp, partition) in self.partitions.iter_mut() {
                    let flush_ms = ctx.topics.flush_ms(tp, broker_flush_ms);
                    let log = &mut partition.log;
                    if ctx.now.saturating_sub(log.last_flush_ms) >= flush_ms {
                        log.flush(ctx.now);
                    }
                }
                // KafkaScheduler.schedule: at a fixed rate of log.flush.scheduler.interval.ms
                // (Long.MAX_VALUE by default: the first run is the only one).
                let period = ctx.config.log_flush_scheduler_interval_ms;
                if period < crate::config::LOG_FLUSH_NEVER {
                    self.set_timer(ctx, period, BrokerTimer::LogFlusher { generation });
                }
            }
            BrokerTimer::HwCheckpoint => {
                self.checkpoint_high_watermark();
                let interval = ctx.config.replica_high_watermark_checkpoint_interval_ms;
                self.set_timer(ctx, interval, BrokerTimer::HwCheckpoint);
            }
            BrokerTimer::HeartbeatOnce => self.send_heartbeat(ctx),
            BrokerTimer::Heartbeat => {
                self.send_heartbeat(ctx);
                let interval = ctx.config.broker_heartbeat_interval_ms;
                self.set_timer(ctx, interval, BrokerTimer::Heartbeat);
            }
            BrokerTimer::ProduceExpire { tp, request_id } => {
                let host = host!(self);
                if let Some(partition) = self.partitions.get_mut(&tp) {
                    partition.expire_produce(ctx, &host, request_id);
                }
            }
            BrokerTimer::Register => {
                if !self.registered {
                    let payload = Payload::BrokerRegistration {
                        previous_broker_epoch: self.registering_with_previous_epoch,
                        incarnation: self.incarnation,
                    };
                    ctx.send(Node::Broker(self.id), Node::Controller, payload);
                    let interval = ctx.config.broker_heartbeat_interval_ms;
                    self.set_timer(ctx, interval, BrokerTimer::Register);
                }
            }
            BrokerTimer::ShutdownTimeout => {
                if self.shutting_down {
                    self.finish_shutdown(ctx);
                }
            }
            BrokerTimer::AlterPartitionTimeout { request_id } => {
                self.on_alter_partition_timeout(ctx, request_id)
            }
            BrokerTimer::AlterPartitionRetry => host!(self).propagate_alter_partition(ctx),
        }
    }

    /// The cluster forms at time 0: the broker applies the first metadata image and starts
    /// its periodic tasks and its heartbeat (each at a phase drawn from the seeded generator:
    /// brokers start at different moments).
    pub(crate) fn form(&mut self, ctx: &mut Ctx, image: Arc<MetadataImage>) {
        self.apply_metadata(ctx, image);
        self.start_tasks(ctx);
        let max_phase = ctx.config.broker_heartbeat_interval_ms - 1;
        let heartbeat = host!(self).timer(BrokerTimer::Heartbeat);
        ctx.set_timer_with_phase(max_phase, heartbeat);
    }

    /// A new process starts with incarnation `incarnation`: log recovery from the files (the
    /// HW comes back from replication-offset-checkpoint), the periodic tasks, and the
    /// registration (an unclean one unless the last process left its clean-shutdown epoch).
    pub(crate) fn start(&mut self, ctx: &mut Ctx, incarnation: u32) {
        debug_assert!(
            incarnation > self.incarnation && !self.registered && self.metadata.is_none(),
            "a new process, with only the files of the last"
        );
        self.incarnation = incarnation;
        for partition in self.partitions.values_mut() {
            let log = &mut partition.log;
            let hw = log.hw_checkpoint.unwrap_or(0);
            log.update_high_watermark(hw);
        }
        self.registering_with_previous_epoch = self.clean_shutdown_epoch;
        self.clean_shutdown_epoch = -1;
        for partition in self.partitions.values_mut() {
            // LocalLog's lastFlushedTime starts at the log's load.
            partition.log.last_flush_ms = ctx.now;
        }
        self.start_tasks(ctx);
        self.set_timer(ctx, 0, BrokerTimer::Register);
        for (&tp, partition) in &self.partitions {
            let log = &partition.log;
            ctx.emit(Event::BrokerStarted {
                broker: self.id,
                tp: ctx.tp_name(tp),
                log_end_offset: log.log_end_offset(),
                high_watermark: log.high_watermark,
            });
        }
    }

    /// SIGTERM to a running process: controlled shutdown begins (BrokerLifecycleManager
    /// beginControlledShutdown: the next heartbeat asks for it at once).
    pub(crate) fn on_sigterm(&mut self, ctx: &mut Ctx) {
        debug_assert!(!self.shutting_down);
        self.shutting_down = true;
        self.send_heartbeat(ctx);
        let timeout = ctx.config.broker_session_timeout_ms;
        self.set_timer(ctx, timeout, BrokerTimer::ShutdownTimeout);
    }

    /// The process ended (kill -9, a lost disk, a finished shutdown): what it held in memory
    /// is gone; the files (the log, the checkpoints, the clean-shutdown epoch) stay.
    pub(crate) fn lose_memory(&mut self) {
        for partition in self.partitions.values_mut() {
            partition.role = Role::None;
        }
        self.fetcher.lose_threads();
        self.delayed_fetches.clear();
        self.metadata = None;
        self.registered = false;
        self.alter_partition = AlterPartitionManager::default();
        self.shutting_down = false;
        self.got_controlled_shutdown_response = false;
        self.meters = BrokerMeters::default();
        self.leader_quota = ReplicationQuota::default();
    }

    /// The disk is replaced by an empty one: the log, its checkpoints and the clean-shutdown
    /// epoch are gone.
    pub(crate) fn lose_disk(&mut self) {
        for partition in self.partitions.values_mut() {
            partition.log.wipe();
        }
        self.clean_shutdown_epoch = -1;
    }

    /// The machine lost power: each log loses what the OS had not written back
    /// (`ReplicaLog::lose_unwritten`); the checkpoint files, fsynced, stay. The process
    /// itself ends through the simulator, as after kill -9.
    pub(crate) fn lose_power(&mut self, ctx: &mut Ctx) {
        let delay = ctx.config.writeback_delay_ms;
        for (&tp, partition) in self.partitions.iter_mut() {
            let Some(t) = partition.log.lose_unwritten(ctx.now, delay) else {
                continue;
            };
            let (Some(first), Some(last)) = (t.removed.first(), t.removed.last()) else {
                continue;
            };
            ctx.emit(Event::UnwrittenRecordsLost {
                broker: self.id,
                tp: ctx.tp_name(tp),
                first_offset: first.offset,
                last_offset: last.offset,
            });
            ctx.observe(Observation::Truncated(
                tp,
                crate::snapshot::TruncationRecord {
                    time_ms: ctx.now,
                    broker: self.id,
                    to_offset: t.to_offset,
                    removed: t.removed,
                    below_high_watermark: t.below_high_watermark,
                },
            ));
        }
    }

    /// Each fetch now takes `ms` longer on this broker's machine.
    pub(crate) fn set_slow(&mut self, ms: u64) {
        self.fetcher.slow_ms = ms;
    }

    /// replica.lag.time.max.ms changed: drop the isr-expiration task scheduled at the old
    /// period and start one at the new period, as if the process had been restarted with
    /// the new value (`Sim::restart_isr_expiration_tasks` says why).
    pub(crate) fn restart_isr_expiration(&mut self, ctx: &mut Ctx) {
        self.isr_expiration_generation += 1;
        self.schedule_isr_expiration(ctx);
    }

    // ---- BrokerLifecycleManager and ReplicaManager ------------------------------------

    fn set_timer(&self, ctx: &mut Ctx, delay: u64, timer: BrokerTimer) {
        let at = ctx.now + delay;
        ctx.set_timer(
            at,
            crate::effect::Scheduled::Broker {
                broker: self.id,
                incarnation: self.incarnation,
                timer,
            },
        );
    }

    fn start_tasks(&mut self, ctx: &mut Ctx) {
        // ReplicaManager.startup schedules isr-expiration and highwatermark-checkpoint with an
        // initial delay of 0, from the broker's own start. Brokers start at different moments,
        // so each task's phase is drawn from the seeded generator.
        self.schedule_isr_expiration(ctx);
        let cp = ctx.config.replica_high_watermark_checkpoint_interval_ms;
        let checkpoint = host!(self).timer(BrokerTimer::HwCheckpoint);
        ctx.set_timer_with_phase(cp - 1, checkpoint);
        self.schedule_log_flusher(ctx);
    }

    /// LogManager.startupWithConfigOverrides schedules kafka-log-flusher
    /// `log.initial.task.delay.ms` (30 s) after its start, then every
    /// `log.flush.scheduler.interval.ms`. With the defaults (flush.ms Long.MAX_VALUE) no run
    /// can flush anything, so the task is not scheduled at all: runs stay as they were.
    fn schedule_log_flusher(&mut self, ctx: &mut Ctx) {
        if ctx.config.log_flush_ms() < crate::config::LOG_FLUSH_NEVER || ctx.topics.any_flush_ms() {
            let generation = self.log_flusher_generation;
            let delay = crate::config::LOG_INITIAL_TASK_DELAY_MS;
            self.set_timer(ctx, delay, BrokerTimer::LogFlusher { generation });
        }
    }

    /// A `log.flush.*` config changed: drop the log-flusher task scheduled under the old
    /// values and schedule it again, as if the process had been restarted with the new ones.
    pub(crate) fn restart_log_flusher(&mut self, ctx: &mut Ctx) {
        self.log_flusher_generation += 1;
        self.schedule_log_flusher(ctx);
    }

    /// Schedules the broker's isr-expiration task under its current generation, first run at
    /// a phase drawn from the seeded generator (as at a broker's start).
    fn schedule_isr_expiration(&mut self, ctx: &mut Ctx) {
        let max_phase = isr_expiration_period(ctx) - 1;
        let generation = self.isr_expiration_generation;
        let task = host!(self).timer(BrokerTimer::IsrExpiration { generation });
        ctx.set_timer_with_phase(max_phase, task);
    }

    fn send_heartbeat(&self, ctx: &mut Ctx) {
        if !self.registered {
            return;
        }
        let payload = Payload::BrokerHeartbeat {
            broker_epoch: self.broker_epoch,
            want_shut_down: self.shutting_down,
            metadata_offset: self.metadata.as_ref().map_or(0, |m| m.offset),
        };
        ctx.send(Node::Broker(self.id), Node::Controller, payload);
    }

    /// ReplicaManager.checkpointHighWatermarks: write the HW to replication-offset-checkpoint.
    /// Every partition this broker holds a replica of, as its metadata says.
    pub(crate) fn checkpoint_high_watermark(&mut self) {
        let Some(m) = self.metadata.as_deref() else {
            return;
        };
        for (tp, partition) in self.partitions.iter_mut() {
            if m.partition(*tp)
                .is_some_and(|p| p.replicas.contains(&self.id))
            {
                let log = &mut partition.log;
                log.hw_checkpoint = Some(log.high_watermark);
            }
        }
    }

    /// The controller let this broker go (or it gave up waiting): checkpoint the HW, answer
    /// what waits, write the clean-shutdown epoch, and exit.
    fn finish_shutdown(&mut self, ctx: &mut Ctx) {
        self.checkpoint_high_watermark();
        // LogManager.shutdown flushes every log before closing it (`log.flush(true)`), so
        // after a clean shutdown nothing waits in the page cache for a power loss to take.
        for partition in self.partitions.values_mut() {
            partition.log.flush(ctx.now);
            partition.log.unwritten.clear();
        }
        let host = host!(self);
        for partition in self.partitions.values_mut() {
            partition.abandon(ctx, &host);
        }
        // The fetches it held are answered NOT_LEADER_OR_FOLLOWER.
        for d in std::mem::take(&mut self.delayed_fetches) {
            let mut data = Vec::with_capacity(d.partitions.len());
            for &(tp, _, _) in &d.partitions {
                if let Some(p) = self.partitions.get(&tp) {
                    data.push(p.fetch_error(ErrorCode::NOT_LEADER_OR_FOLLOWER));
                }
            }
            let payload = Payload::FetchResponse {
                fetch_id: d.fetch_id,
                partitions: data,
            };
            ctx.send(Node::Broker(self.id), Node::Broker(d.replica_id), payload);
        }
        self.clean_shutdown_epoch = self.broker_epoch;
        ctx.emit(Event::BrokerShutDown { broker: self.id });
        ctx.exit(self.id);
    }

    /// The broker applies controller metadata: becomes leader or follower of each partition
    /// (ReplicaManager.applyDelta → Partition.makeLeader / makeFollower, then the fetcher),
    /// partition by partition in index order.
    pub(crate) fn apply_metadata(&mut self, ctx: &mut Ctx, image: Arc<MetadataImage>) {
        if self
            .metadata
            .as_ref()
            .is_some_and(|m| m.offset >= image.offset)
        {
            return;
        }
        // The first image this process applies: what its logs hold that the image does not
        // give it is a stray log (LogManager.isStrayKraftReplica, at the start).
        let first = self.metadata.is_none();
        self.metadata = Some(image.clone());
        // BrokerConfigHandler and TopicConfigHandler.processConfigChanges: the throttle's
        // configs as this image has them, for both quota managers.
        let (rates, replicas) = (&image.throttle_rates, &image.throttled_replicas);
        self.leader_quota.configure(self.id, rates, replicas, true);
        self.fetcher
            .quota
            .configure(self.id, rates, replicas, false);
        let mut stopped_leading = Vec::new();
        for (tp, p) in &image.partitions {
            if self.apply_partition(ctx, *tp, p, first) {
                stopped_leading.push(*tp);
            }
        }
        // ReplicaManager.applyDelta completes what waited for a partition this broker no longer
        // leads once the delta's partitions are applied (stopPartitions,
        // applyLocalFollowersDelta after the fetchers start).
        for tp in stopped_leading {
            self.complete_delayed_fetches_not_leader(ctx, tp);
        }
    }

    /// One partition's registration from a newer image. True when this broker stopped
    /// leading it (now a follower, or its replica deleted).
    fn apply_partition(
        &mut self,
        ctx: &mut Ctx,
        tp: Tp,
        p: &PartitionRegistration,
        first: bool,
    ) -> bool {
        let Some(partition) = self.partitions.get_mut(&tp) else {
            return false;
        };
        // A newer image never carries an older leader epoch: a broker's view of the
        // partition's epochs only rises.
        let known_epoch = match &partition.role {
            Role::Leader(l) => l.leader_epoch,
            Role::Follower(f) => f.leader_epoch,
            Role::None => -1,
        };
        debug_assert!(p.leader_epoch >= known_epoch, "{p:?} after {known_epoch}");
        if !p.replicas.contains(&self.id) {
            let log = &partition.log;
            let holds = !matches!(partition.role, Role::None)
                || log.log_end_offset() > 0
                || !log.epoch_cache.entries.is_empty()
                || log.hw_checkpoint.is_some();
            if holds {
                self.delete_replica(ctx, tp, p, first);
            }
            return holds;
        }
        if p.leader == Some(self.id) {
            let mut host = host!(self);
            let same_epoch =
                matches!(&partition.role, Role::Leader(l) if l.leader_epoch == p.leader_epoch);
            if same_epoch {
                partition.apply_partition_update(ctx, &mut host, p);
            } else {
                partition.make_leader(ctx, &mut host, p);
            }
            return false;
        }
        let host = host!(self);
        let mut was_leader = false;
        match &mut partition.role {
            Role::Follower(f) if f.leader == p.leader && f.leader_epoch == p.leader_epoch => {
                f.partition_epoch = p.partition_epoch;
            }
            _ => {
                was_leader = matches!(partition.role, Role::Leader(_));
                partition.make_follower(ctx, &host, p);
                if p.leader.is_some() {
                    self.fetcher.start(ctx, &host, &mut self.partitions, tp);
                }
            }
        }
        let Some(partition) = self.partitions.get_mut(&tp) else {
            return was_leader;
        };
        // ReplicaManager.applyLocalFollowersDelta: "During controlled shutdown, replica
        // with no leaders and replica where this broker is not in the ISR are stopped."
        if self.shutting_down && (p.leader.is_none() || !p.isr.contains(&self.id)) {
            self.fetcher.stop(
                ctx,
                &host,
                partition,
                FetcherRemovedReason::ControlledShutdownNotInIsr,
            );
        }
        was_leader
    }

    /// This broker is no longer a replica of `tp`. ReplicaManager.applyDelta: the partition
    /// is in the delta's deletes (TopicDelta.localChanges: the new registration does not
    /// list the broker, the previous one did), so stopPartitions stops its fetcher, the
    /// partition leaves, and its log is deleted (deleteLocalLog); what waits for it as a
    /// leader is answered NOT_LEADER_OR_FOLLOWER. On the first image after a start the log
    /// is a stray one (LogManager.isStrayKraftReplica) and is moved aside: in both cases this
    /// broker holds nothing of `tp` any more.
    fn delete_replica(&mut self, ctx: &mut Ctx, tp: Tp, p: &PartitionRegistration, stray: bool) {
        let host = host!(self);
        let partition = &mut self.partitions[&tp];
        partition.abandon(ctx, &host);
        partition.role = Role::None;
        partition.log.wipe();
        self.alter_partition.unsent.remove(&tp);
        ctx.emit(Event::ReplicaDeleted {
            broker: self.id,
            tp: ctx.tp_name(tp),
            replicas: p.replicas.clone(),
            stray,
        });
    }

    // ---- ReplicaManager.fetchMessages and the DelayedFetch purgatory -------------------

    /// A follower's Fetch (ReplicaManager.fetchMessages): each partition is read as
    /// Partition.fetchRecords does (updating the follower's fetch state); the answer goes at
    /// once if any partition has records, an error or a divergence, and otherwise waits in
    /// the purgatory for records or `replica.fetch.wait.max.ms` (DelayedFetch).
    fn handle_fetch(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        fetch_id: u64,
        replica_id: BrokerId,
        broker_epoch: i64,
        partitions: Vec<FetchPartition>,
    ) {
        let Node::Broker(to) = from else { return };
        let mut host = host!(self);
        let mut answers = Vec::with_capacity(partitions.len());
        let mut now_ready = false;
        let mut limits = FetchLimits::new(ctx.config);
        for fp in &partitions {
            let Some(partition) = self.partitions.get_mut(&fp.tp) else {
                continue;
            };
            limits.throttled =
                should_leader_throttle(&mut self.leader_quota, partition, replica_id, ctx.now);
            let (data, ready) = partition.read_for_follower(
                ctx,
                &mut host,
                &mut limits,
                replica_id,
                broker_epoch,
                fp,
            );
            now_ready |= ready;
            answers.push(data);
        }
        if now_ready {
            self.record_throttled_bytes(ctx.now, &answers);
            let payload = Payload::FetchResponse {
                fetch_id,
                partitions: answers,
            };
            ctx.send(Node::Broker(self.id), Node::Broker(to), payload);
            return;
        }
        let wait = ctx.config.replica_fetch_wait_max_ms;
        let mut held = Vec::with_capacity(partitions.len());
        for fp in &partitions {
            // Before KIP-320 (protocol `pre-kip-320` and older) the fetch named no epoch:
            // 2.0's DelayedFetch.tryComplete checked only that this broker still leads
            // ("Case A"), so the epoch held is the one it leads at now.
            let epoch = if ctx.config.protocol.has_current_leader_epoch_in_fetch() {
                fp.current_leader_epoch
            } else {
                match self.partitions.get(&fp.tp).map(|p| &p.role) {
                    Some(Role::Leader(l)) => l.leader_epoch,
                    _ => fp.current_leader_epoch,
                }
            };
            held.push((fp.tp, fp.fetch_offset, epoch));
        }
        self.delayed_fetches.push(DelayedFetch {
            fetch_id,
            replica_id,
            partitions: held,
            since_ms: ctx.now,
            deadline_ms: ctx.now + wait,
        });
        self.set_timer(ctx, wait, BrokerTimer::HeldFetchExpire { fetch_id });
    }

    /// Records were appended to `tp`: the held fetches of `tp` whose offset is now below its
    /// log end complete (DelayedFetch.tryComplete: a follower's fetch reads to LOG_END), unless
    /// `tp` is throttled for the fetching replica ("skip if a throttled partition": its bytes
    /// do not count, so the fetch waits for its expiry).
    fn complete_delayed_fetches(&mut self, ctx: &mut Ctx, tp: Tp) {
        let partition = &self.partitions[&tp];
        let leo = partition.log.log_end_offset();
        let mut ready = Vec::new();
        let mut i = 0;
        while i < self.delayed_fetches.len() {
            let d = &self.delayed_fetches[i];
            if d.partitions.iter().any(|(t, o, _)| *t == tp && *o < leo)
                && !should_leader_throttle(&mut self.leader_quota, partition, d.replica_id, ctx.now)
            {
                ready.push(self.delayed_fetches.remove(i));
            } else {
                i += 1;
            }
        }
        for d in ready {
            self.answer_delayed_fetch(ctx, d);
        }
    }

    /// ReplicaManager.completeDelayedOperationsWhenNotPartitionLeader (applyLocalFollowersDelta
    /// after the fetchers start, stopPartitions for a deleted replica): "If we were the leader,
    /// we may have some operations still waiting for completion. We force completion to
    /// prevent them from timing out." Each held fetch of `tp` completes (DelayedFetch
    /// .tryComplete: NotLeaderOrFollowerException, Case A or B, or FencedLeaderEpochException,
    /// Case E) and is answered with every partition read again, `tp` with its error.
    fn complete_delayed_fetches_not_leader(&mut self, ctx: &mut Ctx, tp: Tp) {
        let mut i = 0;
        while i < self.delayed_fetches.len() {
            if self.delayed_fetches[i]
                .partitions
                .iter()
                .any(|(t, _, _)| *t == tp)
            {
                let d = self.delayed_fetches.remove(i);
                self.answer_delayed_fetch(ctx, d);
            } else {
                i += 1;
            }
        }
    }

    /// DelayedFetch.onComplete: each partition read again from the purgatory (no fetch-state
    /// update), a throttled one left out as in the first read.
    fn answer_delayed_fetch(&mut self, ctx: &mut Ctx, d: DelayedFetch) {
        let mut data = Vec::with_capacity(d.partitions.len());
        let mut limits = FetchLimits::new(ctx.config);
        for &(tp, fetch_offset, leader_epoch) in &d.partitions {
            if let Some(p) = self.partitions.get(&tp) {
                limits.throttled =
                    should_leader_throttle(&mut self.leader_quota, p, d.replica_id, ctx.now);
                let mut read = p.read_from_purgatory(fetch_offset, leader_epoch, &mut limits);
                // Before KIP-320 no fetch was fenced: a broker that no longer leads answered
                // NOT_LEADER_FOR_PARTITION (2.0's DelayedFetch "Case A").
                if read.error == ErrorCode::FENCED_LEADER_EPOCH
                    && !ctx.config.protocol.has_current_leader_epoch_in_fetch()
                {
                    read = p.fetch_error(ErrorCode::NOT_LEADER_OR_FOLLOWER);
                }
                data.push(read);
            }
        }
        self.record_throttled_bytes(ctx.now, &data);
        let payload = Payload::FetchResponse {
            fetch_id: d.fetch_id,
            partitions: data,
        };
        ctx.send(Node::Broker(self.id), Node::Broker(d.replica_id), payload);
    }

    /// KafkaApis.handleFetchRequest, a follower's response: "We've already evaluated against
    /// the quota and are good to go. Just need to record it now": the bytes of its throttled
    /// partitions (sizeOfThrottledPartitions; in-sync followers' traffic counts too), into
    /// the leader quota. The engine meters the records' batches (Kafka, the partitions'
    /// entries in the response, headers included: docs/engine.md, simplification 23).
    fn record_throttled_bytes(&mut self, now: TimeMs, data: &[crate::network::FetchPartitionData]) {
        let quota = &mut self.leader_quota;
        let bytes = data
            .iter()
            .filter(|d| quota.is_throttled(d.tp))
            .map(|d| crate::record::records_size_in_bytes(&d.records))
            .sum();
        quota.record(bytes, now);
    }

    // ---- DefaultAlterPartitionManager ---------------------------------------------------

    /// No answer to the AlterPartition request within `controller.socket.timeout.ms`: the
    /// NodeToControllerRequestThread puts it back at the head of its queue
    /// (`requestQueue.putFirst`) and sends it again.
    fn on_alter_partition_timeout(&mut self, ctx: &mut Ctx, request_id: u64) {
        if self.alter_partition.in_flight != Some(request_id) {
            return;
        }
        self.alter_partition.in_flight = None;
        ctx.emit(Event::AlterPartitionTimedOut {
            broker: self.id,
            controller_socket_timeout_ms: ctx.config.controller_socket_timeout_ms,
        });
        host!(self).propagate_alter_partition(ctx);
    }

    /// DefaultAlterPartitionManager's response handler. A top-level STALE_BROKER_EPOCH keeps
    /// the proposals and retries them 50 ms later; otherwise each answered proposal leaves
    /// `unsentIsrUpdates` and its result goes to its partition, in the response's order.
    pub(crate) fn on_alter_partition_response(
        &mut self,
        ctx: &mut Ctx,
        request_id: u64,
        top_error: ErrorCode,
        results: Vec<AlterPartitionResult>,
    ) {
        if self.alter_partition.in_flight != Some(request_id) {
            return; // an answer to a request we already sent again
        }
        self.alter_partition.in_flight = None;
        if top_error != ErrorCode::NONE {
            ctx.emit(Event::AlterPartitionStaleBrokerEpoch {
                broker: self.id,
                broker_epoch: self.broker_epoch,
            });
            self.set_timer(
                ctx,
                ALTER_PARTITION_RETRY_MS,
                BrokerTimer::AlterPartitionRetry,
            );
            return;
        }
        let mut host = host!(self);
        for result in &results {
            let Some(item) = host.alter_partition.unsent.remove(&result.tp) else {
                continue;
            };
            let answer = (result.error == ErrorCode::NONE).then_some(result);
            if let Some(partition) = self.partitions.get_mut(&result.tp) {
                partition.handle_alter_partition_result(ctx, &mut host, item, result.error, answer);
            }
        }
        host.propagate_alter_partition(ctx);
    }
}

/// ReplicaManager.shouldLeaderThrottle: "we only throttle a replica on the leader if it's
/// in the throttled replica list, the quota is exceeded and the replica is not in sync" (not
/// in the partition's committed ISR, `inSyncReplicaIds`). The quota is measured only when the
/// first two hold, as Kafka's `&&` does.
fn should_leader_throttle(
    quota: &mut ReplicationQuota,
    partition: &Partition,
    replica: BrokerId,
    now: TimeMs,
) -> bool {
    let in_sync = partition
        .leader_state()
        .is_some_and(|l| l.isr_state.isr().contains(&replica));
    !in_sync && quota.is_throttled(partition.tp) && quota.is_quota_exceeded(now)
}

/// How often the isr-expiration task runs: replica.lag.time.max.ms / 2, as
/// ReplicaManager.startup schedules it, but never more often than
/// [`MIN_ISR_EXPIRATION_PERIOD_MS`](crate::config::MIN_ISR_EXPIRATION_PERIOD_MS).
fn isr_expiration_period(ctx: &Ctx) -> u64 {
    (ctx.config.replica_lag_time_max_ms / 2).max(crate::config::MIN_ISR_EXPIRATION_PERIOD_MS)
}

#[cfg(test)]
mod tests;
