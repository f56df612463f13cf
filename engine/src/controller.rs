//! The KRaft controller: broker registrations and epochs, heartbeats and fencing, controlled
//! shutdown, AlterPartition, and leader election (ISR, then ELR, then the last known leader,
//! then unclean), with every change written as a metadata record.
//!
//! The election rules are a transcription of Kafka's PartitionChangeBuilder (build,
//! maybePopulateTargetElr, tryElection, electAnyLeader, electPreferredLeader,
//! maybeUpdateRecordElr, maybeUpdateLastKnownLeader) and ReplicationControlManager
//! (generateLeaderAndIsrUpdates, handleBrokerFenced, handleBrokerUnfenced,
//! handleBrokerInControlledShutdown, handleBrokerUncleanShutdown, alterPartition).
//!
//! The registrations it keeps and the image it sends brokers are `metadata.rs`'s types.

use std::fmt::Write;

use crate::vec_map::VecMap;

use crate::effect::{ControllerTimer, Ctx, Scheduled};
use crate::event::{BrokerControl, Event, Ineligible};
use crate::metadata::{
    BrokerRegistration, LeaderRecoveryState, MetadataImage, PartitionRegistration,
};
use crate::network::Payload;
use crate::types::ElectionKind;
use crate::types::{ids_where, BrokerId, ErrorCode, Ids, Node, TimeMs, Tp};

/// BrokerControlState: what the controller grants a broker at a heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerControlState {
    Fenced,
    Unfenced,
    ControlledShutdown,
    ShutdownNow,
}

/// PartitionChangeBuilder.Election.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Election {
    Preferred,
    Online,
    Unclean,
}

/// What PartitionChangeBuilder.build produced: the new registration, or nothing when the
/// change is a no-op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionChange {
    pub next: PartitionRegistration,
    /// Set when the leader field changed, with how it was chosen (None: no leader).
    pub new_leader: Option<(Option<BrokerId>, Option<ElectionKind>)>,
}

/// Inputs to one PartitionChangeBuilder run.
pub struct ChangeRequest<'a> {
    pub target_isr: Vec<BrokerId>,
    pub election: Election,
    pub min_isr: usize,
    pub elr_enabled: bool,
    pub unclean_shutdown_replicas: &'a [BrokerId],
    /// The LeaderAcceptor: is this broker an acceptable leader (registered, unfenced, not in
    /// controlled shutdown)?
    pub is_acceptable_leader: &'a dyn Fn(BrokerId) -> bool,
    /// setTargetReplicas / setTargetAdding / setTargetRemoving; None keeps the partition's.
    pub assignment: Option<Assignment>,
}

/// A partition's replicas with the reassignment's adding and removing lists, as
/// PartitionReassignmentReplicas holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub replicas: Vec<BrokerId>,
    pub adding: Vec<BrokerId>,
    pub removing: Vec<BrokerId>,
}

impl Assignment {
    /// The partition's own (the builder's starting point).
    pub fn of(part: &PartitionRegistration) -> Assignment {
        Assignment {
            replicas: part.replicas.clone(),
            adding: part.adding_replicas.clone(),
            removing: part.removing_replicas.clone(),
        }
    }

    /// PartitionReassignmentReplicas(currentAssignment, targetAssignment): removing is
    /// current − target and adding target − current, each a TreeSet (ascending); the replicas
    /// are the target's followed by the removing ones.
    pub fn reassign(current: &[BrokerId], target: &[BrokerId]) -> Assignment {
        let removing = crate::sort::sorted_ids(&ids_where(current, &|r| !target.contains(&r)));
        let adding = crate::sort::sorted_ids(&ids_where(target, &|r| !current.contains(&r)));
        let mut replicas = target.to_vec();
        replicas.extend_from_slice(&removing);
        Assignment {
            replicas,
            adding,
            removing,
        }
    }

    /// PartitionReassignmentReplicas.maybeCompleteReassignment: with a reassignment in
    /// progress, the replicas and ISR it leaves once every target replica is in
    /// `target_isr` (the removing replicas taken out of both), if it can complete now.
    pub fn maybe_complete(
        &self,
        target_isr: &[BrokerId],
    ) -> Option<(Vec<BrokerId>, Vec<BrokerId>)> {
        if self.adding.is_empty() && self.removing.is_empty() {
            return None;
        }
        let keep = |r: BrokerId| !self.removing.contains(&r);
        let isr = ids_where(target_isr, &keep);
        let replicas = ids_where(&self.replicas, &keep);
        if isr.is_empty() || replicas.is_empty() || replicas.iter().any(|r| !isr.contains(r)) {
            return None;
        }
        Some((replicas, isr))
    }
}

/// PartitionChangeBuilder.build for one partition. Returns None when nothing changes.
pub fn build_partition_change(
    part: &PartitionRegistration,
    req: &ChangeRequest<'_>,
) -> Option<PartitionChange> {
    let mut target_isr = req.target_isr.clone();
    let mut target_elr = part.elr.clone();
    let mut target_last_known_elr = part.last_known_elr.clone();
    let mut target = req
        .assignment
        .clone()
        .unwrap_or_else(|| Assignment::of(part));

    // completeReassignmentIfNeeded: every target replica in the ISR ends the reassignment.
    if let Some((replicas, isr)) = target.maybe_complete(&target_isr) {
        target = Assignment {
            replicas,
            adding: vec![],
            removing: vec![],
        };
        target_isr = isr;
    }

    // maybePopulateTargetElr
    if req.elr_enabled {
        if target_isr.len() >= req.min_isr {
            target_elr.clear();
            target_last_known_elr.clear();
        } else {
            // The new ELR: current ISR and ELR, minus the target ISR and unclean-shutdown
            // replicas. Kafka collects them from a HashSet<Integer>, which iterates broker
            // ids (below its 16 buckets) in ascending order: so do we. The current ISR may
            // hold replicas a completing reassignment removes: they enter the ELR too
            // (nothing filters the ELR to the new replicas, not even setAssignmentChanges).
            let mut candidates = target_elr.clone();
            candidates.extend(ids_where(&part.isr, &|r| !target_elr.contains(&r)));
            let candidates = crate::sort::sorted_ids(&candidates);
            target_elr = ids_where(&candidates, &|r| {
                !target_isr.contains(&r) && !req.unclean_shutdown_replicas.contains(&r)
            });
            let mut known = candidates.clone();
            known.extend(ids_where(&target_last_known_elr, &|r| {
                !candidates.contains(&r)
            }));
            target_last_known_elr = ids_where(&crate::sort::sorted_ids(&known), &|r| {
                !target_isr.contains(&r) && !target_elr.contains(&r)
            });
        }
    }

    // tryElection
    let is_valid_new_leader = |r: BrokerId, isr: &[BrokerId], elr: &[BrokerId]| -> bool {
        (isr.contains(&r) || (isr.is_empty() && elr.contains(&r))) && (req.is_acceptable_leader)(r)
    };
    // canElectLastKnownLeader: ELR on (and useLastKnownLeaderInBalancedRecovery, true
    // unless a test sets it), the target ISR and ELR empty, lastKnownElr exactly one broker,
    // and that broker an acceptable leader (the LeaderAcceptor: registered, unfenced, not
    // shutting down, not the broker whose unclean shutdown is being handled, its replica's
    // directory online). The acceptance check is KAFKA-19522 (apache/kafka#20200, July
    // 2025, "avoid electing fenced lastKnownLeader"); before it, 4.0's code only logged and
    // elected a fenced or dead last known leader anyway. It is the first fallback after the
    // ISR and ELR in every election (electAnyLeader, electPreferredLeader), before and
    // independently of unclean.leader.election.enable, and nothing in it asks whether the
    // broker lost data: an unclean shutdown (handleBrokerUncleanShutdown) takes the broker
    // out of the ISR and ELR, never out of lastKnownElr (ReplicationControlManagerTest
    // testEligibleLeaderReplicas_UncleanShutdown, QuorumControllerTest
    // testUncleanShutdownBroker). The partition's leaderRecoveryState is not read; the
    // election sets RECOVERING. A dead last known leader is elected once it is back and
    // unfenced (handleBrokerUnfenced over partitionsWithNoLeader), or at the next change of
    // a leaderless partition.
    let can_elect_last_known = req.elr_enabled
        && target_elr.is_empty()
        && target_isr.is_empty()
        && part.last_known_elr.len() == 1
        && (req.is_acceptable_leader)(part.last_known_elr[0]);
    let current_valid = part
        .leader
        .is_some_and(|l| is_valid_new_leader(l, &target_isr, &target_elr));
    let (elected, unclean): (Option<BrokerId>, bool) = match req.election {
        Election::Preferred => {
            let preferred = target.replicas[0];
            if is_valid_new_leader(preferred, &target_isr, &target_elr) {
                (Some(preferred), false)
            } else if current_valid {
                (part.leader, false)
            } else if let Some(r) = target
                .replicas
                .iter()
                .skip(1)
                .copied()
                .find(|&r| is_valid_new_leader(r, &target_isr, &target_elr))
            {
                (Some(r), false)
            } else if can_elect_last_known {
                (Some(part.last_known_elr[0]), true)
            } else {
                (None, false)
            }
        }
        Election::Online | Election::Unclean => {
            if current_valid {
                (part.leader, false)
            } else if let Some(r) = target
                .replicas
                .iter()
                .copied()
                .find(|&r| is_valid_new_leader(r, &target_isr, &target_elr))
            {
                (Some(r), false)
            } else if can_elect_last_known {
                (Some(part.last_known_elr[0]), true)
            } else if req.election == Election::Unclean {
                match target
                    .replicas
                    .iter()
                    .copied()
                    .find(|&r| (req.is_acceptable_leader)(r))
                {
                    Some(r) => (Some(r), true),
                    None => (None, false),
                }
            } else {
                (None, false)
            }
        }
    };

    let mut record_isr: Option<Vec<BrokerId>> = None;
    let mut record_leader: Option<Option<BrokerId>> = None;
    let mut kind = None;
    let mut recovery = part.leader_recovery_state;
    if elected != part.leader {
        if let Some(node) = elected.filter(|n| target_elr.contains(n)) {
            target_isr = vec![node];
            target_elr.retain(|&r| r != node);
            kind = Some(ElectionKind::Elr);
        } else if unclean {
            kind = Some(
                if can_elect_last_known && elected == part.last_known_elr.first().copied() {
                    ElectionKind::LastKnownLeader
                } else {
                    ElectionKind::Unclean
                },
            );
        } else if elected.is_some() {
            kind = Some(ElectionKind::Clean);
        }
        record_leader = Some(elected);
        if unclean {
            if let Some(node) = elected {
                // "If the election was unclean, we have to forcibly set the ISR to just the
                // new leader. This can result in data loss!"
                record_isr = Some(vec![node]);
                recovery = LeaderRecoveryState::Recovering;
            }
        }
    }

    // triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: a replica list that drops one of
    // the old replicas bumps the leader epoch (the leader field set to the leader it has).
    let epoch_bump_only =
        record_leader.is_none() && part.replicas.iter().any(|r| !target.replicas.contains(r));
    if epoch_bump_only {
        record_leader = Some(part.leader);
    }

    // maybeUpdateRecordElr
    let clean = record_isr.is_none();
    if !clean || !req.elr_enabled {
        target_elr.clear();
        target_last_known_elr.clear();
    }
    let mut next = part.clone();
    next.elr = target_elr;
    let leader_none_after =
        matches!(record_leader, Some(None)) || (record_leader.is_none() && part.leader.is_none());
    if part.last_known_elr.len() == 1 && leader_none_after {
        target_last_known_elr = part.last_known_elr.clone();
    }
    // With useLastKnownLeaderInBalancedRecovery (the default), lastKnownElr only ever holds
    // the last known leader, set in maybeUpdateLastKnownLeader below.
    let _ = target_last_known_elr;

    // The ISR: set if it changed and the election did not already set it. With ELR on, the
    // ISR may become empty; with ELR off, the last member stays.
    if record_isr.is_none() && (!target_isr.is_empty() || req.elr_enabled) && target_isr != part.isr
    {
        record_isr = Some(target_isr.clone());
    }

    // maybeUpdateLastKnownLeader
    if req.elr_enabled {
        let isr_now_empty = record_isr.as_ref().is_some_and(|i| i.is_empty());
        if isr_now_empty
            && (part.last_known_elr.len() != 1 || Some(part.last_known_elr[0]) != part.leader)
        {
            // "Only update the last known leader when the first time the partition becomes
            // leaderless."
            next.last_known_elr = part.leader.into_iter().collect();
        } else if (matches!(record_leader, Some(Some(_)))
            || (part.leader.is_some() && record_leader != Some(None)))
            && !part.last_known_elr.is_empty()
        {
            next.last_known_elr.clear();
        }
    } else {
        next.last_known_elr.clear();
    }

    if let Some(isr) = record_isr {
        next.isr = isr;
    }
    if let Some(leader) = record_leader {
        next.leader = leader;
        next.leader_epoch += 1;
    }
    if recovery == LeaderRecoveryState::Recovering && record_leader.is_some() {
        next.leader_recovery_state = LeaderRecoveryState::Recovering;
    }
    // setAssignmentChanges: the replicas only; the ELR keeps a removed replica
    // (maybePopulateTargetElr above).
    if !target.replicas.is_empty() {
        next.replicas = target.replicas;
    }
    next.adding_replicas = target.adding;
    next.removing_replicas = target.removing;
    if next == *part {
        return None;
    }
    next.partition_epoch += 1;
    Some(PartitionChange {
        next,
        new_leader: record_leader
            .filter(|_| !epoch_bump_only)
            .map(|l| (l, kind)),
    })
}

/// One record of the controller's metadata log (`__cluster_metadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataRecord {
    pub offset: u64,
    pub time_ms: TimeMs,
    /// Kafka's record type, e.g. `PartitionChangeRecord`.
    pub kind: String,
    pub text: String,
}

/// The controller's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    pub brokers: VecMap<BrokerId, BrokerRegistration>,
    /// Last heartbeat time per broker (BrokerHeartbeatManager).
    pub last_heartbeat_ms: VecMap<BrokerId, TimeMs>,
    /// The metadata offset each broker reported in its last heartbeat.
    pub metadata_offsets: VecMap<BrokerId, u64>,
    /// Every partition's registration (ReplicationControlManager's `topics`, each
    /// TopicControlInfo's `parts`), by partition.
    pub partitions: VecMap<Tp, PartitionRegistration>,
    /// The most recent metadata records (bounded); `next_offset` keeps counting.
    pub records: Vec<MetadataRecord>,
    pub next_offset: u64,
    /// Each topic's `min.insync.replicas` as the metadata log holds it (ConfigRecord), by
    /// topic index: brokers learn it from the metadata, so a frozen broker learns a change
    /// when it runs.
    pub min_insync_replicas: Vec<u32>,
    /// The topic configs set on each topic (by topic index), which a broker-level change
    /// does not override: `min.insync.replicas` set on the topic, and
    /// `unclean.leader.election.enable` set on the topic (None: the broker's value).
    pub topic_min_isr_set: Vec<bool>,
    pub topic_unclean: Vec<Option<bool>>,
    /// How the controller chose the leader of each partition's leader epochs it elected
    /// (newest last, bounded), so a loss can name its cause.
    pub elections: Vec<(Tp, i32, ElectionKind)>,
    /// The replicas an AlterPartition added to an ISR without a broker epoch (newest last,
    /// bounded), with the broker's registration epoch when the controller accepted it: only
    /// in a mode before KIP-903, whose controller cannot tell which process of the broker
    /// the leader saw fetch, so a loss can name that cause (`history::on_new_leader`).
    pub isr_joins_without_epoch: Vec<(Tp, BrokerId, i64)>,
    /// When the controller last elected a leader uncleanly (or the last known leader).
    pub last_unclean_election_at: Option<TimeMs>,
    /// The reassignment throttles kafka-reassign-partitions.sh set (dynamic configs, each a
    /// ConfigRecord; `reassign.rs`): each broker's `leader.replication.throttled.rate` and
    /// `follower.replication.throttled.rate` (bytes/s), and each topic's (by topic index)
    /// `leader.replication.throttled.replicas` and `follower.replication.throttled.replicas`.
    /// The image carries them to the brokers, whose quota managers enforce them (`quota.rs`).
    pub throttle_rates: VecMap<BrokerId, (u64, u64)>,
    pub throttled_replicas: VecMap<u16, (String, String)>,
    /// QuorumController.imbalancedScheduled: whether the leader-balancing task is queued,
    /// and when the next one goes (after the check interval, or at once after a run that
    /// reached its most elections).
    pub balance: ImbalanceSchedule,
}

/// QuorumController.ImbalanceSchedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImbalanceSchedule {
    /// Queued.
    Scheduled,
    /// Next one `leader.imbalance.check.interval.seconds` after it is queued.
    Deferred,
    /// Next one 10 ms after it is queued (the last run hit MAX_ELECTIONS_PER_IMBALANCE).
    Immediately,
}

/// ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE: the most preferred-leader
/// elections one balancing run makes.
const MAX_ELECTIONS_PER_IMBALANCE: usize = 1_000;

/// Most metadata records kept for the snapshot.
pub const MAX_METADATA_RECORDS: usize = 500;

impl Controller {
    /// A controller with no broker registered and no record written yet.
    pub fn new(
        partitions: VecMap<Tp, PartitionRegistration>,
        min_insync_replicas: Vec<u32>,
    ) -> Self {
        let topics = min_insync_replicas.len();
        Controller {
            topic_min_isr_set: vec![false; topics],
            topic_unclean: vec![None; topics],
            brokers: VecMap::new(),
            last_heartbeat_ms: VecMap::new(),
            metadata_offsets: VecMap::new(),
            partitions,
            records: vec![],
            next_offset: 0,
            min_insync_replicas,
            elections: vec![],
            isr_joins_without_epoch: vec![],
            last_unclean_election_at: None,
            throttle_rates: VecMap::new(),
            throttled_replicas: VecMap::new(),
            balance: ImbalanceSchedule::Deferred,
        }
    }

    /// A broker of the scenario's cluster, registered and unfenced at time 0 (the cluster
    /// as `Sim::new` starts it, already formed): its RegisterBrokerRecord, a heartbeat at
    /// 0. Returns its broker epoch (the record's offset).
    pub(crate) fn register_at_start(&mut self, id: BrokerId) -> i64 {
        let epoch = self.append(
            0,
            "RegisterBrokerRecord",
            format!("RegisterBrokerRecord(brokerId={id}, fenced=false)"),
        ) as i64;
        self.brokers.insert(
            id,
            BrokerRegistration {
                epoch,
                fenced: false,
                in_controlled_shutdown: false,
                incarnation: 0,
                controlled_shutdown_offset: None,
            },
        );
        self.last_heartbeat_ms.insert(id, 0);
        epoch
    }

    /// ClusterControlManager.isActive: registered, unfenced, not in controlled shutdown.
    pub fn is_active(&self, b: BrokerId) -> bool {
        self.brokers
            .get(&b)
            .is_some_and(|r| !r.fenced && !r.in_controlled_shutdown)
    }

    pub fn image(&self) -> MetadataImage {
        MetadataImage {
            offset: self.next_offset.saturating_sub(1),
            partitions: self.partitions.clone(),
            brokers: self.brokers.clone(),
            min_insync_replicas: self.min_insync_replicas.clone(),
            throttle_rates: self.throttle_rates.clone(),
            throttled_replicas: self.throttled_replicas.clone(),
        }
    }

    /// The registration of `tp` (every partition of the topics table has one).
    pub fn partition(&self, tp: Tp) -> &PartitionRegistration {
        &self.partitions[&tp]
    }

    /// Partition.effectiveMinIsr as the controller computes it for `tp`
    /// (ReplicationControlManager.getTopicEffectiveMinIsr): the topic's
    /// `min.insync.replicas`, never above the replica count.
    pub fn min_isr(&self, tp: Tp, replicas: usize) -> usize {
        let min = self.min_insync_replicas[usize::from(tp.topic)];
        (min as usize).min(replicas)
    }

    /// ReplicationControlManager.getTopicEffectiveMinIsr, the minimum every
    /// PartitionChangeBuilder of the topic gets: `min.insync.replicas`, never above the
    /// replica count of the topic's partition 0 (`parts.get(0)`, whichever partition
    /// changes: after a reassignment changed one partition's count, the others' builders
    /// still use partition 0's).
    pub fn effective_min_isr(&self, tp: Tp) -> usize {
        let first = Tp {
            topic: tp.topic,
            partition: 0,
        };
        self.min_isr(tp, self.partitions[&first].replicas.len())
    }

    /// `unclean.leader.election.enable` for `tp`'s topic: the topic's config, else the
    /// broker's (ConfigurationControlManager resolves a topic config over the broker's).
    pub fn unclean_enabled(&self, ctx: &Ctx, tp: Tp) -> bool {
        self.topic_unclean[usize::from(tp.topic)]
            .unwrap_or(ctx.config.unclean_leader_election_enable)
    }

    /// The partitions in index order (a copy of the keys, so a handler can change each).
    fn partition_keys(&self) -> Vec<Tp> {
        self.partitions.keys().copied().collect()
    }

    pub fn append(&mut self, now: TimeMs, kind: &str, text: String) -> u64 {
        let offset = self.next_offset;
        self.next_offset += 1;
        self.records.push(MetadataRecord {
            offset,
            time_ms: now,
            kind: kind.to_string(),
            text,
        });
        if self.records.len() > MAX_METADATA_RECORDS {
            let excess = self.records.len() - MAX_METADATA_RECORDS;
            self.records.drain(..excess);
        }
        offset
    }
}

/// Why the controller is changing the partition (the context string Kafka logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeCause {
    BrokerFenced(BrokerId),
    BrokerUnfenced(BrokerId),
    ControlledShutdown(BrokerId),
    UncleanShutdown(BrokerId),
    ElectPreferred,
    ElectUnclean,
    PeriodicUnclean,
    PreferredRebalance,
}

/// The controller as a node (issue 13, step 4): each handler touches only the controller's
/// own state and the [`Ctx`] (time, config, partition name, metric counters, effects). What it
/// cannot know itself comes in as an argument: `audience`, the brokers a metadata push
/// reaches (see `Sim::metadata_audience`).
impl Controller {
    /// Fires one of the controller's timers; a periodic task sets its next run after its work.
    pub(crate) fn on_timer(
        &mut self,
        ctx: &mut Ctx,
        timer: ControllerTimer,
        audience: &[BrokerId],
    ) {
        match timer {
            ControllerTimer::SessionCheck { broker } => self.session_check(ctx, broker, audience),
            ControllerTimer::UncleanElection => {
                self.periodic_unclean(ctx, audience);
                ctx.set_timer(
                    ctx.now + ctx.config.unclean_election_interval_ms,
                    Scheduled::Controller(ControllerTimer::UncleanElection),
                );
            }
            ControllerTimer::PreferredRebalance => {
                // QuorumController's MAYBE_BALANCE_PARTITION_LEADERS event: the next run
                // goes at once if this one reached the most elections, else after the
                // interval (and only while some partition is imbalanced).
                let elections = self.preferred_rebalance(ctx, audience);
                self.balance = if elections >= MAX_ELECTIONS_PER_IMBALANCE {
                    ImbalanceSchedule::Immediately
                } else {
                    ImbalanceSchedule::Deferred
                };
            }
        }
        self.maybe_schedule_balance(ctx);
    }

    /// QuorumController.maybeScheduleNextBalancePartitionLeaders, run after each of the
    /// controller's events: when a partition is led by another replica than its preferred
    /// one (ReplicationControlManager.arePartitionLeadersImbalanced: `imbalancedPartitions`,
    /// the partitions whose leader is not their first replica, leaderless ones included)
    /// and no run is queued, queue one `leader.imbalance.check.interval.seconds` (default
    /// 300) from now, or 10 ms from now after a run that reached its most elections. KRaft's
    /// controller does not read `leader.imbalance.per.broker.percentage` (a ZooKeeper-era
    /// config; ReplicationControlManager balances every imbalanced partition).
    fn maybe_schedule_balance(&mut self, ctx: &mut Ctx) {
        if self.balance == ImbalanceSchedule::Scheduled || !ctx.config.auto_leader_rebalance() {
            return;
        }
        let imbalanced = self
            .partitions
            .values()
            .any(|p| p.leader != p.replicas.first().copied());
        if !imbalanced {
            return;
        }
        let delay = if self.balance == ImbalanceSchedule::Deferred {
            ctx.config.leader_imbalance_check_interval_ms()
        } else {
            10
        };
        ctx.set_timer(
            ctx.now.saturating_add(delay),
            Scheduled::Controller(ControllerTimer::PreferredRebalance),
        );
        self.balance = ImbalanceSchedule::Scheduled;
    }

    /// Queues broker `b`'s session check one broker.session.timeout.ms from now (each
    /// heartbeat or registration queues one; a stale one finds the session renewed).
    pub(crate) fn set_session_check(ctx: &mut Ctx, b: BrokerId) {
        ctx.set_timer(
            ctx.now + ctx.config.broker_session_timeout_ms,
            Scheduled::Controller(ControllerTimer::SessionCheck { broker: b }),
        );
    }

    /// The topic's min.insync.replicas was set (IncrementalAlterConfigs; the new value is in
    /// `ctx.config`): a dynamic topic config, so the controller writes a ConfigRecord and each
    /// broker applies it when it reads the metadata (a frozen one, on thaw); then the ELR is
    /// cleared.
    pub(crate) fn on_min_isr_set(&mut self, ctx: &mut Ctx, audience: &[BrokerId]) {
        let value = ctx.config.min_insync_replicas;
        for (t, topic) in ctx.topics.topics.iter().enumerate() {
            if self.topic_min_isr_set[t] {
                continue; // the topic's own config stays
            }
            self.min_insync_replicas[t] = value;
            self.append(
                ctx.now,
                "ConfigRecord",
                format!(
                    "ConfigRecord(resourceType=TOPIC, resourceName={}, name=min.insync.replicas, value={value})",
                    topic.name
                ),
            );
        }
        self.publish_metadata(ctx, audience);
        self.clear_elr(ctx, audience);
    }

    /// Applies a partition change (if any) as a PartitionChangeRecord and pushes metadata.
    fn apply_change(
        &mut self,
        ctx: &mut Ctx,
        tp: Tp,
        change: PartitionChange,
        cause: &str,
        audience: &[BrokerId],
    ) {
        self.record_change(ctx, tp, change, cause);
        self.publish_metadata(ctx, audience);
    }

    /// Writes a PartitionChangeRecord for `tp` (without pushing metadata yet).
    fn record_change(&mut self, ctx: &mut Ctx, tp: Tp, change: PartitionChange, cause: &str) {
        let now = ctx.now;
        let before = self.partition(tp).clone();
        let next = change.next.clone();
        // What every PartitionChangeRecord keeps true (PartitionRegistration.merge and the
        // builder): the partition epoch rises by one, the leader epoch never falls, the
        // leader is in the ISR, the ISR holds replicas and no ELR member (the ELR may keep a
        // replica a reassignment removed, as Kafka's builder does).
        debug_assert_eq!(next.partition_epoch, before.partition_epoch + 1, "{next:?}");
        debug_assert!(next.leader_epoch >= before.leader_epoch, "{next:?}");
        debug_assert!(
            next.leader.is_none_or(|l| next.isr.contains(&l)),
            "{next:?}"
        );
        debug_assert!(
            next.isr.iter().all(|r| next.replicas.contains(r))
                && next.isr.iter().all(|r| !next.elr.contains(r)),
            "{next:?}"
        );
        // The changed fields, written into the record's text as they are found (one String,
        // not one per field joined after).
        let name = ctx.topics.name(tp);
        let mut text = format!(
            "PartitionChangeRecord({}, partitionId={}",
            name.topic, name.partition
        );
        let bare = text.len();
        // The leader field is set when it changes, and when a reassignment bumps the leader
        // epoch of the same leader (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded).
        if next.leader != before.leader || next.leader_epoch != before.leader_epoch {
            match next.leader {
                Some(l) => write!(text, ", leader={l}"),
                None => write!(text, ", leader=none"),
            }
            .ok();
        }
        for (name, now_ids, before_ids) in [
            ("isr", &next.isr, &before.isr),
            ("replicas", &next.replicas, &before.replicas),
            (
                "removingReplicas",
                &next.removing_replicas,
                &before.removing_replicas,
            ),
            (
                "addingReplicas",
                &next.adding_replicas,
                &before.adding_replicas,
            ),
            ("eligibleLeaderReplicas", &next.elr, &before.elr),
            ("lastKnownElr", &next.last_known_elr, &before.last_known_elr),
        ] {
            if now_ids != before_ids {
                write!(text, ", {name}=[{}]", Ids(now_ids)).ok();
            }
        }
        if next.leader_recovery_state != before.leader_recovery_state {
            text.push_str(match next.leader_recovery_state {
                LeaderRecoveryState::Recovered => ", LEADERRECOVERYSTATE=RECOVERED",
                LeaderRecoveryState::Recovering => ", LEADERRECOVERYSTATE=RECOVERING",
            });
        }
        if text.len() == bare {
            text.push_str(", "); // no field changed: the joined list was empty
        }
        write!(
            text,
            ") leaderEpoch={} partitionEpoch={} [{}]",
            next.leader_epoch, next.partition_epoch, cause
        )
        .ok();
        self.append(now, "PartitionChangeRecord", text);
        self.partitions.insert(tp, next.clone());
        if next.isr.len() < before.isr.len() {
            ctx.metrics.isr_shrinks += 1;
        } else if next.isr.len() > before.isr.len() {
            ctx.metrics.isr_expands += 1;
        }
        if let Some((leader, kind)) = change.new_leader {
            ctx.metrics.elections += 1;
            if let Some(l) = leader {
                // LeaderElectionRateAndTimeMs counts the elections of a leader (metrics.rs);
                // ControllerMetricsChanges.handlePartitionChange counts an election unclean
                // when PartitionRegistration.electionWasClean is false: the new leader was
                // not in the previous ISR (an ELR or last-known-leader election too).
                ctx.metrics.leader_elections += 1;
                if !before.isr.contains(&l) {
                    ctx.metrics.unclean_leader_elections += 1;
                }
            }
            if let (Some(_), Some(k)) = (leader, kind) {
                self.elections.push((tp, next.leader_epoch, k));
                if self.elections.len() > 64 * self.partitions.len() {
                    self.elections.remove(0);
                }
            }
            if matches!(
                kind,
                Some(ElectionKind::Unclean | ElectionKind::LastKnownLeader)
            ) && leader.is_some()
            {
                self.last_unclean_election_at = Some(now);
            }
            let tp = ctx.tp_name(tp);
            let leader_epoch = next.leader_epoch;
            ctx.emit(match leader {
                None => Event::PartitionHasNoLeader {
                    tp,
                    isr: next.isr.clone(),
                    elr: next.elr.clone(),
                    leader_epoch,
                },
                Some(leader) => Event::NewLeader {
                    tp,
                    leader,
                    election: kind,
                    leader_epoch,
                },
            });
        }
    }

    /// Pushes the current metadata image to each broker of `audience`: those whose process
    /// can hear it (up, and registered), as the simulator tells the node (see
    /// `Sim::metadata_audience`).
    pub(crate) fn publish_metadata(&self, ctx: &mut Ctx, audience: &[BrokerId]) {
        let image = std::sync::Arc::new(self.image());
        for &b in audience {
            ctx.send(
                Node::Controller,
                Node::Broker(b),
                Payload::Metadata {
                    image: image.clone(),
                },
            );
        }
    }

    /// ReplicationControlManager.generateLeaderAndIsrUpdates: one PartitionChangeBuilder run
    /// per partition the change concerns (Kafka walks `brokersToIsrs`; here every partition,
    /// in index order, and those it does not concern are skipped), the records written in
    /// that order. Returns true when it wrote any; the caller publishes the batch.
    fn generate_updates(
        &mut self,
        ctx: &mut Ctx,
        broker_to_remove: Option<BrokerId>,
        broker_to_add: Option<BrokerId>,
        broker_with_unclean_shutdown: Option<BrokerId>,
        cause: ChangeCause,
    ) -> bool {
        let mut changed = false;
        for tp in self.partition_keys() {
            changed |= self.generate_update(
                ctx,
                tp,
                broker_to_remove,
                broker_to_add,
                broker_with_unclean_shutdown,
                cause,
            );
        }
        changed
    }

    /// generateLeaderAndIsrUpdates for partition `tp`: writes its PartitionChangeRecord, if
    /// any (true then).
    fn generate_update(
        &mut self,
        ctx: &mut Ctx,
        tp: Tp,
        broker_to_remove: Option<BrokerId>,
        broker_to_add: Option<BrokerId>,
        broker_with_unclean_shutdown: Option<BrokerId>,
        cause: ChangeCause,
    ) -> bool {
        let part = self.partition(tp);
        let relevant = match cause {
            ChangeCause::BrokerFenced(b) | ChangeCause::ControlledShutdown(b) => {
                part.isr.contains(&b)
            }
            ChangeCause::UncleanShutdown(b) => part.isr.contains(&b) || part.elr.contains(&b),
            ChangeCause::BrokerUnfenced(_) | ChangeCause::PeriodicUnclean => part.leader.is_none(),
            _ => true,
        };
        if !relevant {
            return false;
        }
        let accept = |r: BrokerId| {
            Some(r) != broker_to_remove
                && Some(r) != broker_with_unclean_shutdown
                && (Some(r) == broker_to_add || self.is_active(r))
        };
        let unclean_shutdown: Vec<BrokerId> = broker_with_unclean_shutdown.into_iter().collect();
        let target_isr = ids_where(&part.isr, &|r| {
            Some(r) != broker_to_remove && Some(r) != broker_with_unclean_shutdown
        });
        let election = if self.unclean_enabled(ctx, tp) || cause == ChangeCause::ElectUnclean {
            Election::Unclean
        } else {
            Election::Online
        };
        let req = ChangeRequest {
            target_isr,
            election,
            min_isr: self.effective_min_isr(tp),
            elr_enabled: ctx.config.elr_enabled(),
            unclean_shutdown_replicas: &unclean_shutdown,
            is_acceptable_leader: &accept,
            assignment: None,
        };
        let Some(change) = build_partition_change(part, &req) else {
            return false;
        };
        let context = match cause {
            ChangeCause::BrokerFenced(b) => format!("handleBrokerFenced[{b}]"),
            ChangeCause::BrokerUnfenced(b) => format!("handleBrokerUnfenced[{b}]"),
            ChangeCause::ControlledShutdown(b) => format!("enterControlledShutdown[{b}]"),
            ChangeCause::UncleanShutdown(b) => format!("handleBrokerUncleanShutdown[{b}]"),
            ChangeCause::ElectUnclean => "electLeaders[UNCLEAN]".to_string(),
            ChangeCause::PeriodicUnclean => "maybeElectUncleanLeaders".to_string(),
            ChangeCause::ElectPreferred | ChangeCause::PreferredRebalance => {
                "electLeaders[PREFERRED]".to_string()
            }
        };
        self.record_change(ctx, tp, change, &context);
        true
    }

    /// ReplicationControlManager.electLeader for kafka-leader-election.sh, partition `tp`.
    pub(crate) fn on_elect_leader(
        &mut self,
        ctx: &mut Ctx,
        tp: Tp,
        election: Election,
        cause: ChangeCause,
        audience: &[BrokerId],
    ) -> ErrorCode {
        let part = self.partition(tp);
        let has_preferred = part.leader == Some(part.replicas[0]);
        if (election == Election::Preferred && has_preferred)
            || (election == Election::Unclean && part.leader.is_some())
        {
            return ErrorCode::ELECTION_NOT_NEEDED;
        }
        let accept = |r: BrokerId| self.is_active(r);
        let req = ChangeRequest {
            target_isr: part.isr.clone(),
            election,
            min_isr: self.effective_min_isr(tp),
            elr_enabled: ctx.config.elr_enabled(),
            unclean_shutdown_replicas: &[],
            is_acceptable_leader: &accept,
            assignment: None,
        };
        match build_partition_change(part, &req) {
            Some(change) => {
                let context = match cause {
                    ChangeCause::PreferredRebalance => "maybeBalancePartitionLeaders",
                    _ if election == Election::Preferred => "electLeaders[PREFERRED]",
                    _ => "electLeaders[UNCLEAN]",
                };
                self.apply_change(ctx, tp, change, context, audience);
                ErrorCode::NONE
            }
            None if election == Election::Preferred => ErrorCode::PREFERRED_LEADER_NOT_AVAILABLE,
            None => ErrorCode::ELIGIBLE_LEADERS_NOT_AVAILABLE,
        }
    }

    /// ReplicationControlManager.alterPartitionReassignments for kafka-reassign-partitions.sh:
    /// each partition's target replicas (`Some`: changePartitionReassignment) or a cancel
    /// (`None`: cancelPartitionReassignment), in the order given; the records written
    /// together (ControllerResult.atomicOf) and pushed once. Each partition's outcome: Ok, or
    /// the ApiError's code and message.
    pub(crate) fn on_alter_partition_reassignments(
        &mut self,
        ctx: &mut Ctx,
        targets: &[(Tp, Option<Vec<BrokerId>>)],
        audience: &[BrokerId],
    ) -> Vec<Result<(), (ErrorCode, String)>> {
        let mut out = Vec::with_capacity(targets.len());
        let mut changed = false;
        for (tp, target) in targets {
            let result = match target {
                Some(t) => self.change_reassignment(ctx, *tp, t),
                None => self.cancel_reassignment(ctx, *tp),
            };
            out.push(result.map(|change| {
                if let Some(c) = change {
                    let cause = if target.is_some() {
                        "alterPartitionReassignments"
                    } else {
                        "cancelPartitionReassignment"
                    };
                    self.record_change(ctx, *tp, c, cause);
                    changed = true;
                }
            }));
        }
        if changed {
            self.publish_metadata(ctx, audience);
        }
        out
    }

    /// changePartitionReassignment: validateManualPartitionAssignment, then
    /// PartitionReassignmentReplicas(current, target) into a PartitionChangeBuilder (ONLINE
    /// election, the ISR as it is), which may complete the reassignment at once (a reorder,
    /// or removals whose target replicas are all in the ISR).
    fn change_reassignment(
        &self,
        ctx: &Ctx,
        tp: Tp,
        target: &[BrokerId],
    ) -> Result<Option<PartitionChange>, (ErrorCode, String)> {
        // validateManualPartitionAssignment, over the broker ids in ascending order.
        let invalid = |m: String| Err((ErrorCode::INVALID_REPLICA_ASSIGNMENT, m));
        if target.is_empty() {
            return invalid(
                "The manual partition assignment includes an empty replica list.".into(),
            );
        }
        let sorted = crate::sort::sorted_ids(target);
        for (i, &b) in sorted.iter().enumerate() {
            if !self.brokers.contains_key(&b) {
                return invalid(format!("The manual partition assignment includes broker {b}, but no such broker is registered."));
            }
            if i > 0 && sorted[i - 1] == b {
                return invalid(format!(
                    "The manual partition assignment includes the broker {b} more than once."
                ));
            }
        }
        let part = self.partition(tp);
        let r = Assignment::reassign(&part.replicas, target);
        // Only what differs from the partition is set on the builder: an empty adding or
        // removing list leaves the partition's own.
        let assignment = Assignment {
            adding: if r.adding.is_empty() {
                part.adding_replicas.clone()
            } else {
                r.adding
            },
            removing: if r.removing.is_empty() {
                part.removing_replicas.clone()
            } else {
                r.removing
            },
            replicas: r.replicas,
        };
        Ok(self.build_with(ctx, tp, part.isr.clone(), Election::Online, assignment))
    }

    /// cancelPartitionReassignment: PartitionReassignmentRevert (the replicas and ISR without
    /// the adding ones; an ISR left empty takes the first remaining replica, which is an
    /// unclean election and needs unclean.leader.election.enable), built with an UNCLEAN
    /// election when the topic allows it.
    fn cancel_reassignment(
        &self,
        ctx: &Ctx,
        tp: Tp,
    ) -> Result<Option<PartitionChange>, (ErrorCode, String)> {
        let part = self.partition(tp);
        if !part.is_reassigning() {
            return Err((
                ErrorCode::NO_REASSIGNMENT_IN_PROGRESS,
                "No partition reassignment is in progress.".into(),
            ));
        }
        let replicas = ids_where(&part.replicas, &|r| !part.adding_replicas.contains(&r));
        let mut isr = ids_where(&part.isr, &|r| !part.adding_replicas.contains(&r));
        let unclean_allowed = self.unclean_enabled(ctx, tp);
        if isr.is_empty() {
            if !unclean_allowed {
                let name = ctx.topics.name(tp);
                return Err((
                    ErrorCode::INVALID_REPLICA_ASSIGNMENT,
                    format!("Unable to revert partition assignment for {}:{} because it would require an unclean leader election.", name.topic, name.partition),
                ));
            }
            isr.push(replicas[0]);
        }
        let election = if unclean_allowed {
            Election::Unclean
        } else {
            Election::Online
        };
        let assignment = Assignment {
            replicas,
            adding: vec![],
            removing: vec![],
        };
        Ok(self.build_with(ctx, tp, isr, election, assignment))
    }

    /// A PartitionChangeBuilder run for `tp` with a new assignment (LeaderAcceptor: active
    /// brokers).
    fn build_with(
        &self,
        ctx: &Ctx,
        tp: Tp,
        target_isr: Vec<BrokerId>,
        election: Election,
        assignment: Assignment,
    ) -> Option<PartitionChange> {
        let part = self.partition(tp);
        let accept = |r: BrokerId| self.is_active(r);
        build_partition_change(
            part,
            &ChangeRequest {
                target_isr,
                election,
                min_isr: self.effective_min_isr(tp),
                elr_enabled: ctx.config.elr_enabled(),
                unclean_shutdown_replicas: &[],
                is_acceptable_leader: &accept,
                assignment: Some(assignment),
            },
        )
    }

    /// Handles a message delivered to the controller.
    pub(crate) fn on_message(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        payload: Payload,
        audience: &[BrokerId],
    ) {
        self.handle_message(ctx, from, payload, audience);
        // After each of the controller's events, as QuorumController runs it after each
        // write event.
        self.maybe_schedule_balance(ctx);
    }

    fn handle_message(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        payload: Payload,
        audience: &[BrokerId],
    ) {
        let Node::Broker(b) = from else { return };
        let now = ctx.now;
        match payload {
            Payload::BrokerRegistration {
                previous_broker_epoch,
                incarnation,
            } => {
                let existing = self.brokers.get(&b).cloned();
                let same_process = existing
                    .as_ref()
                    .is_some_and(|r| r.incarnation == incarnation);
                // ClusterControlManager.registerBroker: while the old registration still has a
                // valid session, a new incarnation is refused
                // (DuplicateBrokerRegistrationException); the broker retries until the old
                // session expires and the controller has fenced it.
                let last_heartbeat = self.last_heartbeat_ms.get(&b).copied().unwrap_or(0);
                let session_valid = now < last_heartbeat + ctx.config.broker_session_timeout_ms;
                // Before KIP-380 (protocol `pre-kip-101`) the ZooKeeper controller compared the
                // ids under /brokers/ids and could miss a broker that crashed and came back
                // (KAFKA-1120): the new process is taken as the one it knew, in the ISR.
                let bounce_seen = ctx.config.protocol.detects_broker_bounce();
                if existing.as_ref().is_some_and(|r| !r.fenced)
                    && !same_process
                    && session_valid
                    && bounce_seen
                {
                    ctx.emit(Event::RegistrationRejected { broker: b });
                    ctx.send(
                        Node::Controller,
                        from,
                        Payload::BrokerRegistrationResponse { broker_epoch: -1 },
                    );
                    return;
                }
                let epoch = self.append(
                    now,
                    "RegisterBrokerRecord",
                    format!("RegisterBrokerRecord(brokerId={b}, fenced=true)"),
                ) as i64;
                ctx.emit(Event::BrokerRegistered {
                    broker: b,
                    broker_epoch: epoch,
                });
                self.brokers.insert(
                    b,
                    BrokerRegistration {
                        epoch,
                        fenced: true,
                        in_controlled_shutdown: false,
                        incarnation,
                        controlled_shutdown_offset: None,
                    },
                );
                self.last_heartbeat_ms.insert(b, now);
                Self::set_session_check(ctx, b);
                // ClusterControlManager.registerBroker: a previous epoch that does not match
                // means the broker did not shut down cleanly (KIP-966).
                if let Some(prev) = existing.filter(|_| !same_process) {
                    if prev.epoch != previous_broker_epoch {
                        let listed = self
                            .partitions
                            .values()
                            .any(|p| p.isr.contains(&b) || p.elr.contains(&b));
                        ctx.emit(Event::RegisteredAfterUncleanShutdown {
                            broker: b,
                            removed_from_isr_and_elr: listed && ctx.config.elr_enabled(),
                        });
                        if ctx.config.elr_enabled()
                            && self.generate_updates(
                                ctx,
                                None,
                                None,
                                Some(b),
                                ChangeCause::UncleanShutdown(b),
                            )
                        {
                            self.publish_metadata(ctx, audience);
                        }
                    }
                }
                ctx.send(
                    Node::Controller,
                    from,
                    Payload::BrokerRegistrationResponse {
                        broker_epoch: epoch,
                    },
                );
                let image = std::sync::Arc::new(self.image());
                ctx.send(Node::Controller, from, Payload::Metadata { image });
            }
            Payload::BrokerHeartbeat {
                broker_epoch,
                want_shut_down,
                metadata_offset,
            } => {
                let Some(reg) = self.brokers.get(&b).cloned() else {
                    return;
                };
                if reg.epoch != broker_epoch {
                    return; // STALE_BROKER_EPOCH: a heartbeat from an earlier incarnation.
                }
                self.last_heartbeat_ms.insert(b, now);
                Self::set_session_check(ctx, b);
                let next =
                    self.next_broker_state(ctx, b, &reg, want_shut_down, metadata_offset, audience);
                // BrokerHeartbeatManager.touch: the broker's metadata offset, after the state
                // was decided from the earlier ones.
                self.metadata_offsets.insert(b, metadata_offset);
                let (fenced, in_controlled_shutdown, should_shut_down) = match next {
                    BrokerControlState::Fenced => (true, false, false),
                    BrokerControlState::Unfenced => (false, false, false),
                    BrokerControlState::ControlledShutdown => (false, true, false),
                    BrokerControlState::ShutdownNow => (true, false, true),
                };
                ctx.send(
                    Node::Controller,
                    from,
                    Payload::BrokerHeartbeatResponse {
                        fenced,
                        in_controlled_shutdown,
                        should_shut_down,
                    },
                );
                if metadata_offset + 1 < self.next_offset {
                    // The broker is behind (it was cut off, or frozen): it catches up.
                    let image = std::sync::Arc::new(self.image());
                    ctx.send(Node::Controller, from, Payload::Metadata { image });
                }
            }
            Payload::AlterPartition {
                request_id,
                broker_epoch,
                partitions,
            } => {
                // ReplicationControlManager.alterPartition starts with
                // clusterControl.checkBrokerEpoch: a stale broker epoch fails the whole
                // request (a top-level STALE_BROKER_EPOCH) before any partition is looked at.
                let stale = self.brokers.get(&b).map(|r| r.epoch) != Some(broker_epoch);
                let mut results = Vec::with_capacity(partitions.len());
                let mut changed = false;
                for data in &partitions {
                    let tp = data.tp;
                    let error = if stale {
                        ErrorCode::NONE
                    } else {
                        let (error, c) = self.alter_partition(
                            ctx,
                            tp,
                            b,
                            data.leader_epoch,
                            data.partition_epoch,
                            &data.new_isr,
                        );
                        changed |= c;
                        error
                    };
                    let p = self.partition(tp);
                    results.push(crate::network::AlterPartitionResult {
                        tp,
                        error,
                        leader: p.leader,
                        leader_epoch: p.leader_epoch,
                        partition_epoch: p.partition_epoch,
                        isr: if stale { vec![] } else { p.isr.clone() },
                    });
                }
                let top_error = if stale {
                    ErrorCode::STALE_BROKER_EPOCH
                } else {
                    ErrorCode::NONE
                };
                ctx.send(
                    Node::Controller,
                    from,
                    Payload::AlterPartitionResponse {
                        request_id,
                        top_error,
                        partitions: results,
                    },
                );
                // The AlterPartition response goes out before brokers see the new metadata.
                if changed {
                    self.publish_metadata(ctx, audience);
                }
            }
            _ => {}
        }
    }

    /// ReplicationControlManager.alterPartition with validateAlterPartitionData.
    #[allow(clippy::too_many_arguments)]
    fn alter_partition(
        &mut self,
        ctx: &mut Ctx,
        tp: Tp,
        b: BrokerId,
        leader_epoch: i32,
        partition_epoch: i32,
        new_isr: &[(BrokerId, i64)],
    ) -> (ErrorCode, bool) {
        let error =
            self.validate_alter_partition(ctx, tp, b, leader_epoch, partition_epoch, new_isr);
        if error != ErrorCode::NONE {
            return (error, false);
        }
        let part = self.partition(tp);
        let accept = |r: BrokerId| self.is_active(r);
        // Kafka's alterPartition sets an UNCLEAN election when the topic allows it, and the
        // request's LeaderRecoveryState as the target. Neither can show here: every member of
        // the new ISR passed ineligibleReplicasForIsr (registered, unfenced, not shutting
        // down), so the builder always finds an acceptable leader in the ISR (the leader
        // itself, or after a completed reassignment a target replica, all in the ISR) and
        // never reaches the unclean branch; and a leader always sends RECOVERED
        // (Partition.makeLeader marks a RECOVERING partition RECOVERED), set below.
        let req = ChangeRequest {
            target_isr: new_isr.iter().map(|(id, _)| *id).collect(),
            election: Election::Online,
            min_isr: self.effective_min_isr(tp),
            elr_enabled: ctx.config.elr_enabled(),
            unclean_shutdown_replicas: &[],
            is_acceptable_leader: &accept,
            assignment: None,
        };
        match build_partition_change(part, &req) {
            Some(mut change) => {
                // An AlterPartition from the leader of an unclean election ends its recovery.
                change.next.leader_recovery_state = LeaderRecoveryState::Recovered;
                // "if there is an ongoing partition reassignment and the ISR change completes
                // it, then the leader may change as part of the changes made during
                // reassignment cleanup. In this case, we report back NEW_LEADER_ELECTED to the
                // leader which made the AlterPartition request."
                let moved = change.next.leader != Some(b);
                if !ctx.config.protocol.has_broker_epoch_in_fetch() {
                    self.note_joins_without_epoch(tp, new_isr);
                }
                self.record_change(ctx, tp, change, &format!("alterPartition[{b}]"));
                let error = if moved {
                    ErrorCode::NEW_LEADER_ELECTED
                } else {
                    ErrorCode::NONE
                };
                (error, true)
            }
            None => (ErrorCode::NONE, false),
        }
    }

    /// Before KIP-903 (3.5) AlterPartition v2 carried no broker epochs: each replica the
    /// accepted ISR adds is noted with its registration epoch of now (whichever process the
    /// leader saw fetch).
    fn note_joins_without_epoch(&mut self, tp: Tp, new_isr: &[(BrokerId, i64)]) {
        let isr = self.partition(tp).isr.clone();
        for &(id, epoch) in new_isr {
            if epoch != -1 || isr.contains(&id) {
                continue;
            }
            if let Some(r) = self.brokers.get(&id) {
                self.isr_joins_without_epoch.push((tp, id, r.epoch));
            }
        }
        if self.isr_joins_without_epoch.len() > 64 * self.partitions.len() {
            self.isr_joins_without_epoch.remove(0);
        }
    }

    /// ReplicationControlManager.validateAlterPartitionData and ineligibleReplicasForIsr.
    fn validate_alter_partition(
        &mut self,
        ctx: &mut Ctx,
        tp: Tp,
        b: BrokerId,
        leader_epoch: i32,
        partition_epoch: i32,
        new_isr: &[(BrokerId, i64)],
    ) -> ErrorCode {
        let part = self.partition(tp);
        if leader_epoch > part.leader_epoch || partition_epoch > part.partition_epoch {
            return ErrorCode::NOT_CONTROLLER;
        }
        if leader_epoch < part.leader_epoch {
            return ErrorCode::FENCED_LEADER_EPOCH;
        }
        if Some(b) != part.leader {
            return ErrorCode::INVALID_REQUEST;
        }
        if partition_epoch < part.partition_epoch {
            return ErrorCode::INVALID_UPDATE_VERSION;
        }
        let ids: Vec<BrokerId> = new_isr.iter().map(|(id, _)| *id).collect();
        if ids.iter().any(|id| !part.replicas.contains(id)) || !ids.contains(&b) {
            return ErrorCode::INVALID_REQUEST;
        }
        // ineligibleReplicasForIsr. An epoch of -1 is AlterPartition v2's NewIsr, a list of
        // ids (before KIP-903, 3.5, added NewIsrWithEpochs in v3; protocol `pre-kip-903` and
        // older): only the registration's fenced and controlled-shutdown state is checked
        // (KIP-841, 3.3), whichever process of the broker the leader saw fetch.
        let mut ineligible = Vec::new();
        for &(id, epoch) in new_isr {
            let why = match self.brokers.get(&id) {
                None => Ineligible::NotRegistered,
                Some(r) if r.in_controlled_shutdown => Ineligible::ShuttingDown,
                Some(r) if r.fenced => Ineligible::Fenced,
                Some(r) if epoch != -1 && r.epoch != epoch => Ineligible::BrokerEpochMismatch {
                    requested: epoch,
                    expected: r.epoch,
                },
                _ => continue,
            };
            ineligible.push((id, why));
        }
        if !ineligible.is_empty() {
            ctx.emit(Event::AlterPartitionIneligible {
                broker: b,
                tp: ctx.tp_name(tp),
                ineligible,
                isr: ids,
            });
            return ErrorCode::INELIGIBLE_REPLICA;
        }
        ErrorCode::NONE
    }

    /// BrokerHeartbeatManager.calculateNextBrokerState, then what
    /// ReplicationControlManager.processBrokerHeartbeat does on the change: FENCED and
    /// SHUTDOWN_NOW → handleBrokerFenced, UNFENCED → handleBrokerUnfenced, CONTROLLED_SHUTDOWN
    /// → handleBrokerInControlledShutdown.
    ///
    /// A broker that wants to shut down and leads nothing is granted an immediate shutdown
    /// (fenced, out of every ISR, in this one heartbeat); one that leads enters controlled
    /// shutdown (its leaderships move, it leaves the ISR and is not ISR-eligible), and is
    /// granted SHUTDOWN_NOW by a later heartbeat once it leads nothing and every unfenced
    /// broker's metadata offset has reached its controlled-shutdown offset
    /// (`lowestActiveOffset`).
    fn next_broker_state(
        &mut self,
        ctx: &mut Ctx,
        b: BrokerId,
        reg: &BrokerRegistration,
        want_shut_down: bool,
        metadata_offset: u64,
        audience: &[BrokerId],
    ) -> BrokerControlState {
        let has_leaderships = self.partitions.values().any(|p| p.leader == Some(b));
        if reg.fenced {
            if want_shut_down {
                ctx.emit(Event::BrokerControl {
                    broker: b,
                    what: BrokerControl::FencedShutdownGranted,
                });
                return BrokerControlState::ShutdownNow;
            }
            if metadata_offset >= reg.epoch as u64 {
                // "The request from broker {} to unfence has been granted because it has
                // caught up with the offset of its register broker record".
                self.unfence(ctx, b, reg.epoch, audience);
                return BrokerControlState::Unfenced;
            }
            return BrokerControlState::Fenced;
        }
        if reg.in_controlled_shutdown {
            if has_leaderships {
                return BrokerControlState::ControlledShutdown;
            }
            let lowest = self.lowest_active_offset();
            let cs_offset = reg.controlled_shutdown_offset.unwrap_or(0);
            if cs_offset <= lowest {
                self.fence(
                    ctx,
                    b,
                    BrokerControl::ShutdownGranted {
                        lowest_active_offset: lowest,
                        controlled_shutdown_offset: cs_offset,
                    },
                    audience,
                );
                return BrokerControlState::ShutdownNow;
            }
            return BrokerControlState::ControlledShutdown;
        }
        if !want_shut_down {
            return BrokerControlState::Unfenced;
        }
        if has_leaderships {
            self.controlled_shutdown(ctx, b, audience);
            BrokerControlState::ControlledShutdown
        } else {
            self.fence(ctx, b, BrokerControl::UnfencedShutdownGranted, audience);
            BrokerControlState::ShutdownNow
        }
    }

    /// BrokerHeartbeatManager.lowestActiveOffset: the lowest metadata offset any unfenced
    /// broker has reported.
    fn lowest_active_offset(&self) -> u64 {
        self.brokers
            .iter()
            .filter(|(_, r)| !r.fenced)
            .map(|(id, _)| self.metadata_offsets.get(id).copied().unwrap_or(0))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// handleBrokerUnfenced.
    fn unfence(&mut self, ctx: &mut Ctx, b: BrokerId, epoch: i64, audience: &[BrokerId]) {
        let now = ctx.now;
        if let Some(r) = self.brokers.get_mut(&b) {
            r.fenced = false;
        }
        self.append(
            now,
            "BrokerRegistrationChangeRecord",
            format!(
                "BrokerRegistrationChangeRecord(brokerId={b}, brokerEpoch={epoch}, fenced=UNFENCE)"
            ),
        );
        ctx.emit(Event::BrokerControl {
            broker: b,
            what: BrokerControl::Unfenced,
        });
        // handleBrokerUnfenced returns the BrokerRegistrationChangeRecord and the
        // PartitionChangeRecords generateLeaderAndIsrUpdates adds in one list, which
        // ReplicationControlManager.processBrokerHeartbeat returns as one ControllerResult,
        // written as one batch that brokers apply as one delta: one push, after both.
        self.generate_updates(ctx, None, Some(b), None, ChangeCause::BrokerUnfenced(b));
        self.publish_metadata(ctx, audience);
    }

    /// handleBrokerInControlledShutdown.
    fn controlled_shutdown(&mut self, ctx: &mut Ctx, b: BrokerId, audience: &[BrokerId]) {
        let now = ctx.now;
        let epoch = self.brokers.get(&b).map_or(-1, |r| r.epoch);
        if let Some(r) = self.brokers.get_mut(&b) {
            r.in_controlled_shutdown = true;
        }
        self.append(
            now,
            "BrokerRegistrationChangeRecord",
            format!("BrokerRegistrationChangeRecord(brokerId={b}, brokerEpoch={epoch}, inControlledShutdown=1)"),
        );
        ctx.emit(Event::BrokerControl {
            broker: b,
            what: BrokerControl::ControlledShutdownGranted,
        });
        // As in handleBrokerUnfenced, the registration record and the partitions' changes
        // are one batch (handleBrokerInControlledShutdown's list): one push.
        self.generate_updates(ctx, Some(b), None, None, ChangeCause::ControlledShutdown(b));
        // BrokerHeartbeatManager.maybeUpdateControlledShutdownOffset: the offset every
        // active broker must reach before this one may go (the last of that batch; the
        // controller's own state, which no broker reads).
        let cs_offset = self.next_offset.saturating_sub(1);
        if let Some(r) = self.brokers.get_mut(&b) {
            r.controlled_shutdown_offset = Some(cs_offset);
        }
        self.publish_metadata(ctx, audience);
    }

    /// BrokerHeartbeatManager's session check: fence a broker whose last heartbeat is older
    /// than broker.session.timeout.ms (maybeFenceOneStaleBroker → handleBrokerFenced).
    fn session_check(&mut self, ctx: &mut Ctx, b: BrokerId, audience: &[BrokerId]) {
        let now = ctx.now;
        let Some(last) = self.last_heartbeat_ms.get(&b).copied() else {
            return;
        };
        let Some(reg) = self.brokers.get(&b).cloned() else {
            return;
        };
        if reg.fenced || now < last + ctx.config.broker_session_timeout_ms {
            return;
        }
        self.fence(ctx, b, BrokerControl::SessionTimedOut, audience);
    }

    /// handleBrokerFenced: remove the broker from the ISR (electing a new leader if it led),
    /// then record the fencing.
    fn fence(&mut self, ctx: &mut Ctx, b: BrokerId, why: BrokerControl, audience: &[BrokerId]) {
        let now = ctx.now;
        let Some(reg) = self.brokers.get(&b).cloned() else {
            return;
        };
        ctx.emit(Event::BrokerControl {
            broker: b,
            what: why,
        });
        // The PartitionChangeRecords and the BrokerRegistrationChangeRecord go in one batch
        // (handleBrokerFenced appends them to the one list processBrokerHeartbeat or
        // maybeFenceOneStaleBroker returns), which brokers apply as one delta: one push, after
        // both, so a leader never sees the shrunk ISR with the fenced broker still eligible.
        self.generate_updates(ctx, Some(b), None, None, ChangeCause::BrokerFenced(b));
        if let Some(r) = self.brokers.get_mut(&b) {
            r.fenced = true;
            r.in_controlled_shutdown = false;
            r.controlled_shutdown_offset = None;
        }
        self.append(
            now,
            "BrokerRegistrationChangeRecord",
            format!(
                "BrokerRegistrationChangeRecord(brokerId={b}, brokerEpoch={}, fenced=FENCE)",
                reg.epoch
            ),
        );
        self.publish_metadata(ctx, audience);
    }

    /// "If the cluster-level min.insync.replicas is updated, even if the value is unchanged,
    /// all the ELR state will be cleaned" (Kafka's operations guide, Eligible Leader
    /// Replicas): the ELR's promise (these replicas hold every committed record) was made
    /// under the old minimum.
    fn clear_elr(&mut self, ctx: &mut Ctx, audience: &[BrokerId]) {
        for tp in self.partition_keys() {
            let part = self.partition(tp);
            if part.elr.is_empty() && part.last_known_elr.is_empty() {
                continue;
            }
            let mut next = part.clone();
            next.elr.clear();
            next.last_known_elr.clear();
            next.partition_epoch += 1;
            let change = PartitionChange {
                next,
                new_leader: None,
            };
            self.apply_change(ctx, tp, change, "minIsrConfigUpdate", audience);
        }
    }

    /// The periodic unclean-election task for leaderless partitions, when
    /// unclean.leader.election.enable is true.
    fn periodic_unclean(&mut self, ctx: &mut Ctx, audience: &[BrokerId]) {
        let leaderless = self
            .partitions
            .iter()
            .any(|(tp, p)| p.leader.is_none() && self.unclean_enabled(ctx, *tp));
        if leaderless && self.generate_updates(ctx, None, None, None, ChangeCause::PeriodicUnclean)
        {
            self.publish_metadata(ctx, audience);
        }
    }

    /// auto.leader.rebalance.enable: the periodic preferred-leader election
    /// (maybeBalancePartitionLeaders), for each partition led by another replica than its
    /// preferred one. (Kafka elects only where a broker's imbalance passes
    /// leader.imbalance.per.broker.percentage; docs/engine.md lists this simplification.)
    fn preferred_rebalance(&mut self, ctx: &mut Ctx, audience: &[BrokerId]) -> usize {
        // maybeTriggerLeaderChangeForPartitionsWithoutPreferredLeader: a PREFERRED election
        // for each imbalanced partition, at most MAX_ELECTIONS_PER_IMBALANCE of them.
        let mut elections = 0;
        for tp in self.partition_keys() {
            if elections >= MAX_ELECTIONS_PER_IMBALANCE {
                break;
            }
            let p = self.partition(tp);
            if p.leader.is_some() && p.leader != Some(p.replicas[0]) {
                let before = p.leader_epoch;
                let _ = self.on_elect_leader(
                    ctx,
                    tp,
                    Election::Preferred,
                    ChangeCause::PreferredRebalance,
                    audience,
                );
                if self.partition(tp).leader_epoch != before {
                    elections += 1;
                }
            }
        }
        elections
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TP0;

    fn part(replicas: &[u32], isr: &[u32], leader: Option<u32>) -> PartitionRegistration {
        let mut p = PartitionRegistration::new(replicas.to_vec(), leader);
        p.isr = isr.to_vec();
        p
    }

    fn run(
        p: &PartitionRegistration,
        target_isr: &[u32],
        election: Election,
        min_isr: usize,
        alive: &[u32],
    ) -> Option<PartitionChange> {
        let accept = |r: u32| alive.contains(&r);
        build_partition_change(
            p,
            &ChangeRequest {
                target_isr: target_isr.to_vec(),
                election,
                min_isr,
                elr_enabled: true,
                unclean_shutdown_replicas: &[],
                is_acceptable_leader: &accept,
                assignment: None,
            },
        )
    }

    #[test]
    fn controlled_shutdown_below_min_isr_moves_replica_to_elr() {
        // Article 000, example 2: min.insync.replicas=3, broker 3 stopped → Isr: 1,2 Elr: 3.
        let p = part(&[1, 2, 3], &[1, 2, 3], Some(1));
        let c = run(&p, &[1, 2], Election::Online, 3, &[1, 2]).unwrap();
        assert_eq!(c.next.isr, vec![1, 2]);
        assert_eq!(c.next.elr, vec![3]);
        assert!(c.next.last_known_elr.is_empty());
        assert_eq!(c.next.leader, Some(1));
        assert_eq!(
            c.next.leader_epoch, 0,
            "an ISR shrink does not bump the leader epoch"
        );
        assert_eq!(c.next.partition_epoch, 1);
        assert!(c.new_leader.is_none());
    }

    #[test]
    fn last_isr_member_stopping_leaves_elr_and_last_known_elr() {
        // Article 004, step 4: replicas 2,3, min ISR 1, ISR [2]; broker 2 stops →
        // Leader: none Isr: Elr: 2 LastKnownElr: 2.
        let p = part(&[2, 3], &[2], Some(2));
        let c = run(&p, &[], Election::Online, 1, &[3]).unwrap();
        assert_eq!(c.next.leader, None);
        assert!(c.next.isr.is_empty());
        assert_eq!(c.next.elr, vec![2]);
        assert_eq!(c.next.last_known_elr, vec![2]);
        assert_eq!(c.next.leader_epoch, 1, "losing the leader bumps the epoch");
        // Broker 3 is alive but not eligible: an ONLINE election finds nobody.
        assert!(run(&c.next, &[], Election::Online, 1, &[3]).is_none());
        // kafka-leader-election.sh --election-type unclean elects 3, ISR [3], ELR cleared.
        let u = run(&c.next, &[], Election::Unclean, 1, &[3]).unwrap();
        assert_eq!(u.next.leader, Some(3));
        assert_eq!(u.next.isr, vec![3]);
        assert!(u.next.elr.is_empty());
        assert!(u.next.last_known_elr.is_empty());
        assert_eq!(u.new_leader, Some((Some(3), Some(ElectionKind::Unclean))));
        assert_eq!(
            u.next.leader_recovery_state,
            LeaderRecoveryState::Recovering
        );
    }

    #[test]
    fn elr_member_is_elected_when_the_isr_is_empty() {
        // Article 003: A leads alone (ISR [A], ELR [B]); A fails; B is elected from the ELR;
        // C (not in ISR or ELR) is not.
        let p = PartitionRegistration {
            elr: vec![2],
            ..part(&[1, 2, 3], &[1], Some(1))
        };
        let c = run(&p, &[], Election::Online, 2, &[2, 3]).unwrap();
        assert_eq!(c.next.leader, Some(2));
        assert_eq!(c.next.isr, vec![2]);
        assert_eq!(c.new_leader, Some((Some(2), Some(ElectionKind::Elr))));
        assert!(!c.next.elr.contains(&2));
    }

    #[test]
    fn preferred_election_prefers_first_replica_in_isr() {
        let p = part(&[3, 1, 2], &[1, 2, 3], Some(1));
        let c = run(&p, &[1, 2, 3], Election::Preferred, 1, &[1, 2, 3]).unwrap();
        assert_eq!(c.next.leader, Some(3));
        assert_eq!(c.next.leader_epoch, 1);
        // Not in the ISR: the current leader stays, no change.
        let q = part(&[3, 1, 2], &[1, 2], Some(1));
        assert!(run(&q, &[1, 2], Election::Preferred, 1, &[1, 2, 3]).is_none());
    }

    #[test]
    fn elr_disabled_keeps_last_isr_member() {
        let p = part(&[1, 2], &[1], Some(1));
        let accept = |r: u32| r == 2;
        let c = build_partition_change(
            &p,
            &ChangeRequest {
                target_isr: vec![],
                election: Election::Online,
                min_isr: 1,
                elr_enabled: false,
                unclean_shutdown_replicas: &[],
                is_acceptable_leader: &accept,
                assignment: None,
            },
        )
        .unwrap();
        assert_eq!(c.next.leader, None);
        assert_eq!(
            c.next.isr,
            vec![1],
            "without ELR the ISR never becomes empty"
        );
        assert!(c.next.elr.is_empty());
    }

    // ---- the node alone ---------------------------------------------------------------
    //
    // As openraft tests a state machine and Kafka tests each control manager (ClusterControl-
    // ManagerTest, BrokerHeartbeatManagerTest, ReplicationControlManagerTest in
    // metadata/src/test/java/org/apache/kafka/controller/): a Controller and what a Ctx
    // borrows, held here; one input; the exact effects, in order, and the state after.

    use crate::config::Config;
    use crate::effect::{ControllerTimer, Ctx, Effect, Scheduled};
    use crate::network::AlterPartitionResult;
    use crate::snapshot::Metrics;

    /// The controller, the time, and the simulator's fields a [`Ctx`] borrows.
    struct Harness {
        controller: Controller,
        now: TimeMs,
        locals: crate::effect::Locals,
    }

    impl Harness {
        /// Brokers 1..=3 registered at time 0 (epochs 0, 1, 2) and unfenced, the topic created
        /// with replicas [1, 2, 3], leader 1 and ISR [1, 2, 3] (offset 3), as `Sim::new` does.
        fn new(config: Config) -> Self {
            let partition = PartitionRegistration::new(vec![1, 2, 3], Some(1));
            let mut c = Controller::new(
                [(TP0, partition)].into_iter().collect(),
                vec![config.min_insync_replicas],
            );
            for id in 1..=3 {
                c.register_at_start(id);
            }
            c.append(0, "TopicRecord", String::new());
            Harness {
                controller: c,
                now: 0,
                locals: crate::effect::Locals::new(config, "t", 0),
            }
        }

        /// Runs `f` on the node with a Ctx at `self.now`; returns the effects it asked for.
        fn run(&mut self, f: impl FnOnce(&mut Controller, &mut Ctx<'_>)) -> Vec<Effect> {
            let mut ctx = self.locals.ctx(self.now);
            f(&mut self.controller, &mut ctx);
            self.locals.take()
        }

        /// Registration `b` as it stands.
        fn reg(&self, b: BrokerId) -> BrokerRegistration {
            self.controller.brokers[&b].clone()
        }
    }

    /// `Effect` has no `PartialEq` (nothing else needs one): its `Debug` text is exact.
    fn assert_effects(got: &[Effect], want: &[Effect]) {
        assert_eq!(format!("{got:#?}"), format!("{want:#?}"));
    }

    fn send(to: BrokerId, payload: Payload) -> Effect {
        Effect::Send {
            from: Node::Controller,
            to: Node::Broker(to),
            payload,
        }
    }

    fn metadata(to: BrokerId, image: &MetadataImage) -> Effect {
        send(
            to,
            Payload::Metadata {
                image: std::sync::Arc::new(image.clone()),
            },
        )
    }

    fn session_check(at: TimeMs, broker: BrokerId) -> Effect {
        Effect::SetTimer {
            at,
            scheduled: Scheduled::Controller(ControllerTimer::SessionCheck { broker }),
        }
    }

    /// ClusterControlManagerTest.testReRegistrationAndBrokerEpoch: a new incarnation is
    /// refused while the old registration's session is valid
    /// (DuplicateBrokerRegistrationException), and once the session has expired and the broker
    /// was fenced, the same request is granted a new broker epoch (the offset of its new
    /// RegisterBrokerRecord), fenced until it catches up.
    #[test]
    fn a_new_incarnation_registers_once_the_old_session_is_gone() {
        let mut n = Harness::new(Config::default());
        n.now = 1_000;
        let register = Payload::BrokerRegistration {
            previous_broker_epoch: 1, // broker 2 shut down cleanly at epoch 1
            incarnation: 1,
        };
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(2), register.clone(), &[1, 3]));
        assert_effects(
            &effects,
            &[
                Effect::Emit(Event::RegistrationRejected { broker: 2 }),
                send(2, Payload::BrokerRegistrationResponse { broker_epoch: -1 }),
            ],
        );
        assert_eq!(n.controller.next_offset, 4, "no record written");
        assert_eq!(n.reg(2).incarnation, 0);

        // Broker 2's session ran out and it was fenced (offset 4).
        n.controller.brokers.get_mut(&2).unwrap().fenced = true;
        n.controller
            .append(0, "BrokerRegistrationChangeRecord", String::new());
        n.now = 20_000;
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(2), register, &[1, 3]));
        let image = n.controller.image();
        assert_effects(
            &effects,
            &[
                Effect::Emit(Event::BrokerRegistered {
                    broker: 2,
                    broker_epoch: 5,
                }),
                session_check(29_000, 2),
                send(2, Payload::BrokerRegistrationResponse { broker_epoch: 5 }),
                metadata(2, &image),
            ],
        );
        assert_eq!(
            n.reg(2),
            BrokerRegistration {
                epoch: 5,
                fenced: true,
                in_controlled_shutdown: false,
                incarnation: 1,
                controlled_shutdown_offset: None,
            }
        );
        assert_eq!(n.controller.last_heartbeat_ms[&2], 20_000);
        assert_eq!(n.controller.records[5].kind, "RegisterBrokerRecord");
        assert_eq!(
            n.controller.partitions[&TP0].isr,
            vec![1, 2, 3],
            "a clean restart keeps the ISR"
        );
    }

    /// BrokerHeartbeatManagerTest.testCalculateNextBrokerState: a fenced broker stays fenced
    /// until its heartbeat reports a metadata offset at its registration record's; then it
    /// is unfenced (handleBrokerUnfenced: a BrokerRegistrationChangeRecord, the metadata
    /// pushed), answered, and sent the image it is now behind.
    #[test]
    fn a_fenced_broker_that_caught_up_is_unfenced() {
        let mut n = Harness::new(Config::default());
        n.controller.brokers.get_mut(&2).unwrap().fenced = true;
        n.controller.partitions[&TP0].isr = vec![1, 3];
        n.now = 4_000;
        let heartbeat = |metadata_offset| Payload::BrokerHeartbeat {
            broker_epoch: 1,
            want_shut_down: false,
            metadata_offset,
        };
        let response = |fenced| {
            send(
                2,
                Payload::BrokerHeartbeatResponse {
                    fenced,
                    in_controlled_shutdown: false,
                    should_shut_down: false,
                },
            )
        };
        // Behind its registration record (offset 1): still fenced, sent the image.
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(2), heartbeat(0), &[1, 2, 3]));
        let image = n.controller.image();
        assert_effects(
            &effects,
            &[
                session_check(13_000, 2),
                response(true),
                metadata(2, &image),
            ],
        );
        assert!(n.reg(2).fenced);

        n.now = 6_000;
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(2), heartbeat(1), &[1, 2, 3]));
        let image = n.controller.image();
        assert_eq!(image.offset, 4, "the unfence record");
        assert_effects(
            &effects,
            &[
                session_check(15_000, 2),
                Effect::Emit(Event::BrokerControl {
                    broker: 2,
                    what: BrokerControl::Unfenced,
                }),
                metadata(1, &image),
                metadata(2, &image),
                metadata(3, &image),
                response(false),
                metadata(2, &image), // it reported offset 1, the log is at 4
            ],
        );
        assert!(!n.reg(2).fenced);
        assert_eq!(n.controller.metadata_offsets[&2], 1);
        assert_eq!(
            n.controller.records[4].text,
            "BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=1, fenced=UNFENCE)"
        );
        assert_eq!(
            n.controller.partitions[&TP0].isr,
            vec![1, 3],
            "the leader, not the controller, adds it back to the ISR"
        );
    }

    /// The images a run of the node pushed: (broker, offset), in push order.
    fn pushes(effects: &[Effect]) -> Vec<(BrokerId, u64)> {
        let mut out = Vec::new();
        for e in effects {
            if let Effect::Send {
                to: Node::Broker(b),
                payload: Payload::Metadata { image },
                ..
            } = e
            {
                out.push((*b, image.offset));
            }
        }
        out
    }

    /// ReplicationControlManager.processBrokerHeartbeat returns handleBrokerUnfenced's
    /// BrokerRegistrationChangeRecord and the PartitionChangeRecord that elects the broker
    /// (generateLeaderAndIsrUpdates) as one ControllerResult, one batch: each broker is sent
    /// one image, after both, and no second push of the same offset.
    #[test]
    fn an_unfence_that_elects_pushes_one_image() {
        let mut n = Harness::new(Config::default());
        // Broker 2 fenced, partition leaderless with ISR [2] (ClusterControlManager keeps a
        // fenced broker's registration).
        n.controller.brokers.get_mut(&2).unwrap().fenced = true;
        let p = &mut n.controller.partitions[&TP0];
        (p.leader, p.isr) = (None, vec![2]);
        n.now = 6_000;
        let heartbeat = Payload::BrokerHeartbeat {
            broker_epoch: 1,
            want_shut_down: false,
            metadata_offset: 3,
        };
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(2), heartbeat, &[1, 2, 3]));
        let image = n.controller.image();
        assert_eq!(image.partitions[&TP0].leader, Some(2), "{effects:#?}");
        assert_eq!(
            image.offset, 5,
            "the unfence record (4), then the election (5)"
        );
        assert_eq!(
            n.controller.records[4].kind,
            "BrokerRegistrationChangeRecord"
        );
        assert_eq!(n.controller.records[5].kind, "PartitionChangeRecord");
        // One image to each broker; broker 2 reported offset 3 and is sent the log's end
        // once more after its heartbeat response (it catches up, as before).
        assert_eq!(pushes(&effects), [(1, 5), (2, 5), (3, 5), (2, 5)]);
    }

    /// handleBrokerInControlledShutdown: the BrokerRegistrationChangeRecord
    /// (inControlledShutdown) and the PartitionChangeRecord moving the leadership off the
    /// broker are one batch (processBrokerHeartbeat's ControllerResult): one image to each
    /// broker, and the controlled-shutdown offset is that batch's last record.
    #[test]
    fn a_controlled_shutdown_of_a_leader_pushes_one_image() {
        let mut n = Harness::new(Config::default());
        n.now = 6_000;
        let heartbeat = Payload::BrokerHeartbeat {
            broker_epoch: 0,
            want_shut_down: true,
            metadata_offset: 3,
        };
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(1), heartbeat, &[1, 2, 3]));
        let image = n.controller.image();
        assert_eq!(image.partitions[&TP0].leader, Some(2), "{effects:#?}");
        assert!(n.reg(1).in_controlled_shutdown);
        assert_eq!(image.offset, 5);
        assert_eq!(n.reg(1).controlled_shutdown_offset, Some(5));
        assert_eq!(pushes(&effects), [(1, 5), (2, 5), (3, 5), (1, 5)]);
    }

    /// ReplicationControlManagerTest.testAlterPartitionShouldRejectFencedBrokers: an ISR
    /// expansion to a fenced broker fails with INELIGIBLE_REPLICA, the registration unchanged
    /// and no metadata pushed.
    #[test]
    fn an_alter_partition_adding_a_fenced_replica_is_ineligible() {
        let mut n = Harness::new(Config::default());
        n.controller.brokers.get_mut(&3).unwrap().fenced = true;
        n.controller.partitions[&TP0].isr = vec![1, 2];
        n.controller.partitions[&TP0].partition_epoch = 1;
        let before = n.controller.partitions[&TP0].clone();
        let request = Payload::AlterPartition {
            request_id: 7,
            broker_epoch: 0,
            partitions: vec![crate::network::AlterPartitionData {
                tp: TP0,
                leader_epoch: 0,
                partition_epoch: 1,
                new_isr: vec![(1, 0), (2, 1), (3, 2)],
            }],
        };
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(1), request, &[1, 2, 3]));
        assert_effects(
            &effects,
            &[
                Effect::Emit(Event::AlterPartitionIneligible {
                    broker: 1,
                    tp: n.locals.topics.name(TP0).clone(),
                    ineligible: vec![(3, Ineligible::Fenced)],
                    isr: vec![1, 2, 3],
                }),
                send(
                    1,
                    Payload::AlterPartitionResponse {
                        request_id: 7,
                        top_error: ErrorCode::NONE,
                        partitions: vec![AlterPartitionResult {
                            tp: TP0,
                            error: ErrorCode::INELIGIBLE_REPLICA,
                            leader: Some(1),
                            leader_epoch: 0,
                            partition_epoch: 1,
                            isr: vec![1, 2],
                        }],
                    },
                ),
            ],
        );
        assert_eq!(n.controller.partitions[&TP0], before);
        assert_eq!(n.controller.next_offset, 4);
        assert_eq!(n.locals.metrics, Metrics::default());
    }

    /// ReplicationControlManagerTest.testProcessExpiredBrokerHeartbeat (and
    /// BrokerHeartbeatManagerTest.testFindOneStaleBroker): the leader's session expires, so
    /// it is fenced: removed from the ISR with a new leader elected from it, then the fencing
    /// recorded, both pushed in one image (handleBrokerFenced writes them in one batch).
    /// Only the brokers of the audience are sent the metadata.
    #[test]
    fn a_session_timeout_fences_the_leader_and_elects_another() {
        let mut n = Harness::new(Config::default());
        n.controller.last_heartbeat_ms.insert(2, 8_000);
        n.controller.last_heartbeat_ms.insert(3, 8_000);
        // Not yet: the session (9 s from the heartbeat at 0) has not run out.
        n.now = 8_999;
        let effects =
            n.run(|c, ctx| c.on_timer(ctx, ControllerTimer::SessionCheck { broker: 1 }, &[2, 3]));
        assert_effects(&effects, &[]);

        n.now = 9_000;
        let mut fenced = n.controller.image();
        fenced.offset = 5;
        fenced.partitions[&TP0].isr = vec![2, 3];
        fenced.partitions[&TP0].leader = Some(2);
        fenced.partitions[&TP0].leader_epoch = 1;
        fenced.partitions[&TP0].partition_epoch = 1;
        fenced.brokers.get_mut(&1).unwrap().fenced = true;
        let effects =
            n.run(|c, ctx| c.on_timer(ctx, ControllerTimer::SessionCheck { broker: 1 }, &[2, 3]));
        assert_effects(
            &effects,
            &[
                Effect::Emit(Event::BrokerControl {
                    broker: 1,
                    what: BrokerControl::SessionTimedOut,
                }),
                Effect::Emit(Event::NewLeader {
                    tp: n.locals.topics.name(TP0).clone(),
                    leader: 2,
                    election: Some(ElectionKind::Clean),
                    leader_epoch: 1,
                }),
                metadata(2, &fenced),
                metadata(3, &fenced),
                // Broker 2 leads a partition whose preferred leader is 1: the balancing task
                // is queued leader.imbalance.check.interval.seconds from now
                // (QuorumController.maybeScheduleNextBalancePartitionLeaders).
                Effect::SetTimer {
                    at: 9_000 + 300_000,
                    scheduled: Scheduled::Controller(ControllerTimer::PreferredRebalance),
                },
            ],
        );
        assert_eq!(n.controller.image(), fenced);
        assert_eq!(
            n.controller.records[4].text,
            "PartitionChangeRecord(t, partitionId=0, leader=2, isr=[2,3]) leaderEpoch=1 \
             partitionEpoch=1 [handleBrokerFenced[1]]"
        );
        assert_eq!(n.controller.elections, vec![(TP0, 1, ElectionKind::Clean)]);
        assert_eq!(
            (n.locals.metrics.elections, n.locals.metrics.isr_shrinks),
            (1, 1)
        );
        assert_eq!(n.controller.last_unclean_election_at, None);
    }

    /// ReplicationControlManagerTest.testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions
    /// (and PartitionChangeBuilderTest.testUncleanLeaderElection): with
    /// unclean.leader.election.enable, the periodic task elects a live replica outside the ISR
    /// of a leaderless partition: ISR [it], RECOVERING, a new leader epoch; and the task sets
    /// its next run.
    #[test]
    fn the_balancing_task_is_queued_when_a_partition_is_imbalanced_and_runs_preferred_elections() {
        // QuorumController.maybeScheduleNextBalancePartitionLeaders and
        // ReplicationControlManager.maybeBalancePartitionLeaders: broker 2 leads a partition
        // whose preferred replica (1) is back in the ISR; the task is queued 300 s after the
        // imbalance is seen, elects 1, and is not queued again once all is balanced.
        let mut n = Harness::new(Config::default());
        let p = &mut n.controller.partitions[&TP0];
        (p.leader, p.leader_epoch, p.partition_epoch) = (Some(2), 1, 1);
        n.now = 10_000;
        let effects = n.run(|c, ctx| c.maybe_schedule_balance(ctx));
        assert_effects(
            &effects,
            &[Effect::SetTimer {
                at: 310_000,
                scheduled: Scheduled::Controller(ControllerTimer::PreferredRebalance),
            }],
        );
        assert_eq!(n.controller.balance, ImbalanceSchedule::Scheduled);
        // Queued once: another event does not queue it again.
        assert_effects(&n.run(|c, ctx| c.maybe_schedule_balance(ctx)), &[]);
        n.now = 310_000;
        n.run(|c, ctx| c.on_timer(ctx, ControllerTimer::PreferredRebalance, &[1, 2, 3]));
        let p = &n.controller.partitions[&TP0];
        assert_eq!((p.leader, p.leader_epoch), (Some(1), 2));
        assert_eq!(n.controller.balance, ImbalanceSchedule::Deferred);
        assert_effects(&n.run(|c, ctx| c.maybe_schedule_balance(ctx)), &[]);
        // auto.leader.rebalance.enable=false: never queued.
        let config = Config {
            auto_leader_rebalance_enable: Some(false),
            ..Config::default()
        };
        let mut n = Harness::new(config);
        n.controller.partitions[&TP0].leader = Some(2);
        assert_effects(&n.run(|c, ctx| c.maybe_schedule_balance(ctx)), &[]);
        // leader.imbalance.check.interval.seconds=30: queued 30 s after the imbalance is
        // seen (ControllerServer: leaderImbalanceCheckIntervalNs from the config); at
        // Long.MAX_VALUE seconds, TimeUnit.convert saturates and so does the delay.
        for (secs, at) in [(30, 40_000), (i64::MAX as u64, u64::MAX)] {
            let config = Config {
                leader_imbalance_check_interval_seconds: secs,
                ..Config::default()
            };
            let mut n = Harness::new(config);
            n.controller.partitions[&TP0].leader = Some(2);
            n.now = 10_000;
            assert_effects(
                &n.run(|c, ctx| c.maybe_schedule_balance(ctx)),
                &[Effect::SetTimer {
                    at,
                    scheduled: Scheduled::Controller(ControllerTimer::PreferredRebalance),
                }],
            );
        }
    }

    #[test]
    fn the_periodic_unclean_election_elects_a_replica_outside_the_isr() {
        let config = Config {
            unclean_leader_election_enable: true,
            eligible_leader_replicas_version: 0,
            ..Config::default()
        };
        let mut n = Harness::new(config);
        for b in [1, 2] {
            n.controller.brokers.get_mut(&b).unwrap().fenced = true;
        }
        let p = &mut n.controller.partitions[&TP0];
        (p.leader, p.isr, p.leader_epoch, p.partition_epoch) = (None, vec![1], 2, 3);
        n.now = 300_000;
        let effects = n.run(|c, ctx| c.on_timer(ctx, ControllerTimer::UncleanElection, &[3]));
        let image = n.controller.image();
        assert_effects(
            &effects,
            &[
                Effect::Emit(Event::NewLeader {
                    tp: n.locals.topics.name(TP0).clone(),
                    leader: 3,
                    election: Some(ElectionKind::Unclean),
                    leader_epoch: 3,
                }),
                metadata(3, &image),
                Effect::SetTimer {
                    at: 600_000,
                    scheduled: Scheduled::Controller(ControllerTimer::UncleanElection),
                },
                // Broker 3 is not the preferred leader (1): the balancing task is queued.
                Effect::SetTimer {
                    at: 300_000 + 300_000,
                    scheduled: Scheduled::Controller(ControllerTimer::PreferredRebalance),
                },
            ],
        );
        let p = &n.controller.partitions[&TP0];
        assert_eq!((p.leader, &p.isr), (Some(3), &vec![3]));
        assert_eq!((p.leader_epoch, p.partition_epoch), (3, 4));
        assert_eq!(p.leader_recovery_state, LeaderRecoveryState::Recovering);
        assert!(p.elr.is_empty());
        assert_eq!(n.controller.last_unclean_election_at, Some(300_000));
        assert_eq!(
            n.controller.elections,
            vec![(TP0, 3, ElectionKind::Unclean)]
        );
        assert!(n.controller.records[4]
            .text
            .ends_with("[maybeElectUncleanLeaders]"));
    }

    // ---- reassignment ------------------------------------------------------------------

    fn a(replicas: &[u32], adding: &[u32], removing: &[u32]) -> Assignment {
        Assignment {
            replicas: replicas.to_vec(),
            adding: adding.to_vec(),
            removing: removing.to_vec(),
        }
    }

    /// PartitionReassignmentReplicasTest: testNoneAddedOrRemoved, testAdditions,
    /// testRemovals, testAdditionsAndRemovals, testRearrangement, and the
    /// maybeCompleteReassignment cases (testDoesNotCompleteReassignment,
    /// testDoesNotCompleteReassignmentIfNoneOngoing, testDoesCompleteReassignmentAllNewReplicas,
    /// testDoesCompleteReassignmentSomeNewReplicas,
    /// testDoesNotCompleteReassignmentIfIsrDoesNotHaveAllTargetReplicas).
    #[test]
    fn partition_reassignment_replicas_as_kafka_computes_them() {
        assert_eq!(
            Assignment::reassign(&[3, 2, 1], &[3, 2, 1]),
            a(&[3, 2, 1], &[], &[])
        );
        assert_eq!(
            Assignment::reassign(&[3, 2, 1], &[3, 6, 2, 1, 5]),
            a(&[3, 6, 2, 1, 5], &[5, 6], &[])
        );
        assert_eq!(
            Assignment::reassign(&[3, 2, 1, 0], &[3, 1]),
            a(&[3, 1, 0, 2], &[], &[0, 2])
        );
        assert_eq!(
            Assignment::reassign(&[3, 2, 1, 0], &[7, 3, 1, 9]),
            a(&[7, 3, 1, 9, 0, 2], &[7, 9], &[0, 2])
        );
        assert_eq!(
            Assignment::reassign(&[3, 2, 1, 0], &[0, 1, 3, 2]),
            a(&[0, 1, 3, 2], &[], &[])
        );
        let moving = Assignment::reassign(&[0, 1, 2], &[3, 4, 5]);
        assert_eq!(moving.maybe_complete(&[0, 1, 2, 3, 4]), None);
        assert_eq!(
            moving.maybe_complete(&[0, 1, 2, 3, 4, 5]),
            Some((vec![3, 4, 5], vec![3, 4, 5]))
        );
        assert_eq!(a(&[0, 1, 2], &[], &[]).maybe_complete(&[0, 1, 2]), None);
        let some = Assignment::reassign(&[0, 1, 2], &[0, 1, 3]);
        assert_eq!(
            some.maybe_complete(&[0, 1, 2, 3]),
            Some((vec![0, 1, 3], vec![0, 1, 3]))
        );
        assert_eq!(some.maybe_complete(&[3]), None);
    }

    /// PartitionChangeBuilderTest's FOO (replicas 2,1,3, ISR 2,1,3, leader 1, epochs
    /// 100/200, broker 3 not an acceptable leader, min ISR 2) and BAR (replicas 1,2,3,4 with
    /// 1 removing and 4 adding, ISR 1,2,3, leader 1).
    fn foo() -> PartitionRegistration {
        PartitionRegistration {
            leader_epoch: 100,
            partition_epoch: 200,
            ..part(&[2, 1, 3], &[2, 1, 3], Some(1))
        }
    }

    fn bar() -> PartitionRegistration {
        PartitionRegistration {
            leader_epoch: 100,
            partition_epoch: 200,
            removing_replicas: vec![1],
            adding_replicas: vec![4],
            ..part(&[1, 2, 3, 4], &[1, 2, 3], Some(1))
        }
    }

    fn build(
        p: &PartitionRegistration,
        target_isr: &[u32],
        assignment: Option<Assignment>,
    ) -> Option<PartitionChange> {
        let accept = |r: u32| r != 3;
        build_partition_change(
            p,
            &ChangeRequest {
                target_isr: target_isr.to_vec(),
                election: Election::Online,
                min_isr: 2,
                elr_enabled: true,
                unclean_shutdown_replicas: &[],
                is_acceptable_leader: &accept,
                assignment,
            },
        )
    }

    /// PartitionChangeBuilderTest.testReassignmentRearrangesReplicas,
    /// testAddingReplicaReassignment, testRemovingReplicaReassignment,
    /// testLeaderEpochBumpOnNewReplicaSetDisjoint, testIsrEnlargementCompletesReassignment
    /// and testRevertReassignment: the registration each record leaves.
    #[test]
    fn the_builder_moves_replicas_as_partition_change_builder_does() {
        // A reorder: only the replicas change; no leader epoch bump.
        let c = build(
            &foo(),
            &[2, 1, 3],
            Some(Assignment::reassign(&[2, 1, 3], &[3, 2, 1])),
        )
        .unwrap();
        let want = PartitionRegistration {
            replicas: vec![3, 2, 1],
            partition_epoch: 201,
            ..foo()
        };
        assert_eq!((c.next, c.new_leader), (want, None));
        // Adding 4: the replicas 1,2,3,4 with 4 adding, the ISR and leader epoch as they were.
        let adding = Assignment::reassign(&[2, 1, 3], &[1, 2, 3, 4]);
        assert_eq!(adding, a(&[1, 2, 3, 4], &[4], &[]));
        let c = build(&foo(), &[2, 1, 3], Some(adding)).unwrap();
        assert_eq!(
            c.next,
            PartitionRegistration {
                replicas: vec![1, 2, 3, 4],
                adding_replicas: vec![4],
                partition_epoch: 201,
                ..foo()
            }
        );
        // Removing 3, whose target replicas are all in the ISR: complete at once, 3 out of
        // the replicas and the ISR, and a new leader epoch for the same leader.
        let removing = Assignment::reassign(&[2, 1, 3], &[1, 2]);
        assert_eq!(removing, a(&[1, 2, 3], &[], &[3]));
        let c = build(&foo(), &[2, 1, 3], Some(removing)).unwrap();
        assert_eq!(
            c.next,
            PartitionRegistration {
                replicas: vec![1, 2],
                isr: vec![2, 1],
                leader_epoch: 101,
                partition_epoch: 201,
                ..foo()
            }
        );
        assert_eq!(c.new_leader, None, "the same leader: no election");
        // A replica set that drops 3 bumps the leader epoch (the record's leader is 1).
        let c = build(&foo(), &[2, 1, 3], Some(a(&[2, 1, 4], &[], &[]))).unwrap();
        assert_eq!((c.next.leader, c.next.leader_epoch), (Some(1), 101));
        // BAR: the ISR growing to 1,2,3,4 completes it; leader 1 was removed, so 2 leads.
        let c = build(&bar(), &[1, 2, 3, 4], None).unwrap();
        assert_eq!(
            c.next,
            PartitionRegistration {
                replicas: vec![2, 3, 4],
                isr: vec![2, 3, 4],
                leader: Some(2),
                leader_epoch: 101,
                partition_epoch: 201,
                adding_replicas: vec![],
                removing_replicas: vec![],
                ..bar()
            }
        );
        assert_eq!(c.new_leader, Some((Some(2), Some(ElectionKind::Clean))));
        // PartitionReassignmentRevert(BAR): replicas 1,2,3, ISR 1,2,3 (4 was adding).
        let c = build(&bar(), &[1, 2, 3], Some(a(&[1, 2, 3], &[], &[]))).unwrap();
        assert_eq!(
            c.next,
            PartitionRegistration {
                replicas: vec![1, 2, 3],
                leader_epoch: 101,
                partition_epoch: 201,
                adding_replicas: vec![],
                removing_replicas: vec![],
                ..bar()
            }
        );
    }

    /// ReplicationControlManager.getTopicEffectiveMinIsr: min.insync.replicas (3), never
    /// above the replica count of the topic's partition 0 (3), also for partition 1, which
    /// a reassignment left on [1, 2] with ISR [1] and ELR [2, 3]. Its leader's
    /// AlterPartition adding 2 back leaves the ISR [1, 2] still below 3: the ELR is the old
    /// ISR and ELR {1, 2, 3} minus the ISR, [3] (maybePopulateTargetElr). Partition 1's own
    /// count (2) would have cleared it.
    #[test]
    fn the_effective_min_isr_counts_the_replicas_of_partition_0() {
        let mut n = Harness::new(Config {
            min_insync_replicas: 3,
            ..Config::default()
        });
        n.locals = crate::effect::Locals::with_topics(
            Config {
                min_insync_replicas: 3,
                ..Config::default()
            },
            &[("t", 2)],
            0,
        );
        let p1 = Tp {
            topic: 0,
            partition: 1,
        };
        n.controller.partitions.insert(
            p1,
            PartitionRegistration {
                elr: vec![2, 3],
                leader_epoch: 2,
                partition_epoch: 5,
                ..part(&[1, 2], &[1], Some(1))
            },
        );
        assert_eq!(
            (
                n.controller.effective_min_isr(p1),
                n.controller.min_isr(p1, 2)
            ),
            (3, 2)
        );
        let request = Payload::AlterPartition {
            request_id: 1,
            broker_epoch: 0,
            partitions: vec![crate::network::AlterPartitionData {
                tp: p1,
                leader_epoch: 2,
                partition_epoch: 5,
                new_isr: vec![(1, 0), (2, 1)],
            }],
        };
        n.run(|c, ctx| c.on_message(ctx, Node::Broker(1), request, &[1, 2, 3]));
        let p = &n.controller.partitions[&p1];
        assert_eq!(
            (&p.isr, &p.elr, p.partition_epoch),
            (&vec![1, 2], &vec![3], 6)
        );
    }

    /// PartitionChangeBuilder.build for a shrinking reassignment with min.insync.replicas
    /// above the replicas left (no Kafka test covers it; derived from the code):
    /// completeReassignmentIfNeeded leaves the ISR [2, 1] and the replicas [1, 2];
    /// maybePopulateTargetElr, with the ISR below the minimum (3), takes the current ISR
    /// {2, 1, 3} minus the target ISR as the ELR: [3], the removed replica, which
    /// setAssignmentChanges does not filter. The leader (1) stays, its epoch bumped
    /// (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded).
    /// And the ELR's order: Kafka collects it from a HashSet<Integer>, ascending for broker
    /// ids; an ISR shrink of replicas [3, 2, 1] to [3] (testEligibleLeaderReplicas_
    /// IsrShrinkBelowMinISR's rule, its replicas reversed) gives the ELR [1, 2].
    #[test]
    fn a_shrinking_reassignment_below_min_isr_keeps_the_removed_replica_in_the_elr() {
        let min3 = |p: &PartitionRegistration, target_isr: &[u32], assignment| {
            build_partition_change(
                p,
                &ChangeRequest {
                    target_isr: target_isr.to_vec(),
                    election: Election::Online,
                    min_isr: 3,
                    elr_enabled: true,
                    unclean_shutdown_replicas: &[],
                    is_acceptable_leader: &|r: u32| r != 3,
                    assignment,
                },
            )
        };
        let removing = Assignment::reassign(&[2, 1, 3], &[1, 2]);
        let c = min3(&foo(), &[2, 1, 3], Some(removing)).unwrap();
        assert_eq!(
            c.next,
            PartitionRegistration {
                replicas: vec![1, 2],
                isr: vec![2, 1],
                elr: vec![3],
                leader_epoch: 101,
                partition_epoch: 201,
                ..foo()
            }
        );
        assert_eq!(c.new_leader, None, "an epoch bump, not an election");
        // With ELR off (eligible.leader.replicas.version 0), no ELR at all.
        let off = build_partition_change(
            &foo(),
            &ChangeRequest {
                target_isr: vec![2, 1, 3],
                election: Election::Online,
                min_isr: 3,
                elr_enabled: false,
                unclean_shutdown_replicas: &[],
                is_acceptable_leader: &|r: u32| r != 3,
                assignment: Some(Assignment::reassign(&[2, 1, 3], &[1, 2])),
            },
        )
        .unwrap();
        assert!(off.next.elr.is_empty());
        // The ELR in ascending order, whatever the replicas' order.
        let reversed = PartitionRegistration {
            leader_epoch: 100,
            partition_epoch: 200,
            ..part(&[3, 2, 1], &[3, 2, 1], Some(3))
        };
        let c = build_partition_change(
            &reversed,
            &ChangeRequest {
                target_isr: vec![3],
                election: Election::Online,
                min_isr: 3,
                elr_enabled: true,
                unclean_shutdown_replicas: &[],
                is_acceptable_leader: &|_| true,
                assignment: None,
            },
        )
        .unwrap();
        assert_eq!(
            (c.next.leader, c.next.isr, c.next.elr),
            (Some(3), vec![3], vec![1, 2])
        );
    }

    /// PartitionChangeBuilderTest.testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders:
    /// [0, 1] → [2, 3], leader 0; the ISR grows to 0,1,2,3 and no new replica may lead: the
    /// reassignment completes with no leader (the removed leader is not left leading).
    #[test]
    fn a_removed_leader_is_demoted_even_with_no_new_leader() {
        let p = PartitionRegistration {
            adding_replicas: vec![2, 3],
            removing_replicas: vec![0, 1],
            ..part(&[2, 3, 0, 1], &[0, 1], Some(0))
        };
        let accept = |_: u32| false;
        let c = build_partition_change(
            &p,
            &ChangeRequest {
                target_isr: vec![0, 1, 2, 3],
                election: Election::Online,
                min_isr: 2,
                elr_enabled: false,
                unclean_shutdown_replicas: &[],
                is_acceptable_leader: &accept,
                assignment: None,
            },
        )
        .unwrap();
        assert_eq!(
            (c.next.replicas, c.next.isr, c.next.leader),
            (vec![2, 3], vec![2, 3], None)
        );
        assert!(c.next.adding_replicas.is_empty() && c.next.removing_replicas.is_empty());
        assert_eq!(c.next.leader_epoch, 1);
    }

    /// Brokers 0..=4 registered and unfenced, then broker 3 fenced; topic foo with four
    /// partitions (1,2,3,4 / 0,1,2,3 / 4,3,1,0 / 2,3,4,1) and bar with one (4,3,2), each
    /// ISR without 3 at partition epoch 1: ReplicationControlManagerTest's setup.
    fn reassign_harness() -> (Controller, crate::effect::Locals) {
        let lists: [&[u32]; 5] = [
            &[1, 2, 3, 4],
            &[0, 1, 2, 3],
            &[4, 3, 1, 0],
            &[2, 3, 4, 1],
            &[4, 3, 2],
        ];
        let mut partitions = VecMap::new();
        for (i, replicas) in lists.iter().enumerate() {
            let tp = if i < 4 {
                Tp {
                    topic: 0,
                    partition: i as u16,
                }
            } else {
                Tp {
                    topic: 1,
                    partition: 0,
                }
            };
            let mut p = PartitionRegistration::new(replicas.to_vec(), Some(replicas[0]));
            p.isr.retain(|&r| r != 3);
            p.partition_epoch = 1;
            partitions.insert(tp, p);
        }
        let mut c = Controller::new(partitions, vec![1, 1]);
        for id in 0..=4 {
            c.register_at_start(id);
        }
        c.brokers.get_mut(&3).unwrap().fenced = true;
        let locals =
            crate::effect::Locals::with_topics(Config::default(), &[("foo", 4), ("bar", 1)], 0);
        (c, locals)
    }

    /// ReplicationControlManagerTest.testCancelReassignPartitions: foo-0 to 1,2,4 completes at
    /// once (3 is not in the ISR: replicas and ISR 1,2,4, leader epoch 1); foo-1 to 1,2,3,0 is
    /// a reorder; foo-2 names unregistered brokers and foo-3 none (INVALID_REPLICA_ASSIGNMENT
    /// with Kafka's messages); bar-0 to 1,2,3,4,0 adds 0 and 1. Cancelling foo-0 finds no
    /// reassignment (NO_REASSIGNMENT_IN_PROGRESS); cancelling bar-0 reverts it to 2,3,4 (the
    /// target's order without the adding replicas), ISR 4,2, with a leader epoch bump.
    #[test]
    fn reassignments_and_a_cancel_as_replication_control_manager_test_has_them() {
        let (mut c, mut locals) = reassign_harness();
        let foo = |p: u16| Tp {
            topic: 0,
            partition: p,
        };
        let bar = Tp {
            topic: 1,
            partition: 0,
        };
        let mut ctx = locals.ctx(0);
        let results = c.on_alter_partition_reassignments(
            &mut ctx,
            &[
                (foo(0), Some(vec![1, 2, 4])),
                (foo(1), Some(vec![1, 2, 3, 0])),
                (foo(2), Some(vec![5, 6, 7])),
                (foo(3), Some(vec![])),
                (bar, Some(vec![1, 2, 3, 4, 0])),
            ],
            &[0, 1, 2, 4],
        );
        let invalid = |m: &str| Err((ErrorCode::INVALID_REPLICA_ASSIGNMENT, m.to_string()));
        assert_eq!(
            results,
            vec![
                Ok(()),
                Ok(()),
                invalid("The manual partition assignment includes broker 5, but no such broker is registered."),
                invalid("The manual partition assignment includes an empty replica list."),
                Ok(()),
            ]
        );
        let registration =
            |replicas: &[u32], isr: &[u32], leader: u32, le: i32, pe: i32| PartitionRegistration {
                isr: isr.to_vec(),
                leader_epoch: le,
                partition_epoch: pe,
                ..PartitionRegistration::new(replicas.to_vec(), Some(leader))
            };
        assert_eq!(
            c.partitions[&foo(0)],
            registration(&[1, 2, 4], &[1, 2, 4], 1, 1, 2)
        );
        assert_eq!(
            c.partitions[&foo(1)],
            registration(&[1, 2, 3, 0], &[0, 1, 2], 0, 0, 2)
        );
        assert_eq!(
            c.partitions[&bar],
            PartitionRegistration {
                adding_replicas: vec![0, 1],
                ..registration(&[1, 2, 3, 4, 0], &[4, 2], 4, 0, 2)
            }
        );
        let records: Vec<&str> = c.records[c.records.len() - 3..]
            .iter()
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(
            records,
            [
                "PartitionChangeRecord(foo, partitionId=0, leader=1, replicas=[1,2,4]) leaderEpoch=1 partitionEpoch=2 [alterPartitionReassignments]",
                "PartitionChangeRecord(foo, partitionId=1, replicas=[1,2,3,0]) leaderEpoch=0 partitionEpoch=2 [alterPartitionReassignments]",
                "PartitionChangeRecord(bar, partitionId=0, replicas=[1,2,3,4,0], addingReplicas=[0,1]) leaderEpoch=0 partitionEpoch=2 [alterPartitionReassignments]",
            ]
        );
        let image = c.image();
        let effects = locals.take();
        assert_effects(
            &effects,
            &[
                metadata(0, &image),
                metadata(1, &image),
                metadata(2, &image),
                metadata(4, &image),
            ],
        );
        let mut ctx = locals.ctx(10);
        let results =
            c.on_alter_partition_reassignments(&mut ctx, &[(foo(0), None), (bar, None)], &[4]);
        assert_eq!(
            results,
            vec![
                Err((
                    ErrorCode::NO_REASSIGNMENT_IN_PROGRESS,
                    "No partition reassignment is in progress.".to_string()
                )),
                Ok(())
            ]
        );
        assert_eq!(
            c.partitions[&bar],
            registration(&[2, 3, 4], &[4, 2], 4, 1, 3)
        );
    }

    /// ReplicationControlManager.alterPartition: an ISR expansion that completes a
    /// reassignment moving the leader off its broker elects another and answers the old
    /// leader NEW_LEADER_ELECTED; its registration leaves 1 out of the replicas and the ISR.
    #[test]
    fn an_alter_partition_completing_a_reassignment_that_moves_the_leader_answers_new_leader_elected(
    ) {
        let mut n = Harness::new(Config::default());
        // 1,2,3 → 2,3,4: 4 adding, 1 removing, leader 1.
        n.controller.register_at_start(4);
        let mut ctx = n.locals.ctx(0);
        let r = n.controller.on_alter_partition_reassignments(
            &mut ctx,
            &[(TP0, Some(vec![2, 3, 4]))],
            &[],
        );
        assert_eq!(r, vec![Ok(())]);
        let p = n.controller.partitions[&TP0].clone();
        assert_eq!(
            (
                &p.replicas,
                &p.adding_replicas,
                &p.removing_replicas,
                p.partition_epoch
            ),
            (&vec![2, 3, 4, 1], &vec![4], &vec![1], 1)
        );
        n.locals.take();
        let request = Payload::AlterPartition {
            request_id: 9,
            broker_epoch: 0,
            partitions: vec![crate::network::AlterPartitionData {
                tp: TP0,
                leader_epoch: 0,
                partition_epoch: 1,
                new_isr: vec![(1, 0), (2, 1), (3, 2), (4, 4)],
            }],
        };
        let effects = n.run(|c, ctx| c.on_message(ctx, Node::Broker(1), request, &[]));
        let p = n.controller.partitions[&TP0].clone();
        assert_eq!(
            (
                &p.replicas,
                &p.isr,
                p.leader,
                p.leader_epoch,
                p.partition_epoch
            ),
            (&vec![2, 3, 4], &vec![2, 3, 4], Some(2), 1, 2)
        );
        assert!(!p.is_reassigning());
        let Some(Effect::Send {
            payload: Payload::AlterPartitionResponse { partitions, .. },
            ..
        }) = effects.last()
        else {
            panic!("{effects:?}")
        };
        assert_eq!(partitions[0].error, ErrorCode::NEW_LEADER_ELECTED);
    }
}
