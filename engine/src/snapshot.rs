//! The view model: everything the playground draws of the cluster at one moment, as plain
//! data with enums, and nothing else. No node's internal state appears here: a field is
//! added when a view draws it (built by `snapshot_build.rs`, the one reader of the nodes).

use serde::{Deserialize, Serialize};

use crate::record::Record;
use crate::types::{
    Acks, BrokerId, ErrorCode, MessageKind, Node, ProcessState, TimeMs, TopicPartition,
};

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
    /// `kafka-topics.sh --describe`'s partition line.
    pub describe: String,
    /// `kafka-get-offsets.sh`'s line.
    pub offsets: String,
    pub losses: Vec<Loss>,
    pub violations: Vec<String>,
    pub truncations: Vec<TruncationRecord>,
    pub consumer_position: Option<u64>,
    /// Cut links, each with its endpoints in order.
    pub cut_links: Vec<(Node, Node)>,
    /// The messages that left the wire in the last `sim::ARRIVALS_KEPT_MS`, oldest
    /// first, with what became of each, when the simulation keeps them
    /// (`Sim::record_arrivals`; not serialized, as `committed`).
    #[serde(skip)]
    pub arrivals: Vec<Arrival>,
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

impl Snapshot {
    /// Broker `id`'s lane.
    pub fn broker(&self, id: BrokerId) -> Option<&BrokerSnapshot> {
        self.brokers.iter().find(|b| b.id == id)
    }

    /// Whether the link between `a` and `b` (either way) is cut.
    pub fn is_cut(&self, a: Node, b: Node) -> bool {
        self.cut_links.contains(&crate::types::link(a, b))
    }
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
    pub hosts_replica: bool,
    pub role: ReplicaRole,
    pub in_isr: bool,
    pub in_elr: bool,
    pub log_end_offset: u64,
    pub high_watermark: u64,
    pub records: Vec<Record>,
    /// Its `leader-epoch-checkpoint` entries, as one line.
    pub leader_epoch_checkpoint: String,
    /// For a leader: the ISR change it proposed that the controller has not answered.
    pub isr_change: Option<IsrChange>,
    /// ms since this broker last caught up, as its leader sees it (for the lag bar).
    pub since_caught_up_ms: Option<u64>,
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

/// An ISR change a leader sent to the controller (AlterPartition) and has no answer to
/// yet: Partition's PendingShrinkIsr / PendingExpandIsr.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum IsrChange {
    /// prepareIsrShrink: the HW still counts the departing replicas.
    Shrink {
        isr: Vec<BrokerId>,
        out_of_sync: Vec<BrokerId>,
    },
    /// prepareIsrExpand: the HW already counts the new one.
    Expand {
        isr: Vec<BrokerId>,
        new_in_sync: BrokerId,
    },
}

impl IsrChange {
    /// The committed ISR the change starts from.
    pub fn isr(&self) -> &[BrokerId] {
        match self {
            IsrChange::Shrink { isr, .. } | IsrChange::Expand { isr, .. } => isr,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControllerSnapshot {
    pub leader: Option<BrokerId>,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub elr: Vec<BrokerId>,
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
    /// Kafka's own metrics, per broker and cluster-wide (`metrics.rs`). Not serialized: the
    /// golden transcripts hash the serialized snapshot (the `metrics` action prints them).
    #[serde(skip)]
    pub kafka: KafkaMetrics,
}

/// Kafka's metrics as an operator graphs them: each broker's, as its JMX shows them, and the
/// cluster's (the brokers' gauges summed, the largest `MaxLag`, the controller's own).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KafkaMetrics {
    /// Every broker, by id; a broker whose process is not running answers no JMX query
    /// (`running` false, its values 0).
    pub brokers: Vec<BrokerMetrics>,
    /// Over the running brokers: each gauge and meter summed, `MaxLag` the largest.
    pub cluster: BrokerMetrics,
    /// `kafka.controller:type=KafkaController,name=OfflinePartitionsCount`.
    pub offline_partitions_count: u64,
    /// `kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec` (Count).
    pub unclean_leader_elections: u64,
    /// `kafka.controller:type=ControllerStats,name=LeaderElectionRateAndTimeMs` (Count).
    pub leader_elections: u64,
    /// The producer's `record-error-total` and `record-retry-total`
    /// (`kafka.producer:type=producer-metrics,client-id=producer-1`): over the run, every
    /// producer's.
    pub record_error_total: u64,
    pub record_retry_total: u64,
}

/// One broker's metrics: gauges as their `Value`, meters as their `Count` (events since
/// the process started; a restarted broker counts from 0, as a new JVM does), the
/// replication quotas' rates as their `byte-rate` in whole bytes per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerMetrics {
    /// 0 for the cluster-wide sums.
    pub broker: BrokerId,
    pub running: bool,
    pub under_replicated_partitions: u64,
    pub under_min_isr_partition_count: u64,
    pub at_min_isr_partition_count: u64,
    pub partition_count: u64,
    pub leader_count: u64,
    pub isr_shrinks: u64,
    pub isr_expands: u64,
    pub failed_produce_requests: u64,
    pub replica_fetcher_max_lag: u64,
    pub produce_purgatory_size: u64,
    pub fetch_purgatory_size: u64,
    /// `kafka.server:type=LeaderReplication` `byte-rate`: the leader side's
    /// ReplicationQuotaManager sensor (`quota.rs`), bytes/s rounded down.
    pub leader_replication_byte_rate: u64,
    /// `kafka.server:type=FollowerReplication` `byte-rate`: the follower side's.
    pub follower_replication_byte_rate: u64,
}

/// Whether a metric is a gauge (JMX attribute `Value`), a meter or timer (`Count`), a
/// client's cumulative metric (the attribute is its name: `record-error-total`), or a
/// replication quota's rate (a Kafka metric, not a Yammer one: JmxReporter names the MBean
/// by its group, `kafka.server:type=LeaderReplication`, and the attribute by its name,
/// `byte-rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    Gauge,
    Meter,
    Total,
    ByteRate,
}

/// Each metric's short name and MBean, in [`BrokerMetrics::values`] order, then the
/// controller's three and the producer's two ([`KafkaMetrics::controller_values`] order).
pub const KAFKA_METRICS: &[(&str, &str, MetricKind)] = &[
    (
        "UnderReplicatedPartitions",
        "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",
        MetricKind::Gauge,
    ),
    (
        "UnderMinIsrPartitionCount",
        "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount",
        MetricKind::Gauge,
    ),
    (
        "AtMinIsrPartitionCount",
        "kafka.server:type=ReplicaManager,name=AtMinIsrPartitionCount",
        MetricKind::Gauge,
    ),
    (
        "PartitionCount",
        "kafka.server:type=ReplicaManager,name=PartitionCount",
        MetricKind::Gauge,
    ),
    (
        "LeaderCount",
        "kafka.server:type=ReplicaManager,name=LeaderCount",
        MetricKind::Gauge,
    ),
    (
        "IsrShrinksPerSec",
        "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec",
        MetricKind::Meter,
    ),
    (
        "IsrExpandsPerSec",
        "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec",
        MetricKind::Meter,
    ),
    (
        "FailedProduceRequestsPerSec",
        "kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec",
        MetricKind::Meter,
    ),
    (
        "MaxLag",
        "kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica",
        MetricKind::Gauge,
    ),
    (
        "PurgatorySize.Produce",
        "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Produce",
        MetricKind::Gauge,
    ),
    (
        "PurgatorySize.Fetch",
        "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Fetch",
        MetricKind::Gauge,
    ),
    // ReplicationQuotaManager: `metrics.metricName("byte-rate", replicationType.toString, …)`
    // with QuotaType LEADER_REPLICATION ("LeaderReplication") and FOLLOWER_REPLICATION.
    (
        "LeaderReplication.byte-rate",
        "kafka.server:type=LeaderReplication",
        MetricKind::ByteRate,
    ),
    (
        "FollowerReplication.byte-rate",
        "kafka.server:type=FollowerReplication",
        MetricKind::ByteRate,
    ),
    (
        "OfflinePartitionsCount",
        "kafka.controller:type=KafkaController,name=OfflinePartitionsCount",
        MetricKind::Gauge,
    ),
    (
        "UncleanLeaderElectionsPerSec",
        "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec",
        MetricKind::Meter,
    ),
    (
        "LeaderElectionRateAndTimeMs",
        "kafka.controller:type=ControllerStats,name=LeaderElectionRateAndTimeMs",
        MetricKind::Meter,
    ),
    (
        "record-error-total",
        "kafka.producer:type=producer-metrics,client-id=producer-1",
        MetricKind::Total,
    ),
    (
        "record-retry-total",
        "kafka.producer:type=producer-metrics,client-id=producer-1",
        MetricKind::Total,
    ),
];

/// How many of [`KAFKA_METRICS`] are a broker's.
pub const BROKER_METRICS: usize = 13;

impl BrokerMetrics {
    /// The values in [`KAFKA_METRICS`] order.
    pub fn values(&self) -> [u64; BROKER_METRICS] {
        [
            self.under_replicated_partitions,
            self.under_min_isr_partition_count,
            self.at_min_isr_partition_count,
            self.partition_count,
            self.leader_count,
            self.isr_shrinks,
            self.isr_expands,
            self.failed_produce_requests,
            self.replica_fetcher_max_lag,
            self.produce_purgatory_size,
            self.fetch_purgatory_size,
            self.leader_replication_byte_rate,
            self.follower_replication_byte_rate,
        ]
    }
}

impl KafkaMetrics {
    /// The controller's and the producer's values, in [`KAFKA_METRICS`] order after the
    /// brokers'.
    pub fn controller_values(&self) -> [u64; 5] {
        [
            self.offline_partitions_count,
            self.unclean_leader_elections,
            self.leader_elections,
            self.record_error_total,
            self.record_retry_total,
        ]
    }

    /// The read-out of the `metrics` action: a line per metric and broker (and one per
    /// controller metric), `MBEAN broker=ID Value=N` for a gauge, `... Count=N` for a meter,
    /// `... byte-rate=N` for a replication quota's rate;
    /// a producer metric `MBEAN record-error-total=N`; `name` (a short name of
    /// [`KAFKA_METRICS`]) keeps that metric's lines only. A broker
    /// that is not running answers nothing (`broker=3 (not running)`); the cluster-wide
    /// line (`cluster`) sums the running brokers' (`MaxLag`: the largest).
    pub fn lines(&self, name: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        for (i, &(short, mbean, kind)) in KAFKA_METRICS.iter().enumerate() {
            if name.is_some_and(|n| n != short) {
                continue;
            }
            let attribute = match kind {
                MetricKind::Gauge => "Value",
                MetricKind::Meter => "Count",
                MetricKind::ByteRate => "byte-rate",
                MetricKind::Total => {
                    let v = self.controller_values()[i - BROKER_METRICS];
                    out.push(format!("{mbean} {short}={v}"));
                    continue;
                }
            };
            if i >= BROKER_METRICS {
                let v = self.controller_values()[i - BROKER_METRICS];
                out.push(format!("{mbean} controller {attribute}={v}"));
                continue;
            }
            for b in &self.brokers {
                out.push(if b.running {
                    format!("{mbean} broker={} {attribute}={}", b.broker, b.values()[i])
                } else {
                    format!("{mbean} broker={} (not running)", b.broker)
                });
            }
            out.push(format!(
                "{mbean} cluster {attribute}={}",
                self.cluster.values()[i]
            ));
        }
        out
    }
}

/// Counters for the metrics panel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    pub isr_shrinks: u64,
    pub isr_expands: u64,
    pub elections: u64,
    pub truncations: u64,
    /// acks=all latencies of successful requests (most recent, bounded).
    pub acks_all_latencies_ms: Vec<u64>,
    pub produce_ok: u64,
    pub produce_errors: u64,
    /// The producer's `record-retry-total` and `record-error-total`: records retried (once
    /// per retry) and records whose send failed. Not serialized (the golden transcripts
    /// hash the serialized snapshot).
    #[serde(skip)]
    pub record_retries: u64,
    #[serde(skip)]
    pub record_errors: u64,
    /// The controller's UncleanLeaderElectionsPerSec and LeaderElectionRateAndTimeMs counts
    /// (`metrics.rs`); not serialized either.
    #[serde(skip)]
    pub unclean_leader_elections: u64,
    #[serde(skip)]
    pub leader_elections: u64,
}

/// A loss of committed records, reported plainly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loss {
    pub time_ms: TimeMs,
    /// Offsets of the committed records that are gone (first..=last).
    pub first_offset: u64,
    pub last_offset: u64,
    pub values: Vec<String>,
    /// The leader epoch of each lost record (with `values`, what identifies it in a log).
    /// Not serialized: the golden transcripts hash the serialized snapshot, losses included.
    #[serde(skip)]
    pub epochs: Vec<i32>,
    pub cause: String,
    /// The partition, where the cluster has more than one (`Topics::label`; left out of the
    /// JSON when none, so a one-partition run's snapshot is as it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp: Option<TopicPartition>,
}

/// A message that left the wire at `at`: taken in by its destination, or dropped there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    pub message: MessageSnapshot,
    pub at: TimeMs,
    pub outcome: ArrivalOutcome,
}

/// What became of a message when it reached the end of its link (`Sim::deliver`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalOutcome {
    /// The destination's process read it.
    Received,
    /// The link was cut: it never got there.
    LinkCut,
    /// The process it was sent to had ended (killed, stopped, or restarted since): a TCP
    /// connection dies with its process, so nobody reads it.
    ProcessGone,
}

/// A truncation, kept for the UI to show the records falling away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncationRecord {
    pub time_ms: TimeMs,
    pub broker: BrokerId,
    pub to_offset: u64,
    pub removed: Vec<Record>,
    /// The HW before, when the truncation went below it.
    pub below_high_watermark: Option<u64>,
}
