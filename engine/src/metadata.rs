//! The metadata the KRaft controller writes and brokers read: the registration of each
//! broker and of the partition, as the records of the metadata log leave them, and the
//! image of them that a broker applies. Plain data: the controller (`controller.rs`) keeps
//! and changes it, a `Metadata` message (`network.rs`) carries the image, and the brokers
//! (`sim.rs`, `partition.rs`) act on it.
//!
//! The types mirror Kafka's `org.apache.kafka.metadata.BrokerRegistration`,
//! `org.apache.kafka.metadata.PartitionRegistration` and
//! `org.apache.kafka.metadata.LeaderRecoveryState`, and `MetadataImage` the part of
//! `org.apache.kafka.image.MetadataImage` that the brokers' partitions need. [`Topics`] is
//! the cluster's topics table: names, topic ids and partition counts, which do not change
//! while a scenario runs.

use crate::types::{BrokerId, TopicPartition, Tp};
use crate::vec_map::VecMap;

/// One topic as TopicRecord creates it: its name, its topic id, and the names of its
/// partitions (kept ready, since every event that names a partition clones one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    pub name: String,
    /// The topic id as `Uuid.toString` prints it (22 characters of URL-safe base64).
    pub id: String,
    pub partitions: Vec<TopicPartition>,
}

/// The cluster's topics, in creation order: a [`Tp`]'s `topic` indexes this table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topics {
    pub topics: Vec<TopicInfo>,
    /// Each broker's `broker.rack`, as its RegisterBrokerRecord carries it (version 2's
    /// `racks`). Static for a run, as the topics are, so the handlers read it here
    /// (`ctx.topics.racks`) rather than from each registration in the image.
    pub racks: VecMap<BrokerId, String>,
    /// Each topic's `flush.messages` and `flush.ms` when its configs set them (static for a
    /// run: topic configs are given at creation), by topic index.
    pub flush: Vec<(Option<u64>, Option<u64>)>,
}

/// The stream of the topic-id generator, apart from the simulation's own generator (so that
/// adding topic ids changed no draw of a run that existed before them).
const TOPIC_ID_STREAM: u64 = 0x746f_7069_6349_6421;

impl Topics {
    /// The log's `flushInterval`: the topic's `flush.messages`, or the broker's
    /// `log.flush.interval.messages` (LogConfig's topic override of the broker default).
    pub fn flush_messages(&self, tp: Tp, broker_default: u64) -> u64 {
        self.flush
            .get(usize::from(tp.topic))
            .and_then(|f| f.0)
            .unwrap_or(broker_default)
    }

    /// The log's `flushMs`: the topic's `flush.ms`, or the broker's derived one
    /// (`log.flush.interval.ms`, else `log.flush.scheduler.interval.ms`).
    pub fn flush_ms(&self, tp: Tp, broker_default: u64) -> u64 {
        self.flush
            .get(usize::from(tp.topic))
            .and_then(|f| f.1)
            .unwrap_or(broker_default)
    }

    /// Whether some topic sets `flush.ms`.
    pub fn any_flush_ms(&self) -> bool {
        self.flush.iter().any(|f| f.1.is_some())
    }

    /// Topics named `names`, with `partitions[i]` partitions each, and topic ids drawn
    /// deterministically from `seed`. The controller draws a topic id with
    /// `Uuid.randomUuid()` (ReplicationControlManager.createTopic), which skips the reserved
    /// ids and any whose string starts with '-' (`Uuid.randomUuid`, "unsafe" ids).
    pub fn new(seed: u64, topics: &[(String, u32)]) -> Topics {
        let mut rng = crate::rng::Rng::new(seed ^ TOPIC_ID_STREAM);
        let mut out = Vec::with_capacity(topics.len());
        for (name, count) in topics {
            let id = loop {
                let mut bytes = [0u8; 16];
                bytes[..8].copy_from_slice(&rng.next_u64().to_be_bytes());
                bytes[8..].copy_from_slice(&rng.next_u64().to_be_bytes());
                // Uuid.ZERO_UUID and Uuid.METADATA_TOPIC_ID (0...01) are reserved.
                if u128::from_be_bytes(bytes) <= 1 {
                    continue;
                }
                let id = crate::share::base64url_encode(&bytes);
                if !id.starts_with('-') {
                    break id;
                }
            };
            let partitions = (0..*count)
                .map(|partition| TopicPartition {
                    topic: name.clone(),
                    partition,
                })
                .collect();
            out.push(TopicInfo {
                name: name.clone(),
                id,
                partitions,
            });
        }
        Topics {
            topics: out,
            racks: VecMap::new(),
            flush: Vec::new(),
        }
    }

    /// The name of partition `tp`.
    pub fn name(&self, tp: Tp) -> &TopicPartition {
        &self.topics[usize::from(tp.topic)].partitions[usize::from(tp.partition)]
    }

    /// The name of partition `tp` for a line that would otherwise not name it (a produce
    /// result, the consumer's lines, a fetch that timed out, a loss): `None` when the cluster
    /// has one partition, so a version-1 scenario's lines stay as they always were, since
    /// there is then no other partition they could mean (docs/engine.md, "Lines that name
    /// their partition").
    pub fn label(&self, tp: Tp) -> Option<TopicPartition> {
        self.has_many_partitions().then(|| self.name(tp).clone())
    }

    /// Whether the cluster has more than one partition (lines then name theirs).
    pub fn has_many_partitions(&self) -> bool {
        self.topics.len() > 1 || self.topics.first().is_some_and(|t| t.partitions.len() > 1)
    }

    /// The partition named `topic`-`partition`, if the cluster has it.
    pub fn find(&self, topic: &str, partition: u32) -> Option<Tp> {
        let t = self.topics.iter().position(|i| i.name == topic)?;
        let count = self.topics[t].partitions.len();
        ((partition as usize) < count).then_some(Tp {
            topic: t as u16,
            partition: partition as u16,
        })
    }

    /// Every partition, topic by topic, in index order.
    pub fn partitions(&self) -> impl Iterator<Item = Tp> + '_ {
        self.topics.iter().enumerate().flat_map(|(t, info)| {
            (0..info.partitions.len()).map(move |p| Tp {
                topic: t as u16,
                partition: p as u16,
            })
        })
    }
}

/// BrokerRegistration as the controller keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRegistration {
    /// The broker epoch: the offset of its RegisterBrokerRecord.
    pub epoch: i64,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    /// The incarnation of the process that registered (a retried registration from the same
    /// process is not a restart).
    pub incarnation: u32,
    /// The metadata offset of this broker's controlled-shutdown records, while in it.
    pub controlled_shutdown_offset: Option<u64>,
}

/// LeaderRecoveryState: RECOVERING after an unclean election until the leader has recovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderRecoveryState {
    Recovered,
    Recovering,
}

/// PartitionRegistration: the controller's record of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRegistration {
    /// The replicas; during a reassignment the target replicas followed by those being
    /// removed (PartitionReassignmentReplicas: target ∪ current).
    pub replicas: Vec<BrokerId>,
    /// A reassignment in progress: the replicas it adds and those it removes, each in
    /// ascending order (`addingReplicas`, `removingReplicas`); both empty otherwise.
    pub adding_replicas: Vec<BrokerId>,
    pub removing_replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub elr: Vec<BrokerId>,
    pub last_known_elr: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub leader_recovery_state: LeaderRecoveryState,
}

impl PartitionRegistration {
    /// PartitionReassignmentReplicas.isReassignmentInProgress.
    /// TopicCommand.getReplicationFactor and Partition's OngoingReassignmentState
    /// .replicationFactor: during a reassignment the replicas less the adding ones (the
    /// target's size when only replacing), else the replicas.
    pub fn replication_factor(&self) -> usize {
        self.replicas.len() - self.adding_replicas.len()
    }

    pub fn is_reassigning(&self) -> bool {
        !self.adding_replicas.is_empty() || !self.removing_replicas.is_empty()
    }

    pub fn new(replicas: Vec<BrokerId>, leader: Option<BrokerId>) -> Self {
        PartitionRegistration {
            isr: replicas.clone(),
            replicas,
            adding_replicas: vec![],
            removing_replicas: vec![],
            elr: vec![],
            last_known_elr: vec![],
            leader,
            leader_epoch: 0,
            partition_epoch: 0,
            leader_recovery_state: LeaderRecoveryState::Recovered,
        }
    }
}

/// The metadata a broker learns from the controller's metadata log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataImage {
    /// Offset of the last metadata record included.
    pub offset: u64,
    /// Every partition's registration (TopicsImage).
    pub partitions: VecMap<Tp, PartitionRegistration>,
    pub brokers: VecMap<BrokerId, BrokerRegistration>,
    /// Each topic's `min.insync.replicas` (its ConfigRecord, or the broker default), by
    /// topic index.
    pub min_insync_replicas: Vec<u32>,
    /// The replication throttles (ConfigRecords; `Controller::throttle_rates` and
    /// `throttled_replicas`): each broker's leader and follower
    /// `*.replication.throttled.rate`, each topic's leader and follower
    /// `*.replication.throttled.replicas`. A broker's quota managers read them (`quota.rs`).
    pub throttle_rates: VecMap<BrokerId, (u64, u64)>,
    pub throttled_replicas: VecMap<u16, (String, String)>,
}

impl MetadataImage {
    /// The registration of `tp`, if the image has it.
    pub fn partition(&self, tp: Tp) -> Option<&PartitionRegistration> {
        self.partitions.get(&tp)
    }

    /// `min.insync.replicas` of `tp`'s topic as this image says.
    pub fn min_insync_replicas(&self, tp: Tp) -> Option<u32> {
        self.min_insync_replicas.get(usize::from(tp.topic)).copied()
    }
}
