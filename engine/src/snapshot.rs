//! A snapshot: everything needed to draw the cluster at one moment, as plain data.

use serde::{Deserialize, Serialize};

use crate::controller::{LeaderRecoveryState, MetadataRecord};
use crate::fetcher::TruncationRecord;
use crate::log::EpochEntry;
use crate::partition::{IsrState, ReplicaState};
use crate::record::Record;
use crate::sim::{Loss, Metrics, ProcessState, Role, Sim};
use crate::types::{Acks, BrokerId, ErrorCode, MessageKind, Node, TimeMs};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub time_ms: TimeMs,
    pub topic: String,
    pub partition: u32,
    pub brokers: Vec<BrokerSnapshot>,
    pub controller: ControllerSnapshot,
    pub in_flight: Vec<MessageSnapshot>,
    pub purgatory: Vec<PurgatoryEntry>,
    /// Follower fetches the leader holds (DelayedFetch), waiting for data or their deadline.
    pub held_fetches: Vec<HeldFetchSnapshot>,
    pub metrics: MetricsSnapshot,
    pub describe: String,
    pub offsets: String,
    pub losses: Vec<Loss>,
    pub violations: Vec<String>,
    pub truncations: Vec<TruncationRecord>,
    pub consumer_position: Option<u64>,
    pub next_event_ms: Option<TimeMs>,
    /// Cut links, each with its endpoints in order.
    pub cut_links: Vec<(Node, Node)>,
    /// The messages that left the wire in the last [`crate::sim::ARRIVALS_KEPT_MS`], oldest
    /// first, with what became of each, when the simulation keeps them
    /// ([`Sim::record_arrivals`]; not serialized, as `committed`).
    #[serde(skip)]
    pub arrivals: Vec<crate::sim::Arrival>,
    /// The committed history within the snapshot's records (from the same first offset):
    /// each record that a leader's HW covered, one per offset. A replica's record is
    /// committed when it equals this one (same offset, epoch and value), which stays true
    /// after the leader that committed it dies. Committed records lost by an unclean
    /// election leave the history; they are in `losses`.
    /// Not serialized, as `session_deadlines`: the golden transcripts hash the serialized
    /// snapshot, and these two only restate the simulation's state for the view.
    #[serde(skip)]
    pub committed: Vec<Record>,
    /// When the controller fences each registered, unfenced broker if no heartbeat arrives
    /// before then: its last heartbeat + `broker.session.timeout.ms` (BrokerHeartbeatManager).
    #[serde(skip)]
    pub session_deadlines: Vec<(BrokerId, TimeMs)>,
    /// The producer's batches not yet done, oldest first (not serialized either).
    #[serde(skip)]
    pub sends: Vec<SendSnapshot>,
}

/// A producer batch not yet done: waiting to be sent, in flight, or waiting to be retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendSnapshot {
    pub acks: Acks,
    pub records: usize,
    /// When the batch expires: its creation + `delivery.timeout.ms`.
    pub delivery_deadline_ms: TimeMs,
    /// Retries so far, and the error (and its time) that caused the last one.
    pub retries: u32,
    pub last_error: Option<(ErrorCode, TimeMs)>,
    /// The request in flight: its broker, and when the producer gives up on it
    /// (`request.timeout.ms` after it was sent, with the network's round trip).
    pub in_flight: Option<(BrokerId, TimeMs)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerSnapshot {
    pub id: BrokerId,
    pub process: ProcessState,
    /// What the lane says of the broker: its process, or for a running one whether it is
    /// shutting down or fenced.
    pub state: BrokerState,
    pub fenced: bool,
    pub slow_ms: u64,
    pub disk_lost: bool,
    pub hosts_replica: bool,
    pub role: ReplicaRole,
    pub in_isr: bool,
    pub in_elr: bool,
    pub log_start_offset: u64,
    pub log_end_offset: u64,
    pub high_watermark: u64,
    pub records: Vec<Record>,
    pub epoch_cache: Vec<EpochEntry>,
    pub leader_epoch_checkpoint: String,
    pub hw_checkpoint: Option<u64>,
    /// For a follower: the leader it fetches from.
    pub fetching_from: Option<BrokerId>,
    /// For a leader: its view of each follower and its ISR state.
    pub leader_view: Option<LeaderView>,
    /// ms since this broker last caught up, as its leader sees it (for the lag bar).
    pub since_caught_up_ms: Option<u64>,
    pub broker_epoch: i64,
}

/// What a broker's lane says it is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrokerState {
    Running,
    /// SIGSTOP: nothing runs.
    Frozen,
    Killed,
    Stopped,
    /// Running, in controlled shutdown.
    #[serde(rename = "shutting down")]
    ShuttingDown,
    /// Running, fenced by the controller (or not registered yet).
    Fenced,
}

impl BrokerState {
    /// The word the lane shows: `running`, `shutting down`, ...
    pub fn label(self) -> &'static str {
        match self {
            BrokerState::Running => "running",
            BrokerState::Frozen => "frozen",
            BrokerState::Killed => "killed",
            BrokerState::Stopped => "stopped",
            BrokerState::ShuttingDown => "shutting down",
            BrokerState::Fenced => "fenced",
        }
    }
}

/// The broker's replica of the partition, as its metadata makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplicaRole {
    Leader,
    Follower,
    /// No metadata yet, or not a replica.
    None,
}

impl ReplicaRole {
    pub fn label(self) -> &'static str {
        match self {
            ReplicaRole::Leader => "leader",
            ReplicaRole::Follower => "follower",
            ReplicaRole::None => "none",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderView {
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub isr_state: IsrState,
    pub maximal_isr: Vec<BrokerId>,
    pub followers: Vec<(BrokerId, ReplicaState)>,
    pub epoch_start_offset: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControllerSnapshot {
    pub leader: Option<BrokerId>,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub elr: Vec<BrokerId>,
    pub last_known_elr: Vec<BrokerId>,
    pub leader_recovery_state: LeaderRecoveryState,
    /// (broker, epoch, fenced, in controlled shutdown)
    pub registrations: Vec<(BrokerId, i64, bool, bool)>,
    pub records: Vec<MetadataRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageSnapshot {
    pub id: u64,
    pub from: Node,
    pub to: Node,
    pub kind: MessageKind,
    pub summary: String,
    pub sent_ms: TimeMs,
    pub deliver_ms: TimeMs,
    /// Arrived at a frozen broker: waits in its socket buffer.
    pub buffered: bool,
}

/// A message as the view draws it; `buffered`: it waits in a frozen broker's socket buffer.
pub(crate) fn message_snapshot(m: &crate::network::Message, buffered: bool) -> MessageSnapshot {
    MessageSnapshot {
        id: m.id,
        from: m.from,
        to: m.to,
        kind: m.payload.kind(),
        summary: m.payload.summary(),
        sent_ms: m.sent_at,
        deliver_ms: m.deliver_at,
        buffered,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PurgatoryEntry {
    pub broker: BrokerId,
    pub request_id: u64,
    pub first_offset: u64,
    pub required_offset: u64,
    pub created_ms: TimeMs,
    pub deadline_ms: TimeMs,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldFetchSnapshot {
    pub leader: BrokerId,
    pub replica: BrokerId,
    pub fetch_offset: u64,
    pub since_ms: TimeMs,
    pub deadline_ms: TimeMs,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricsSnapshot {
    pub under_replicated: bool,
    pub under_min_isr: bool,
    pub offline: bool,
    pub counters: Metrics,
    pub acks_all_latency_avg_ms: Option<u64>,
    pub acks_all_latency_max_ms: Option<u64>,
}

impl Sim {
    /// Everything needed to draw this moment.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_tail(u64::MAX)
    }

    /// [`Sim::snapshot`] with each broker's `records` cut to those at offsets within
    /// `max_records` of the longest log's end (everything else is whole). A view that draws
    /// only the newest offsets takes this every frame at a cost that does not grow with the
    /// log (a full snapshot of 10 000-record logs takes milliseconds; BENCHMARKS.md).
    pub fn snapshot_tail(&self, max_records: u64) -> Snapshot {
        let longest = self
            .brokers
            .values()
            .map(|b| b.log.log_end_offset())
            .max()
            .unwrap_or(0);
        let from = longest.saturating_sub(max_records);
        let p = &self.controller.partition;
        let now = self.now;
        let leader_broker = p.leader.and_then(|l| self.brokers.get(&l));
        // Loops, not mapped iterators collected (a collect over a map's values peels the
        // first item: its code twice).
        let mut brokers = Vec::new();
        for b in self.brokers.values() {
            let reg = self.controller.brokers.get(&b.id);
            let fenced = reg.is_none_or(|r| r.fenced);
            let state = match b.process {
                ProcessState::Frozen => BrokerState::Frozen,
                ProcessState::Killed => BrokerState::Killed,
                ProcessState::Stopped => BrokerState::Stopped,
                ProcessState::Running if b.shutting_down => BrokerState::ShuttingDown,
                ProcessState::Running if fenced => BrokerState::Fenced,
                ProcessState::Running => BrokerState::Running,
            };
            let (role, fetching_from, leader_view) = match &b.role {
                Role::Leader(l) => (
                    ReplicaRole::Leader,
                    None,
                    Some(LeaderView {
                        leader_epoch: l.leader_epoch,
                        partition_epoch: l.partition_epoch,
                        isr_state: l.isr_state.clone(),
                        maximal_isr: l.isr_state.maximal_isr(),
                        followers: {
                            let mut followers = Vec::new();
                            for (k, v) in &l.remote {
                                followers.push((*k, v.clone()));
                            }
                            followers
                        },
                        epoch_start_offset: l.epoch_start_offset,
                    }),
                ),
                Role::Follower(f) => (ReplicaRole::Follower, f.leader, None),
                Role::None => (ReplicaRole::None, None, None),
            };
            let since_caught_up_ms = leader_broker
                .and_then(|lb| lb.leader_state())
                .and_then(|l| l.remote.get(&b.id))
                .map(|s| now.saturating_sub(s.last_caught_up_time_ms));
            brokers.push(BrokerSnapshot {
                id: b.id,
                process: b.process,
                state,
                fenced,
                slow_ms: b.slow_ms,
                disk_lost: b.disk_lost,
                hosts_replica: p.replicas.contains(&b.id),
                role,
                in_isr: p.isr.contains(&b.id),
                in_elr: p.elr.contains(&b.id),
                log_start_offset: b.log.log_start_offset,
                log_end_offset: b.log.log_end_offset(),
                high_watermark: b.log.high_watermark,
                records: {
                    let skip = from.saturating_sub(b.log.log_start_offset) as usize;
                    b.log.records.copy_range(skip..b.log.records.len())
                },
                epoch_cache: b.log.epoch_cache.entries.clone(),
                leader_epoch_checkpoint: b.log.epoch_cache.checkpoint_line(),
                hw_checkpoint: b.log.hw_checkpoint,
                fetching_from,
                leader_view,
                since_caught_up_ms,
                broker_epoch: b.broker_epoch,
            });
        }
        let mut in_flight: Vec<MessageSnapshot> = Vec::new();
        for m in self.in_flight.values() {
            in_flight.push(message_snapshot(m, false));
        }
        // In id order: both maps are by id, so each buffered message goes in among the
        // others where its id falls (a few dozen each; no sort in the wasm).
        for m in self.buffered.values() {
            let at = in_flight.partition_point(|s| s.id < m.id);
            in_flight.insert(at, message_snapshot(m, true));
        }
        // Loops, not flat-mapped iterators collected: the same entries in the same order in
        // less wasm.
        let mut purgatory = vec![];
        let mut held_fetches = vec![];
        for b in self.brokers.values() {
            let Some(l) = b.leader_state() else { continue };
            for d in &l.purgatory {
                purgatory.push(PurgatoryEntry {
                    broker: b.id,
                    request_id: d.request_id,
                    first_offset: d.first_offset,
                    required_offset: d.required_offset,
                    created_ms: d.created_ms,
                    deadline_ms: d.deadline_ms,
                });
            }
            for h in &l.held_fetches {
                held_fetches.push(HeldFetchSnapshot {
                    leader: b.id,
                    replica: h.replica_id,
                    fetch_offset: h.fetch_offset,
                    since_ms: h.since_ms,
                    deadline_ms: h.deadline_ms,
                });
            }
        }
        let mut session_deadlines = vec![];
        for (id, r) in self.controller.brokers.iter() {
            if let (false, Some(last)) = (r.fenced, self.controller.last_heartbeat_ms.get(id)) {
                session_deadlines.push((*id, last + self.config.broker_session_timeout_ms));
            }
        }
        let mut registrations = vec![];
        for (id, r) in &self.controller.brokers {
            registrations.push((*id, r.epoch, r.fenced, r.in_controlled_shutdown));
        }
        let mut sends = vec![];
        for j in self.producer.jobs.values() {
            let Some(a) = j.current.as_ref() else {
                continue;
            };
            sends.push(SendSnapshot {
                acks: j.acks,
                records: a.values.len(),
                delivery_deadline_ms: a.created_ms + self.config.delivery_timeout_ms,
                retries: a.retries_done,
                last_error: a.last_error,
                in_flight: a.request_id.and(a.target).map(|t| {
                    (
                        t,
                        a.sent_ms + crate::client::request_deadline_ms(&self.config),
                    )
                }),
            });
        }
        let lat = &self.metrics.acks_all_latencies_ms;
        Snapshot {
            time_ms: now,
            topic: self.tp.topic.clone(),
            partition: self.tp.partition,
            brokers,
            controller: ControllerSnapshot {
                leader: p.leader,
                leader_epoch: p.leader_epoch,
                partition_epoch: p.partition_epoch,
                replicas: p.replicas.clone(),
                isr: p.isr.clone(),
                elr: p.elr.clone(),
                last_known_elr: p.last_known_elr.clone(),
                leader_recovery_state: p.leader_recovery_state,
                registrations,
                records: self.controller.records.clone(),
            },
            in_flight,
            purgatory,
            held_fetches,
            metrics: MetricsSnapshot {
                under_replicated: p.isr.len() < p.replicas.len(),
                under_min_isr: p.isr.len() < self.config.effective_min_isr(p.replicas.len()),
                offline: p.leader.is_none(),
                counters: self.metrics.clone(),
                acks_all_latency_avg_ms: (!lat.is_empty())
                    .then(|| lat.iter().sum::<u64>() / lat.len() as u64),
                acks_all_latency_max_ms: lat.iter().max().copied(),
            },
            describe: crate::describe::describe_line(self),
            offsets: crate::describe::offsets_line(self),
            losses: self.losses.clone(),
            violations: self.violations.clone(),
            truncations: self.truncations.clone(),
            consumer_position: self.consumer.position,
            next_event_ms: self.next_event_time(),
            cut_links: self.network.cut.iter().as_slice().to_vec(),
            // Kept in time order: the recent ones are a suffix.
            arrivals: self.arrivals[self
                .arrivals
                .partition_point(|a| a.at + crate::sim::ARRIVALS_KEPT_MS < now)..]
                .to_vec(),
            session_deadlines,
            sends,
            committed: {
                // The history starts at offset 0 (the log start offset stays 0).
                let len = self.committed.len();
                self.committed
                    .copy_range(usize::try_from(from).unwrap_or(len).min(len)..len)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    #[test]
    fn a_tail_snapshot_keeps_the_newest_records_and_everything_else() {
        // Broker 3 is frozen after 20 records and misses the next 30: its log ends at 20
        // while the others end at 50.
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"produce","acks":"1","prefix":"a-","count":20},
                             {"at":1000,"action":"freeze","broker":3},
                             {"at":1100,"action":"produce","acks":"1","prefix":"b-","count":30}],
                "end_ms":3000}"#,
        )
        .unwrap();
        let sim = crate::run(&s, true).unwrap();
        let full = sim.snapshot();
        let tail = sim.snapshot_tail(8);
        for (f, t) in full.brokers.iter().zip(&tail.brokers) {
            let kept: Vec<_> = f
                .records
                .iter()
                .filter(|r| r.offset >= 42)
                .cloned()
                .collect();
            assert_eq!(t.records, kept, "broker {}", f.id);
            let mut f = f.clone();
            f.records = t.records.clone();
            assert_eq!(&f, t, "only the records differ");
        }
        assert_eq!(full.brokers[0].log_end_offset, 50);
        assert!(
            tail.brokers[2].records.is_empty(),
            "broker 3's log ends below the tail"
        );
        assert_eq!(tail.brokers[0].records.len(), 8);
        assert_eq!(
            sim.snapshot_tail(1_000),
            full,
            "a tail longer than the logs is whole"
        );
        assert_eq!(sim.snapshot_tail(0).brokers[0].records, vec![]);
        assert_eq!(
            full.committed.len(),
            20,
            "broker 3 is frozen in the ISR: the HW stays at 20"
        );
        assert_eq!(
            sim.snapshot_tail(40).committed,
            full.committed[10..].to_vec()
        );
        assert!(tail.committed.is_empty());
    }

    #[test]
    fn committed_records_stay_committed_in_the_snapshot_after_their_leader_dies() {
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"c-","count":5},
                             {"at":1000,"action":"kill","broker":1}],
                "end_ms":1001}"#,
        )
        .unwrap();
        let sim = crate::run(&s, true).unwrap();
        let snap = sim.snapshot();
        assert_eq!(snap.controller.leader, Some(1), "not yet fenced");
        assert!(!snap.brokers[0].process.is_up());
        // Its last heartbeat was at most broker.heartbeat.interval.ms before the kill.
        let (id, deadline) = snap.session_deadlines[0];
        assert_eq!(id, 1);
        assert!((8_000..=10_000).contains(&deadline), "{deadline}");
        assert_eq!(snap.committed.len(), 5);
        for b in &snap.brokers[1..] {
            assert_eq!(b.records, snap.committed, "broker {} holds them all", b.id);
        }
        // An unclean election that loses them takes them out of the history.
        let s = crate::presets::preset("unclean-election").unwrap();
        let sim = crate::run(&s, true).unwrap();
        let snap = sim.snapshot();
        let lost = &snap.losses[0];
        let gone = lost.first_offset..=lost.last_offset;
        assert!(snap
            .committed
            .iter()
            .filter(|r| gone.contains(&r.offset))
            .all(|r| !lost.values.contains(&r.value)));
    }
}
