//! The leader side of a partition (kafka.cluster.Partition, org.apache.kafka.server.replica.
//! Replica / ReplicaState, DelayedProduce, DelayedFetch): follower fetch state,
//! lastCaughtUpTimeMs, the high watermark, ISR shrink and expand through AlterPartition, and
//! the produce purgatory.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::controller::PartitionRegistration;
use crate::fetcher::FollowerState;
use crate::log::BatchProducer;
use crate::network::Payload;
use crate::producer_state::ClientBatch;
use crate::sim::{BrokerTimer, Role, Sim};
use crate::trace::{Level, TraceKind};
use crate::types::{join_ids, Acks, BrokerId, ErrorCode, Node, TimeMs};

/// ReplicaState: what the leader knows of one follower.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaState {
    /// The follower's LEO as learned from its fetch offset; None is UNKNOWN_OFFSET (reset by
    /// a new leader until the follower's first fetch).
    pub log_end_offset: Option<u64>,
    pub log_start_offset: Option<u64>,
    pub last_fetch_time_ms: TimeMs,
    pub last_fetch_leader_log_end_offset: u64,
    pub last_caught_up_time_ms: TimeMs,
    pub broker_epoch: Option<i64>,
}

impl ReplicaState {
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
        } else if fetch_offset >= self.last_fetch_leader_log_end_offset {
            self.last_caught_up_time_ms.max(self.last_fetch_time_ms)
        } else {
            self.last_caught_up_time_ms
        };
        self.log_end_offset = Some(fetch_offset);
        self.log_start_offset = Some(follower_start_offset);
        self.last_fetch_time_ms = fetch_time_ms;
        self.last_fetch_leader_log_end_offset = leader_end_offset;
        self.last_caught_up_time_ms = last_caught_up;
        self.broker_epoch = Some(broker_epoch);
    }
}

/// The leader's partition state: CommittedPartitionState, PendingExpandIsr or
/// PendingShrinkIsr.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state")]
pub enum IsrState {
    Committed {
        isr: Vec<BrokerId>,
    },
    /// The HW already counts the new replica (a stricter requirement).
    PendingExpand {
        isr: Vec<BrokerId>,
        new_in_sync: BrokerId,
    },
    /// The HW still counts the departing replicas until the controller confirms.
    PendingShrink {
        isr: Vec<BrokerId>,
        out_of_sync: Vec<BrokerId>,
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
            IsrState::PendingExpand { isr, new_in_sync } => {
                let mut m = isr.clone();
                m.push(*new_in_sync);
                m
            }
        }
    }

    pub fn is_inflight(&self) -> bool {
        !matches!(self, IsrState::Committed { .. })
    }
}

/// A follower fetch with no new data, held for up to replica.fetch.wait.max.ms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldFetch {
    pub fetch_id: u64,
    pub replica_id: BrokerId,
    pub fetch_offset: u64,
    pub since_ms: TimeMs,
    pub deadline_ms: TimeMs,
}

/// A DelayedProduce waiting in the purgatory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayedProduce {
    pub request_id: u64,
    pub client: Node,
    pub first_offset: u64,
    /// requiredOffset = the last offset written + 1.
    pub required_offset: u64,
    pub created_ms: TimeMs,
    pub deadline_ms: TimeMs,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderState {
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// leaderEpochStartOffsetOpt: the LEO when this leader epoch began.
    pub epoch_start_offset: u64,
    pub isr_state: IsrState,
    pub replicas: Vec<BrokerId>,
    pub remote: BTreeMap<BrokerId, ReplicaState>,
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
    pub(crate) fn make_leader(&mut self, b: BrokerId, p: &PartitionRegistration) {
        let now = self.now;
        self.leader_abandon(b);
        let broker = self.brokers.get_mut(&b).expect("broker exists");
        let previous = match &broker.role {
            Role::Follower(f) => f.leader,
            _ => None,
        };
        let leo = broker.log.log_end_offset();
        // "leaderLog.assignEpochStartOffset(partitionRegistration.leaderEpoch, leaderEpochStartOffset)"
        broker.log.epoch_cache.assign(p.leader_epoch, leo);
        let remote = p
            .replicas
            .iter()
            .filter(|&&r| r != b)
            .map(|&r| {
                // Replica.resetReplicaState with isNewLeader: LEO unknown; lastCaughtUpTimeMs now
                // for ISR members, 0 otherwise.
                (
                    r,
                    ReplicaState {
                        log_end_offset: None,
                        log_start_offset: None,
                        last_fetch_time_ms: now,
                        last_fetch_leader_log_end_offset: leo,
                        last_caught_up_time_ms: if p.isr.contains(&r) { now } else { 0 },
                        broker_epoch: None,
                    },
                )
            })
            .collect();
        let hw = broker.log.high_watermark;
        broker.role = Role::Leader(Box::new(LeaderState {
            leader_epoch: p.leader_epoch,
            partition_epoch: p.partition_epoch,
            epoch_start_offset: leo,
            isr_state: IsrState::Committed { isr: p.isr.clone() },
            replicas: p.replicas.clone(),
            remote,
            held_fetches: vec![],
            purgatory: vec![],
            high_watermark_at_start: hw,
        }));
        broker.alter_partition_in_flight = false;
        let under = p.isr.len() < self.config.effective_min_isr(p.replicas.len());
        self.trace(
            TraceKind::Broker,
            Level::Info,
            Some(b),
            format!(
                "[Partition {} broker={b}] Leader {} starts at leader epoch {} from offset {} with partition epoch {}, high watermark {}, ISR [{}]{}. Previous leader {} and previous leader epoch was {}.",
                self.tp,
                self.tp,
                p.leader_epoch,
                leo,
                p.partition_epoch,
                hw,
                join_ids(&p.isr),
                if under { " (under-min-isr)" } else { "" },
                previous.map_or("None".to_string(), |l| format!("Some({l})")),
                p.leader_epoch - 1
            ),
        );
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
        let Role::Leader(l) = &broker.role else {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::NOT_LEADER_OR_FOLLOWER);
            return;
        };
        // localLogWithEpochOrThrow
        if current_leader_epoch < l.leader_epoch {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::FENCED_LEADER_EPOCH);
            return;
        }
        if current_leader_epoch > l.leader_epoch {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::UNKNOWN_LEADER_EPOCH);
            return;
        }
        if !l.remote.contains_key(&replica_id) {
            self.send_fetch_error(b, to, fetch_id, ErrorCode::NOT_LEADER_OR_FOLLOWER);
            return;
        }
        let leo = broker.log.log_end_offset();
        // Partition.readRecords: the divergence check on lastFetchedEpoch.
        if let Some(fetch_epoch) = last_fetched_epoch {
            let (epoch, end) = broker.log.epoch_cache.end_offset_for(fetch_epoch, leo);
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
        self.leader_send_fetch_data(b, h.replica_id, h.fetch_id, h.fetch_offset);
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
            self.leader_send_fetch_data(b, h.replica_id, h.fetch_id, h.fetch_offset);
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
        new_isr.sort_unstable();
        self.trace(
            TraceKind::Isr,
            Level::Info,
            Some(b),
            format!(
                "[Partition {} broker={b}] Expanding ISR from {} to {}",
                self.tp,
                join_ids(&isr),
                join_ids(&new_isr)
            ),
        );
        if let Some(l) = self.leader_mut(b) {
            l.isr_state = IsrState::PendingExpand {
                isr,
                new_in_sync: replica,
            };
        }
        self.leader_submit_alter_partition(b, &new_isr);
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
        let out: Vec<BrokerId> = isr
            .iter()
            .copied()
            .filter(|&r| r != b)
            .filter(|r| {
                l.remote
                    .get(r)
                    .is_some_and(|s| !s.is_caught_up(leo, now, lag))
            })
            .collect();
        if out.is_empty() {
            return;
        }
        let mut new_isr: Vec<BrokerId> = isr.iter().copied().filter(|r| !out.contains(r)).collect();
        new_isr.sort_unstable();
        let details: Vec<String> = out
            .iter()
            .map(|r| {
                let s = &l.remote[r];
                format!(
                    "(brokerId: {r}, endOffset: {}, lastCaughtUpTimeMs: {})",
                    s.log_end_offset.map_or(-1, |o| o as i64),
                    s.last_caught_up_time_ms
                )
            })
            .collect();
        let text = format!(
            "[Partition {} broker={b}] Shrinking ISR from {} to {}. Leader: (highWatermark: {}, endOffset: {}). Out of sync replicas: {}.",
            self.tp,
            join_ids(&isr),
            join_ids(&new_isr),
            broker.log.high_watermark,
            leo,
            details.join(", ")
        );
        self.trace(TraceKind::Isr, Level::Info, Some(b), text);
        if let Some(l) = self.leader_mut(b) {
            l.isr_state = IsrState::PendingShrink {
                isr,
                out_of_sync: out,
            };
        }
        self.leader_submit_alter_partition(b, &new_isr);
    }

    /// Partition.submitAlterPartition → DefaultAlterPartitionManager.
    fn leader_submit_alter_partition(&mut self, b: BrokerId, new_isr: &[BrokerId]) {
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
            return;
        };
        let new_isr_with_epochs: Vec<(BrokerId, i64)> = new_isr
            .iter()
            .map(|&r| {
                let epoch = if r == b {
                    broker.broker_epoch
                } else {
                    l.remote.get(&r).and_then(|s| s.broker_epoch).unwrap_or(-1)
                };
                (r, epoch)
            })
            .collect();
        let payload = Payload::AlterPartition {
            broker_epoch: broker.broker_epoch,
            leader_epoch: l.leader_epoch,
            partition_epoch: l.partition_epoch,
            new_isr: new_isr_with_epochs,
        };
        self.brokers
            .get_mut(&b)
            .expect("broker exists")
            .alter_partition_in_flight = true;
        if self
            .send(Node::Broker(b), Node::Controller, payload)
            .is_none()
        {
            // Cut off from the controller: the request fails and the state reverts.
            self.brokers
                .get_mut(&b)
                .expect("broker exists")
                .alter_partition_in_flight = false;
            if let Some(l) = self.leader_mut(b) {
                let isr = l.isr_state.isr().to_vec();
                l.isr_state = IsrState::Committed { isr };
            }
        }
    }

    /// Partition.handleAlterPartitionUpdate / handleAlterPartitionError.
    pub(crate) fn leader_handle_alter_partition_response(
        &mut self,
        b: BrokerId,
        error: ErrorCode,
        leader: Option<BrokerId>,
        leader_epoch: i32,
        partition_epoch: i32,
        isr: Vec<BrokerId>,
    ) {
        self.brokers
            .get_mut(&b)
            .expect("broker exists")
            .alter_partition_in_flight = false;
        let tp = self.tp.clone();
        let Some(l) = self.leader_mut(b) else { return };
        if error != ErrorCode::NONE {
            let committed = l.isr_state.isr().to_vec();
            l.isr_state = IsrState::Committed { isr: committed };
            self.trace(
                TraceKind::Isr,
                Level::Info,
                Some(b),
                format!("[Partition {tp} broker={b}] Failed to alter partition: {error}; reverting to the last committed ISR"),
            );
            return;
        }
        if leader != Some(b)
            || leader_epoch != l.leader_epoch
            || partition_epoch <= l.partition_epoch
        {
            // Stale: metadata already brought this (or a newer) state.
            if l.isr_state.is_inflight() && partition_epoch <= l.partition_epoch {
                let committed = l.isr_state.isr().to_vec();
                l.isr_state = IsrState::Committed { isr: committed };
            }
            return;
        }
        l.isr_state = IsrState::Committed { isr: isr.clone() };
        l.partition_epoch = partition_epoch;
        self.trace(
            TraceKind::Isr,
            Level::Info,
            Some(b),
            format!("[Partition {tp} broker={b}] ISR updated to {}  and version updated to {partition_epoch}", join_ids(&isr)),
        );
        self.leader_maybe_increment_hw(b);
        self.leader_try_complete_delayed(b);
    }

    /// Partition.maybeIncrementLeaderHW. Returns true when the HW moved.
    pub(crate) fn leader_maybe_increment_hw(&mut self, b: BrokerId) -> bool {
        let now = self.now;
        let lag = self.config.replica_lag_time_max_ms;
        let broker = &self.brokers[&b];
        let Role::Leader(l) = &broker.role else {
            return false;
        };
        let min_isr = self.config.effective_min_isr(l.replicas.len());
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
        let moved = self
            .brokers
            .get_mut(&b)
            .expect("broker exists")
            .log
            .maybe_increment_high_watermark(new_hw);
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
        let min_isr = self.config.effective_min_isr(l.replicas.len());
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
        let min_isr = self.config.effective_min_isr(l.replicas.len());
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
                let appended = self
                    .brokers
                    .get_mut(&b)
                    .expect("broker exists")
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
        let broker = self.brokers.get_mut(&b).expect("broker exists");
        broker.alter_partition_in_flight = false;
        broker.role = Role::Follower(FollowerState {
            leader: p.leader,
            leader_epoch: p.leader_epoch,
            partition_epoch: p.partition_epoch,
            in_flight_fetch: None,
            generation: 0,
            backing_off_until: None,
        });
        let text = match p.leader {
            Some(l) => format!(
                "[Partition {} broker={b}] Follower {} starts at leader epoch {} from offset {} with partition epoch {} and high watermark {}. Current leader is {l}.{}",
                self.tp,
                self.tp,
                p.leader_epoch,
                broker.log.log_end_offset(),
                p.partition_epoch,
                broker.log.high_watermark,
                if was_leader { " (was leader)" } else { "" }
            ),
            None => format!("[Partition {} broker={b}] No leader for {} at leader epoch {}: not fetching", self.tp, self.tp, p.leader_epoch),
        };
        self.trace(TraceKind::Broker, Level::Info, Some(b), text);
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
            last_fetch_leader_log_end_offset: last_leader_leo,
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
        assert_eq!(s.last_fetch_leader_log_end_offset, 12);
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
        };
        assert_eq!(e.maximal_isr(), vec![1, 2, 3]);
        assert_eq!(e.isr(), &[1, 2]);
        let s = IsrState::PendingShrink {
            isr: vec![1, 2, 3],
            out_of_sync: vec![3],
        };
        assert_eq!(s.maximal_isr(), vec![1, 2, 3]);
        assert!(s.is_inflight());
    }
}
