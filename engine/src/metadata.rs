//! The metadata the KRaft controller writes and brokers read: the registration of each
//! broker and of the partition, as the records of the metadata log leave them, and the
//! image of them that a broker applies. Plain data: the controller (`controller.rs`) keeps
//! and changes it, a `Metadata` message (`network.rs`) carries the image, and the brokers
//! (`sim.rs`, `partition.rs`) act on it.
//!
//! The types mirror Kafka's `org.apache.kafka.metadata.BrokerRegistration`,
//! `org.apache.kafka.metadata.PartitionRegistration` and
//! `org.apache.kafka.metadata.LeaderRecoveryState`, and `MetadataImage` the part of
//! `org.apache.kafka.image.MetadataImage` that one partition needs.

use crate::types::BrokerId;
use crate::vec_map::VecMap;

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
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub elr: Vec<BrokerId>,
    pub last_known_elr: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub leader_recovery_state: LeaderRecoveryState,
}

impl PartitionRegistration {
    pub fn new(replicas: Vec<BrokerId>, leader: Option<BrokerId>) -> Self {
        PartitionRegistration {
            isr: replicas.clone(),
            replicas,
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
    pub partition: PartitionRegistration,
    pub brokers: VecMap<BrokerId, BrokerRegistration>,
    /// The topic config `min.insync.replicas` (a ConfigRecord in the metadata log).
    pub min_insync_replicas: u32,
}
