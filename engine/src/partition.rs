//! A broker's replica of the partition (kafka.cluster.Partition), with the leader's rules:
//! what the leader knows of each follower (org.apache.kafka.server.replica.Replica /
//! ReplicaState) and the three-branch lastCaughtUpTimeMs rule, the high watermark, ISR
//! shrink and expand through AlterPartition (and the DefaultAlterPartitionManager that sends
//! it), the produce purgatory (DelayedProduce) and held follower fetches (DelayedFetch).
//!
//! A [`Partition`] holds the replica's log and its role. Its handlers take the time, config
//! and effect buffer in a [`Ctx`] and what they read of their broker in a [`Host`]; they
//! reach nothing else. The broker node (`broker.rs`) owns the partition and calls them.

use crate::vec_map::VecMap;

use crate::config::Config;
use crate::effect::{BrokerTimer, Ctx, Observation, Scheduled};
use crate::event::{Event, OutOfSyncReplica};
use crate::log::{BatchProducer, ReplicaLog};
use crate::metadata::{MetadataImage, PartitionRegistration};
use crate::network::{FetchPartition, FetchPartitionData, Payload};
use crate::producer_state::ClientBatch;
use crate::types::{ids_where, Acks, BrokerId, ErrorCode, Node, TimeMs, Tp};

/// ReplicaState: what the leader knows of one follower.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaState {
    /// The follower's LEO as learned from its fetch offset; None is UNKNOWN_OFFSET (reset by
    /// a new leader until the follower's first fetch).
    pub log_end_offset: Option<u64>,
    pub log_start_offset: Option<u64>,
    pub last_fetch_time_ms: TimeMs,
    /// The leader's LEO at the follower's previous fetch; None is UnifiedLog.UnknownOffset
    /// (-1), which every fetch offset is at or past.
    pub last_fetch_leader_log_end_offset: Option<u64>,
    pub last_caught_up_time_ms: TimeMs,
    pub broker_epoch: Option<i64>,
}

impl ReplicaState {
    /// Replica.resetReplicaState when this broker becomes leader at a new leader epoch.
    /// `previous` is the follower's state when the same broker leads again (isNewLeader
    /// false), None for a new leader. `leader_end_offset` is the new epoch's start offset.
    pub fn reset(
        previous: Option<&ReplicaState>,
        now: TimeMs,
        leader_end_offset: u64,
        in_sync: bool,
    ) -> ReplicaState {
        // "the follower's last caught up time is set to the current time if the follower is
        // in the ISR, else to 0"
        let last_caught_up_time_ms = if in_sync { now } else { 0 };
        match previous {
            Some(k) => ReplicaState {
                log_end_offset: k.log_end_offset,
                log_start_offset: k.log_start_offset,
                last_fetch_leader_log_end_offset: Some(leader_end_offset),
                // "set to the current time if the follower is in the ISR, else to 0 [...] so
                // the follower is not brought back into the ISR before a fetch is received"
                last_fetch_time_ms: if in_sync { now } else { 0 },
                last_caught_up_time_ms,
                broker_epoch: k.broker_epoch,
            },
            None => ReplicaState {
                log_end_offset: None,
                log_start_offset: None,
                last_fetch_leader_log_end_offset: None,
                last_fetch_time_ms: 0,
                last_caught_up_time_ms,
                broker_epoch: None,
            },
        }
    }

    /// ReplicaState.isCaughtUp: LEO equal to the leader's, or caught up within the lag time.
    pub fn is_caught_up(&self, leader_end_offset: u64, now: TimeMs, lag_time_max_ms: u64) -> bool {
        self.log_end_offset == Some(leader_end_offset)
            || now.saturating_sub(self.last_caught_up_time_ms) <= lag_time_max_ms
    }

    /// Replica.updateFetchStateOrThrow: the three-branch rule for lastCaughtUpTimeMs.
    pub fn update_fetch_state(
        &mut self,
        fetch_offset: u64,
        follower_start_offset: u64,
        fetch_time_ms: TimeMs,
        leader_end_offset: u64,
        broker_epoch: i64,
    ) {
        let last_caught_up = if fetch_offset >= leader_end_offset {
            self.last_caught_up_time_ms.max(fetch_time_ms)
        } else if self
            .last_fetch_leader_log_end_offset
            .is_none_or(|o| fetch_offset >= o)
        {
            self.last_caught_up_time_ms.max(self.last_fetch_time_ms)
        } else {
            self.last_caught_up_time_ms
        };
        self.log_end_offset = Some(fetch_offset);
        self.log_start_offset = Some(follower_start_offset);
        self.last_fetch_time_ms = fetch_time_ms;
        // "lastFetchLeaderLogEndOffset = math.max(leaderEndOffset, currentReplicaState.lastFetchLeaderLogEndOffset)"
        self.last_fetch_leader_log_end_offset = Some(
            self.last_fetch_leader_log_end_offset
                .map_or(leader_end_offset, |o| o.max(leader_end_offset)),
        );
        self.last_caught_up_time_ms = last_caught_up;
        self.broker_epoch = Some(broker_epoch);
    }
}

/// The leader's partition state: CommittedPartitionState, PendingExpandIsr or
/// PendingShrinkIsr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IsrState {
    Committed {
        isr: Vec<BrokerId>,
    },
    /// The HW already counts the new replica (a stricter requirement).
    PendingExpand {
        isr: Vec<BrokerId>,
        new_in_sync: BrokerId,
        /// Which proposal this is: an AlterPartition answer is applied only to the proposal
        /// it answers (Partition.submitAlterPartition: "partitionState != proposedIsrState").
        proposal: u64,
    },
    /// The HW still counts the departing replicas until the controller confirms.
    PendingShrink {
        isr: Vec<BrokerId>,
        out_of_sync: Vec<BrokerId>,
        proposal: u64,
    },
}

impl IsrState {
    /// The committed ISR.
    pub fn isr(&self) -> &[BrokerId] {
        match self {
            IsrState::Committed { isr }
            | IsrState::PendingExpand { isr, .. }
            | IsrState::PendingShrink { isr, .. } => isr,
        }
    }

    /// The maximal ISR: committed plus a pending expansion (prepareIsrExpand); a pending
    /// shrink still counts the old ISR (prepareIsrShrink).
    pub fn maximal_isr(&self) -> Vec<BrokerId> {
        match self {
            IsrState::Committed { isr } | IsrState::PendingShrink { isr, .. } => isr.clone(),
            IsrState::PendingExpand {
                isr, new_in_sync, ..
            } => {
                let mut m = isr.clone();
                m.push(*new_in_sync);
                m
            }
        }
    }

    pub fn is_inflight(&self) -> bool {
        !matches!(self, IsrState::Committed { .. })
    }

    /// The proposal a pending state waits on.
    pub fn proposal(&self) -> Option<u64> {
        match self {
            IsrState::Committed { .. } => None,
            IsrState::PendingExpand { proposal, .. } | IsrState::PendingShrink { proposal, .. } => {
                Some(*proposal)
            }
        }
    }
}

/// One proposed ISR change (AlterPartitionItem): the leader and partition epochs it was
/// made at, and the new ISR with each member's broker epoch (BrokerState; -1 when the
/// leader has not had a fetch from that member yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterPartitionItem {
    pub tp: Tp,
    pub proposal: u64,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub new_isr: Vec<(BrokerId, i64)>,
}

/// DefaultAlterPartitionManager (core/src/main/scala/kafka/server/AlterPartitionManager.scala):
/// `unsentIsrUpdates` holds each partition's proposal until an answer for it arrives (one
/// per partition), and `inflightRequest` allows one AlterPartition request at a time, which
/// carries every proposal unsent when it goes (`maybePropagateIsrChanges`). The request goes
/// through the NodeToControllerChannelManager, which never gives up on it
/// (`retryTimeoutMs = Long.MaxValue`): a request with no answer within
/// `controller.socket.timeout.ms` is sent again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlterPartitionManager {
    pub unsent: VecMap<Tp, AlterPartitionItem>,
    /// The correlation id of the request in flight; an answer to any other is dropped, as
    /// the client drops a response on a connection it already gave up.
    pub in_flight: Option<u64>,
}

/// How long DefaultAlterPartitionManager waits before retrying after a top-level error
/// ("retry the request in the near future": `scheduleOnce(..., 50)`).
pub const ALTER_PARTITION_RETRY_MS: u64 = 50;

/// A DelayedProduce waiting in the purgatory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayedProduce {
    pub request_id: u64,
    pub client: Node,
    pub first_offset: u64,
    /// requiredOffset = the last offset written + 1.
    pub required_offset: u64,
    pub created_ms: TimeMs,
    pub deadline_ms: TimeMs,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderState {
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// leaderEpochStartOffsetOpt: the LEO when this leader epoch began.
    pub epoch_start_offset: u64,
    pub isr_state: IsrState,
    pub replicas: Vec<BrokerId>,
    pub remote: VecMap<BrokerId, ReplicaState>,
    pub purgatory: Vec<DelayedProduce>,
    /// The HW when this leadership began (the invariant "the leader's HW never falls").
    pub high_watermark_at_start: u64,
}

/// The follower's side of the partition: Partition's leader id and epochs, and the
/// replica fetcher's state for it (AbstractFetcherThread's PartitionFetchState).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowerState {
    pub leader: Option<BrokerId>,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// The fetch in flight, if any (fetch id).
    pub in_flight_fetch: Option<u64>,
    /// replica.fetch.backoff.ms after an error.
    pub backing_off_until: Option<TimeMs>,
    /// Out of the fetcher: fenced by the leader at this leader epoch
    /// (AbstractFetcherThread.markPartitionFailed), or removed during controlled shutdown. No
    /// more fetches until metadata brings a new leader epoch.
    pub failed: bool,
    /// FetcherLagMetrics.lag: the leader's HW in the last fetch response minus the next
    /// fetch offset (AbstractFetcherThread.processFetchRequest), None before the first one.
    /// What MaxLag reads: set by every answer.
    pub lag: Option<u64>,
    /// PartitionFetchState.lag, the same difference, but set only by an answer that appended
    /// records or when none was known yet (processFetchRequest: "validBytes > 0 ||
    /// currentFetchState.lag.isEmpty"): an empty answer leaves it as it was. What
    /// isReplicaInSync reads (the follower side of the replication throttle).
    pub fetch_state_lag: Option<u64>,
    /// Before KIP-279 (protocol `kip-101-without-kip-279`): the follower has not yet had
    /// the leader's one answer on where its latest epoch ends (the partition is in the
    /// fetcher's truncating state, ReplicaFetcherThread.maybeTruncate at 1.1.0). Always
    /// false in the modes with KIP-279.
    pub awaiting_epoch_end: bool,
}

/// The replica's role on a broker, as ReplicaManager applies it from metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// No metadata yet, or not a replica.
    None,
    Leader(Box<LeaderState>),
    Follower(FollowerState),
}

/// A broker's replica of the partition: its log (the files, which survive the process) and
/// its role (memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// Which partition this replica is of (Partition.topicPartition).
    pub tp: Tp,
    pub log: ReplicaLog,
    pub role: Role,
}

/// A replica as the replica selector sees it (ReplicaView.DefaultReplicaView): its LEO and
/// the time since it last caught up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadReplicaView {
    pub broker: BrokerId,
    pub log_end_offset: u64,
    pub time_since_caught_up_ms: u64,
}

/// RackAwareReplicaSelector.select over the candidate followers `views` and the leader
/// `leader`: with no replica in the client's rack, or the leader in it ("Use the leader if
/// it's in this rack"), the leader (None here: findPreferredReadReplica drops it); else the
/// most caught-up replica of that rack by ReplicaView.comparator (the highest LEO, then the
/// shortest time since caught up, then the highest broker id).
pub(crate) fn select_read_replica<'r>(
    leader: BrokerId,
    views: &[ReadReplicaView],
    rack_of: impl Fn(BrokerId) -> Option<&'r str>,
    client_rack: &str,
) -> Option<BrokerId> {
    if client_rack.is_empty() || rack_of(leader) == Some(client_rack) {
        return None;
    }
    let mut best: Option<&ReadReplicaView> = None;
    for v in views {
        if rack_of(v.broker) != Some(client_rack) {
            continue;
        }
        let better = best.is_none_or(|b| {
            (v.log_end_offset, b.time_since_caught_up_ms, v.broker)
                > (b.log_end_offset, v.time_since_caught_up_ms, b.broker)
        });
        if better {
            best = Some(v);
        }
    }
    best.map(|v| v.broker)
}

/// What a partition's handlers read of the broker that hosts it, as Kafka's Partition reads
/// its `localBrokerId`, the broker epoch, the metadata cache and the alter-partition
/// manager it submits to.
pub(crate) struct Host<'a> {
    pub id: BrokerId,
    /// The process incarnation the partition's timers belong to.
    pub incarnation: u32,
    pub broker_epoch: i64,
    pub metadata: Option<&'a MetadataImage>,
    pub alter_partition: &'a mut AlterPartitionManager,
    /// The broker's meters (`metrics.rs`).
    pub meters: &'a mut BrokerMeters,
}

/// A broker's meters, in its process's memory (a restart counts from 0, as a new JVM's
/// Yammer meters do): `metrics.rs` reads them with the gauges it computes from state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BrokerMeters {
    /// ReplicaManager.isrShrinkRate / isrExpandRate, marked by the AlterPartitionListener
    /// when the controller accepts this leader's shrink or expand
    /// (`proposedIsrState.notifyListener` in Partition.handleAlterPartitionUpdate).
    pub isr_shrinks: u64,
    pub isr_expands: u64,
    /// BrokerTopicStats.allTopicsStats.failedProduceRequestRate: an append to a leader that
    /// failed with an error other than the ones ReplicaManager.appendToLocalLog calls known
    /// (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, record too large, corrupt,
    /// storage): here NOT_ENOUGH_REPLICAS and the producer-state refusals.
    pub failed_produce_requests: u64,
}

impl Host<'_> {
    /// Asks for this broker's `timer` to fire `delay` ms from now.
    pub fn set_timer(&self, ctx: &mut Ctx, delay: u64, timer: BrokerTimer) {
        let at = ctx.now + delay;
        ctx.set_timer(at, self.timer(timer));
    }

    /// This broker's `timer`, for its current process.
    pub fn timer(&self, timer: BrokerTimer) -> Scheduled {
        Scheduled::Broker {
            broker: self.id,
            incarnation: self.incarnation,
            timer,
        }
    }

    /// Partition.effectiveMinIsr: `min.insync.replicas` as this broker's metadata says (the
    /// cluster's configured value before it has any), never above the replica count.
    pub fn min_isr(&self, config: &Config, tp: Tp, replicas: usize) -> usize {
        let min = self
            .metadata
            .and_then(|m| m.min_insync_replicas(tp))
            .unwrap_or(config.min_insync_replicas);
        (min as usize).min(replicas)
    }

    /// Partition.isReplicaIsrEligible, from this broker's metadata cache.
    fn is_replica_isr_eligible(&self, replica: BrokerId, fetch_broker_epoch: Option<i64>) -> bool {
        let Some(m) = self.metadata else {
            return false;
        };
        match m.brokers.get(&replica) {
            Some(r) => {
                // Partition.isBrokerEpochIsrEligible: "storedBrokerEpoch.get == -1 ||
                // storedBrokerEpoch.get == cachedBrokerEpoch.get()": -1 is a fetch without a
                // broker epoch (before KIP-903: protocol `pre-kip-903` and older).
                !r.fenced
                    && !r.in_controlled_shutdown
                    && fetch_broker_epoch.is_none_or(|e| e == -1 || e == r.epoch)
            }
            None => false,
        }
    }
}

impl AlterPartitionManager {
    /// DefaultAlterPartitionManager.maybePropagateIsrChanges: send what is unsent, unless a
    /// request is already in flight. A request lost on the way (a cut link) gets no answer;
    /// the channel manager sends it again after `controller.socket.timeout.ms`.
    pub(crate) fn propagate(
        &mut self,
        ctx: &mut Ctx,
        host_id: BrokerId,
        incarnation: u32,
        broker_epoch: i64,
    ) {
        if self.in_flight.is_some() {
            return;
        }
        if self.unsent.is_empty() {
            return;
        }
        let request_id = ctx.next_request_id();
        self.in_flight = Some(request_id);
        let mut partitions = Vec::with_capacity(self.unsent.len());
        for item in self.unsent.values() {
            partitions.push(crate::network::AlterPartitionData {
                tp: item.tp,
                leader_epoch: item.leader_epoch,
                partition_epoch: item.partition_epoch,
                new_isr: item.new_isr.clone(),
            });
        }
        let payload = Payload::AlterPartition {
            request_id,
            broker_epoch,
            partitions,
        };
        ctx.send(Node::Broker(host_id), Node::Controller, payload);
        let at = ctx.now + ctx.config.controller_socket_timeout_ms;
        ctx.set_timer(
            at,
            Scheduled::Broker {
                broker: host_id,
                incarnation,
                timer: BrokerTimer::AlterPartitionTimeout { request_id },
            },
        );
    }
}

impl Host<'_> {
    /// Sends the alter-partition manager's unsent proposal, if it may.
    pub fn propagate_alter_partition(&mut self, ctx: &mut Ctx) {
        self.alter_partition
            .propagate(ctx, self.id, self.incarnation, self.broker_epoch);
    }
}

impl Partition {
    /// A replica of `tp` with no role yet over `log`.
    pub fn new(tp: Tp, log: ReplicaLog) -> Partition {
        Partition {
            tp,
            log,
            role: Role::None,
        }
    }

    pub fn leader_state(&self) -> Option<&LeaderState> {
        match &self.role {
            Role::Leader(l) => Some(l),
            _ => None,
        }
    }

    fn leader_mut(&mut self) -> Option<&mut LeaderState> {
        match &mut self.role {
            Role::Leader(l) => Some(l),
            _ => None,
        }
    }

    /// Partition.makeLeader with a new leader epoch.
    ///
    /// The follower states are reset as Replica.resetReplicaState does. A broker that was not
    /// leading (`isNewLeader`) forgets everything about its followers: LEO, log start and
    /// lastFetchLeaderLogEndOffset unknown, lastFetchTimeMs 0, no broker epoch. The same
    /// broker elected again at a new leader epoch keeps each follower's LEO, log start and
    /// broker epoch, and sets lastFetchLeaderLogEndOffset to the new epoch's start offset and
    /// lastFetchTimeMs to now for ISR members (0 otherwise). Either way lastCaughtUpTimeMs is
    /// now for ISR members and 0 for the others. A re-elected leader also keeps its
    /// purgatory and held fetches: DelayedProduce keeps waiting while this broker leads
    /// (Partition.checkEnoughReplicasReachOffset), and a held fetch of the old epoch is
    /// answered FENCED_LEADER_EPOCH when it completes (DelayedFetch, "Case E").
    pub(crate) fn make_leader(
        &mut self,
        ctx: &mut Ctx,
        host: &mut Host,
        p: &PartitionRegistration,
    ) {
        debug_assert_eq!(
            p.leader,
            Some(host.id),
            "made leader by a registration naming it"
        );
        let now = ctx.now;
        let (previous, previous_epoch) = match &self.role {
            Role::Follower(f) => (f.leader, f.leader_epoch),
            Role::Leader(l) => (Some(host.id), l.leader_epoch),
            Role::None => (None, -1),
        };
        debug_assert!(p.leader_epoch > previous_epoch || previous.is_none());
        debug_assert!(p.isr.contains(&host.id), "a leader is in its ISR: {p:?}");
        let old = match std::mem::replace(&mut self.role, Role::None) {
            Role::Leader(l) => Some(l),
            _ => None,
        };
        let leo = self.log.log_end_offset();
        // "leaderLog.maybeAssignEpochStartOffset(partitionState.leaderEpoch, leaderEpochStartOffset)"
        self.log.epoch_cache.assign(p.leader_epoch, leo);
        // A loop, not a filtered map collected: the same inserts in less wasm.
        let mut remote = VecMap::new();
        for &r in &p.replicas {
            if r != host.id {
                let kept = old.as_ref().and_then(|l| l.remote.get(&r));
                remote.insert(r, ReplicaState::reset(kept, now, leo, p.isr.contains(&r)));
            }
        }
        let purgatory = match old {
            Some(l) => l.purgatory,
            None => vec![],
        };
        let hw = self.log.high_watermark;
        self.role = Role::Leader(Box::new(LeaderState {
            leader_epoch: p.leader_epoch,
            partition_epoch: p.partition_epoch,
            epoch_start_offset: leo,
            isr_state: IsrState::Committed { isr: p.isr.clone() },
            replicas: p.replicas.clone(),
            remote,
            purgatory,
            high_watermark_at_start: hw,
        }));
        let under = p.isr.len() < host.min_isr(ctx.config, self.tp, p.replicas.len());
        ctx.emit(Event::BecameLeader {
            broker: host.id,
            tp: ctx.tp_name(self.tp),
            leader_epoch: p.leader_epoch,
            start_offset: leo,
            partition_epoch: p.partition_epoch,
            high_watermark: hw,
            isr: p.isr.clone(),
            under_min_isr: under,
            previous_leader: previous,
            previous_leader_epoch: previous_epoch,
        });
        ctx.observe(Observation::NewLeader {
            tp: self.tp,
            broker: host.id,
            leader_epoch: p.leader_epoch,
            recovering: p.leader_recovery_state == crate::metadata::LeaderRecoveryState::Recovering,
        });
        self.maybe_increment_hw(ctx, host);
    }

    /// makeLeader with the same leader epoch and a newer partition epoch: the controller
    /// changed the ISR (fencing, controlled shutdown) or confirmed ours.
    pub(crate) fn apply_partition_update(
        &mut self,
        ctx: &mut Ctx,
        host: &mut Host,
        p: &PartitionRegistration,
    ) {
        let Some(l) = self.leader_mut() else { return };
        if p.partition_epoch <= l.partition_epoch {
            return;
        }
        l.partition_epoch = p.partition_epoch;
        l.isr_state = IsrState::Committed { isr: p.isr.clone() };
        // Partition.updateAssignmentAndIsr: a reassignment's new replicas join the leader's
        // followers with an empty state (ReplicaState.EMPTY: LEO unknown, never caught up),
        // and the replicas that left go.
        if l.replicas != p.replicas {
            for &r in &p.replicas {
                if r != host.id && !l.remote.contains_key(&r) {
                    l.remote
                        .insert(r, ReplicaState::reset(None, ctx.now, 0, false));
                }
            }
            l.remote.retain(|r, _| p.replicas.contains(r));
            l.replicas = p.replicas.clone();
        }
        self.maybe_increment_hw(ctx, host);
        self.try_complete_delayed(ctx, host);
    }

    /// This broker stops being leader: answer what waits with NOT_LEADER_OR_FOLLOWER.
    pub(crate) fn abandon(&mut self, ctx: &mut Ctx, host: &Host) {
        let Some(l) = self.leader_mut() else { return };
        let purgatory = std::mem::take(&mut l.purgatory);
        for d in purgatory {
            ctx.send(
                Node::Broker(host.id),
                d.client,
                Payload::ProduceResponse {
                    tp: self.tp,
                    request_id: d.request_id,
                    error: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                    base_offset: None,
                    last_offset: None,
                },
            );
        }
    }

    /// This partition's answer with `error` and no records.
    pub(crate) fn fetch_error(&self, error: ErrorCode) -> FetchPartitionData {
        let log = &self.log;
        FetchPartitionData {
            tp: self.tp,
            error,
            high_watermark: log.high_watermark,
            leader_log_start_offset: log.log_start_offset,
            records: vec![],
            diverging_epoch: None,
            leader_log_end_offset: log.log_end_offset(),
        }
    }

    /// Partition.fetchRecords for a follower's fetch of this partition (the first read, which
    /// updates the follower's fetch state). Returns the partition's answer and whether it is
    /// one to send at once (an error, a divergence or records: DelayedFetch's bytes), rather
    /// than one that may wait in the purgatory for records.
    pub(crate) fn read_for_follower(
        &mut self,
        ctx: &mut Ctx,
        host: &mut Host,
        limits: &mut FetchLimits,
        replica_id: BrokerId,
        broker_epoch: i64,
        fp: &FetchPartition,
    ) -> (FetchPartitionData, bool) {
        let now = ctx.now;
        let fetch_offset = fp.fetch_offset;
        // ReplicaManager.getPartitionOrException: no such partition here.
        let local_epoch = match &self.role {
            Role::Leader(l) => l.leader_epoch,
            Role::Follower(f) => f.leader_epoch,
            Role::None => return (self.fetch_error(ErrorCode::NOT_LEADER_OR_FOLLOWER), true),
        };
        // Partition.getLocalLog → checkCurrentLeaderEpoch comes first, whether or not this
        // broker leads: an older epoch is fenced, a newer one is not known here yet. Before
        // KIP-320 (Kafka 2.1) a fetch carried no current leader epoch, so nothing was
        // fenced: only a replica that does not lead refused it (NOT_LEADER_FOR_PARTITION).
        let fenced_by_epoch = ctx.config.protocol.has_current_leader_epoch_in_fetch();
        if fenced_by_epoch && fp.current_leader_epoch < local_epoch {
            return (self.fetch_error(ErrorCode::FENCED_LEADER_EPOCH), true);
        }
        if fenced_by_epoch && fp.current_leader_epoch > local_epoch {
            return (self.fetch_error(ErrorCode::UNKNOWN_LEADER_EPOCH), true);
        }
        let Role::Leader(l) = &self.role else {
            return (self.fetch_error(ErrorCode::NOT_LEADER_OR_FOLLOWER), true);
        };
        // followerReplicaOrThrow: "Replica ... is not recognized as a valid replica".
        if !l.remote.contains_key(&replica_id) {
            return (self.fetch_error(ErrorCode::NOT_LEADER_OR_FOLLOWER), true);
        }
        let log = &self.log;
        let leo = log.log_end_offset();
        // Partition.readRecords: the divergence check on lastFetchedEpoch.
        if let Some(fetch_epoch) = fp.last_fetched_epoch {
            let (epoch, end) = log.epoch_cache.end_offset_for(fetch_epoch, leo);
            // "Could not determine the end offset of the last fetched epoch": an undefined
            // answer is OFFSET_OUT_OF_RANGE, not a divergence to truncate on.
            if epoch == crate::log::UNDEFINED_EPOCH || end == crate::log::UNDEFINED_EPOCH_OFFSET {
                return (self.fetch_error(ErrorCode::OFFSET_OUT_OF_RANGE), true);
            }
            // "If fetch offset is less than log start, fail with OffsetOutOfRangeException,
            // regardless of whether epochs are diverging".
            if fetch_offset < log.log_start_offset {
                return (self.fetch_error(ErrorCode::OFFSET_OUT_OF_RANGE), true);
            }
            if epoch < fetch_epoch || end < fetch_offset as i64 {
                let mut data = self.fetch_error(ErrorCode::NONE);
                data.diverging_epoch = Some((epoch, end));
                return (data, true);
            }
        }
        if fetch_offset > leo || fetch_offset < log.log_start_offset {
            return (self.fetch_error(ErrorCode::OFFSET_OUT_OF_RANGE), true);
        }
        // Replica.updateFetchStateOrThrow (KIP-903): a fetch whose broker epoch is older than
        // the alive broker epoch in this leader's metadata is "a stale fetch state update":
        // NOT_LEADER_OR_FOLLOWER, and the follower's state is left as it was.
        let cached_epoch = host
            .metadata
            .and_then(|m| m.brokers.get(&replica_id))
            .filter(|r| !r.fenced)
            .map(|r| r.epoch);
        if broker_epoch != -1 && cached_epoch.is_some_and(|e| e > broker_epoch) {
            return (self.fetch_error(ErrorCode::NOT_LEADER_OR_FOLLOWER), true);
        }
        // updateFollowerFetchState (only on the first read, not from the purgatory).
        if let Some(l) = self.leader_mut() {
            if let Some(r) = l.remote.get_mut(&replica_id) {
                r.update_fetch_state(fetch_offset, fp.log_start_offset, now, leo, broker_epoch);
            }
        }
        self.maybe_expand_isr(ctx, host, replica_id);
        if self.maybe_increment_hw(ctx, host) {
            self.try_complete_delayed(ctx, host);
        }
        // DelayedFetch: nothing new (a follower's fetch waits for records past its offset,
        // LOG_END; a HW rise alone does not release it). ReplicaManager.fetchMessages answers
        // at once when `bytesReadable >= params.minBytes`, and `replica.fetch.min.bytes` is 1
        // (its default; the engine has no other value): any byte read.
        let (data, bytes) = self.fetch_data(fetch_offset, limits);
        (data, bytes > 0)
    }

    /// The records from `fetch_offset` within `limits`, with the HW, and the bytes read.
    fn fetch_data(&self, fetch_offset: u64, limits: &mut FetchLimits) -> (FetchPartitionData, u64) {
        let (records, bytes) = limits.read(&self.log, fetch_offset);
        let data = FetchPartitionData {
            records,
            ..self.fetch_error(ErrorCode::NONE)
        };
        (data, bytes)
    }

    /// DelayedFetch.onComplete's read of this partition (readFromLog from the purgatory: no
    /// fetch-state update): the records from `fetch_offset` at the fetch's leader epoch, else
    /// the error Partition.localLogWithEpochOrThrow gives: NOT_LEADER_OR_FOLLOWER when the
    /// replica is gone (getPartitionOrException), FENCED_LEADER_EPOCH when this broker moved to
    /// a newer epoch since ("Case E"), NOT_LEADER_OR_FOLLOWER when it no longer leads at it.
    pub(crate) fn read_from_purgatory(
        &self,
        fetch_offset: u64,
        leader_epoch: i32,
        limits: &mut FetchLimits,
    ) -> FetchPartitionData {
        let error = match &self.role {
            Role::Leader(l) if l.leader_epoch == leader_epoch => {
                return self.fetch_data(fetch_offset, limits).0
            }
            Role::Leader(l) if l.leader_epoch > leader_epoch => ErrorCode::FENCED_LEADER_EPOCH,
            Role::Follower(f) if f.leader_epoch > leader_epoch => ErrorCode::FENCED_LEADER_EPOCH,
            _ => ErrorCode::NOT_LEADER_OR_FOLLOWER,
        };
        self.fetch_error(error)
    }

    /// Partition.maybeExpandIsr.
    fn maybe_expand_isr(&mut self, ctx: &mut Ctx, host: &mut Host, replica: BrokerId) {
        let Role::Leader(l) = &self.role else {
            return;
        };
        if l.isr_state.is_inflight() || l.isr_state.isr().contains(&replica) {
            return;
        }
        let Some(state) = l.remote.get(&replica) else {
            return;
        };
        let Some(follower_leo) = state.log_end_offset else {
            return;
        };
        // isFollowerInSync: LEO ≥ HW and ≥ the start offset of the current leader epoch.
        if follower_leo < self.log.high_watermark || follower_leo < l.epoch_start_offset {
            return;
        }
        if !host.is_replica_isr_eligible(replica, state.broker_epoch) {
            return;
        }
        let isr = l.isr_state.isr().to_vec();
        // The leader keeps its ISR as a Set<Integer>; for broker ids its iteration (and so the
        // AlterPartition's newIsr and the describe output after it) is ascending.
        let mut new_isr = isr.clone();
        new_isr.push(replica);
        let new_isr = crate::sort::sorted_ids(&new_isr);
        ctx.emit(Event::IsrExpanding {
            broker: host.id,
            tp: ctx.tp_name(self.tp),
            isr: isr.clone(),
            new_isr: new_isr.clone(),
        });
        let proposal = ctx.next_request_id();
        if let Some(l) = self.leader_mut() {
            l.isr_state = IsrState::PendingExpand {
                isr,
                new_in_sync: replica,
                proposal,
            };
        }
        self.submit_alter_partition(ctx, host, proposal, &new_isr);
    }

    /// Partition.maybeShrinkIsr (the isr-expiration task).
    pub(crate) fn maybe_shrink_isr(&mut self, ctx: &mut Ctx, host: &mut Host) {
        let now = ctx.now;
        let lag = ctx.config.replica_lag_time_max_ms;
        let Role::Leader(l) = &self.role else {
            return;
        };
        if l.isr_state.is_inflight() {
            return;
        }
        let leo = self.log.log_end_offset();
        let isr = l.isr_state.isr().to_vec();
        let b = host.id;
        // getOutOfSyncReplicas: ISR minus the leader, not caught up.
        let out = ids_where(&isr, &|r| {
            r != b
                && l.remote
                    .get(&r)
                    .is_some_and(|s| !s.is_caught_up(leo, now, lag))
        });
        if out.is_empty() {
            return;
        }
        let new_isr = ids_where(&isr, &|r| !out.contains(&r));
        let new_isr = crate::sort::sorted_ids(&new_isr);
        debug_assert!(new_isr.contains(&b), "the leader never shrinks itself out");
        let mut out_of_sync = Vec::with_capacity(out.len());
        for r in &out {
            let s = &l.remote[r];
            out_of_sync.push(OutOfSyncReplica {
                broker: *r,
                log_end_offset: s.log_end_offset,
                last_caught_up_time_ms: s.last_caught_up_time_ms,
            });
        }
        let event = Event::IsrShrinking {
            broker: b,
            tp: ctx.tp_name(self.tp),
            isr: isr.clone(),
            new_isr: new_isr.clone(),
            high_watermark: self.log.high_watermark,
            log_end_offset: leo,
            out_of_sync,
        };
        ctx.emit(event);
        let proposal = ctx.next_request_id();
        if let Some(l) = self.leader_mut() {
            l.isr_state = IsrState::PendingShrink {
                isr,
                out_of_sync: out,
                proposal,
            };
        }
        self.submit_alter_partition(ctx, host, proposal, &new_isr);
    }

    /// Partition.submitAlterPartition → DefaultAlterPartitionManager.submit. The new ISR
    /// carries each member's broker epoch as the leader last saw it in a fetch
    /// (Partition.addBrokerEpochToIsr: -1 when it has none).
    fn submit_alter_partition(
        &mut self,
        ctx: &mut Ctx,
        host: &mut Host,
        proposal: u64,
        new_isr: &[BrokerId],
    ) {
        let Role::Leader(l) = &self.role else {
            return;
        };
        let mut new_isr_with_epochs: Vec<(BrokerId, i64)> = Vec::new();
        for &r in new_isr {
            let epoch = if r == host.id {
                host.broker_epoch
            } else {
                l.remote.get(&r).and_then(|s| s.broker_epoch).unwrap_or(-1)
            };
            new_isr_with_epochs.push((r, epoch));
        }
        let item = AlterPartitionItem {
            tp: self.tp,
            proposal,
            leader_epoch: l.leader_epoch,
            partition_epoch: l.partition_epoch,
            new_isr: new_isr_with_epochs,
        };
        self.submit(ctx, host, item);
    }

    /// DefaultAlterPartitionManager.submit: at most one proposal per partition waits for an
    /// answer (`unsentIsrUpdates.putIfAbsent`); a second one fails at once with
    /// OPERATION_NOT_ATTEMPTED, which the partition treats as a refusal.
    fn submit(&mut self, ctx: &mut Ctx, host: &mut Host, item: AlterPartitionItem) {
        if host.alter_partition.unsent.contains_key(&self.tp) {
            self.handle_alter_partition_result(
                ctx,
                host,
                item,
                ErrorCode::OPERATION_NOT_ATTEMPTED,
                None,
            );
            return;
        }
        host.alter_partition.unsent.insert(self.tp, item);
        host.propagate_alter_partition(ctx);
    }

    /// Partition.submitAlterPartition's completion: handleAlterPartitionUpdate or
    /// handleAlterPartitionError, for the proposal `item` only.
    pub(crate) fn handle_alter_partition_result(
        &mut self,
        ctx: &mut Ctx,
        host: &mut Host,
        item: AlterPartitionItem,
        error: ErrorCode,
        answer: Option<&crate::network::AlterPartitionResult>,
    ) {
        let tp = ctx.tp_name(self.tp);
        let min_isr = host.min_isr(ctx.config, self.tp, usize::MAX);
        let b = host.id;
        let Some(l) = self.leader_mut() else { return };
        if l.isr_state.proposal() != Some(item.proposal) {
            // "This means partitionState was updated through leader election or some other
            // mechanism before we got the AlterPartition response. [...] we do know this
            // response is out of date so we ignore it."
            return;
        }
        let committed = l.isr_state.isr().to_vec();
        match (error, answer) {
            (ErrorCode::NONE, Some(a)) => {
                // handleAlterPartitionUpdate: an answer for another leader epoch, or older than
                // the partition epoch we know, is ignored and the state stays pending until
                // new metadata arrives.
                if a.leader_epoch != l.leader_epoch || a.partition_epoch < l.partition_epoch {
                    return;
                }
                // proposedIsrState.notifyListener: markIsrShrink / markIsrExpand.
                match l.isr_state {
                    IsrState::PendingShrink { .. } => host.meters.isr_shrinks += 1,
                    IsrState::PendingExpand { .. } => host.meters.isr_expands += 1,
                    IsrState::Committed { .. } => {}
                }
                l.isr_state = IsrState::Committed { isr: a.isr.clone() };
                l.partition_epoch = a.partition_epoch;
                // Partition.isUnderMinIsr, with effectiveMinIsr (never above the replica count).
                let under = a.isr.len() < min_isr.min(l.replicas.len());
                ctx.emit(Event::IsrUpdated {
                    broker: b,
                    tp,
                    isr: a.isr.clone(),
                    under_min_isr: under,
                    partition_epoch: a.partition_epoch,
                });
                if self.maybe_increment_hw(ctx, host) {
                    self.try_complete_delayed(ctx, host);
                }
            }
            // handleAlterPartitionError: "the controller is explicitly telling us 1) that the
            // current partition epoch is correct, and 2) that the request was not applied."
            (ErrorCode::OPERATION_NOT_ATTEMPTED | ErrorCode::INELIGIBLE_REPLICA, _) => {
                l.isr_state = IsrState::Committed {
                    isr: committed.clone(),
                };
                ctx.emit(Event::AlterPartitionRejected {
                    broker: b,
                    tp,
                    error,
                    committed_isr: committed,
                });
            }
            // "Partition state may be out of sync, awaiting new the latest metadata": the
            // state stays pending (no new ISR change is proposed) until metadata replaces it.
            (
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                | ErrorCode::FENCED_LEADER_EPOCH
                | ErrorCode::INVALID_UPDATE_VERSION
                | ErrorCode::INVALID_REQUEST
                | ErrorCode::NEW_LEADER_ELECTED,
                _,
            ) => {
                ctx.emit(Event::AlterPartitionFailed {
                    broker: b,
                    tp,
                    error,
                });
            }
            // "Failed to update ISR ... due to unexpected {error}. Retrying."
            _ => {
                ctx.emit(Event::IsrUpdateFailed {
                    broker: b,
                    tp,
                    error,
                });
                // The same proposal goes again (submitAlterPartition(proposedIsrState)).
                self.submit(ctx, host, item);
            }
        }
    }

    /// Partition.maybeIncrementLeaderHW. Returns true when the HW moved.
    pub(crate) fn maybe_increment_hw(&mut self, ctx: &mut Ctx, host: &Host) -> bool {
        let now = ctx.now;
        let lag = ctx.config.replica_lag_time_max_ms;
        let Role::Leader(l) = &self.role else {
            return false;
        };
        let min_isr = host.min_isr(ctx.config, self.tp, l.replicas.len());
        // isUnderMinIsr: the HW does not move while the ISR is below min.insync.replicas.
        if l.isr_state.isr().len() < min_isr {
            return false;
        }
        let leo = self.log.log_end_offset();
        let maximal = l.isr_state.maximal_isr();
        let mut new_hw = Some(leo);
        for (&r, state) in &l.remote {
            let should_wait_to_join = state.is_caught_up(leo, now, lag)
                && host.is_replica_isr_eligible(r, state.broker_epoch);
            if maximal.contains(&r) || should_wait_to_join {
                // An unknown LEO (-1 in Kafka) pulls the candidate below any HW.
                new_hw = match (new_hw, state.log_end_offset) {
                    (Some(h), Some(o)) => Some(h.min(o)),
                    _ => None,
                };
            }
        }
        let Some(new_hw) = new_hw else { return false };
        // The postcondition Kafka's comment states: the HW is at most the LEO of every member
        // of the maximal ISR, as this leader knows them.
        debug_assert!(
            maximal.iter().all(|r| *r == host.id
                || l.remote
                    .get(r)
                    .and_then(|s| s.log_end_offset)
                    .is_some_and(|o| o >= new_hw)),
            "HW {new_hw} above a member of the maximal ISR {maximal:?}"
        );
        let leader_epoch = l.leader_epoch;
        let moved = self.log.maybe_increment_high_watermark(new_hw);
        if moved {
            ctx.observe(Observation::HighWatermark {
                tp: self.tp,
                broker: host.id,
                leader_epoch,
                high_watermark: new_hw,
            });
        }
        moved
    }

    /// DelayedOperations.checkAndCompleteAll for the produce purgatory:
    /// Partition.checkEnoughReplicasReachOffset.
    pub(crate) fn try_complete_delayed(&mut self, ctx: &mut Ctx, host: &Host) {
        let Role::Leader(l) = &self.role else {
            return;
        };
        let hw = self.log.high_watermark;
        let min_isr = host.min_isr(ctx.config, self.tp, l.replicas.len());
        let maximal = l.isr_state.maximal_isr().len();
        let (done, waiting): (Vec<DelayedProduce>, Vec<DelayedProduce>) = l
            .purgatory
            .clone()
            .into_iter()
            .partition(|d| hw >= d.required_offset);
        if done.is_empty() {
            return;
        }
        if let Some(l) = self.leader_mut() {
            l.purgatory = waiting;
        }
        for d in done {
            let error = if min_isr <= maximal {
                ErrorCode::NONE
            } else {
                ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND
            };
            ctx.send(
                Node::Broker(host.id),
                d.client,
                Payload::ProduceResponse {
                    tp: self.tp,
                    request_id: d.request_id,
                    error,
                    base_offset: Some(d.first_offset),
                    last_offset: Some(d.required_offset - 1),
                },
            );
        }
    }

    /// DelayedProduce.onExpiration: REQUEST_TIMED_OUT.
    pub(crate) fn expire_produce(&mut self, ctx: &mut Ctx, host: &Host, request_id: u64) {
        let Some(l) = self.leader_mut() else { return };
        let Some(pos) = l.purgatory.iter().position(|d| d.request_id == request_id) else {
            return;
        };
        let d = l.purgatory.remove(pos);
        ctx.send(
            Node::Broker(host.id),
            d.client,
            Payload::ProduceResponse {
                tp: self.tp,
                request_id,
                error: ErrorCode::REQUEST_TIMED_OUT,
                base_offset: None,
                last_offset: None,
            },
        );
    }

    /// Partition.appendRecordsToLeader and ReplicaManager.appendRecords.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn handle_produce(
        &mut self,
        ctx: &mut Ctx,
        host: &mut Host,
        from: Node,
        request_id: u64,
        acks: Acks,
        values: Vec<String>,
        shape: crate::record::RecordShape,
        timeout_ms: u64,
        producer: BatchProducer,
    ) {
        let now = ctx.now;
        let b = host.id;
        let tp = self.tp;
        let respond = |ctx: &mut Ctx, error: ErrorCode, base: Option<u64>, last: Option<u64>| {
            if acks != Acks::Zero {
                ctx.send(
                    Node::Broker(b),
                    from,
                    Payload::ProduceResponse {
                        tp,
                        request_id,
                        error,
                        base_offset: base,
                        last_offset: last,
                    },
                );
            }
        };
        let Role::Leader(l) = &self.role else {
            respond(ctx, ErrorCode::NOT_LEADER_OR_FOLLOWER, None, None);
            return;
        };
        let min_isr = host.min_isr(ctx.config, self.tp, l.replicas.len());
        let in_sync = l.isr_state.isr().len();
        if acks == Acks::All && in_sync < min_isr {
            // "Avoid writing to leader if there are not enough insync replicas to make it safe"
            // (a NotEnoughReplicasException: failedProduceRequestRate is marked).
            host.meters.failed_produce_requests += 1;
            respond(ctx, ErrorCode::NOT_ENOUGH_REPLICAS, None, None);
            return;
        }
        let epoch = l.leader_epoch;
        // UnifiedLog.analyzeAndValidateProducerState: a retry of one of the producer's last
        // five batches is answered with the offsets it was written at, and nothing is
        // appended; for acks=all it still waits for the HW to pass it (the DelayedProduce's
        // requiredOffset is the duplicate's lastOffset + 1).
        let last_sequence = crate::producer_state::increment_sequence(
            producer.base_sequence,
            values.len().saturating_sub(1) as u32,
        );
        let check = self.log.producers.check_client_batch(
            producer.producer_id,
            producer.producer_epoch,
            producer.base_sequence,
            last_sequence,
        );
        let (first, last) = match check {
            ClientBatch::Reject(error) => {
                host.meters.failed_produce_requests += 1;
                respond(ctx, error, None, None);
                return;
            }
            ClientBatch::Duplicate(d) => {
                // appendRecordsToLeader calls maybeIncrementLeaderHW after appendAsLeader
                // whether or not the batch was a duplicate ("since ISR could be down to 1").
                self.maybe_increment_hw(ctx, host);
                (d.first_offset, d.last_offset)
            }
            ClientBatch::Append => {
                let leo = self.log.log_end_offset();
                let appended = self
                    .log
                    .append_batch_as_leader(epoch, &values, producer, &shape);
                // UnifiedLog.appendAsLeader: the batch took the offsets from the old log end,
                // and the log now ends past it.
                debug_assert!(
                    appended.0 == leo && self.log.log_end_offset() == appended.1 + 1,
                    "{appended:?} at {leo}"
                );
                let interval = ctx
                    .topics
                    .flush_messages(self.tp, ctx.config.log_flush_interval_messages);
                self.log.appended(leo, ctx.now, ctx.config, interval);
                ctx.observe(Observation::LeaderAppend {
                    tp: self.tp,
                    broker: b,
                    first: appended.0,
                    last: appended.1,
                });
                // A leader alone in the ISR moves the HW on its own append.
                self.maybe_increment_hw(ctx, host);
                appended
            }
        };
        match acks {
            Acks::Zero => {}
            Acks::One => respond(ctx, ErrorCode::NONE, Some(first), Some(last)),
            Acks::All => {
                if let Some(l) = self.leader_mut() {
                    l.purgatory.push(DelayedProduce {
                        request_id,
                        client: from,
                        first_offset: first,
                        required_offset: last + 1,
                        created_ms: now,
                        deadline_ms: now + timeout_ms,
                    });
                }
                host.set_timer(
                    ctx,
                    timeout_ms,
                    BrokerTimer::ProduceExpire {
                        tp: self.tp,
                        request_id,
                    },
                );
                // tryCompleteElseWatch
                self.try_complete_delayed(ctx, host);
            }
        }
    }

    /// A consumer's Fetch: FetchIsolation.HIGH_WATERMARK. `client_rack` is the request's
    /// ClientMetadata rack (`client.rack`).
    ///
    /// The leader first asks its replica selector for a preferred read replica
    /// (ReplicaManager.readFromLocalLog: "If we are the leader, determine the preferred
    /// read-replica"); when it names a follower, the read is skipped and the answer carries
    /// that replica, no records, and the leader's offsets. A follower serves the read too
    /// (a consumer's fetch with ClientMetadata has `fetchOnlyLeader` false, FetchParams),
    /// bounded by its own HW; a fetch offset past its log end is OFFSET_OUT_OF_RANGE
    /// (LocalLog.read: "Received request for offset ... but we only have log segments upto"),
    /// one between its HW and its log end reads nothing (LocalLog.read with
    /// `maxOffsetMetadata` the HW). Only the leader computes a preferred read replica
    /// (ReplicaManagerTest.testPreferredReplicaAsFollower).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn handle_consumer_fetch(
        &self,
        ctx: &mut Ctx,
        host: &Host,
        from: Node,
        request_id: u64,
        offset: u64,
        max: u32,
        client_rack: Option<&str>,
    ) {
        let log = &self.log;
        let mut preferred_read_replica = None;
        let (error, records) = if matches!(self.role, Role::None) {
            (ErrorCode::NOT_LEADER_OR_FOLLOWER, vec![])
        } else if offset > log.log_end_offset() || offset < log.log_start_offset {
            (ErrorCode::OFFSET_OUT_OF_RANGE, vec![])
        } else {
            preferred_read_replica = match (&self.role, client_rack) {
                (Role::Leader(l), Some(rack)) if ctx.config.rack_aware_replica_selector => {
                    self.find_preferred_read_replica(ctx, host, l, offset, rack)
                }
                _ => None,
            };
            let hw = log.high_watermark;
            if preferred_read_replica.is_some() || offset >= hw {
                (ErrorCode::NONE, vec![])
            } else {
                // The consumer's Fetch asks `max.partition.fetch.bytes` of its one partition
                // and `fetch.max.bytes` in all, read up to the HW
                // (FetchIsolation.HIGH_WATERMARK) with minOneMessage (KIP-74); the consumer
                // hands out at most `max` of the records (max.poll.records) and fetches the
                // rest again from its position next time.
                let c = ctx.config;
                let bytes = c.max_partition_fetch_bytes.min(c.fetch_max_bytes);
                let (mut records, _) = log.read_bytes(offset, hw, u64::from(bytes), true);
                records.truncate(max as usize);
                (ErrorCode::NONE, records)
            }
        };
        let payload = Payload::ConsumerFetchResponse {
            tp: self.tp,
            request_id,
            error,
            records,
            high_watermark: log.high_watermark,
            log_start_offset: log.log_start_offset,
            log_end_offset: log.log_end_offset(),
            preferred_read_replica,
        };
        ctx.send(Node::Broker(host.id), from, payload);
    }

    /// ReplicaManager.findPreferredReadReplica: the candidates are the followers in the ISR
    /// whose log holds the fetch offset (LEO at or past it, log start at or before it: "the
    /// follower may lag behind" otherwise), each with its LEO and the time since it last
    /// caught up, and the leader itself (time 0); RackAwareReplicaSelector.select picks
    /// one; the leader is never sent back ("we don't want to send it out").
    fn find_preferred_read_replica(
        &self,
        ctx: &Ctx,
        host: &Host,
        l: &LeaderState,
        offset: u64,
        client_rack: &str,
    ) -> Option<BrokerId> {
        let mut views = Vec::new();
        for (&b, r) in l.remote.iter() {
            let holds = r.log_end_offset.is_some_and(|leo| leo >= offset)
                && r.log_start_offset.is_none_or(|start| start <= offset);
            if l.isr_state.isr().contains(&b) && holds {
                views.push(ReadReplicaView {
                    broker: b,
                    log_end_offset: r.log_end_offset.unwrap_or(0),
                    time_since_caught_up_ms: ctx.now.saturating_sub(r.last_caught_up_time_ms),
                });
            }
        }
        let racks = &ctx.topics.racks;
        select_read_replica(
            host.id,
            &views,
            |b| racks.get(&b).map(String::as_str),
            client_rack,
        )
    }
    /// Partition.makeFollower: record the new leader and epoch. (ReplicaManager then points
    /// the fetcher at the new leader: `Broker::apply_metadata`.)
    pub(crate) fn make_follower(&mut self, ctx: &mut Ctx, host: &Host, p: &PartitionRegistration) {
        let was_leader = matches!(self.role, Role::Leader(_));
        self.abandon(ctx, host);
        self.role = Role::Follower(FollowerState {
            leader: p.leader,
            leader_epoch: p.leader_epoch,
            partition_epoch: p.partition_epoch,
            in_flight_fetch: None,
            backing_off_until: None,
            failed: false,
            lag: None,
            fetch_state_lag: None,
            // Before the fetch's divergence check (2.7) a new follower was in the truncating
            // state until OffsetsForLeaderEpoch settled where its log ends (0.11 to 2.6).
            awaiting_epoch_end: ctx.config.protocol.has_leader_epoch_truncation()
                && !ctx.config.protocol.has_divergence_check_in_fetch(),
        });
        let event = match p.leader {
            Some(l) => Event::BecameFollower {
                broker: host.id,
                tp: ctx.tp_name(self.tp),
                leader_epoch: p.leader_epoch,
                start_offset: self.log.log_end_offset(),
                partition_epoch: p.partition_epoch,
                high_watermark: self.log.high_watermark,
                leader: l,
                was_leader,
            },
            None => Event::FollowerWithoutLeader {
                broker: host.id,
                tp: ctx.tp_name(self.tp),
                leader_epoch: p.leader_epoch,
            },
        };
        ctx.emit(event);
    }
}

/// ReplicaManager.readFromLog's limits over one Fetch's partitions, read in the request's
/// order: each partition reads at most `min(PartitionData.maxBytes, limitBytes)`
/// (`replica.fetch.max.bytes`, and what is left of `replica.fetch.response.max.bytes`), and
/// `minOneMessage` (the request is not a hard limit from Fetch version 3 on, KIP-74) lets a
/// partition's first batch through whatever its size until a partition has returned bytes
/// ("Once we read from a non-empty partition, we stop ignoring request and partition level
/// size limits"). Each read takes its bytes off the response's (`limitBytes - recordBatchSize`).
///
/// The follower's request carries the two limits in Kafka (RemoteLeaderEndPoint's `fetchSize`
/// and `maxBytes`); the engine's brokers share one config, so the leader reads them there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FetchLimits {
    pub partition_max_bytes: u64,
    /// `limitBytes`: what is left of the response's bytes.
    pub remaining_bytes: u64,
    pub min_one_message: bool,
    /// The next partition read is throttled (ReplicaManager.shouldLeaderThrottle, set by the
    /// broker before each read): readFromLog's checkFetchDataInfo answers it with no records
    /// ("If the partition is being throttled, simply return an empty set"), which take nothing
    /// off the response's bytes.
    pub throttled: bool,
}

impl FetchLimits {
    pub(crate) fn new(config: &crate::Config) -> Self {
        FetchLimits {
            partition_max_bytes: u64::from(config.replica_fetch_max_bytes),
            remaining_bytes: u64::from(config.replica_fetch_response_max_bytes),
            min_one_message: true,
            throttled: false,
        }
    }

    /// ReplicaManager.readFromLog's `read` of one partition's log and the bookkeeping after
    /// it: the records and the bytes read.
    pub(crate) fn read(
        &mut self,
        log: &crate::log::ReplicaLog,
        offset: u64,
    ) -> (Vec<crate::record::Record>, u64) {
        if self.throttled {
            return (Vec::new(), 0);
        }
        let max = self.partition_max_bytes.min(self.remaining_bytes);
        let (records, bytes) =
            log.read_bytes(offset, log.log_end_offset(), max, self.min_one_message);
        if bytes > 0 {
            self.min_one_message = false;
        }
        self.remaining_bytes = self.remaining_bytes.saturating_sub(bytes);
        (records, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ReplicaSelectorTest.replicaInfoSet: brokers 0 (rack-a, LEO 4, 0 ms since caught up;
    /// the leader), 1 (rack-a, 2, 5), 2 (rack-b, 3, 3), 3 (rack-b, 4, 2). The leader is not
    /// among the views here: findPreferredReadReplica passes it apart (and drops it).
    fn replica_selector_test_views() -> Vec<ReadReplicaView> {
        let view = |broker, log_end_offset, time_since_caught_up_ms| ReadReplicaView {
            broker,
            log_end_offset,
            time_since_caught_up_ms,
        };
        vec![view(1, 2, 5), view(2, 3, 3), view(3, 4, 2)]
    }

    fn replica_selector_test_rack(b: BrokerId) -> Option<&'static str> {
        Some(if b < 2 { "rack-a" } else { "rack-b" })
    }

    #[test]
    fn rack_aware_selector_picks_the_most_caught_up_replica_of_the_clients_rack() {
        // ReplicaSelectorTest.testSameRackSelector: "Expected replica 3 since it is more
        // caught-up"; "Expect leader when we can't find any nodes in given rack"; "Expect
        // the leader since it's in rack-a" (the leader is None once dropped).
        let views = replica_selector_test_views();
        let select = |rack| select_read_replica(0, &views, replica_selector_test_rack, rack);
        assert_eq!(select("rack-b"), Some(3));
        assert_eq!(select("not-a-rack"), None);
        assert_eq!(select("rack-a"), None);
        // RackAwareReplicaSelector: no rack id (null or empty) is the leader.
        assert_eq!(select(""), None);
    }

    #[test]
    fn rack_aware_selector_breaks_ties_by_time_since_caught_up_then_broker_id() {
        // ReplicaView.comparator: LEO, then timeSinceLastCaughtUpMs reversed (the shorter
        // wins), then the broker id (the higher wins, as `max` takes the last of equals).
        let view = |broker, time_since_caught_up_ms| ReadReplicaView {
            broker,
            log_end_offset: 4,
            time_since_caught_up_ms,
        };
        let rack = |b| Some(if b == 9 { "rack-a" } else { "rack-b" });
        assert_eq!(
            select_read_replica(9, &[view(2, 7), view(3, 9)], rack, "rack-b"),
            Some(2)
        );
        assert_eq!(
            select_read_replica(9, &[view(3, 7), view(2, 7)], rack, "rack-b"),
            Some(3)
        );
        // A leader in no rack is never in the client's.
        let leader_unracked = |b| (b != 9).then_some("rack-b");
        assert_eq!(
            select_read_replica(9, &[view(2, 7)], leader_unracked, "rack-b"),
            Some(2)
        );
    }

    fn state(leo: u64, last_fetch: u64, last_leader_leo: u64, caught_up: u64) -> ReplicaState {
        ReplicaState {
            log_end_offset: Some(leo),
            log_start_offset: Some(0),
            last_fetch_time_ms: last_fetch,
            last_fetch_leader_log_end_offset: Some(last_leader_leo),
            last_caught_up_time_ms: caught_up,
            broker_epoch: Some(1),
        }
    }

    #[test]
    fn three_branch_last_caught_up_rule() {
        // Branch 1: fetch offset at the leader's LEO → caught up now.
        let mut s = state(5, 100, 5, 100);
        s.update_fetch_state(10, 0, 200, 10, 1);
        assert_eq!(s.last_caught_up_time_ms, 200);
        // Branch 2: behind now, but at or past the leader's LEO at the previous fetch → the
        // previous fetch time.
        let mut s = state(5, 100, 8, 50);
        s.update_fetch_state(8, 0, 200, 12, 1);
        assert_eq!(s.last_caught_up_time_ms, 100);
        // Branch 3: behind both → unchanged.
        let mut s = state(5, 100, 8, 50);
        s.update_fetch_state(7, 0, 200, 12, 1);
        assert_eq!(s.last_caught_up_time_ms, 50);
        assert_eq!(s.log_end_offset, Some(7));
        assert_eq!(s.last_fetch_leader_log_end_offset, Some(12));
    }

    #[test]
    fn caught_up_means_equal_leo_or_within_lag() {
        let s = state(10, 0, 10, 0);
        assert!(
            s.is_caught_up(10, 999_999, 5_000),
            "an idle frozen follower stays in sync"
        );
        assert!(!s.is_caught_up(11, 5_001, 5_000));
        assert!(s.is_caught_up(11, 5_000, 5_000));
    }

    #[test]
    fn maximal_isr_counts_pending_expand_but_not_pending_shrink() {
        let e = IsrState::PendingExpand {
            isr: vec![1, 2],
            new_in_sync: 3,
            proposal: 1,
        };
        assert_eq!(e.maximal_isr(), vec![1, 2, 3]);
        assert_eq!(e.isr(), &[1, 2]);
        let s = IsrState::PendingShrink {
            isr: vec![1, 2, 3],
            out_of_sync: vec![3],
            proposal: 2,
        };
        assert_eq!(s.maximal_isr(), vec![1, 2, 3]);
        assert!(s.is_inflight());
    }

    /// The cases of Kafka's ReplicaTest, with its values.
    mod replica_test {
        use super::super::*;

        fn state(leo: u64, start: u64, leader_leo: u64, fetch: u64, caught: u64) -> ReplicaState {
            ReplicaState {
                log_end_offset: Some(leo),
                log_start_offset: Some(start),
                last_fetch_time_ms: fetch,
                last_fetch_leader_log_end_offset: Some(leader_leo),
                last_caught_up_time_ms: caught,
                broker_epoch: Some(7),
            }
        }

        #[test]
        fn reset_replica_state_follows_replica_test() {
            // ReplicaTest: updateFetchState(10, 1, 10) at time t0, then resetReplicaState(11, ...)
            // at time 500.
            let before = state(10, 1, 10, 100, 100);
            // testResetReplicaStateWhenLeaderIsReelectedAndReplicaIsInSync
            let r = ReplicaState::reset(Some(&before), 500, 11, true);
            assert_eq!(
                r,
                ReplicaState {
                    last_fetch_leader_log_end_offset: Some(11),
                    last_fetch_time_ms: 500,
                    last_caught_up_time_ms: 500,
                    ..before.clone()
                }
            );
            // testResetReplicaStateWhenLeaderIsReelectedAndReplicaIsNotInSync
            let r = ReplicaState::reset(Some(&before), 500, 11, false);
            assert_eq!(
                r,
                ReplicaState {
                    last_fetch_leader_log_end_offset: Some(11),
                    last_fetch_time_ms: 0,
                    last_caught_up_time_ms: 0,
                    ..before.clone()
                }
            );
            // testResetReplicaStateWhenNewLeaderIsElectedAndReplicaIsInSync / NotInSync: every
            // offset unknown, lastFetchTimeMs 0, no broker epoch.
            for (in_sync, caught) in [(true, 500), (false, 0)] {
                let r = ReplicaState::reset(None, 500, 11, in_sync);
                assert_eq!(
                    r,
                    ReplicaState {
                        log_end_offset: None,
                        log_start_offset: None,
                        last_fetch_time_ms: 0,
                        last_fetch_leader_log_end_offset: None,
                        last_caught_up_time_ms: caught,
                        broker_epoch: None,
                    }
                );
            }
        }

        #[test]
        fn a_new_leader_does_not_count_a_lagging_follower_as_caught_up_from_the_election() {
            // With lastFetchLeaderLogEndOffset unknown and lastFetchTimeMs 0 (a new leader), the
            // second branch of updateFetchStateOrThrow takes max(lastCaughtUp, 0): a first fetch
            // behind the leader's end does not move lastCaughtUpTimeMs to the election time.
            let mut r = ReplicaState::reset(None, 1_000, 20, false);
            r.update_fetch_state(15, 0, 2_000, 20, 7);
            assert_eq!(r.last_caught_up_time_ms, 0);
            // ReplicaTest.testUpdateFetchState: lastFetchLeaderLogEndOffset keeps the larger.
            let mut r = state(5, 1, 15, 100, 50);
            r.update_fetch_state(10, 2, 200, 12, 7);
            assert_eq!(r.last_fetch_leader_log_end_offset, Some(15));
        }
    }
}
