//! The cluster overview's view model: every partition of every topic as a row, each of its
//! replicas as the controller's metadata has it, and the marks `kafka-topics.sh --describe`
//! filters by. The playground draws it above the lane view, which shows one partition.
//!
//! Built from the controller's registrations (what `kafka-topics.sh --describe` reads) and
//! the brokers' processes (what an operator sees on the machines), by [`Sim::overview`].

use crate::sim::Sim;
use crate::snapshot::BrokerState;
use crate::types::{BrokerId, ProcessState};

/// The whole cluster at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Overview {
    /// Every broker in id order, with what its lane would say of it.
    pub brokers: Vec<(BrokerId, BrokerState)>,
    /// Topic by topic in creation order, partitions in index order.
    pub partitions: Vec<PartitionRow>,
}

/// One partition: its registration and the marks the describe filters use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRow {
    pub topic: String,
    pub partition: u32,
    pub leader: Option<BrokerId>,
    /// The leader is among the live brokers as `kafka-topics.sh` learns them
    /// (Admin.describeCluster: the registered, unfenced brokers), whatever its process.
    pub leader_live: bool,
    /// The replicas in assignment order (the first is the preferred leader).
    pub replicas: Vec<ReplicaCell>,
    pub isr_size: usize,
    /// TopicCommand.getReplicationFactor: during a reassignment, the replicas less the
    /// adding ones.
    pub replication_factor: usize,
    /// The topic's `min.insync.replicas` as configured (TopicCommand compares the ISR with
    /// the config, not with the effective minimum).
    pub min_insync_replicas: u32,
    /// The lane view shows this partition.
    pub viewed: bool,
}

/// One replica of a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaCell {
    pub broker: BrokerId,
    pub state: ReplicaState,
    /// In the registration's ISR (an offline replica may still be: the controller removes
    /// a broker from the ISRs only when it fences it).
    pub in_isr: bool,
    /// In the registration's ELR (KIP-966).
    pub in_elr: bool,
    /// Being added, or removed, by a reassignment (the registration's adding and removing
    /// replicas).
    pub adding: bool,
    pub removing: bool,
}

/// What the overview's cell says of a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    /// The partition's leader.
    Leader,
    /// A follower in the ISR.
    InSync,
    /// A follower out of the ISR.
    OutOfSync,
    /// Its broker is not live: its process is killed or stopped, or the controller has it
    /// fenced (KRaftMetadataCache's live brokers are the unfenced ones).
    Offline,
}

impl ReplicaState {
    /// The word the overview's legend and the cell's description use.
    pub fn label(self) -> &'static str {
        match self {
            ReplicaState::Leader => "leader",
            ReplicaState::InSync => "in-sync follower",
            ReplicaState::OutOfSync => "out-of-sync follower",
            ReplicaState::Offline => "offline",
        }
    }
}

impl PartitionRow {
    /// `topic-partition`, as Kafka's logs name it.
    pub fn name(&self) -> String {
        format!("{}-{}", self.topic, self.partition)
    }

    /// TopicCommand.PartitionDescription.isUnderReplicated: the ISR is smaller than the
    /// replication factor.
    pub fn under_replicated(&self) -> bool {
        self.isr_size < self.replication_factor
    }

    /// TopicCommand.PartitionDescription.isUnderMinIsr: no leader, or the ISR is smaller
    /// than the topic's `min.insync.replicas`.
    pub fn under_min_isr(&self) -> bool {
        self.leader.is_none() || self.isr_size < self.min_insync_replicas as usize
    }

    /// TopicCommand.PartitionDescription.isAtMinIsrPartitions: the ISR is exactly the
    /// topic's `min.insync.replicas`.
    pub fn at_min_isr(&self) -> bool {
        self.isr_size == self.min_insync_replicas as usize
    }

    /// TopicCommand.PartitionDescription.hasUnavailablePartitions: no leader, or the leader
    /// is not among the live brokers (describeCluster's: a killed broker stays live until the
    /// controller fences it, though its cell already says offline).
    pub fn unavailable(&self) -> bool {
        self.leader.is_none() || !self.leader_live
    }
}

impl Sim {
    /// The cluster overview at this moment.
    pub fn overview(&self) -> Overview {
        let mut brokers = Vec::new();
        for id in self.brokers.keys() {
            brokers.push((*id, self.broker_state(*id).1));
        }
        let live = |id: BrokerId| {
            let (process, _, fenced) = self.broker_state(id);
            !fenced && matches!(process, ProcessState::Running | ProcessState::Frozen)
        };
        let mut partitions = Vec::new();
        for tp in self.topics.partitions() {
            let p = self.controller.partition(tp);
            let mut replicas = Vec::new();
            for &b in &p.replicas {
                let in_isr = p.isr.contains(&b);
                let state = if !live(b) {
                    ReplicaState::Offline
                } else if p.leader == Some(b) {
                    ReplicaState::Leader
                } else if in_isr {
                    ReplicaState::InSync
                } else {
                    ReplicaState::OutOfSync
                };
                replicas.push(ReplicaCell {
                    broker: b,
                    state,
                    in_isr,
                    in_elr: p.elr.contains(&b),
                    adding: p.adding_replicas.contains(&b),
                    removing: p.removing_replicas.contains(&b),
                });
            }
            let name = self.topics.name(tp);
            partitions.push(PartitionRow {
                topic: name.topic.clone(),
                partition: name.partition,
                leader: p.leader,
                leader_live: p.leader.is_some_and(|l| !self.broker_state(l).2),
                replicas,
                isr_size: p.isr.len(),
                replication_factor: p.replication_factor(),
                min_insync_replicas: self.controller.min_isr(tp, usize::MAX) as u32,
                viewed: tp == self.view_tp,
            });
        }
        Overview {
            brokers,
            partitions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    fn cluster(timeline: &str, end_ms: u64) -> Sim {
        let s = Scenario::from_json(&format!(
            r#"{{"version":2,"brokers":4,
                "topics":[{{"name":"a","assignment":[[1,2,3],[2,3,4]],
                            "configs":{{"min.insync.replicas":2}}}},
                          {{"name":"b","assignment":[[4,1]]}}],
                "timeline":{timeline},"end_ms":{end_ms}}}"#
        ))
        .unwrap();
        crate::run(&s, true).unwrap()
    }

    #[test]
    fn every_partition_is_a_row_with_its_replicas_in_assignment_order() {
        let sim = cluster("[]", 100);
        let o = sim.overview();
        assert_eq!(o.brokers.len(), 4);
        assert!(o.brokers.iter().all(|(_, s)| *s == BrokerState::Running));
        let names: Vec<String> = o.partitions.iter().map(PartitionRow::name).collect();
        assert_eq!(names, ["a-0", "a-1", "b-0"]);
        let a1 = &o.partitions[1];
        assert_eq!(a1.leader, Some(2), "the first replica leads at creation");
        let cells: Vec<(BrokerId, ReplicaState)> =
            a1.replicas.iter().map(|c| (c.broker, c.state)).collect();
        assert_eq!(
            cells,
            [
                (2, ReplicaState::Leader),
                (3, ReplicaState::InSync),
                (4, ReplicaState::InSync)
            ]
        );
        assert_eq!(a1.min_insync_replicas, 2, "the topic's config");
        assert_eq!(o.partitions[2].min_insync_replicas, 1, "the broker default");
        assert!(o.partitions[0].viewed && !a1.viewed);
        for row in &o.partitions {
            assert!(!row.under_replicated() && !row.under_min_isr() && !row.unavailable());
        }
        // b-0 has two replicas and a minimum of 1; a-* three and 2: none is at its minimum.
        assert!(o.partitions.iter().all(|r| !r.at_min_isr()));
    }

    #[test]
    fn a_killed_broker_is_offline_at_once_and_leaves_the_isrs_when_fenced() {
        // Broker 4 is killed at 1 s: offline at once (its process is gone), still in the ISRs
        // until the controller fences it (broker.session.timeout.ms, 9 s by default).
        let sim = cluster(r#"[{"at":1000,"action":"kill","broker":4}]"#, 1_001);
        let o = sim.overview();
        assert_eq!(o.brokers[3], (4, BrokerState::Killed));
        let b0 = &o.partitions[2];
        assert_eq!(b0.replicas[0].state, ReplicaState::Offline);
        assert!(b0.replicas[0].in_isr, "not fenced yet");
        assert!(
            !b0.unavailable(),
            "the tool counts its leader live until the controller fences it"
        );
        assert!(!b0.under_replicated(), "the ISR has not shrunk yet");

        let sim = cluster(r#"[{"at":1000,"action":"kill","broker":4}]"#, 20_000);
        let o = sim.overview();
        assert_eq!(o.brokers[3], (4, BrokerState::Killed));
        let a1 = &o.partitions[1];
        let b0 = &o.partitions[2];
        assert_eq!(b0.leader, Some(1), "broker 1 took b-0 over");
        assert_eq!(b0.replicas[1].state, ReplicaState::Leader);
        assert_eq!(b0.replicas[0].state, ReplicaState::Offline);
        assert!(!b0.replicas[0].in_isr);
        assert!(b0.under_replicated() && !b0.under_min_isr() && b0.at_min_isr());
        assert!(!b0.unavailable());
        assert!(a1.under_replicated() && a1.at_min_isr() && !a1.under_min_isr());
        let a0 = &o.partitions[0];
        assert!(!a0.under_replicated(), "a-0 has no replica on broker 4");

        // Both of b-0's brokers gone: no leader once both are fenced.
        let sim = cluster(
            r#"[{"at":1000,"action":"kill","broker":4},{"at":1000,"action":"kill","broker":1}]"#,
            20_000,
        );
        let b0 = &sim.overview().partitions[2];
        assert_eq!(b0.leader, None);
        assert!(b0.unavailable() && b0.under_min_isr());
        assert!(b0.replicas.iter().all(|c| c.state == ReplicaState::Offline));
    }

    #[test]
    fn a_frozen_broker_is_live_until_fenced_and_its_replicas_fall_out_of_sync() {
        // Frozen at 1 s: its heartbeats stop, so the controller fences it after the session
        // timeout; before that its followers fall out of the ISRs after
        // replica.lag.time.max.ms (30 s) only, so at 5 s it is still in sync.
        let sim = cluster(r#"[{"at":1000,"action":"freeze","broker":3}]"#, 5_000);
        let a0 = &sim.overview().partitions[0];
        assert_eq!(a0.replicas[2].state, ReplicaState::InSync);
        let sim = cluster(r#"[{"at":1000,"action":"freeze","broker":3}]"#, 15_000);
        let o = sim.overview();
        assert_eq!(
            o.brokers[2],
            (3, BrokerState::Frozen),
            "its lane says frozen"
        );
        let a1 = &o.partitions[1];
        assert_eq!(a1.replicas[1].state, ReplicaState::Offline);
        assert!(a1.under_replicated());
    }
}
