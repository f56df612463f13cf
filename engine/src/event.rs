//! What happened, as typed events. Each [`Event`] has the fields a reader needs (the UI
//! matches on them, never on text), a [`TraceKind`] and a [`Level`], and renders as the line
//! Kafka would write for it ([`std::fmt::Display`]): the transcript, the command-line runner
//! and the golden files print that rendering, byte for byte what the engine always wrote.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::record::{Record, Values};
use crate::types::{
    Acks, BrokerId, ElectionKind, ErrorCode, Ids, Node, OrNone, TimeMs, TopicPartition,
};

/// What kind of event a trace line records (the UI filters on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// An input: a fault, a config change, an election request.
    Action,
    /// A read-out: describe, offsets, epochs, checkpoints, log dumps.
    Readout,
    Produce,
    Consume,
    /// ISR shrink/expand and AlterPartition results.
    Isr,
    Election,
    Truncation,
    /// Registration, fencing, controlled shutdown.
    Controller,
    /// Broker lifecycle and replica state changes (becoming leader or follower).
    Broker,
    /// Committed records lost (after an unclean election or a lost disk).
    Loss,
    /// An invariant was broken: an engine bug.
    Violation,
    /// A free-text note from the scenario.
    Note,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// What happened. Rendered (`to_string()`) it is the transcript's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    // ---- the leader (partition.rs) ---------------------------------------------------
    /// Partition.makeLeader's "Leader ... starts at leader epoch" line.
    BecameLeader {
        broker: BrokerId,
        tp: TopicPartition,
        leader_epoch: i32,
        /// The leader epoch's start offset: the log end offset when the broker became leader.
        start_offset: u64,
        partition_epoch: i32,
        high_watermark: u64,
        isr: Vec<BrokerId>,
        /// Partition.isUnderMinIsr with the new ISR (the line says "(under-min-isr)").
        under_min_isr: bool,
        previous_leader: Option<BrokerId>,
        previous_leader_epoch: i32,
    },
    /// Partition.makeFollower's "Follower ... starts at leader epoch" line.
    BecameFollower {
        broker: BrokerId,
        tp: TopicPartition,
        leader_epoch: i32,
        /// The follower's log end offset, where it starts fetching.
        start_offset: u64,
        partition_epoch: i32,
        high_watermark: u64,
        leader: BrokerId,
        /// The broker led the partition before (the line says "(was leader)").
        was_leader: bool,
    },
    /// Partition.makeFollower with no leader in the metadata: the fetcher is not started.
    FollowerWithoutLeader {
        broker: BrokerId,
        tp: TopicPartition,
        leader_epoch: i32,
    },
    /// Partition.maybeExpandIsr's "Expanding ISR from ... to ..." line.
    IsrExpanding {
        broker: BrokerId,
        tp: TopicPartition,
        isr: Vec<BrokerId>,
        new_isr: Vec<BrokerId>,
    },
    /// Partition.maybeShrinkIsr's "Shrinking ISR from ... to ..." line, with the leader's HW
    /// and LEO and each out-of-sync replica.
    IsrShrinking {
        broker: BrokerId,
        tp: TopicPartition,
        isr: Vec<BrokerId>,
        new_isr: Vec<BrokerId>,
        high_watermark: u64,
        log_end_offset: u64,
        out_of_sync: Vec<OutOfSyncReplica>,
    },
    /// NodeToControllerRequestThread: the AlterPartition request got no answer within
    /// `controller.socket.timeout.ms` and is sent again.
    AlterPartitionTimedOut {
        broker: BrokerId,
        controller_socket_timeout_ms: u64,
    },
    /// DefaultAlterPartitionManager's response handler: "Broker had a stale broker epoch".
    AlterPartitionStaleBrokerEpoch { broker: BrokerId, broker_epoch: i64 },
    /// Partition.handleAlterPartitionUpdate's "ISR updated to ... and version updated to" line.
    IsrUpdated {
        broker: BrokerId,
        tp: TopicPartition,
        isr: Vec<BrokerId>,
        /// Partition.isUnderMinIsr with the new ISR (the line says "(under-min-isr)").
        under_min_isr: bool,
        partition_epoch: i32,
    },
    /// Partition.handleAlterPartitionError's "Failed to alter partition since the controller
    /// rejected the request" line (OPERATION_NOT_ATTEMPTED, INELIGIBLE_REPLICA).
    AlterPartitionRejected {
        broker: BrokerId,
        tp: TopicPartition,
        error: ErrorCode,
        /// The latest committed ISR the state was reset to.
        committed_isr: Vec<BrokerId>,
    },
    /// Partition.handleAlterPartitionError's "Failed to alter partition: ... Partition state may
    /// be out of sync" line.
    AlterPartitionFailed {
        broker: BrokerId,
        tp: TopicPartition,
        error: ErrorCode,
    },
    /// Partition.handleAlterPartitionError's "Failed to update ISR ... due to unexpected ...
    /// Retrying." line.
    IsrUpdateFailed {
        broker: BrokerId,
        tp: TopicPartition,
        error: ErrorCode,
    },
    // (end of the leader's events)

    // ---- the follower (fetcher.rs) --------------------------------------------------
    /// ReplicaFetcherThread's "Error sending fetch request" line: no response within
    /// `replica.socket.timeout.ms`.
    FetchTimedOut {
        broker: BrokerId,
        leader: Option<BrokerId>,
        /// The thread's fetcher id (AbstractFetcherManager.getFetcherId), as its logger
        /// prefix prints it.
        fetcher_id: u32,
        /// The request's partitions (its `fetchData`), where the cluster has more than one;
        /// empty in a one-partition cluster, whose line names none.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        partitions: Vec<TopicPartition>,
        replica_socket_timeout_ms: u64,
    },
    /// ReplicaFetcherManager.removeFetcherForPartitions's "Removed fetcher for partitions" line.
    FetcherRemoved {
        broker: BrokerId,
        tp: TopicPartition,
        reason: FetcherRemovedReason,
    },
    /// A replica this broker no longer hosts, its log gone: deleted when a metadata delta
    /// drops the broker from the replicas (ReplicaManager.applyDelta → stopPartitions with
    /// deleteLocalLog, a reassignment's end or cancel), or, found at a start, a stray log
    /// (LogManager.isStrayKraftReplica: the assignment no longer lists the broker), which
    /// Kafka renames `-stray` and never reads again.
    ReplicaDeleted {
        broker: BrokerId,
        tp: TopicPartition,
        replicas: Vec<BrokerId>,
        stray: bool,
    },
    /// AbstractFetcherThread.processFetchRequest's "Error in response for fetch request": the
    /// connection to the leader was closed.
    FetchDisconnected {
        broker: BrokerId,
        leader: BrokerId,
        /// The thread's fetcher id, as its logger prefix prints it (as `FetchTimedOut`).
        fetcher_id: u32,
    },
    /// AbstractFetcherThread.onPartitionFenced's "has an older epoch ... than the current
    /// leader" line.
    FencedLeaderEpoch {
        broker: BrokerId,
        leader: BrokerId,
        /// The fetcher id of the thread that follows the partition.
        fetcher_id: u32,
        tp: TopicPartition,
        leader_epoch: i32,
    },
    /// AbstractFetcherThread.maybeTruncateToEpochEndOffsets's "Truncating partition ... due to
    /// leader epoch and offset EpochEndOffset(...)" line.
    TruncatingToEpochEndOffset {
        broker: BrokerId,
        leader: BrokerId,
        /// The fetcher id of the thread that follows the partition.
        fetcher_id: u32,
        tp: TopicPartition,
        /// The offset truncated to.
        offset: u64,
        /// The diverging epoch and its end offset as the leader answered them.
        leader_epoch: i32,
        end_offset: i64,
    },
    /// AbstractFetcherThread.handleOutOfRangeError → fetchOffsetAndTruncate: why the follower
    /// truncates, before UnifiedLog's line.
    FetcherTruncating {
        broker: BrokerId,
        reason: TruncationReason,
    },
    /// UnifiedLog.truncateTo's "Truncating ... to offset" line, "below high watermark" when the
    /// truncation went below the HW (a WARN).
    LogTruncated {
        broker: BrokerId,
        tp: TopicPartition,
        to_offset: u64,
        /// The HW before, when the truncation went below it.
        below_high_watermark: Option<u64>,
    },
    /// The records a truncation removed (UnifiedLog.truncateTo drops the segments' tails): the
    /// simulator names them, at the truncation line's level.
    RecordsThrownAway {
        broker: BrokerId,
        first_offset: u64,
        last_offset: u64,
        records: Vec<Record>,
        below_high_watermark: bool,
    },
    // (end of the follower's events)

    // ---- the clients (client.rs) ----------------------------------------------------
    /// A produce result: the batch's final outcome as the application's callback sees it
    /// (Sender.completeBatch / failBatch; the expiry message of Sender.sendProducerData; the
    /// KafkaProducer constructor's ConfigException; RecordAccumulator.abortIncompleteBatches
    /// on a forced close).
    ProduceResult {
        acks: Acks,
        /// The batch's partition, where the cluster has more than one (`Topics::label`); none
        /// either when the producer threw before partitioning (ConfigException).
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        outcome: ProduceOutcome,
    },
    /// Sender.completeBatch's warning for a retriable error: the batch is sent again after
    /// retry.backoff.ms.
    ProduceRetry {
        acks: Acks,
        tp: TopicPartition,
        attempts_left: u32,
        error: ErrorCode,
    },
    /// ProducerBatch.done's warning: a batch that had expired (TimeoutException) got its
    /// successful response later, so its records are in the log after all.
    ProduceSucceededAfterExpiry {
        tp: TopicPartition,
        /// The response's base offset (-1 in the line when it had none).
        base_offset: Option<u64>,
    },
    /// TransactionManager.setProducerIdAndEpoch's line (after an epoch bump or a new id).
    ProducerIdSet { producer_id: i64, epoch: i16 },
    /// The consumer read records (KafkaConsumer.poll returned them).
    ConsumerRead {
        /// The partition, where the cluster has more than one (`Topics::label`): the line
        /// names it after its subject; a one-partition cluster's line does not.
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        first_offset: u64,
        last_offset: u64,
        values: Vec<String>,
        /// The position after the read (`last_offset + 1`).
        position: u64,
        /// The follower it read from, its preferred read replica (KIP-392); None: the leader.
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<BrokerId>,
        /// The broker that answered the fetch (`from`, or the leader it was sent to): for the
        /// expectations' `read_from`; neither printed nor written (the line names a follower
        /// only, as it always did).
        #[serde(skip)]
        broker: BrokerId,
    },
    /// The consumer's fetch returned nothing: the broker has no records for it below the
    /// high watermark.
    ConsumerNoRecords {
        /// The partition, where the cluster has more than one (`Topics::label`): the line
        /// names it after its subject; a one-partition cluster's line does not.
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        high_watermark: u64,
        position: u64,
        /// The follower it fetched from (its preferred read replica); None: the leader.
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<BrokerId>,
    },
    /// FetchCollector.updatePartitionState: the leader named a preferred read replica
    /// (KIP-392), which the consumer fetches from until `expires_ms`.
    ConsumerPreferredReadReplica {
        tp: TopicPartition,
        leader: BrokerId,
        replica: BrokerId,
        expires_ms: TimeMs,
    },
    /// The consumer stopped fetching from its preferred read replica: an error (Some), or
    /// the replica is offline in its metadata (None; AbstractFetch.selectReadReplica).
    ConsumerReadReplicaUnset {
        tp: TopicPartition,
        replica: BrokerId,
        error: Option<ErrorCode>,
        fetch_offset: u64,
    },
    /// The consumer's fetch failed with OFFSET_OUT_OF_RANGE (Fetcher's
    /// handleOffsetOutOfRange) and auto.offset.reset=latest moved it to the log end.
    ConsumerOffsetOutOfRange {
        /// The partition, where the cluster has more than one (`Topics::label`): the line
        /// names it after its subject; a one-partition cluster's line does not.
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        position: u64,
        log_end_offset: u64,
        /// The first and last offsets it had read that are past the log end now.
        gone: Option<(u64, u64)>,
    },
    /// The consumer's fetch failed with another error.
    ConsumerError {
        /// The partition, where the cluster has more than one (`Topics::label`): the line
        /// names it after its subject; a one-partition cluster's line does not.
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        error: ErrorCode,
    },
    /// The consumer has no leader to fetch from (the metadata's LEADER_NOT_AVAILABLE).
    ConsumerLeaderNotAvailable { tp: TopicPartition },
    /// NetworkClient: the consumer's connection to the broker it fetched from was reset.
    ConsumerConnectionReset {
        /// The partition, where the cluster has more than one (`Topics::label`): the line
        /// names it after its subject; a one-partition cluster's line does not.
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        target: BrokerId,
    },
    /// The engine's own check (no Kafka line): offsets the consumer read now hold other
    /// records on the leader, after an unclean election rewrote them.
    ConsumerReadRewritten {
        /// The partition, where the cluster has more than one (`Topics::label`): the line
        /// names it after its subject; a one-partition cluster's line does not.
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        first_offset: u64,
        last_offset: u64,
        /// The leader's records at those offsets now.
        now: Vec<String>,
        /// What the consumer read there.
        read: Vec<String>,
    },
    // (end of the clients' events)

    // ---- the controller (controller.rs) ---------------------------------------------
    /// ReplicationControlManager: the partition has no leader after a change
    /// (PartitionChangeBuilder found no eligible replica).
    PartitionHasNoLeader {
        tp: TopicPartition,
        isr: Vec<BrokerId>,
        elr: Vec<BrokerId>,
        leader_epoch: i32,
    },
    /// PartitionChangeBuilder's election: "Setting new leader for topic T, partition P to L
    /// using ..." (one line for every kind, which it names).
    NewLeader {
        tp: TopicPartition,
        leader: BrokerId,
        election: Option<ElectionKind>,
        leader_epoch: i32,
    },
    /// ClusterControlManager.registerBroker: a live broker holds the id
    /// (DuplicateBrokerRegistrationException).
    RegistrationRejected { broker: BrokerId },
    /// ClusterControlManager.registerBroker: registered, fenced until it catches up.
    BrokerRegistered { broker: BrokerId, broker_epoch: i64 },
    /// ClusterControlManager.registerBroker: the previous broker epoch does not match its
    /// clean shutdown (KIP-966); with ELR on, it leaves the ISR and ELR.
    RegisteredAfterUncleanShutdown {
        broker: BrokerId,
        removed_from_isr_and_elr: bool,
    },
    /// ReplicationControlManager.alterPartition: the new ISR names replicas that may not
    /// join it (ineligibleReplicasForIsr), so the request is rejected with
    /// INELIGIBLE_REPLICA.
    AlterPartitionIneligible {
        broker: BrokerId,
        tp: TopicPartition,
        ineligible: Vec<(BrokerId, Ineligible)>,
        isr: Vec<BrokerId>,
    },
    /// BrokerHeartbeatManager and ReplicationControlManager: fencing, unfencing and
    /// shutdown decisions for one broker.
    BrokerControl {
        broker: BrokerId,
        what: BrokerControl,
    },
    // (end of the controller's events)

    // ---- the scenario's actions, the broker processes, the checks -------------------
    /// A scenario action the engine refused (its validation error).
    ActionRejected { error: String },
    /// A signal sent to a broker's process, or its start, and what it did.
    Signal {
        signal: Signal,
        broker: BrokerId,
        outcome: SignalOutcome,
    },
    /// The broker's fetches take `ms` longer (0: no longer).
    Slowed { broker: BrokerId, ms: u64 },
    /// A network link cut or healed.
    Link { a: Node, b: Node, cut: bool },
    /// A zone action: every broker whose `broker.rack` is `zone` (`brokers`) at once; the
    /// kills, starts or link cuts it makes follow as their own lines.
    Zone {
        zone: String,
        action: ZoneAction,
        brokers: Vec<BrokerId>,
    },
    /// The broker's log and checkpoint files are gone.
    DiskLost { broker: BrokerId },
    /// The broker's machine lost power (`power_loss`): the process is down, and what the
    /// OS had not written back is gone (each partition's loss follows as its own line).
    PowerLost {
        broker: BrokerId,
        writeback_delay_ms: u64,
    },
    /// A power loss took offsets `first_offset..=last_offset` of `tp` on `broker`: appended
    /// less than `sim.writeback.delay.ms` before, they were only in the page cache.
    UnwrittenRecordsLost {
        broker: BrokerId,
        tp: TopicPartition,
        first_offset: u64,
        last_offset: u64,
    },
    /// `kafka-configs.sh --alter --add-config name=value`.
    ConfigSet { name: String, value: String },
    /// `kafka-leader-election.sh` and its answer.
    LeaderElectionTool {
        election: ElectionType,
        tp: TopicPartition,
        error: ErrorCode,
    },
    /// One line of a read-out tool's output, as the tool prints it.
    ToolOutput {
        tool: Tool,
        broker: Option<BrokerId>,
        line: String,
    },
    /// KafkaServer: the broker finished its controlled shutdown.
    BrokerShutDown { broker: BrokerId },
    /// KafkaServer: the broker started and loaded its log (the HW from
    /// replication-offset-checkpoint).
    BrokerStarted {
        broker: BrokerId,
        tp: TopicPartition,
        log_end_offset: u64,
        high_watermark: u64,
    },
    /// Committed records the new leader does not have: gone, and why.
    CommittedRecordsLost {
        broker: BrokerId,
        /// The partition, where the cluster has more than one (`Topics::label`): the line
        /// names it after its subject; a one-partition cluster's line does not.
        #[serde(skip_serializing_if = "Option::is_none")]
        tp: Option<TopicPartition>,
        records: Vec<Record>,
        cause: LossCause,
    },
    /// An invariant does not hold: an engine bug, with the seed and time that reproduce it.
    InvariantBroken {
        what: String,
        seed: u64,
        at_ms: TimeMs,
    },

    // ---- the scenario --------------------------------------------------------------
    /// The scenario's caption (`note` action): the walkthrough shows it.
    Caption { text: String },
    /// The cluster the scenario starts with.
    TopicCreated {
        topic: String,
        /// Partition 0's replicas (the one partition of a version-1 scenario).
        replicas: Vec<BrokerId>,
        brokers: u32,
        min_insync_replicas: u32,
        /// The topic's partition count (left out of the JSON when 1).
        #[serde(skip_serializing_if = "is_one")]
        partitions: u32,
    },
    /// The run follows an older Kafka's replication rules (the scenario's `protocol`, when
    /// not `kafka-4`): said once, at the start.
    ProtocolMode { protocol: crate::protocol::Protocol },
}

impl Event {
    /// What kind of line it is (the UI filters on it).
    pub fn kind(&self) -> TraceKind {
        match self {
            // the leader (partition.rs)
            Event::BecameLeader { .. }
            | Event::BecameFollower { .. }
            | Event::FollowerWithoutLeader { .. } => TraceKind::Broker,
            Event::IsrExpanding { .. }
            | Event::IsrShrinking { .. }
            | Event::AlterPartitionTimedOut { .. }
            | Event::AlterPartitionStaleBrokerEpoch { .. }
            | Event::IsrUpdated { .. }
            | Event::AlterPartitionRejected { .. }
            | Event::AlterPartitionFailed { .. }
            | Event::IsrUpdateFailed { .. } => TraceKind::Isr,
            // (end of the leader's)
            // the follower (fetcher.rs)
            Event::FetchTimedOut { .. }
            | Event::FetcherRemoved { .. }
            | Event::ReplicaDeleted { .. }
            | Event::FetchDisconnected { .. }
            | Event::FencedLeaderEpoch { .. } => TraceKind::Broker,
            Event::TruncatingToEpochEndOffset { .. }
            | Event::FetcherTruncating { .. }
            | Event::LogTruncated { .. }
            | Event::RecordsThrownAway { .. }
            | Event::UnwrittenRecordsLost { .. } => TraceKind::Truncation,
            // (end of the follower's)
            // the clients (client.rs)
            Event::ProduceResult { .. }
            | Event::ProduceRetry { .. }
            | Event::ProduceSucceededAfterExpiry { .. }
            | Event::ProducerIdSet { .. } => TraceKind::Produce,
            Event::ConsumerRead { .. }
            | Event::ConsumerNoRecords { .. }
            | Event::ConsumerOffsetOutOfRange { .. }
            | Event::ConsumerError { .. }
            | Event::ConsumerLeaderNotAvailable { .. }
            | Event::ConsumerConnectionReset { .. }
            | Event::ConsumerPreferredReadReplica { .. }
            | Event::ConsumerReadReplicaUnset { .. } => TraceKind::Consume,
            Event::ConsumerReadRewritten { .. } => TraceKind::Loss,
            // (end of the clients')
            // the controller (controller.rs)
            Event::PartitionHasNoLeader { .. } | Event::NewLeader { .. } => TraceKind::Election,
            Event::RegistrationRejected { .. }
            | Event::BrokerRegistered { .. }
            | Event::RegisteredAfterUncleanShutdown { .. }
            | Event::AlterPartitionIneligible { .. }
            | Event::BrokerControl { .. } => TraceKind::Controller,
            // (end of the controller's)
            Event::ActionRejected { .. }
            | Event::Signal { .. }
            | Event::Slowed { .. }
            | Event::Link { .. }
            | Event::Zone { .. }
            | Event::DiskLost { .. }
            | Event::PowerLost { .. }
            | Event::ConfigSet { .. }
            | Event::LeaderElectionTool { .. } => TraceKind::Action,
            Event::ToolOutput { .. } => TraceKind::Readout,
            Event::BrokerShutDown { .. } | Event::BrokerStarted { .. } => TraceKind::Broker,
            Event::CommittedRecordsLost { .. } => TraceKind::Loss,
            Event::InvariantBroken { .. } => TraceKind::Violation,
            Event::Caption { .. } | Event::TopicCreated { .. } | Event::ProtocolMode { .. } => {
                TraceKind::Note
            }
        }
    }

    pub fn level(&self) -> Level {
        match self {
            // the leader (partition.rs)
            Event::AlterPartitionTimedOut { .. }
            | Event::AlterPartitionStaleBrokerEpoch { .. }
            | Event::IsrUpdateFailed { .. } => Level::Warn,
            Event::BecameLeader { .. }
            | Event::BecameFollower { .. }
            | Event::FollowerWithoutLeader { .. }
            | Event::IsrExpanding { .. }
            | Event::IsrShrinking { .. }
            | Event::IsrUpdated { .. }
            | Event::AlterPartitionRejected { .. }
            | Event::AlterPartitionFailed { .. } => Level::Info,
            // (end of the leader's)
            // the follower (fetcher.rs)
            // UnifiedLog warns when a truncation goes below the high watermark.
            Event::FetchTimedOut { .. }
            | Event::FetchDisconnected { .. }
            | Event::FencedLeaderEpoch { .. }
            | Event::LogTruncated {
                below_high_watermark: Some(_),
                ..
            }
            | Event::RecordsThrownAway {
                below_high_watermark: true,
                ..
            }
            | Event::UnwrittenRecordsLost { .. } => Level::Warn,
            Event::FetcherRemoved { .. }
            | Event::ReplicaDeleted { .. }
            | Event::TruncatingToEpochEndOffset { .. }
            | Event::FetcherTruncating { .. }
            | Event::LogTruncated { .. }
            | Event::RecordsThrownAway { .. } => Level::Info,
            // (end of the follower's)
            // the clients (client.rs)
            Event::ProduceResult { outcome, .. } => outcome.level(),
            Event::ProducerIdSet { .. }
            | Event::ConsumerRead { .. }
            | Event::ConsumerNoRecords { .. }
            | Event::ConsumerPreferredReadReplica { .. } => Level::Info,
            Event::ProduceRetry { .. }
            | Event::ProduceSucceededAfterExpiry { .. }
            | Event::ConsumerOffsetOutOfRange { .. }
            | Event::ConsumerError { .. }
            | Event::ConsumerLeaderNotAvailable { .. }
            | Event::ConsumerConnectionReset { .. }
            | Event::ConsumerReadReplicaUnset { .. }
            | Event::ConsumerReadRewritten { .. } => Level::Warn,
            // (end of the clients')
            // the controller (controller.rs)
            Event::PartitionHasNoLeader { .. }
            | Event::NewLeader {
                election: Some(ElectionKind::Unclean | ElectionKind::LastKnownLeader),
                ..
            } => Level::Warn,
            Event::NewLeader { .. }
            | Event::RegistrationRejected { .. }
            | Event::BrokerRegistered { .. }
            | Event::RegisteredAfterUncleanShutdown { .. }
            | Event::AlterPartitionIneligible { .. }
            | Event::BrokerControl { .. } => Level::Info,
            // (end of the controller's)
            Event::ActionRejected { .. }
            | Event::CommittedRecordsLost { .. }
            | Event::InvariantBroken { .. } => Level::Error,
            Event::Signal { .. }
            | Event::Slowed { .. }
            | Event::Link { .. }
            | Event::Zone { .. }
            | Event::DiskLost { .. }
            | Event::PowerLost { .. }
            | Event::ConfigSet { .. }
            | Event::LeaderElectionTool { .. }
            | Event::ToolOutput { .. }
            | Event::BrokerShutDown { .. }
            | Event::BrokerStarted { .. } => Level::Info,
            Event::Caption { .. } | Event::TopicCreated { .. } | Event::ProtocolMode { .. } => {
                Level::Info
            }
        }
    }

    /// The broker whose log the line is from, if one.
    pub fn broker(&self) -> Option<BrokerId> {
        match self {
            // the leader (partition.rs)
            Event::BecameLeader { broker, .. }
            | Event::BecameFollower { broker, .. }
            | Event::FollowerWithoutLeader { broker, .. }
            | Event::IsrExpanding { broker, .. }
            | Event::IsrShrinking { broker, .. }
            | Event::AlterPartitionTimedOut { broker, .. }
            | Event::AlterPartitionStaleBrokerEpoch { broker, .. }
            | Event::IsrUpdated { broker, .. }
            | Event::AlterPartitionRejected { broker, .. }
            | Event::AlterPartitionFailed { broker, .. }
            | Event::IsrUpdateFailed { broker, .. } => Some(*broker),
            // (end of the leader's)
            // the follower (fetcher.rs)
            Event::FetchTimedOut { broker, .. }
            | Event::FetcherRemoved { broker, .. }
            | Event::ReplicaDeleted { broker, .. }
            | Event::FetchDisconnected { broker, .. }
            | Event::FencedLeaderEpoch { broker, .. }
            | Event::TruncatingToEpochEndOffset { broker, .. }
            | Event::FetcherTruncating { broker, .. }
            | Event::LogTruncated { broker, .. }
            | Event::RecordsThrownAway { broker, .. }
            | Event::UnwrittenRecordsLost { broker, .. } => Some(*broker),
            // (end of the follower's)
            // the clients (client.rs)
            Event::ProduceResult { .. }
            | Event::ProduceRetry { .. }
            | Event::ProduceSucceededAfterExpiry { .. }
            | Event::ProducerIdSet { .. }
            | Event::ConsumerRead { .. }
            | Event::ConsumerNoRecords { .. }
            | Event::ConsumerOffsetOutOfRange { .. }
            | Event::ConsumerError { .. }
            | Event::ConsumerLeaderNotAvailable { .. }
            | Event::ConsumerConnectionReset { .. }
            | Event::ConsumerPreferredReadReplica { .. }
            | Event::ConsumerReadReplicaUnset { .. }
            | Event::ConsumerReadRewritten { .. } => None,
            // (end of the clients')
            // the controller (controller.rs)
            Event::PartitionHasNoLeader { .. } | Event::NewLeader { .. } => None,
            Event::RegistrationRejected { broker }
            | Event::BrokerRegistered { broker, .. }
            | Event::RegisteredAfterUncleanShutdown { broker, .. }
            | Event::AlterPartitionIneligible { broker, .. }
            | Event::BrokerControl { broker, .. } => Some(*broker),
            // (end of the controller's)
            // The actions' lines are the operator's, not a broker's.
            Event::ActionRejected { .. }
            | Event::Signal { .. }
            | Event::Slowed { .. }
            | Event::Link { .. }
            | Event::Zone { .. }
            | Event::DiskLost { .. }
            | Event::PowerLost { .. }
            | Event::ConfigSet { .. }
            | Event::LeaderElectionTool { .. }
            | Event::InvariantBroken { .. } => None,
            Event::ToolOutput { broker, .. } => *broker,
            Event::BrokerShutDown { broker }
            | Event::BrokerStarted { broker, .. }
            | Event::CommittedRecordsLost { broker, .. } => Some(*broker),
            Event::Caption { .. } | Event::TopicCreated { .. } | Event::ProtocolMode { .. } => None,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The logger's prefix, written once for the lines that share it.
        match self {
            Event::BecameLeader { broker, tp, .. }
            | Event::BecameFollower { broker, tp, .. }
            | Event::FollowerWithoutLeader { broker, tp, .. }
            | Event::IsrExpanding { broker, tp, .. }
            | Event::IsrShrinking { broker, tp, .. }
            | Event::IsrUpdated { broker, tp, .. }
            | Event::AlterPartitionRejected { broker, tp, .. }
            | Event::AlterPartitionFailed { broker, tp, .. }
            | Event::IsrUpdateFailed { broker, tp, .. } => {
                write!(f, "[Partition {tp} broker={broker}] ")?
            }
            Event::FetchDisconnected {
                broker,
                leader,
                fetcher_id,
            }
            | Event::FencedLeaderEpoch {
                broker,
                leader,
                fetcher_id,
                ..
            }
            | Event::TruncatingToEpochEndOffset {
                broker,
                leader,
                fetcher_id,
                ..
            } => write!(
                f,
                "[ReplicaFetcher replicaId={broker}, leaderId={leader}, fetcherId={fetcher_id}] "
            )?,
            Event::PartitionHasNoLeader { .. }
            | Event::NewLeader { .. }
            | Event::RegistrationRejected { .. }
            | Event::BrokerRegistered { .. }
            | Event::RegisteredAfterUncleanShutdown { .. }
            | Event::AlterPartitionIneligible { .. }
            | Event::BrokerControl { .. } => f.write_str("[QuorumController] ")?,
            _ => {}
        }
        match self {
            // the leader (partition.rs)
            Event::BecameLeader {
                tp,
                leader_epoch,
                start_offset,
                partition_epoch,
                high_watermark,
                isr,
                under_min_isr,
                previous_leader,
                previous_leader_epoch,
                ..
            } => {
                write!(
                    f,
                    "Leader {tp} starts at leader epoch {leader_epoch} from offset {start_offset} with partition epoch {partition_epoch}, high watermark {high_watermark}, ISR [{}]{}. Previous leader ",
                    Ids(isr),
                    if *under_min_isr { " (under-min-isr)" } else { "" },
                )?;
                match previous_leader {
                    Some(l) => write!(f, "Some({l})")?,
                    None => f.write_str("None")?,
                }
                write!(f, " and previous leader epoch was {previous_leader_epoch}.")
            }
            Event::BecameFollower {
                tp,
                leader_epoch,
                start_offset,
                partition_epoch,
                high_watermark,
                leader,
                was_leader,
                ..
            } => write!(
                f,
                "Follower {tp} starts at leader epoch {leader_epoch} from offset {start_offset} with partition epoch {partition_epoch} and high watermark {high_watermark}. Current leader is {leader}.{}",
                if *was_leader { " (was leader)" } else { "" }
            ),
            Event::FollowerWithoutLeader {
                tp,
                leader_epoch,
                ..
            } => write!(
                f,
                "No leader for {tp} at leader epoch {leader_epoch}: not fetching"
            ),
            Event::IsrExpanding {
                isr,
                new_isr,
                ..
            } => write!(
                f,
                "Expanding ISR from {} to {}",
                Ids(isr),
                Ids(new_isr)
            ),
            Event::IsrShrinking {
                isr,
                new_isr,
                high_watermark,
                log_end_offset,
                out_of_sync,
                ..
            } => {
                write!(
                    f,
                    "Shrinking ISR from {} to {}. Leader: (highWatermark: {high_watermark}, endOffset: {log_end_offset}). Out of sync replicas: ",
                    Ids(isr),
                    Ids(new_isr),
                )?;
                for (i, r) in out_of_sync.iter().enumerate() {
                    write!(
                        f,
                        "{}(brokerId: {}, endOffset: {}, lastCaughtUpTimeMs: {})",
                        if i > 0 { ", " } else { "" },
                        r.broker,
                        r.log_end_offset.map_or(-1, |o| o as i64),
                        r.last_caught_up_time_ms
                    )?;
                }
                f.write_str(".")
            }
            Event::AlterPartitionTimedOut {
                broker,
                controller_socket_timeout_ms,
            } => write!(
                f,
                "[NodeToControllerChannelManager id={broker} name=alter-partition] AlterPartition request got no answer within controller.socket.timeout.ms={controller_socket_timeout_ms} ms: sending it again"
            ),
            Event::AlterPartitionStaleBrokerEpoch {
                broker,
                broker_epoch,
            } => write!(
                f,
                "[DefaultAlterPartitionManager id={broker}] Broker had a stale broker epoch ({broker_epoch}), retrying."
            ),
            Event::IsrUpdated {
                isr,
                under_min_isr,
                partition_epoch,
                ..
            } => write!(
                f,
                "ISR updated to {} {}and version updated to {partition_epoch}",
                Ids(isr),
                if *under_min_isr { "(under-min-isr) " } else { " " },
            ),
            Event::AlterPartitionRejected {
                error,
                committed_isr,
                ..
            } => write!(
                f,
                "Failed to alter partition since the controller rejected the request with {error}. Partition state has been reset to the latest committed state (ISR {}).",
                Ids(committed_isr)
            ),
            Event::AlterPartitionFailed { error, .. } => write!(
                f,
                "Failed to alter partition: {error}. Partition state may be out of sync, awaiting new the latest metadata."
            ),
            Event::IsrUpdateFailed { error, .. } => write!(
                f,
                "Failed to update ISR due to unexpected {error}. Retrying."
            ),
            // (end of the leader's)
            // the follower (fetcher.rs)
            Event::FetchTimedOut {
                broker,
                leader,
                fetcher_id,
                partitions,
                replica_socket_timeout_ms,
            } => {
                write!(
                    f,
                    "[ReplicaFetcher replicaId={broker}, leaderId={}, fetcherId={fetcher_id}] Error sending fetch request",
                    OrNone(*leader)
                )?;
                // AbstractFetcherThread.processFetchRequest prints the request, whose
                // fetchData names each partition as TopicPartition.toString does.
                for (i, tp) in partitions.iter().enumerate() {
                    let sep = if i == 0 { " for partitions " } else { ", " };
                    write!(f, "{sep}{tp}")?;
                }
                write!(
                    f,
                    ": no response within replica.socket.timeout.ms={replica_socket_timeout_ms} ms"
                )
            }
            Event::FetcherRemoved { broker, tp, reason } => write!(
                f,
                "[ReplicaFetcherManager on broker {broker}] Removed fetcher for partitions {tp}: {reason}"
            ),
            Event::ReplicaDeleted {
                broker,
                tp,
                replicas,
                stray: false,
            } => write!(
                f,
                "[ReplicaManager broker={broker}] Deleting partition {tp}: the replicas are {} now, without this broker; its log is scheduled for deletion",
                Ids(replicas)
            ),
            Event::ReplicaDeleted {
                broker,
                tp,
                replicas,
                stray: true,
            } => write!(
                f,
                "[LogManager broker={broker}] Found stray log dir {tp}: the current replica assignment [{}] does not contain the local brokerId {broker}; it is renamed {tp}-stray",
                crate::types::Joined(replicas, ", ")
            ),
            Event::FetchDisconnected { leader, .. } => write!(
                f,
                "Error in response for fetch request: java.io.IOException: Connection to {leader} was disconnected before the response was read"
            ),
            Event::FencedLeaderEpoch {
                tp,
                leader_epoch,
                ..
            } => write!(
                f,
                "Partition {tp} has an older epoch ({leader_epoch}) than the current leader. Will await the new LeaderAndIsr state before resuming fetching."
            ),
            Event::TruncatingToEpochEndOffset {
                tp,
                offset,
                leader_epoch,
                end_offset,
                ..
            } => write!(
                f,
                "Truncating partition {tp} to offset {offset} due to leader epoch and offset EpochEndOffset(errorCode=0, partition={}, leaderEpoch={leader_epoch}, endOffset={end_offset})",
                tp.partition
            ),
            Event::FetcherTruncating { broker, reason } => {
                write!(f, "[ReplicaFetcher replicaId={broker}] {reason}")
            }
            Event::LogTruncated {
                broker,
                tp,
                to_offset,
                below_high_watermark,
            } => {
                write!(
                    f,
                    "[UnifiedLog partition={tp}, dir=/tmp/kafka/{broker}/data] Truncating "
                )?;
                match below_high_watermark {
                    Some(hw) => {
                        write!(f, "{tp} to offset {to_offset} below high watermark {hw}")
                    }
                    None => write!(f, "to offset {to_offset}"),
                }
            }
            Event::RecordsThrownAway {
                broker,
                first_offset,
                last_offset,
                records,
                ..
            } => write!(
                f,
                "broker {broker} threw away offsets {first_offset}..{last_offset}: {}",
                Values(records)
            ),
            // (end of the follower's)
            // the clients (client.rs)
            Event::ProduceResult { acks, tp, outcome } => {
                write!(f, "acks={acks} -> ")?;
                write_label(f, tp)?;
                outcome.write(*acks, f)
            }
            Event::ProduceRetry {
                tp,
                attempts_left,
                error,
                ..
            } => write!(
                f,
                "[Producer clientId=producer-1] Got error produce response on topic-partition {tp}, retrying ({attempts_left} attempts left). Error: {error}"
            ),
            Event::ProduceSucceededAfterExpiry { tp, base_offset } => {
                write!(f, "ProduceResponse returned SUCCEEDED for {tp} after batch with base offset ")?;
                match base_offset {
                    Some(b) => write!(f, "{b}")?,
                    None => f.write_str("-1")?,
                }
                f.write_str(" had already been FAILED (the records are in the log, although the producer reported a TimeoutException)")
            }
            Event::ProducerIdSet { producer_id, epoch } => write!(
                f,
                "[Producer clientId=producer-1] ProducerId set to {producer_id} with epoch {epoch}"
            ),
            Event::ConsumerRead {
                tp,
                first_offset,
                last_offset,
                values,
                position,
                from,
                ..
            } => {
                f.write_str("consumer: ")?;
                write_label(f, tp)?;
                write_words(f, values)?;
                write!(f, " (offsets {first_offset}..{last_offset}, position {position}")?;
                write_from(f, *from)
            }
            Event::ConsumerNoRecords {
                tp,
                high_watermark,
                position,
                from,
            } => {
                f.write_str("consumer: ")?;
                write_label(f, tp)?;
                write!(
                    f,
                    "no records below the high watermark {high_watermark} (position {position}"
                )?;
                write_from(f, *from)
            }
            Event::ConsumerPreferredReadReplica {
                tp,
                leader,
                replica,
                expires_ms,
            } => write!(
                f,
                "[Consumer clientId=consumer-1] Updating preferred read replica for partition {tp} to {replica}, set to expire at {expires_ms} (named by leader {leader})"
            ),
            Event::ConsumerReadReplicaUnset {
                tp,
                replica,
                error: Some(error),
                fetch_offset,
            } => write!(
                f,
                "[Consumer clientId=consumer-1] Unset the preferred read replica {replica} for partition {tp} since we got {error} when fetching {fetch_offset}"
            ),
            Event::ConsumerReadReplicaUnset { tp, replica, .. } => write!(
                f,
                "[Consumer clientId=consumer-1] Not fetching from {replica} for partition {tp} since it is marked offline or is missing from our metadata, using the leader instead."
            ),
            Event::ConsumerOffsetOutOfRange {
                tp,
                position,
                log_end_offset: leo,
                gone,
            } => {
                f.write_str("consumer: ")?;
                write_label(f, tp)?;
                write!(f, "OFFSET_OUT_OF_RANGE: position {position} is past the log end offset {leo}; auto.offset.reset=latest moves it to {leo}")?;
                match gone {
                    Some((a, z)) => write!(f, ". Offsets {a}..{z} that it read no longer exist"),
                    None => Ok(()),
                }
            }
            Event::ConsumerError { tp, error } => {
                f.write_str("consumer: ")?;
                write_label(f, tp)?;
                write!(f, "{error}")
            }
            Event::ConsumerLeaderNotAvailable { tp } => {
                write!(f, "consumer: LEADER_NOT_AVAILABLE for {tp}")
            }
            Event::ConsumerConnectionReset { tp, target } => {
                f.write_str("consumer: ")?;
                write_label(f, tp)?;
                write!(
                f,
                "NETWORK_EXCEPTION: the connection to broker {target} was reset (its process is gone)"
            )
            }
            Event::ConsumerReadRewritten {
                tp,
                first_offset,
                last_offset,
                now,
                read,
            } => {
                f.write_str("consumer: ")?;
                write_label(f, tp)?;
                write!(f, "offsets {first_offset}..{last_offset} now hold different records (")?;
                write_words(f, now)?;
                f.write_str(") than it read there (")?;
                write_words(f, read)?;
                f.write_str(")")
            }
            // (end of the clients')
            // the controller (controller.rs)
            Event::PartitionHasNoLeader {
                tp,
                isr,
                elr,
                leader_epoch,
            } => write!(
                f,
                "Partition {tp} has no leader: no eligible replica (Isr: [{}] Elr: [{}]) leader epoch {leader_epoch}",
                Ids(isr),
                Ids(elr)
            ),
            Event::NewLeader {
                tp,
                leader,
                election,
                leader_epoch,
            } => {
                let how = match election {
                    Some(ElectionKind::Unclean) => "an unclean election",
                    Some(ElectionKind::LastKnownLeader) => {
                        "an unclean election of the last known leader"
                    }
                    Some(ElectionKind::Elr) => "ELR",
                    Some(ElectionKind::Clean) | None => "a clean election",
                };
                write!(
                    f,
                    "Setting new leader for topic {}, partition {} to {leader} using {how} (leader epoch {leader_epoch})",
                    tp.topic, tp.partition
                )
            }
            Event::RegistrationRejected { broker } => write!(
                f,
                "Rejected registration of broker {broker}: DuplicateBrokerRegistrationException: Another broker is registered with that broker id."
            ),
            Event::BrokerRegistered {
                broker,
                broker_epoch,
            } => write!(
                f,
                "Registered broker {broker} with broker epoch {broker_epoch} (fenced until it catches up)"
            ),
            Event::RegisteredAfterUncleanShutdown {
                broker,
                removed_from_isr_and_elr,
            } => {
                write!(
                    f,
                    "Broker {broker} registered after an unclean shutdown"
                )?;
                if *removed_from_isr_and_elr {
                    f.write_str(": removing it from the ISR and ELR")?;
                }
                Ok(())
            }
            Event::AlterPartitionIneligible {
                broker,
                tp,
                ineligible,
                isr,
            } => {
                write!(
                    f,
                    "Rejecting AlterPartition request from node {broker} for {tp} because it specified ineligible replicas "
                )?;
                for (i, (id, why)) in ineligible.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{id} ({why})")?;
                }
                write!(f, " in the new ISR {}", Ids(isr))
            }
            Event::BrokerControl { broker, what } => {
                f.write_str("")?;
                match what {
                    BrokerControl::FencedShutdownGranted => write!(
                        f,
                        "Fenced broker {broker} has requested and been granted an immediate shutdown."
                    ),
                    BrokerControl::UnfencedShutdownGranted => write!(
                        f,
                        "Unfenced broker {broker} has requested and been granted an immediate shutdown."
                    ),
                    BrokerControl::Unfenced => write!(f, "Unfenced broker {broker}"),
                    BrokerControl::ControlledShutdownGranted => write!(
                        f,
                        "Unfenced broker {broker} has requested and been granted a controlled shutdown."
                    ),
                    BrokerControl::ShutdownGranted {
                        lowest_active_offset,
                        controlled_shutdown_offset,
                    } => write!(
                        f,
                        "The request from broker {broker} to shut down has been granted since the lowest active offset {lowest_active_offset} is now greater than the broker's controlled shutdown offset {controlled_shutdown_offset}."
                    ),
                    BrokerControl::SessionTimedOut => write!(
                        f,
                        "Fencing broker {broker} because its session has timed out."
                    ),
                }
            }
            // (end of the controller's)
            Event::ActionRejected { error } => write!(f, "action rejected: {error}"),
            Event::Signal {
                signal,
                broker,
                outcome,
            } => {
                f.write_str(match signal {
                    Signal::Stop => "kill -STOP broker ",
                    Signal::Cont => "kill -CONT broker ",
                    Signal::Term => "kill -TERM broker ",
                    Signal::Kill => "kill -9 broker ",
                    Signal::Start => "start broker ",
                })?;
                write!(f, "{broker}")?;
                match (signal, outcome) {
                    (Signal::Stop, SignalOutcome::Done) => {
                        f.write_str(" (frozen: nothing runs, sockets stay open)")
                    }
                    (Signal::Stop, _) => f.write_str(": not running, nothing to freeze"),
                    (Signal::Kill, SignalOutcome::Done) => {
                        f.write_str(" (process gone; log and checkpoints stay on disk)")
                    }
                    (Signal::Term, SignalOutcome::Done) => f.write_str(" (controlled shutdown)"),
                    (Signal::Term, SignalOutcome::WaitsForThaw) => {
                        f.write_str(" (frozen: the signal waits until it is thawed)")
                    }
                    (Signal::Start, SignalOutcome::Done) => Ok(()),
                    (_, SignalOutcome::AlreadyRunning) => f.write_str(": already running"),
                    (_, SignalOutcome::NotFrozen) => f.write_str(": not frozen"),
                    (_, SignalOutcome::Thawed { frozen_ms, queued }) => write!(
                        f,
                        " (frozen for {frozen_ms} ms; {queued} queued event(s) run now)"
                    ),
                    _ => f.write_str(": not running"),
                }
            }
            Event::Slowed { broker, ms: 0 } => write!(f, "broker {broker} is no longer slow"),
            Event::Slowed { broker, ms } => {
                write!(f, "broker {broker} is slow: each fetch takes {ms} ms longer")
            }
            Event::Link { a, b, cut } => write!(
                f,
                "network: {} the link between {a} and {b}",
                if *cut { "cut" } else { "healed" }
            ),
            Event::Zone {
                zone,
                action,
                brokers,
            } => {
                f.write_str(match action {
                    ZoneAction::Lose => "zone lost: kill -9 of every broker in rack ",
                    ZoneAction::Start => "zone back: start every broker in rack ",
                    ZoneAction::Cut => "network: cut rack ",
                    ZoneAction::Heal => "network: heal rack ",
                })?;
                write!(f, "{zone} (brokers {}", crate::types::join_ids(brokers))?;
                f.write_str(match action {
                    ZoneAction::Cut => {
                        ") off from the other racks and the controller quorum (its majority is outside the zone)"
                    }
                    ZoneAction::Heal => "): links to the other racks and the controller again",
                    _ => ")",
                })
            }
            Event::ProtocolMode { protocol } => write!(
                f,
                "protocol {}: {} ({})",
                protocol.name(),
                protocol.era(),
                protocol.fixed_by()
            ),
            Event::DiskLost { broker } => write!(
                f,
                "broker {broker} lost its disk: its log and checkpoint files are gone (the process is down)"
            ),
            Event::PowerLost {
                broker,
                writeback_delay_ms,
            } => write!(
                f,
                "broker {broker} lost power: the process is down, and what the OS had not written back (appended in the last {writeback_delay_ms} ms) is gone"
            ),
            Event::UnwrittenRecordsLost {
                broker,
                tp,
                first_offset,
                last_offset,
            } => write!(
                f,
                "broker {broker}: {tp} offsets {first_offset}..{last_offset} were only in the page cache and are gone; the log ends at {first_offset}"
            ),
            // A client's config is no broker's: the consumer is built again with it.
            Event::ConfigSet { name, value } if name == crate::scenario::CLIENT_RACK => {
                write!(f, "consumer: a new KafkaConsumer with client.rack={value}")
            }
            // The application's, neither a broker's nor a client's config.
            Event::ConfigSet { name, value } if name == crate::scenario::RECORD_SIZE_BYTES => {
                write!(
                    f,
                    "producer: values of {value} bytes from now on (record_size_bytes), unless a produce gives its size"
                )
            }
            Event::ConfigSet { name, value } => {
                write!(f, "kafka-configs.sh --alter --add-config {name}={value}")
            }
            Event::LeaderElectionTool {
                election,
                tp,
                error,
            } => {
                let (kind, option) = match election {
                    ElectionType::Preferred => ("PREFERRED", "preferred"),
                    ElectionType::Unclean => ("UNCLEAN", "unclean"),
                };
                write!(f, "kafka-leader-election.sh --election-type {option}: ")?;
                if *error == ErrorCode::NONE {
                    write!(
                        f,
                        "Successfully completed leader election ({kind}) for partitions {tp}"
                    )
                } else {
                    write!(
                        f,
                        "Error completing leader election ({kind}) for partition {tp}: {error}"
                    )
                }
            }
            Event::ToolOutput { line, .. } => f.write_str(line),
            Event::BrokerShutDown { broker } => {
                write!(f, "[KafkaServer id={broker}] shut down completed")
            }
            Event::BrokerStarted {
                broker,
                tp,
                log_end_offset,
                high_watermark,
            } => write!(
                f,
                "[KafkaServer id={broker}] started: {tp} loaded with log end offset {log_end_offset}, high watermark {high_watermark} (from replication-offset-checkpoint)"
            ),
            Event::CommittedRecordsLost {
                tp,
                records,
                cause,
                ..
            } => {
                f.write_str("Committed records lost: ")?;
                write_label(f, tp)?;
                let (first, last) = match (records.first(), records.last()) {
                    (Some(a), Some(b)) => (a.offset, b.offset),
                    _ => (0, 0),
                };
                write!(
                    f,
                    "offsets {first}..{last} ({}) are gone: {cause}.",
                    Values(records)
                )
            }
            Event::InvariantBroken { what, seed, at_ms } => {
                write!(f, "invariant broken: {what} (seed={seed} t={at_ms})")
            }
            Event::Caption { text } => write!(f, "# {text}"),
            Event::TopicCreated {
                topic,
                replicas,
                brokers,
                min_insync_replicas,
                partitions: 1,
            } => write!(
                f,
                "Created topic {topic} with replicas {} (leader {}), {brokers} broker(s), min.insync.replicas={min_insync_replicas}",
                Ids(replicas),
                OrNone(replicas.first().copied()),
            ),
            Event::TopicCreated {
                topic,
                replicas,
                brokers,
                min_insync_replicas,
                partitions,
            } => write!(
                f,
                "Created topic {topic} with {partitions} partitions, replication factor {}, {brokers} broker(s), min.insync.replicas={min_insync_replicas}",
                replicas.len(),
            ),
        }
    }
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// One out-of-sync replica as Partition.maybeShrinkIsr's line lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutOfSyncReplica {
    pub broker: BrokerId,
    /// The follower's LEO as the leader knows it; None is UNKNOWN_OFFSET (printed -1).
    pub log_end_offset: Option<u64>,
    pub last_caught_up_time_ms: TimeMs,
}

/// Why the fetcher for the partition was removed (ReplicaFetcherManager.
/// removeFetcherForPartitions), as the line says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FetcherRemovedReason {
    /// ReplicaManager.applyLocalFollowersDelta: "During controlled shutdown, replica with no
    /// leaders and replica where this broker is not in the ISR are stopped."
    ControlledShutdownNotInIsr,
}

impl fmt::Display for FetcherRemovedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FetcherRemovedReason::ControlledShutdownNotInIsr => {
                "this broker is in controlled shutdown and not in the ISR"
            }
        })
    }
}

/// Why the follower truncates, when a line of its own says so before UnifiedLog's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum TruncationReason {
    /// AbstractFetcherThread.handleOutOfRangeError: the leader answered OFFSET_OUT_OF_RANGE.
    OffsetOutOfRange { leader: BrokerId },
}

impl fmt::Display for TruncationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TruncationReason::OffsetOutOfRange { leader } => {
                write!(f, "OFFSET_OUT_OF_RANGE from leader {leader}")
            }
        }
    }
}

/// Why ReplicationControlManager.ineligibleReplicasForIsr refuses a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Ineligible {
    NotRegistered,
    ShuttingDown,
    Fenced,
    BrokerEpochMismatch { requested: i64, expected: i64 },
}

impl fmt::Display for Ineligible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ineligible::NotRegistered => f.write_str("not registered"),
            Ineligible::ShuttingDown => f.write_str("shutting down"),
            Ineligible::Fenced => f.write_str("fenced"),
            Ineligible::BrokerEpochMismatch {
                requested,
                expected,
            } => write!(
                f,
                "broker epoch mismatch: requested={requested} VS expected={expected}"
            ),
        }
    }
}

/// What the controller decided for one broker (QuorumController's lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum BrokerControl {
    /// BrokerHeartbeatManager: a fenced broker asked to shut down.
    FencedShutdownGranted,
    /// An unfenced broker that leads nothing asked to shut down.
    UnfencedShutdownGranted,
    /// It caught up with its registration record.
    Unfenced,
    /// It leads partitions: they move first (controlled shutdown).
    ControlledShutdownGranted,
    /// Every active broker reached its controlled shutdown offset.
    ShutdownGranted {
        lowest_active_offset: u64,
        controlled_shutdown_offset: u64,
    },
    /// No heartbeat within broker.session.timeout.ms.
    SessionTimedOut,
}

/// What a zone action does to its brokers (`lose_zone`, `start_zone`, `cut_zone`,
/// `heal_zone`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneAction {
    Lose,
    Start,
    Cut,
    Heal,
}

/// A signal the operator sends to a broker's process (or its start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// `kill -STOP`: freeze.
    Stop,
    /// `kill -CONT`: thaw.
    Cont,
    /// `kill -TERM`: controlled shutdown.
    Term,
    /// `kill -9`.
    Kill,
    /// Start the process.
    Start,
}

/// What a [`Signal`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SignalOutcome {
    Done,
    NotRunning,
    AlreadyRunning,
    /// SIGTERM to a frozen process: it waits until the process is thawed.
    WaitsForThaw,
    NotFrozen,
    /// Thawed after `frozen_ms`; `queued` inputs that waited now run.
    Thawed {
        frozen_ms: TimeMs,
        queued: usize,
    },
}

/// `kafka-leader-election.sh --election-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ElectionType {
    Preferred,
    Unclean,
}

/// The read-out tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// `kafka-topics.sh --describe`.
    Describe,
    /// `kafka-get-offsets.sh`.
    GetOffsets,
    /// Each broker's `leader-epoch-checkpoint`.
    LeaderEpochCheckpoints,
    /// Each broker's `replication-offset-checkpoint`.
    HighWatermarkCheckpoints,
    /// `kafka-dump-log.sh` of one broker's segment.
    DumpLog,
    /// `jstack <pid> | grep ReplicaFetcherThread` on each broker.
    FetcherThreads,
    /// Kafka's metrics by MBean, per broker (`KafkaMetrics::lines`).
    Metrics,
    /// `kafka-reassign-partitions.sh --execute`, `--verify` or `--cancel`.
    ReassignPartitions,
}

/// Why committed records are gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum LossCause {
    /// The last known leader was elected with ISR and ELR empty (Kafka counts it unclean).
    /// `lost_own_data` says when the elected broker had itself lost records (a power loss
    /// or a lost disk) before it came back: Kafka elects it all the same (KIP-966,
    /// PartitionChangeBuilder.canElectLastKnownLeader), whatever
    /// `unclean.leader.election.enable` says.
    LastKnownLeader {
        broker: BrokerId,
        #[serde(skip_serializing_if = "Option::is_none")]
        lost_own_data: Option<OwnDataLoss>,
    },
    UncleanElection {
        broker: BrokerId,
    },
    /// A replica that came back with an empty disk counted as in sync.
    LostDisk {
        broker: BrokerId,
        lost_disks: Vec<BrokerId>,
    },
    /// A replica whose machine lost power (`power_loss`) lost them with what the OS had not
    /// written back, and the new leader is one of those or follows from one.
    PowerLoss {
        broker: BrokerId,
        power_lost: Vec<BrokerId>,
    },
    /// A clean election under a historical protocol whose rules lose committed records
    /// (before KIP-101, a follower truncated to its own HW; before KIP-903, a replica that
    /// lost its log rejoined the ISR on its previous process's fetch): the era's anomaly,
    /// not an engine bug.
    HistoricalProtocol {
        broker: BrokerId,
        protocol: crate::protocol::Protocol,
        anomaly: HistoricalAnomaly,
    },
    /// A clean election lost them: an engine bug (an invariant is broken too).
    CleanElection,
}

/// How a broker lost records of its own log before it was elected
/// ([`LossCause::LastKnownLeader`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnDataLoss {
    /// Its machine lost power: what the OS had not written back was gone.
    PowerLoss,
    /// Its disk was lost and replaced by an empty one.
    LostDisk,
}

/// Which rule of an older era lost committed records ([`LossCause::HistoricalProtocol`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoricalAnomaly {
    /// Before KIP-101: a follower truncated to its own high watermark.
    HwTruncation,
    /// Before KIP-903: the new leader lost its log, and an AlterPartition without broker
    /// epochs added it to the ISR on a fetch of its process before.
    StaleIsrJoin,
    /// Before KIP-320: a follower that missed leader epochs fetched from a replica that
    /// leads at a later one, which counted the follower toward its HW on the fetch offset
    /// alone, though the follower's log had diverged.
    UnfencedFetch,
}

impl HistoricalAnomaly {
    /// What happened, and the KIP that fixed it.
    pub fn text(self) -> &'static str {
        match self {
            HistoricalAnomaly::HwTruncation => {
                "a follower truncated to its own high watermark, the loss KIP-101 fixed"
            }
            HistoricalAnomaly::StaleIsrJoin => {
                "it lost its log and rejoined the ISR on a fetch of its process before the restart, the loss KIP-903 fixed"
            }
            HistoricalAnomaly::UnfencedFetch => {
                "a follower that missed leader epochs fetched from a leader of a later one without its current epoch, and counted toward its high watermark with a diverged log, the loss KIP-320 fixed"
            }
        }
    }
}

impl fmt::Display for LossCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LossCause::LastKnownLeader {
                broker,
                lost_own_data,
            } => {
                write!(
                    f,
                    "broker {broker} was elected as the last known leader (ISR and ELR were empty; Kafka counts this as an unclean election) and does not have them"
                )?;
                match lost_own_data {
                    None => Ok(()),
                    Some(how) => write!(
                        f,
                        ": it lost them {}, and Kafka elects the last leader when it is back whatever it lost (KIP-966), even with unclean.leader.election.enable=false",
                        match how {
                            OwnDataLoss::PowerLoss => "when its machine lost power",
                            OwnDataLoss::LostDisk => "with its disk",
                        }
                    ),
                }
            }
            LossCause::UncleanElection { broker } => write!(
                f,
                "broker {broker} became leader through an unclean election and does not have them"
            ),
            LossCause::LostDisk { broker, lost_disks } => write!(
                f,
                "broker {broker} became leader after broker {} lost its disk (a replica that came back empty counted as in sync)",
                Ids(lost_disks)
            ),
            LossCause::PowerLoss { broker, power_lost } => write!(
                f,
                "broker {broker} became leader after broker {} lost power (records the OS had not written back were gone)",
                Ids(power_lost)
            ),
            LossCause::HistoricalProtocol {
                broker,
                protocol,
                anomaly,
            } => write!(
                f,
                "broker {broker} became leader through a clean election without them: protocol {} ({})",
                protocol.name(),
                anomaly.text()
            ),
            LossCause::CleanElection => f.write_str("a clean election (engine bug)"),
        }
    }
}

// ---- the clients' readers ----

/// How a produce ended (the words after `acks=... -> `).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ProduceOutcome {
    /// acks=0: sent, no response awaited, so no offsets.
    Sent { records: usize },
    /// Written: the offsets of the response (None when it had none), and how long the batch
    /// waited since it was created (the line shows it for acks=all).
    Ok {
        offsets: Option<(u64, u64)>,
        waited_ms: TimeMs,
    },
    /// Failed with the broker's (or the client's) error code. `written_at`: the offset a
    /// NOT_ENOUGH_REPLICAS_AFTER_APPEND batch was written at on the leader.
    Error {
        error: ErrorCode,
        written_at: Option<u64>,
    },
    /// Sender.sendProducerData's expiry: a TimeoutException after delivery.timeout.ms.
    Expired {
        records: usize,
        tp: TopicPartition,
        elapsed_ms: TimeMs,
    },
    /// KafkaProducer's constructor threw a ConfigException: nothing was sent.
    ConfigException { message: String },
    /// KafkaProducer.close(Duration.ZERO) failed the batch (a KafkaException).
    ClosedForcefully { records: usize },
}

impl ProduceOutcome {
    /// The exception the producer threw, as the line names it, if it threw one.
    pub fn exception(&self) -> Option<&'static str> {
        match self {
            ProduceOutcome::Expired { .. } => Some("TimeoutException"),
            ProduceOutcome::ConfigException { .. } => Some("ConfigException"),
            ProduceOutcome::ClosedForcefully { .. } => Some("KafkaException"),
            ProduceOutcome::Sent { .. }
            | ProduceOutcome::Ok { .. }
            | ProduceOutcome::Error { .. } => None,
        }
    }

    fn level(&self) -> Level {
        match self {
            ProduceOutcome::Sent { .. } | ProduceOutcome::Ok { .. } => Level::Info,
            _ => Level::Error,
        }
    }

    /// The words after `acks=... -> `.
    fn write(&self, acks: Acks, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.exception() {
            write!(f, "{name}: ")?;
        }
        match self {
            ProduceOutcome::Sent { records } => write!(
                f,
                "sent ({records} record(s); no response, so no offset)"
            ),
            ProduceOutcome::Ok { offsets, waited_ms } => {
                match offsets {
                    Some((b, l)) if b == l => write!(f, "ok, offset={b}")?,
                    Some((b, l)) => write!(f, "ok, offsets={b}..{l}")?,
                    None => f.write_str("ok")?,
                }
                if acks == Acks::All {
                    write!(f, " (waited {waited_ms} ms)")?;
                }
                Ok(())
            }
            ProduceOutcome::Error {
                error,
                written_at: Some(b),
            } => write!(f, "{error} (written at offset {b}, but the ISR shrank below min.insync.replicas)"),
            ProduceOutcome::Error { error, .. } => write!(f, "{error}"),
            ProduceOutcome::Expired {
                records,
                tp,
                elapsed_ms,
            } => write!(
                f,
                "Expiring {records} record(s) for {tp}:{elapsed_ms} ms has passed since batch creation"
            ),
            ProduceOutcome::ConfigException { message } => f.write_str(message),
            ProduceOutcome::ClosedForcefully { records } => write!(
                f,
                "Producer is closed forcefully. ({records} record(s) not delivered)"
            ),
        }
    }
}

/// The end of a consumer line: `)`, or the follower it read from and `)`.
fn write_from(f: &mut fmt::Formatter<'_>, from: Option<BrokerId>) -> fmt::Result {
    match from {
        Some(b) => write!(f, ", from follower {b}, its preferred read replica)"),
        None => f.write_str(")"),
    }
}

/// The partition a line concerns and a colon, where it names one (`Topics::label`): after
/// the line's subject (`acks=all -> `, `consumer: `, `Committed records lost: `), as
/// TopicPartition.toString prints it (`orders-3: `).
fn write_label(f: &mut fmt::Formatter<'_>, tp: &Option<TopicPartition>) -> fmt::Result {
    match tp {
        Some(tp) => write!(f, "{tp}: "),
        None => Ok(()),
    }
}

/// Values joined by spaces, written in place.
fn write_words(f: &mut fmt::Formatter<'_>, words: &[String]) -> fmt::Result {
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        f.write_str(w)?;
    }
    Ok(())
}

impl Event {
    /// The error code of a failed produce result (`DELIVERY_TIMEOUT` for a batch that
    /// expired); None for a success, a produce that threw another exception, and every other
    /// event (a retry is not a result).
    pub fn produce_error(&self) -> Option<ErrorCode> {
        match self {
            Event::ProduceResult {
                outcome: ProduceOutcome::Error { error, .. },
                ..
            } => Some(*error),
            Event::ProduceResult {
                outcome: ProduceOutcome::Expired { .. },
                ..
            } => Some(ErrorCode::DELIVERY_TIMEOUT),
            _ => None,
        }
    }

    /// The partition a produce result, a consumer's line or a loss names (where the cluster
    /// has more than one partition: `Topics::label`); None for every other event.
    pub fn partition_label(&self) -> Option<&TopicPartition> {
        match self {
            Event::ProduceResult { tp, .. }
            | Event::ConsumerRead { tp, .. }
            | Event::ConsumerNoRecords { tp, .. }
            | Event::ConsumerOffsetOutOfRange { tp, .. }
            | Event::ConsumerError { tp, .. }
            | Event::ConsumerConnectionReset { tp, .. }
            | Event::ConsumerReadRewritten { tp, .. }
            | Event::CommittedRecordsLost { tp, .. } => tp.as_ref(),
            _ => None,
        }
    }

    /// Whether this is a produce result that failed with `name`, as its line names the
    /// failure: the error code (`NOT_ENOUGH_REPLICAS`) or the exception the producer threw
    /// (`TimeoutException`, `ConfigException`, `KafkaException`). What an expectation's
    /// `error` matches.
    pub fn produce_failed_with(&self, name: &str) -> bool {
        let Event::ProduceResult { outcome, .. } = self else {
            return false;
        };
        match (outcome.exception(), outcome) {
            (Some(exception), _) => exception == name,
            (None, ProduceOutcome::Error { error, .. }) => error.to_string() == name,
            (None, _) => false,
        }
    }
}
