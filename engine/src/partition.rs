//! The leader side of a partition (kafka.cluster.Partition, org.apache.kafka.server.replica.
//! Replica / ReplicaState, DelayedProduce, DelayedFetch): follower fetch state,
//! lastCaughtUpTimeMs, the high watermark, ISR shrink and expand through AlterPartition, and
//! the produce purgatory.

use crate::vec_map::VecMap;

use crate::effect::BrokerTimer;
use crate::event::{Event, OutOfSyncReplica};
use crate::fetcher::FollowerState;
use crate::log::BatchProducer;
use crate::metadata::PartitionRegistration;
use crate::network::Payload;
use crate::producer_state::ClientBatch;
use crate::sim::{Role, Sim};
use crate::types::{ids_where, Acks, BrokerId, ErrorCode, Node, TimeMs};

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
    pub proposal: u64,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub new_isr: Vec<(BrokerId, i64)>,
}

/// DefaultAlterPartitionManager (core/src/main/scala/kafka/server/AlterPartitionManager.scala)
/// for this broker's one partition: `unsentIsrUpdates` holds the proposal until an answer
/// for it arrives, and `inflightRequest` allows one AlterPartition request at a time. The
/// request goes through the NodeToControllerChannelManager, which never gives up on it
/// (`retryTimeoutMs = Long.MaxValue`): a request with no answer within
/// `controller.socket.timeout.ms` is sent again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlterPartitionManager {
    pub unsent: Option<AlterPartitionItem>,
    /// The correlation id of the request in flight; an answer to any other is dropped, as
    /// the client drops a response on a connection it already gave up.
    pub in_flight: Option<u64>,
}

/// How long DefaultAlterPartitionManager waits before retrying after a top-level error
/// ("retry the request in the near future": `scheduleOnce(..., 50)`).
pub const ALTER_PARTITION_RETRY_MS: u64 = 50;

/// A follower fetch with no new data, held for up to replica.fetch.wait.max.ms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldFetch {
    pub fetch_id: u64,
    pub replica_id: BrokerId,
    pub fetch_offset: u64,
    /// The fetch's currentLeaderEpoch: if the leader moved to a newer epoch meanwhile, the
    /// held fetch completes with FENCED_LEADER_EPOCH (DelayedFetch, "Case E").
    pub leader_epoch: i32,
    pub since_ms: TimeMs,
    pub deadline_ms: TimeMs,
}

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
    pub held_fetches: Vec<HeldFetch>,
    pub purgatory: Vec<DelayedProduce>,
    /// The HW when this leadership began (the invariant "the leader's HW never falls").
    pub high_watermark_at_start: u64,
}

impl Sim {
    fn leader_mut(&mut self, b: BrokerId) -> Option<&mut LeaderState> {
        match &mut self.brokers.get_mut(&b)?.role {
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
    pub(crate) fn make_leader(&mut self, b: BrokerId, p: &PartitionRegistration) {
        let now = self.now;
        let broker = &mut self.brokers[&b];
        let (previous, previous_epoch) = match &broker.role {
            Role::Follower(f) => (f.leader, f.leader_epoch),
            Role::Leader(l) => (Some(b), l.leader_epoch),
            Role::None => (None, -1),
        };
        let old = match std::mem::replace(&mut broker.role, Role::None) {
            Role::Leader(l) => Some(l),
            _ => None,
        };
        let leo = broker.log.log_end_offset();
        // "leaderLog.maybeAssignEpochStartOffset(partitionState.leaderEpoch, leaderEpochStartOffset)"
        broker.log.epoch_cache.assign(p.leader_epoch, leo);
        // A loop, not a filtered map collected: the same inserts in less wasm.
        let mut remote = VecMap::new();
        for &r in &p.replicas {
            if r != b {
                let kept = old.as_ref().and_then(|l| l.remote.get(&r));
                remote.insert(r, ReplicaState::reset(kept, now, leo, p.isr.contains(&r)));
            }
        }
        let (held_fetches, purgatory) = match old {
            Some(l) => (l.held_fetches, l.purgatory),
            None => (vec![], vec![]),
        };
        let hw = broker.log.high_watermark;
        broker.role = Role::Leader(Box::new(LeaderState {
            leader_epoch: p.leader_epoch,
            partition_epoch: p.partition_epoch,
            epoch_start_offset: leo,
            isr_state: IsrState::Committed { isr: p.isr.clone() },
            replicas: p.replicas.clone(),
            remote,
            held_fetches,
            purgatory,
            high_watermark_at_start: hw,
        }));
        let under = p.isr.len() < self.broker_min_isr(b, p.replicas.len());
        self.emit(Event::BecameLeader {
            broker: b,
            tp: self.tp.clone(),
            leader_epoch: p.leader_epoch,
            start_offset: leo,
            partition_epoch: p.partition_epoch,
            high_watermark: hw,
            isr: p.isr.clone(),
            under_min_isr: under,
            previous_leader: previous,
            previous_leader_epoch: previous_epoch,
        });
        crate::invariants::on_new_leader(self, b, p);
        self.leader_maybe_increment_hw(b);
    }

    /// makeLeader with the same leader epoch and a newer partition epoch: the controller
    /// changed the ISR (fencing, controlled shutdown) or confirmed ours.
    pub(crate) fn leader_apply_partition_update(&mut self, b: BrokerId, p: &PartitionRegistration) {
        let Some(l) = self.leader_mut(b) else { return };
        if p.partition_epoch <= l.partition_epoch {
            return;
        }
        l.partition_epoch = p.partition_epoch;
        l.isr_state = IsrState::Committed { isr: p.isr.clone() };
        self.leader_maybe_increment_hw(b);
        self.leader_try_complete_delayed(b);
    }

    /// This broker stops being leader: answer what waits with NOT_LEADER_OR_FOLLOWER.
    pub(crate) fn leader_abandon(&mut self, b: BrokerId) {
        let Some(l) = self.leader_mut(b) else { return };
        let purgatory = std::mem::take(&mut l.purgatory);
        let held = std::mem::take(&mut l.held_fetches);
        for d in purgatory {
            self.send(
                Node::Broker(b),
                d.client,
                Payload::ProduceResponse {
                    request_id: d.request_id,
                    error: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                    base_offset: None,
                    last_offset: None,
                },
            );
        }
        for h in held {
            self.send_fetch_error(
                b,
                h.replica_id,
                h.fetch_id,
                ErrorCode::NOT_LEADER_OR_FOLLOWER,
            );
        }
    }

    fn send_fetch_error(&mut self, b: BrokerId, to: BrokerId, fetch_id: u64, error: ErrorCode) {
        let log = &self.brokers[&b].log;
        let payload = Payload::FetchResponse {
            fetch_id,
            error,
            high_watermark: log.high_watermark,
            leader_log_start_offset: log.log_start_offset,
            records: vec![],
            diverging_epoch: None,
            leader_log_end_offset: log.log_end_offset(),
        };
        self.send(Node::Broker(b), Node::Broker(to), payload);
    }

    /// Partition.fetchRecords for a follower, and the DelayedFetch that holds it.
    pub(crate) fn leader_handle_fetch(&mut self, b: BrokerId, from: Node, payload: Payload) {
        let Payload::Fetch {
            fetch_id,
            replica_id,
            broker_epoch,
            fetch_offset,
            log_start_offset,
            current_leader_epoch,
            last_fetched_epoch,
        } = payload
        else {
            return;
        };
        let Node::Broker(to) = from else { return };
        let now = self.now;
        let broker = &self.brokers[&b];
        // ReplicaManager.getPartitionOrException: no such partition here.
        let local_epoch = match &broker.role {
            Role::Leader(l) => l.leader_epoch,
            Role::Follower(f) => f.leader_epoch,
            Role::None => {
                self.send_fetch_error(b, to, fetch_id, ErrorCode::NOT_LEADER_OR_FOLLOWER);
                return;
            }
        };
        // Partition.getLocalLog → checkCurrentLeaderEpoch comes first, whether or not this
        // broker leads: an older epoch is fenced, a newer one is not known here yet.
        if current_leader_epoch < local_epoch {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::FENCED_LEADER_EPOCH);
            return;
        }
        if current_leader_epoch > local_epoch {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::UNKNOWN_LEADER_EPOCH);
            return;
        }
        let Role::Leader(l) = &broker.role else {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::NOT_LEADER_OR_FOLLOWER);
            return;
        };
        // followerReplicaOrThrow: "Replica ... is not recognized as a valid replica".
        if !l.remote.contains_key(&replica_id) {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::NOT_LEADER_OR_FOLLOWER);
            return;
        }
        let leo = broker.log.log_end_offset();
        // Partition.readRecords: the divergence check on lastFetchedEpoch.
        if let Some(fetch_epoch) = last_fetched_epoch {
            let (epoch, end) = broker.log.epoch_cache.end_offset_for(fetch_epoch, leo);
            // "Could not determine the end offset of the last fetched epoch": an undefined
            // answer is OFFSET_OUT_OF_RANGE, not a divergence to truncate on.
            if epoch == crate::log::UNDEFINED_EPOCH || end == crate::log::UNDEFINED_EPOCH_OFFSET {
                self.send_fetch_error(b, to, fetch_id, ErrorCode::OFFSET_OUT_OF_RANGE);
                return;
            }
            // "If fetch offset is less than log start, fail with OffsetOutOfRangeException,
            // regardless of whether epochs are diverging".
            if fetch_offset < broker.log.log_start_offset {
                self.send_fetch_error(b, to, fetch_id, ErrorCode::OFFSET_OUT_OF_RANGE);
                return;
            }
            if epoch < fetch_epoch || end < fetch_offset as i64 {
                let payload = Payload::FetchResponse {
                    fetch_id,
                    error: ErrorCode::NONE,
                    high_watermark: broker.log.high_watermark,
                    leader_log_start_offset: broker.log.log_start_offset,
                    records: vec![],
                    diverging_epoch: Some((epoch, end)),
                    leader_log_end_offset: leo,
                };
                self.send(Node::Broker(b), from, payload);
                return;
            }
        }
        if fetch_offset > leo || fetch_offset < broker.log.log_start_offset {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::OFFSET_OUT_OF_RANGE);
            return;
        }
        // Replica.updateFetchStateOrThrow (KIP-903): a fetch whose broker epoch is older than
        // the alive broker epoch in this leader's metadata is "a stale fetch state update":
        // NOT_LEADER_OR_FOLLOWER, and the follower's state is left as it was.
        let cached_epoch = broker
            .metadata
            .as_ref()
            .and_then(|m| m.brokers.get(&replica_id))
            .filter(|r| !r.fenced)
            .map(|r| r.epoch);
        if broker_epoch != -1 && cached_epoch.is_some_and(|e| e > broker_epoch) {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::NOT_LEADER_OR_FOLLOWER);
            return;
        }
        // updateFollowerFetchState (only on the first read, not from the purgatory).
        if let Some(l) = self.leader_mut(b) {
            if let Some(r) = l.remote.get_mut(&replica_id) {
                r.update_fetch_state(fetch_offset, log_start_offset, now, leo, broker_epoch);
            }
        }
        self.leader_maybe_expand_isr(b, replica_id);
        if self.leader_maybe_increment_hw(b) {
            self.leader_try_complete_delayed(b);
        }
        if fetch_offset < leo {
            self.leader_send_fetch_data(b, to, fetch_id, fetch_offset);
        } else {
            // DelayedFetch: nothing new; hold until replica.fetch.wait.max.ms or new records.
            let deadline = now + self.config.replica_fetch_wait_max_ms;
            if let Some(l) = self.leader_mut(b) {
                l.held_fetches.push(HeldFetch {
                    fetch_id,
                    replica_id,
                    fetch_offset,
                    leader_epoch: current_leader_epoch,
                    since_ms: now,
                    deadline_ms: deadline,
                });
            }
            self.schedule_broker_timer(
                b,
                self.config.replica_fetch_wait_max_ms,
                BrokerTimer::HeldFetchExpire { fetch_id },
            );
        }
    }

    fn leader_send_fetch_data(
        &mut self,
        b: BrokerId,
        to: BrokerId,
        fetch_id: u64,
        fetch_offset: u64,
    ) {
        let log = &self.brokers[&b].log;
        let records = log.read(
            fetch_offset,
            fetch_offset + crate::config::MAX_RECORDS_PER_FETCH,
        );
        let payload = Payload::FetchResponse {
            fetch_id,
            error: ErrorCode::NONE,
            high_watermark: log.high_watermark,
            leader_log_start_offset: log.log_start_offset,
            records,
            diverging_epoch: None,
            leader_log_end_offset: log.log_end_offset(),
        };
        self.send(Node::Broker(b), Node::Broker(to), payload);
    }

    /// DelayedFetch.onExpiration: answer with what there is (usually nothing).
    pub(crate) fn leader_expire_held_fetch(&mut self, b: BrokerId, fetch_id: u64) {
        let Some(l) = self.leader_mut(b) else { return };
        let Some(pos) = l.held_fetches.iter().position(|h| h.fetch_id == fetch_id) else {
            return;
        };
        let h = l.held_fetches.remove(pos);
        self.leader_answer_held_fetch(b, h);
    }

    /// A held fetch completes: with data (or none) at its leader epoch, FENCED_LEADER_EPOCH
    /// if this leader has moved to a newer epoch since.
    fn leader_answer_held_fetch(&mut self, b: BrokerId, h: HeldFetch) {
        let epoch = self.brokers[&b].leader_state().map(|l| l.leader_epoch);
        if epoch == Some(h.leader_epoch) {
            self.leader_send_fetch_data(b, h.replica_id, h.fetch_id, h.fetch_offset);
        } else {
            self.send_fetch_error(b, h.replica_id, h.fetch_id, ErrorCode::FENCED_LEADER_EPOCH);
        }
    }

    /// New records: complete held fetches (a follower's DelayedFetch works off LOG_END, so a
    /// HW rise alone does not release it).
    fn leader_complete_held_fetches(&mut self, b: BrokerId) {
        let leo = self.brokers[&b].log.log_end_offset();
        let Some(l) = self.leader_mut(b) else { return };
        let (ready, waiting): (Vec<HeldFetch>, Vec<HeldFetch>) =
            std::mem::take(&mut l.held_fetches)
                .into_iter()
                .partition(|h| h.fetch_offset < leo);
        l.held_fetches = waiting;
        for h in ready {
            self.leader_answer_held_fetch(b, h);
        }
    }

    /// Partition.isReplicaIsrEligible, from this broker's metadata cache.
    fn is_replica_isr_eligible(
        &self,
        b: BrokerId,
        replica: BrokerId,
        fetch_broker_epoch: Option<i64>,
    ) -> bool {
        let Some(m) = &self.brokers[&b].metadata else {
            return false;
        };
        match m.brokers.get(&replica) {
            Some(r) => {
                !r.fenced
                    && !r.in_controlled_shutdown
                    && fetch_broker_epoch.is_none_or(|e| e == r.epoch)
            }
            None => false,
        }
    }

    /// Partition.maybeExpandIsr.
    fn leader_maybe_expand_isr(&mut self, b: BrokerId, replica: BrokerId) {
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
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
        if follower_leo < broker.log.high_watermark || follower_leo < l.epoch_start_offset {
            return;
        }
        if !self.is_replica_isr_eligible(b, replica, state.broker_epoch) {
            return;
        }
        let isr = l.isr_state.isr().to_vec();
        // The leader keeps its ISR as a Set<Integer>; for broker ids its iteration (and so the
        // AlterPartition's newIsr and the describe output after it) is ascending.
        let mut new_isr = isr.clone();
        new_isr.push(replica);
        let new_isr = crate::sort::sorted_ids(&new_isr);
        self.emit(Event::IsrExpanding {
            broker: b,
            tp: self.tp.clone(),
            isr: isr.clone(),
            new_isr: new_isr.clone(),
        });
        let proposal = self.next_request_id();
        if let Some(l) = self.leader_mut(b) {
            l.isr_state = IsrState::PendingExpand {
                isr,
                new_in_sync: replica,
                proposal,
            };
        }
        self.leader_submit_alter_partition(b, proposal, &new_isr);
    }

    /// Partition.maybeShrinkIsr (the isr-expiration task).
    pub(crate) fn leader_maybe_shrink_isr(&mut self, b: BrokerId) {
        let now = self.now;
        let lag = self.config.replica_lag_time_max_ms;
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
            return;
        };
        if l.isr_state.is_inflight() {
            return;
        }
        let leo = broker.log.log_end_offset();
        let isr = l.isr_state.isr().to_vec();
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
            tp: self.tp.clone(),
            isr: isr.clone(),
            new_isr: new_isr.clone(),
            high_watermark: broker.log.high_watermark,
            log_end_offset: leo,
            out_of_sync,
        };
        self.emit(event);
        let proposal = self.next_request_id();
        if let Some(l) = self.leader_mut(b) {
            l.isr_state = IsrState::PendingShrink {
                isr,
                out_of_sync: out,
                proposal,
            };
        }
        self.leader_submit_alter_partition(b, proposal, &new_isr);
    }

    /// Partition.submitAlterPartition → DefaultAlterPartitionManager.submit. The new ISR
    /// carries each member's broker epoch as the leader last saw it in a fetch
    /// (Partition.addBrokerEpochToIsr: -1 when it has none).
    fn leader_submit_alter_partition(&mut self, b: BrokerId, proposal: u64, new_isr: &[BrokerId]) {
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
            return;
        };
        let mut new_isr_with_epochs: Vec<(BrokerId, i64)> = Vec::new();
        for &r in new_isr {
            let epoch = if r == b {
                broker.broker_epoch
            } else {
                l.remote.get(&r).and_then(|s| s.broker_epoch).unwrap_or(-1)
            };
            new_isr_with_epochs.push((r, epoch));
        }
        let item = AlterPartitionItem {
            proposal,
            leader_epoch: l.leader_epoch,
            partition_epoch: l.partition_epoch,
            new_isr: new_isr_with_epochs,
        };
        self.alter_partition_submit(b, item);
    }

    /// DefaultAlterPartitionManager.submit: at most one proposal per partition waits for an
    /// answer (`unsentIsrUpdates.putIfAbsent`); a second one fails at once with
    /// OPERATION_NOT_ATTEMPTED, which the partition treats as a refusal.
    fn alter_partition_submit(&mut self, b: BrokerId, item: AlterPartitionItem) {
        let broker = &mut self.brokers[&b];
        if broker.alter_partition.unsent.is_some() {
            self.leader_handle_alter_partition_result(
                b,
                item,
                ErrorCode::OPERATION_NOT_ATTEMPTED,
                None,
            );
            return;
        }
        broker.alter_partition.unsent = Some(item);
        self.alter_partition_propagate(b);
    }

    /// DefaultAlterPartitionManager.maybePropagateIsrChanges: send what is unsent, unless a
    /// request is already in flight. A request lost on the way (a cut link) gets no answer;
    /// the channel manager sends it again after `controller.socket.timeout.ms`.
    pub(crate) fn alter_partition_propagate(&mut self, b: BrokerId) {
        let broker = &self.brokers[&b];
        if broker.alter_partition.in_flight.is_some() {
            return;
        }
        let Some(item) = broker.alter_partition.unsent.clone() else {
            return;
        };
        let broker_epoch = broker.broker_epoch;
        let request_id = self.next_request_id();
        self.brokers[&b].alter_partition.in_flight = Some(request_id);
        let payload = Payload::AlterPartition {
            request_id,
            broker_epoch,
            leader_epoch: item.leader_epoch,
            partition_epoch: item.partition_epoch,
            new_isr: item.new_isr,
        };
        self.send(Node::Broker(b), Node::Controller, payload);
        self.schedule_broker_timer(
            b,
            self.config.controller_socket_timeout_ms,
            BrokerTimer::AlterPartitionTimeout { request_id },
        );
    }

    /// No answer to the AlterPartition request within `controller.socket.timeout.ms`: the
    /// NodeToControllerRequestThread puts it back at the head of its queue
    /// (`requestQueue.putFirst`) and sends it again.
    pub(crate) fn alter_partition_timeout(&mut self, b: BrokerId, request_id: u64) {
        let broker = &mut self.brokers[&b];
        if broker.alter_partition.in_flight != Some(request_id) {
            return;
        }
        broker.alter_partition.in_flight = None;
        self.emit(Event::AlterPartitionTimedOut {
            broker: b,
            controller_socket_timeout_ms: self.config.controller_socket_timeout_ms,
        });
        self.alter_partition_propagate(b);
    }

    /// DefaultAlterPartitionManager's response handler. A top-level STALE_BROKER_EPOCH keeps
    /// the proposal and retries it 50 ms later; otherwise the proposal leaves
    /// `unsentIsrUpdates` and its partition result goes to the partition.
    pub(crate) fn alter_partition_handle_response(
        &mut self,
        b: BrokerId,
        request_id: u64,
        top_error: ErrorCode,
        result: crate::network::AlterPartitionResult,
    ) {
        let broker = &mut self.brokers[&b];
        if broker.alter_partition.in_flight != Some(request_id) {
            return; // an answer to a request we already sent again
        }
        broker.alter_partition.in_flight = None;
        if top_error != ErrorCode::NONE {
            let epoch = broker.broker_epoch;
            self.emit(Event::AlterPartitionStaleBrokerEpoch {
                broker: b,
                broker_epoch: epoch,
            });
            self.schedule_broker_timer(
                b,
                ALTER_PARTITION_RETRY_MS,
                BrokerTimer::AlterPartitionRetry,
            );
            return;
        }
        let Some(item) = broker.alter_partition.unsent.take() else {
            return;
        };
        let answer = (result.error == ErrorCode::NONE).then_some(&result);
        self.leader_handle_alter_partition_result(b, item, result.error, answer);
        self.alter_partition_propagate(b);
    }

    /// Partition.submitAlterPartition's completion: handleAlterPartitionUpdate or
    /// handleAlterPartitionError, for the proposal `item` only.
    pub(crate) fn leader_handle_alter_partition_result(
        &mut self,
        b: BrokerId,
        item: AlterPartitionItem,
        error: ErrorCode,
        answer: Option<&crate::network::AlterPartitionResult>,
    ) {
        let tp = self.tp.clone();
        let min_isr = self.broker_min_isr(b, usize::MAX);
        let Some(l) = self.leader_mut(b) else { return };
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
                l.isr_state = IsrState::Committed { isr: a.isr.clone() };
                l.partition_epoch = a.partition_epoch;
                // Partition.isUnderMinIsr, with effectiveMinIsr (never above the replica count).
                let under = a.isr.len() < min_isr.min(l.replicas.len());
                self.emit(Event::IsrUpdated {
                    broker: b,
                    tp,
                    isr: a.isr.clone(),
                    under_min_isr: under,
                    partition_epoch: a.partition_epoch,
                });
                if self.leader_maybe_increment_hw(b) {
                    self.leader_try_complete_delayed(b);
                }
            }
            // handleAlterPartitionError: "the controller is explicitly telling us 1) that the
            // current partition epoch is correct, and 2) that the request was not applied."
            (ErrorCode::OPERATION_NOT_ATTEMPTED | ErrorCode::INELIGIBLE_REPLICA, _) => {
                l.isr_state = IsrState::Committed {
                    isr: committed.clone(),
                };
                self.emit(Event::AlterPartitionRejected {
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
                self.emit(Event::AlterPartitionFailed {
                    broker: b,
                    tp,
                    error,
                });
            }
            // "Failed to update ISR ... due to unexpected {error}. Retrying."
            _ => {
                self.emit(Event::IsrUpdateFailed {
                    broker: b,
                    tp,
                    error,
                });
                // The same proposal goes again (submitAlterPartition(proposedIsrState)).
                self.alter_partition_submit(b, item);
            }
        }
    }

    /// Partition.maybeIncrementLeaderHW. Returns true when the HW moved.
    pub(crate) fn leader_maybe_increment_hw(&mut self, b: BrokerId) -> bool {
        let now = self.now;
        let lag = self.config.replica_lag_time_max_ms;
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
            return false;
        };
        let min_isr = self.broker_min_isr(b, l.replicas.len());
        // isUnderMinIsr: the HW does not move while the ISR is below min.insync.replicas.
        if l.isr_state.isr().len() < min_isr {
            return false;
        }
        let leo = broker.log.log_end_offset();
        let maximal = l.isr_state.maximal_isr();
        let mut new_hw = Some(leo);
        for (&r, state) in &l.remote {
            let should_wait_to_join = state.is_caught_up(leo, now, lag)
                && self.is_replica_isr_eligible(b, r, state.broker_epoch);
            if maximal.contains(&r) || should_wait_to_join {
                // An unknown LEO (-1 in Kafka) pulls the candidate below any HW.
                new_hw = match (new_hw, state.log_end_offset) {
                    (Some(h), Some(o)) => Some(h.min(o)),
                    _ => None,
                };
            }
        }
        let Some(new_hw) = new_hw else { return false };
        let old = broker.log.high_watermark;
        let moved = self.brokers[&b].log.maybe_increment_high_watermark(new_hw);
        if moved {
            crate::invariants::on_leader_hw(self, b, old, new_hw);
        }
        moved
    }

    /// DelayedOperations.checkAndCompleteAll for the produce purgatory:
    /// Partition.checkEnoughReplicasReachOffset.
    pub(crate) fn leader_try_complete_delayed(&mut self, b: BrokerId) {
        let now = self.now;
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
            return;
        };
        let hw = broker.log.high_watermark;
        let min_isr = self.broker_min_isr(b, l.replicas.len());
        let maximal = l.isr_state.maximal_isr().len();
        let (done, waiting): (Vec<DelayedProduce>, Vec<DelayedProduce>) = l
            .purgatory
            .clone()
            .into_iter()
            .partition(|d| hw >= d.required_offset);
        if done.is_empty() {
            return;
        }
        if let Some(l) = self.leader_mut(b) {
            l.purgatory = waiting;
        }
        for d in done {
            let error = if min_isr <= maximal {
                ErrorCode::NONE
            } else {
                ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND
            };
            let _ = now;
            self.send(
                Node::Broker(b),
                d.client,
                Payload::ProduceResponse {
                    request_id: d.request_id,
                    error,
                    base_offset: Some(d.first_offset),
                    last_offset: Some(d.required_offset - 1),
                },
            );
        }
    }

    /// DelayedProduce.onExpiration: REQUEST_TIMED_OUT.
    pub(crate) fn leader_expire_produce(&mut self, b: BrokerId, request_id: u64) {
        let Some(l) = self.leader_mut(b) else { return };
        let Some(pos) = l.purgatory.iter().position(|d| d.request_id == request_id) else {
            return;
        };
        let d = l.purgatory.remove(pos);
        self.send(
            Node::Broker(b),
            d.client,
            Payload::ProduceResponse {
                request_id,
                error: ErrorCode::REQUEST_TIMED_OUT,
                base_offset: None,
                last_offset: None,
            },
        );
    }

    /// Partition.appendRecordsToLeader and ReplicaManager.appendRecords.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn leader_handle_produce(
        &mut self,
        b: BrokerId,
        from: Node,
        request_id: u64,
        acks: Acks,
        values: Vec<String>,
        timeout_ms: u64,
        producer: BatchProducer,
    ) {
        let now = self.now;
        let respond = |s: &mut Sim, error: ErrorCode, base: Option<u64>, last: Option<u64>| {
            if acks != Acks::Zero {
                s.send(
                    Node::Broker(b),
                    from,
                    Payload::ProduceResponse {
                        request_id,
                        error,
                        base_offset: base,
                        last_offset: last,
                    },
                );
            }
        };
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
            respond(self, ErrorCode::NOT_LEADER_OR_FOLLOWER, None, None);
            return;
        };
        let min_isr = self.broker_min_isr(b, l.replicas.len());
        let in_sync = l.isr_state.isr().len();
        if acks == Acks::All && in_sync < min_isr {
            // "Avoid writing to leader if there are not enough insync replicas to make it safe"
            respond(self, ErrorCode::NOT_ENOUGH_REPLICAS, None, None);
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
        let check = broker.log.producers.check_client_batch(
            producer.producer_id,
            producer.producer_epoch,
            producer.base_sequence,
            last_sequence,
        );
        let (first, last) = match check {
            ClientBatch::Reject(error) => {
                respond(self, error, None, None);
                return;
            }
            ClientBatch::Duplicate(d) => {
                // appendRecordsToLeader calls maybeIncrementLeaderHW after appendAsLeader
                // whether or not the batch was a duplicate ("since ISR could be down to 1").
                self.leader_maybe_increment_hw(b);
                (d.first_offset, d.last_offset)
            }
            ClientBatch::Append => {
                let appended = self.brokers[&b]
                    .log
                    .append_batch_as_leader(epoch, &values, producer);
                crate::invariants::on_leader_append(self, b, appended.0, appended.1);
                // A leader alone in the ISR moves the HW on its own append.
                self.leader_maybe_increment_hw(b);
                self.leader_complete_held_fetches(b);
                appended
            }
        };
        match acks {
            Acks::Zero => {}
            Acks::One => respond(self, ErrorCode::NONE, Some(first), Some(last)),
            Acks::All => {
                if let Some(l) = self.leader_mut(b) {
                    l.purgatory.push(DelayedProduce {
                        request_id,
                        client: from,
                        first_offset: first,
                        required_offset: last + 1,
                        created_ms: now,
                        deadline_ms: now + timeout_ms,
                    });
                }
                self.schedule_broker_timer(
                    b,
                    timeout_ms,
                    BrokerTimer::ProduceExpire { request_id },
                );
                // tryCompleteElseWatch
                self.leader_try_complete_delayed(b);
            }
        }
    }

    /// A consumer's Fetch: FetchIsolation.HIGH_WATERMARK.
    pub(crate) fn leader_handle_consumer_fetch(
        &mut self,
        b: BrokerId,
        from: Node,
        request_id: u64,
        offset: u64,
        max: u32,
    ) {
        let broker = &self.brokers[&b];
        let log = &broker.log;
        let (error, records) = if !matches!(broker.role, Role::Leader(_)) {
            (ErrorCode::NOT_LEADER_OR_FOLLOWER, vec![])
        } else if offset > log.log_end_offset() || offset < log.log_start_offset {
            (ErrorCode::OFFSET_OUT_OF_RANGE, vec![])
        } else {
            (
                ErrorCode::NONE,
                log.read(offset, log.high_watermark.min(offset + u64::from(max))),
            )
        };
        let payload = Payload::ConsumerFetchResponse {
            request_id,
            error,
            records,
            high_watermark: log.high_watermark,
            log_start_offset: log.log_start_offset,
            log_end_offset: log.log_end_offset(),
        };
        self.send(Node::Broker(b), from, payload);
    }

    /// Partition.makeFollower: record the new leader and epoch; the fetcher re-points.
    pub(crate) fn make_follower(&mut self, b: BrokerId, p: &PartitionRegistration) {
        let was_leader = matches!(self.brokers[&b].role, Role::Leader(_));
        self.leader_abandon(b);
        let broker = &mut self.brokers[&b];
        broker.role = Role::Follower(FollowerState {
            leader: p.leader,
            leader_epoch: p.leader_epoch,
            partition_epoch: p.partition_epoch,
            in_flight_fetch: None,
            generation: 0,
            backing_off_until: None,
            failed: false,
        });
        let event = match p.leader {
            Some(l) => Event::BecameFollower {
                broker: b,
                tp: self.tp.clone(),
                leader_epoch: p.leader_epoch,
                start_offset: broker.log.log_end_offset(),
                partition_epoch: p.partition_epoch,
                high_watermark: broker.log.high_watermark,
                leader: l,
                was_leader,
            },
            None => Event::FollowerWithoutLeader {
                broker: b,
                tp: self.tp.clone(),
                leader_epoch: p.leader_epoch,
            },
        };
        self.emit(event);
        if p.leader.is_some() {
            self.fetcher_start(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

/// AlterPartition bookkeeping, driven on one leader: Partition.submitAlterPartition,
/// handleAlterPartitionUpdate and handleAlterPartitionError, and DefaultAlterPartitionManager.
/// Expectations from Kafka's rules as the code states them, and from PartitionTest /
/// AlterPartitionManagerTest where they check the same thing (named per test).
#[cfg(test)]
mod alter_partition_tests {
    use super::*;
    use crate::scenario::{Action, ControllerName, Endpoint, Scenario};

    /// Three brokers, broker 1 leading; broker 3 is frozen, so the leader shrinks the ISR
    /// once replica.lag.time.max.ms passes. Brokers are never fenced (a long session).
    fn sim() -> Sim {
        let s = Scenario::from_json(
            r#"{"config":{"replica.lag.time.max.ms":2000,"broker.session.timeout.ms":600000,
                          "sim.controller.latency.ms":500},
                "timeline":[{"at":0,"action":"freeze","broker":3},
                            {"at":100,"action":"produce","acks":"1","values":["a"]}],
                "end_ms":600000}"#,
        )
        .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.check_invariants = true;
        sim
    }

    fn leader(sim: &Sim) -> &LeaderState {
        sim.brokers[&1].leader_state().expect("broker 1 leads")
    }

    /// Steps until broker 1 has proposed the shrink of broker 3 (its AlterPartition is in
    /// flight) and returns the proposal.
    fn until_shrink_proposed(sim: &mut Sim) -> u64 {
        while leader(sim).isr_state.proposal().is_none() {
            assert!(sim.step(), "the leader proposes a shrink");
        }
        let proposal = leader(sim).isr_state.proposal().expect("pending");
        assert!(matches!(
            &leader(sim).isr_state,
            IsrState::PendingShrink { out_of_sync, .. } if out_of_sync == &vec![3]
        ));
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(apm.unsent.as_ref().map(|i| i.proposal), Some(proposal));
        assert!(apm.in_flight.is_some(), "one request in flight");
        proposal
    }

    fn cut_controller(sim: &mut Sim) {
        sim.apply_now(&Action::Cut {
            a: Endpoint::Broker(1),
            b: Endpoint::Controller(ControllerName::Controller),
        })
        .expect("cut");
    }

    #[test]
    fn a_lost_request_is_sent_again_until_it_is_answered() {
        // NodeToControllerChannelManager (retryTimeoutMs = Long.MaxValue for AlterPartition):
        // a request with no answer within controller.socket.timeout.ms (30000) is put back
        // at the head of the queue and sent again, for as long as it takes.
        let mut sim = sim();
        until_shrink_proposed(&mut sim);
        let sent_at = sim.now();
        cut_controller(&mut sim); // the request is on the wire: it is lost
        sim.advance_to(sent_at + 29_000);
        assert!(
            leader(&sim).isr_state.is_inflight(),
            "no answer yet: still PendingShrink"
        );
        assert_eq!(leader(&sim).isr_state.isr(), &[1, 2, 3]);
        sim.advance_to(sent_at + 45_000); // the first resend, at +30 s, is lost too
        assert!(leader(&sim).isr_state.is_inflight());
        sim.apply_now(&Action::Heal {
            a: Endpoint::Broker(1),
            b: Endpoint::Controller(ControllerName::Controller),
        })
        .expect("heal");
        sim.advance_to(sent_at + 59_000);
        assert!(
            leader(&sim).isr_state.is_inflight(),
            "until the next resend"
        );
        sim.advance_to(sent_at + 62_000); // resent at +60 s, answered 1 s later
        assert_eq!(
            leader(&sim).isr_state,
            IsrState::Committed { isr: vec![1, 2] }
        );
        assert_eq!(sim.controller.partition.isr, vec![1, 2]);
        let resends = sim
            .trace_events()
            .filter(|e| e.text().contains("AlterPartition request got no answer"))
            .count();
        assert_eq!(resends, 2, "resent at +30 s and +60 s");
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    }

    fn item(proposal: u64, sim: &Sim) -> AlterPartitionItem {
        let l = leader(sim);
        AlterPartitionItem {
            proposal,
            leader_epoch: l.leader_epoch,
            partition_epoch: l.partition_epoch,
            new_isr: vec![(1, 0), (2, 1)],
        }
    }

    #[test]
    fn an_answer_applies_only_to_the_proposal_it_answers() {
        // Partition.submitAlterPartition: "if (partitionState != proposedIsrState) ...
        // Ignoring failed ISR update to $proposedIsrState since we have already updated state".
        let mut sim = sim();
        let p = until_shrink_proposed(&mut sim);
        let before = leader(&sim).isr_state.clone();
        let stale = item(p - 1, &sim);
        sim.leader_handle_alter_partition_result(1, stale, ErrorCode::INVALID_UPDATE_VERSION, None);
        sim.flush_effects();
        assert_eq!(
            leader(&sim).isr_state,
            before,
            "a stale answer changes nothing"
        );
        let stale = item(p - 1, &sim);
        sim.leader_handle_alter_partition_result(1, stale, ErrorCode::INELIGIBLE_REPLICA, None);
        sim.flush_effects();
        assert_eq!(leader(&sim).isr_state, before);
    }

    #[test]
    fn errors_that_await_metadata_keep_the_pending_state_and_send_nothing() {
        // Partition.handleAlterPartitionError: FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
        // INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION and NEW_LEADER_ELECTED return false
        // (no retry) and leave partitionState pending, "awaiting new the latest metadata"
        // (PartitionTest testIsrNotExpandedIfUpdateFails: after INVALID_UPDATE_VERSION the
        // maximal ISR stays the proposed one and no further update is sent).
        for error in [
            ErrorCode::FENCED_LEADER_EPOCH,
            ErrorCode::INVALID_UPDATE_VERSION,
            ErrorCode::INVALID_REQUEST,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            ErrorCode::NEW_LEADER_ELECTED,
        ] {
            let mut sim = sim();
            let p = until_shrink_proposed(&mut sim);
            let before = leader(&sim).isr_state.clone();
            sim.brokers.get_mut(&1).expect("b1").alter_partition = Default::default();
            let it = item(p, &sim);
            sim.leader_handle_alter_partition_result(1, it, error, None);
            sim.flush_effects();
            assert_eq!(leader(&sim).isr_state, before, "{error}: stays pending");
            assert_eq!(
                sim.brokers[&1].alter_partition,
                AlterPartitionManager::default(),
                "{error}: not re-proposed"
            );
            // Pending, the leader proposes no other ISR change.
            sim.leader_maybe_shrink_isr(1);
            sim.flush_effects();
            assert_eq!(leader(&sim).isr_state, before, "{error}");
        }
    }

    #[test]
    fn refusals_revert_to_the_committed_state_and_unexpected_errors_retry() {
        // handleAlterPartitionError: OPERATION_NOT_ATTEMPTED and INELIGIBLE_REPLICA reset
        // partitionState to proposedIsrState.lastCommittedState (PartitionTest
        // testIsrNotExpandedIfReplicaIsFencedOrShutdown expects the ISR back at the committed
        // one after INELIGIBLE_REPLICA); any other error is "unexpected ... Retrying":
        // the same proposal is submitted again (PartitionTest
        // testPartitionShouldRetryAlterPartitionRequest, with UNKNOWN_SERVER_ERROR).
        for error in [
            ErrorCode::OPERATION_NOT_ATTEMPTED,
            ErrorCode::INELIGIBLE_REPLICA,
        ] {
            let mut sim = sim();
            let p = until_shrink_proposed(&mut sim);
            sim.brokers.get_mut(&1).expect("b1").alter_partition = Default::default();
            let it = item(p, &sim);
            sim.leader_handle_alter_partition_result(1, it, error, None);
            sim.flush_effects();
            assert_eq!(
                leader(&sim).isr_state,
                IsrState::Committed { isr: vec![1, 2, 3] },
                "{error}"
            );
        }
        let mut sim = sim();
        let p = until_shrink_proposed(&mut sim);
        let before = leader(&sim).isr_state.clone();
        sim.brokers.get_mut(&1).expect("b1").alter_partition = Default::default();
        let it = item(p, &sim);
        sim.leader_handle_alter_partition_result(1, it.clone(), ErrorCode::NOT_CONTROLLER, None);
        sim.flush_effects();
        assert_eq!(leader(&sim).isr_state, before, "still the same proposal");
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(apm.unsent, Some(it), "submitted again, unchanged");
        assert!(apm.in_flight.is_some(), "and sent");
    }

    #[test]
    fn a_second_proposal_while_one_waits_is_not_attempted() {
        // DefaultAlterPartitionManager.submit: unsentIsrUpdates.putIfAbsent fails while an
        // earlier proposal for the partition waits for its answer, and the new one completes
        // with OperationNotAttemptedException (AlterPartitionManagerTest
        // testOverwriteWithinBatch: "Should get a failed future" for the second submit).
        let mut sim = sim();
        let first = until_shrink_proposed(&mut sim);
        // New metadata resets the partition to a committed state (makeLeader with a newer
        // partition epoch) while the first request is still unanswered.
        let l = sim.brokers.get_mut(&1).expect("b1");
        if let Role::Leader(l) = &mut l.role {
            l.isr_state = IsrState::Committed { isr: vec![1, 2, 3] };
        }
        sim.leader_maybe_shrink_isr(1);
        sim.flush_effects();
        assert_eq!(
            leader(&sim).isr_state,
            IsrState::Committed { isr: vec![1, 2, 3] },
            "the second proposal was refused at once and reverted"
        );
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(
            apm.unsent.as_ref().map(|i| i.proposal),
            Some(first),
            "the first still waits"
        );
    }

    #[test]
    fn a_top_level_stale_broker_epoch_keeps_the_proposal_and_retries_it() {
        // DefaultAlterPartitionManager.handleAlterPartitionResponse: STALE_BROKER_EPOCH
        // "retrying" leaves the item in unsentIsrUpdates; the request goes again 50 ms later.
        let mut sim = sim();
        let p = until_shrink_proposed(&mut sim);
        let request = sim.brokers[&1]
            .alter_partition
            .in_flight
            .expect("in flight");
        let result = crate::network::AlterPartitionResult {
            error: ErrorCode::NONE,
            leader: Some(1),
            leader_epoch: 0,
            partition_epoch: 0,
            isr: vec![],
        };
        sim.alter_partition_handle_response(1, request, ErrorCode::STALE_BROKER_EPOCH, result);
        sim.flush_effects();
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(apm.unsent.as_ref().map(|i| i.proposal), Some(p));
        assert_eq!(apm.in_flight, None);
        let at = sim.now();
        sim.advance_to(at + ALTER_PARTITION_RETRY_MS);
        assert!(
            sim.brokers[&1].alter_partition.in_flight.is_some(),
            "sent again"
        );
    }
}

/// The leader's view of its followers and the fetch-error rules, one situation each.
#[cfg(test)]
mod fetch_tests {
    use super::*;
    use crate::scenario::Scenario;

    fn sim(json: &str) -> Sim {
        let mut sim = Sim::new(&Scenario::from_json(json).expect("scenario")).expect("sim");
        sim.check_invariants = true;
        sim
    }

    fn replicated() -> Sim {
        let mut s = sim(
            r#"{"timeline":[{"at":100,"action":"produce","acks":"all","values":["a","b","c"]}],
                "end_ms":600000}"#,
        );
        s.advance_to(2_000);
        s
    }

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

    #[test]
    fn the_same_leader_at_a_new_epoch_keeps_what_it_knows_of_its_followers() {
        // Partition.makeLeader: isNewLeader = !isLeader; a re-elected leader calls
        // resetReplicaState(isNewLeader = false), keeping LEO, log start and broker epoch.
        let mut sim = replicated();
        let before = sim.brokers[&1].leader_state().expect("leads").remote[&2].clone();
        assert_eq!(before.log_end_offset, Some(3));
        let mut p = sim.controller.partition.clone();
        p.leader_epoch += 1;
        p.partition_epoch += 1;
        sim.make_leader(1, &p);
        sim.flush_effects();
        let after = &sim.brokers[&1].leader_state().expect("leads").remote[&2];
        assert_eq!(after.log_end_offset, Some(3));
        assert_eq!(after.broker_epoch, before.broker_epoch);
        assert_eq!(after.last_fetch_leader_log_end_offset, Some(3));
        // A broker that was following becomes a new leader: it knows nothing yet.
        let mut p = sim.controller.partition.clone();
        p.leader = Some(2);
        p.leader_epoch += 2;
        sim.make_leader(2, &p);
        sim.flush_effects();
        let fresh = &sim.brokers[&2].leader_state().expect("leads").remote[&3];
        assert_eq!(fresh.log_end_offset, None);
        assert_eq!(fresh.broker_epoch, None);
    }

    /// Sends a Fetch to broker `to` as broker `from` would, and returns the error of the
    /// FetchResponse it put on the wire.
    fn fetch(
        sim: &mut Sim,
        to: BrokerId,
        from: BrokerId,
        f: impl FnOnce(&mut Payload),
    ) -> ErrorCode {
        let broker = &sim.brokers[&from];
        let mut payload = Payload::Fetch {
            fetch_id: 999_999,
            replica_id: from,
            broker_epoch: broker.broker_epoch,
            fetch_offset: broker.log.log_end_offset(),
            log_start_offset: 0,
            current_leader_epoch: sim.controller.partition.leader_epoch,
            last_fetched_epoch: broker.log.epoch_cache.latest_epoch(),
        };
        f(&mut payload);
        sim.leader_handle_fetch(to, Node::Broker(from), payload);
        sim.flush_effects();
        sim.in_flight
            .values()
            .rev()
            .find_map(|m| match &m.payload {
                Payload::FetchResponse {
                    fetch_id: 999_999,
                    error,
                    ..
                } => Some(*error),
                _ => None,
            })
            .expect("answered")
    }

    fn set_epoch(p: &mut Payload, e: i32) {
        if let Payload::Fetch {
            current_leader_epoch,
            ..
        } = p
        {
            *current_leader_epoch = e;
        }
    }

    #[test]
    fn the_leader_epoch_is_checked_first_on_a_follower_too() {
        // Partition.getLocalLog → checkCurrentLeaderEpoch before the leader check
        // (PartitionTest.testLeaderEpochValidationOnFollower: FENCED for epoch - 1,
        // UNKNOWN for epoch + 1, NOT_LEADER_OR_FOLLOWER for the current epoch).
        let mut sim = replicated();
        if let Role::Follower(f) = &mut sim.brokers.get_mut(&2).expect("b2").role {
            f.leader_epoch = 5;
        }
        assert_eq!(
            fetch(&mut sim, 2, 3, |p| set_epoch(p, 4)),
            ErrorCode::FENCED_LEADER_EPOCH
        );
        assert_eq!(
            fetch(&mut sim, 2, 3, |p| set_epoch(p, 6)),
            ErrorCode::UNKNOWN_LEADER_EPOCH
        );
        assert_eq!(
            fetch(&mut sim, 2, 3, |p| set_epoch(p, 5)),
            ErrorCode::NOT_LEADER_OR_FOLLOWER
        );
    }

    #[test]
    fn a_fetch_with_a_stale_broker_epoch_changes_nothing() {
        // Replica.updateFetchStateOrThrow (KIP-903), PartitionTest
        // testFenceFollowerFetchWithStaleBrokerEpoch: NotLeaderOrFollowerException, and the
        // replica state stays as the previous fetch left it.
        let mut sim = replicated();
        let before = sim.brokers[&1].leader_state().expect("leads").remote[&2].clone();
        let stale = sim.brokers[&2].broker_epoch - 1;
        let e = fetch(&mut sim, 1, 2, |p| {
            if let Payload::Fetch { broker_epoch, .. } = p {
                *broker_epoch = stale;
            }
        });
        assert_eq!(e, ErrorCode::NOT_LEADER_OR_FOLLOWER);
        assert_eq!(
            sim.brokers[&1].leader_state().expect("leads").remote[&2],
            before
        );
        // The right epoch is accepted (a fetch from offset 2 is answered with data at once).
        let ok = fetch(&mut sim, 1, 2, |p| {
            if let Payload::Fetch { fetch_offset, .. } = p {
                *fetch_offset = 2;
            }
        });
        assert_eq!(ok, ErrorCode::NONE);
    }

    #[test]
    fn an_undefined_end_offset_is_out_of_range_and_the_follower_keeps_its_log() {
        // Partition.readRecords: "Could not determine the end offset of the last fetched
        // epoch" → OFFSET_OUT_OF_RANGE; AbstractFetcherThread.fetchOffsetAndTruncate with the
        // leader's LEO at or past ours truncates nothing (it fetches from max(leader start,
        // our LEO)). A follower whose last fetched epoch is above the leader's must not lose
        // its log.
        let mut sim = replicated();
        let e = fetch(&mut sim, 1, 2, |p| {
            if let Payload::Fetch {
                last_fetched_epoch, ..
            } = p
            {
                *last_fetched_epoch = Some(9);
            }
        });
        assert_eq!(e, ErrorCode::OFFSET_OUT_OF_RANGE);
        sim.fetcher_handle_out_of_range_for_test(2, 1, 3, 0);
        sim.flush_effects();
        assert_eq!(sim.brokers[&2].log.log_end_offset(), 3, "nothing truncated");
        // The leader's log ends below ours: truncate to it (the unclean-election case).
        sim.fetcher_handle_out_of_range_for_test(2, 1, 1, 0);
        sim.flush_effects();
        assert_eq!(sim.brokers[&2].log.log_end_offset(), 1);
        // The leader's log starts past our end: start over at its log start.
        sim.fetcher_handle_out_of_range_for_test(2, 1, 9, 5);
        sim.flush_effects();
        let log = &sim.brokers[&2].log;
        assert_eq!((log.log_start_offset, log.log_end_offset()), (5, 5));
    }

    #[test]
    fn a_fenced_follower_stops_fetching_until_a_new_leader_epoch() {
        // AbstractFetcherThread.onPartitionFenced → markPartitionFailed
        // (AbstractFetcherThreadTest.testFencedFetch: the partition leaves the fetcher's
        // partitionStates instead of being retried after the backoff).
        let mut sim = replicated();
        // Broker 2's next fetch is answered FENCED_LEADER_EPOCH.
        while !matches!(&sim.brokers[&2].role, Role::Follower(f) if f.in_flight_fetch.is_some()) {
            assert!(sim.step());
        }
        let fetch_id = match &sim.brokers[&2].role {
            Role::Follower(f) => f.in_flight_fetch.expect("in flight"),
            _ => unreachable!("checked above"),
        };
        sim.fetcher_handle_response(
            2,
            Node::Broker(1),
            Payload::FetchResponse {
                fetch_id,
                error: ErrorCode::FENCED_LEADER_EPOCH,
                high_watermark: 3,
                leader_log_start_offset: 0,
                records: vec![],
                diverging_epoch: None,
                leader_log_end_offset: 3,
            },
        );
        sim.flush_effects();
        let now = sim.now();
        sim.advance_to(now + 10 * sim.config.replica_fetch_backoff_ms);
        assert!(
            !sim.in_flight().any(|m| m.from == Node::Broker(2)
                && m.payload.kind() == crate::types::MessageKind::Fetch),
            "no fetch from broker 2 while its partition is failed"
        );
        assert!(matches!(&sim.brokers[&2].role, Role::Follower(f) if f.failed));
        // Metadata with a new leader epoch re-creates the fetcher.
        let mut p = sim.controller.partition.clone();
        p.leader_epoch += 1;
        sim.make_follower(2, &p);
        sim.flush_effects();
        assert!(matches!(&sim.brokers[&2].role, Role::Follower(f) if !f.failed));
    }
}
