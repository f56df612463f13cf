//! What happened, as typed events. Each [`Event`] has the fields a reader needs (the UI
//! matches on them, never on text), a [`TraceKind`] and a [`Level`], and renders as the line
//! Kafka would write for it ([`std::fmt::Display`]): the transcript, the command-line runner
//! and the golden files print that rendering, byte for byte what the engine always wrote.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::types::{BrokerId, Ids, OrNone};

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
    /// A line not yet given its own variant (being converted, issue 13 step 2).
    Line {
        kind: TraceKind,
        level: Level,
        broker: Option<BrokerId>,
        text: String,
    },

    // ---- the leader (partition.rs) ---------------------------------------------------
    /// Partition.makeLeader's "Leader ... starts at leader epoch" line.
    BecameLeader {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
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
        tp: crate::types::TopicPartition,
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
        tp: crate::types::TopicPartition,
        leader_epoch: i32,
    },
    /// Partition.maybeExpandIsr's "Expanding ISR from ... to ..." line.
    IsrExpanding {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
        isr: Vec<BrokerId>,
        new_isr: Vec<BrokerId>,
    },
    /// Partition.maybeShrinkIsr's "Shrinking ISR from ... to ..." line, with the leader's HW
    /// and LEO and each out-of-sync replica.
    IsrShrinking {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
        isr: Vec<BrokerId>,
        new_isr: Vec<BrokerId>,
        high_watermark: u64,
        log_end_offset: u64,
        out_of_sync: Vec<crate::partition::OutOfSyncReplica>,
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
        tp: crate::types::TopicPartition,
        isr: Vec<BrokerId>,
        /// Partition.isUnderMinIsr with the new ISR (the line says "(under-min-isr)").
        under_min_isr: bool,
        partition_epoch: i32,
    },
    /// Partition.handleAlterPartitionError's "Failed to alter partition since the controller
    /// rejected the request" line (OPERATION_NOT_ATTEMPTED, INELIGIBLE_REPLICA).
    AlterPartitionRejected {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
        error: crate::types::ErrorCode,
        /// The latest committed ISR the state was reset to.
        committed_isr: Vec<BrokerId>,
    },
    /// Partition.handleAlterPartitionError's "Failed to alter partition: ... Partition state may
    /// be out of sync" line.
    AlterPartitionFailed {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
        error: crate::types::ErrorCode,
    },
    /// Partition.handleAlterPartitionError's "Failed to update ISR ... due to unexpected ...
    /// Retrying." line.
    IsrUpdateFailed {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
        error: crate::types::ErrorCode,
    },
    // (end of the leader's events)

    // ---- the follower (fetcher.rs) --------------------------------------------------
    /// ReplicaFetcherThread's "Error sending fetch request" line: no response within
    /// `replica.socket.timeout.ms`.
    FetchTimedOut {
        broker: BrokerId,
        leader: Option<BrokerId>,
        replica_socket_timeout_ms: u64,
    },
    /// ReplicaFetcherManager.removeFetcherForPartitions's "Removed fetcher for partitions" line.
    FetcherRemoved {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
        reason: crate::fetcher::FetcherRemovedReason,
    },
    /// AbstractFetcherThread.processFetchRequest's "Error in response for fetch request": the
    /// connection to the leader was closed.
    FetchDisconnected { broker: BrokerId, leader: BrokerId },
    /// AbstractFetcherThread.onPartitionFenced's "has an older epoch ... than the current
    /// leader" line.
    FencedLeaderEpoch {
        broker: BrokerId,
        leader: BrokerId,
        tp: crate::types::TopicPartition,
        leader_epoch: i32,
    },
    /// AbstractFetcherThread.maybeTruncateToEpochEndOffsets's "Truncating partition ... due to
    /// leader epoch and offset EpochEndOffset(...)" line.
    TruncatingToEpochEndOffset {
        broker: BrokerId,
        leader: BrokerId,
        tp: crate::types::TopicPartition,
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
        reason: crate::fetcher::TruncationReason,
    },
    /// UnifiedLog.truncateTo's "Truncating ... to offset" line, "below high watermark" when the
    /// truncation went below the HW (a WARN).
    LogTruncated {
        broker: BrokerId,
        tp: crate::types::TopicPartition,
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
        records: Vec<crate::log::Record>,
        below_high_watermark: bool,
    },
    // (end of the follower's events)

    // ---- the clients (client.rs) ----------------------------------------------------
    // (end of the clients' events)

    // ---- the controller (controller.rs) ---------------------------------------------
    // (end of the controller's events)

    // ---- the scenario --------------------------------------------------------------
    /// The scenario's caption (`note` action): the walkthrough shows it.
    Caption { text: String },
    /// The cluster the scenario starts with.
    TopicCreated {
        topic: String,
        replicas: Vec<BrokerId>,
        brokers: u32,
        min_insync_replicas: u32,
    },
}

impl Event {
    /// What kind of line it is (the UI filters on it).
    pub fn kind(&self) -> TraceKind {
        match self {
            Event::Line { kind, .. } => *kind,
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
            | Event::FetchDisconnected { .. }
            | Event::FencedLeaderEpoch { .. } => TraceKind::Broker,
            Event::TruncatingToEpochEndOffset { .. }
            | Event::FetcherTruncating { .. }
            | Event::LogTruncated { .. }
            | Event::RecordsThrownAway { .. } => TraceKind::Truncation,
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { .. } | Event::TopicCreated { .. } => TraceKind::Note,
        }
    }

    pub fn level(&self) -> Level {
        match self {
            Event::Line { level, .. } => *level,
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
            } => Level::Warn,
            Event::FetcherRemoved { .. }
            | Event::TruncatingToEpochEndOffset { .. }
            | Event::FetcherTruncating { .. }
            | Event::LogTruncated { .. }
            | Event::RecordsThrownAway { .. } => Level::Info,
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { .. } | Event::TopicCreated { .. } => Level::Info,
        }
    }

    /// The broker whose log the line is from, if one.
    pub fn broker(&self) -> Option<BrokerId> {
        match self {
            Event::Line { broker, .. } => *broker,
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
            | Event::FetchDisconnected { broker, .. }
            | Event::FencedLeaderEpoch { broker, .. }
            | Event::TruncatingToEpochEndOffset { broker, .. }
            | Event::FetcherTruncating { broker, .. }
            | Event::LogTruncated { broker, .. }
            | Event::RecordsThrownAway { broker, .. } => Some(*broker),
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { .. } | Event::TopicCreated { .. } => None,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Line { text, .. } => f.write_str(text),
            // the leader (partition.rs)
            Event::BecameLeader {
                broker,
                tp,
                leader_epoch,
                start_offset,
                partition_epoch,
                high_watermark,
                isr,
                under_min_isr,
                previous_leader,
                previous_leader_epoch,
            } => {
                write!(
                    f,
                    "[Partition {tp} broker={broker}] Leader {tp} starts at leader epoch {leader_epoch} from offset {start_offset} with partition epoch {partition_epoch}, high watermark {high_watermark}, ISR [{}]{}. Previous leader ",
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
                broker,
                tp,
                leader_epoch,
                start_offset,
                partition_epoch,
                high_watermark,
                leader,
                was_leader,
            } => write!(
                f,
                "[Partition {tp} broker={broker}] Follower {tp} starts at leader epoch {leader_epoch} from offset {start_offset} with partition epoch {partition_epoch} and high watermark {high_watermark}. Current leader is {leader}.{}",
                if *was_leader { " (was leader)" } else { "" }
            ),
            Event::FollowerWithoutLeader {
                broker,
                tp,
                leader_epoch,
            } => write!(
                f,
                "[Partition {tp} broker={broker}] No leader for {tp} at leader epoch {leader_epoch}: not fetching"
            ),
            Event::IsrExpanding {
                broker,
                tp,
                isr,
                new_isr,
            } => write!(
                f,
                "[Partition {tp} broker={broker}] Expanding ISR from {} to {}",
                Ids(isr),
                Ids(new_isr)
            ),
            Event::IsrShrinking {
                broker,
                tp,
                isr,
                new_isr,
                high_watermark,
                log_end_offset,
                out_of_sync,
            } => {
                write!(
                    f,
                    "[Partition {tp} broker={broker}] Shrinking ISR from {} to {}. Leader: (highWatermark: {high_watermark}, endOffset: {log_end_offset}). Out of sync replicas: ",
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
                broker,
                tp,
                isr,
                under_min_isr,
                partition_epoch,
            } => write!(
                f,
                "[Partition {tp} broker={broker}] ISR updated to {} {}and version updated to {partition_epoch}",
                Ids(isr),
                if *under_min_isr { "(under-min-isr) " } else { " " },
            ),
            Event::AlterPartitionRejected {
                broker,
                tp,
                error,
                committed_isr,
            } => write!(
                f,
                "[Partition {tp} broker={broker}] Failed to alter partition since the controller rejected the request with {error}. Partition state has been reset to the latest committed state (ISR {}).",
                Ids(committed_isr)
            ),
            Event::AlterPartitionFailed { broker, tp, error } => write!(
                f,
                "[Partition {tp} broker={broker}] Failed to alter partition: {error}. Partition state may be out of sync, awaiting new the latest metadata."
            ),
            Event::IsrUpdateFailed { broker, tp, error } => write!(
                f,
                "[Partition {tp} broker={broker}] Failed to update ISR due to unexpected {error}. Retrying."
            ),
            // (end of the leader's)
            // the follower (fetcher.rs)
            Event::FetchTimedOut {
                broker,
                leader,
                replica_socket_timeout_ms,
            } => write!(
                f,
                "[ReplicaFetcher replicaId={broker}, leaderId={}, fetcherId=0] Error sending fetch request: no response within replica.socket.timeout.ms={replica_socket_timeout_ms} ms",
                OrNone(*leader)
            ),
            Event::FetcherRemoved { broker, tp, reason } => write!(
                f,
                "[ReplicaFetcherManager on broker {broker}] Removed fetcher for partitions {tp}: {reason}"
            ),
            Event::FetchDisconnected { broker, leader } => write!(
                f,
                "[ReplicaFetcher replicaId={broker}, leaderId={leader}, fetcherId=0] Error in response for fetch request: java.io.IOException: Connection to {leader} was disconnected before the response was read"
            ),
            Event::FencedLeaderEpoch {
                broker,
                leader,
                tp,
                leader_epoch,
            } => write!(
                f,
                "[ReplicaFetcher replicaId={broker}, leaderId={leader}, fetcherId=0] Partition {tp} has an older epoch ({leader_epoch}) than the current leader. Will await the new LeaderAndIsr state before resuming fetching."
            ),
            Event::TruncatingToEpochEndOffset {
                broker,
                leader,
                tp,
                offset,
                leader_epoch,
                end_offset,
            } => write!(
                f,
                "[ReplicaFetcher replicaId={broker}, leaderId={leader}, fetcherId=0] Truncating partition {tp} to offset {offset} due to leader epoch and offset EpochEndOffset(errorCode=0, partition={}, leaderEpoch={leader_epoch}, endOffset={end_offset})",
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
                crate::log::Values(records)
            ),
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { text } => write!(f, "# {text}"),
            Event::TopicCreated {
                topic,
                replicas,
                brokers,
                min_insync_replicas,
            } => write!(
                f,
                "Created topic {topic} with replicas {} (leader {}), {brokers} broker(s), min.insync.replicas={min_insync_replicas}",
                Ids(replicas),
                OrNone(replicas.first().copied()),
            ),
        }
    }
}
