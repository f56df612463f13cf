//! What happened, as typed events. Each [`Event`] has the fields a reader needs (the UI
//! matches on them, never on text), a [`TraceKind`] and a [`Level`], and renders as the line
//! Kafka would write for it ([`std::fmt::Display`]): the transcript, the command-line runner
//! and the golden files print that rendering, byte for byte what the engine always wrote.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::log::{Record, Values};
use crate::types::{BrokerId, ElectionKind, ErrorCode, Ids, Node, OrNone, TimeMs, TopicPartition};

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
    // (end of the leader's events)

    // ---- the follower (fetcher.rs) --------------------------------------------------
    // (end of the follower's events)

    // ---- the clients (client.rs) ----------------------------------------------------
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
    /// The broker's log and checkpoint files are gone.
    DiskLost { broker: BrokerId },
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
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
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
            | Event::DiskLost { .. }
            | Event::ConfigSet { .. }
            | Event::LeaderElectionTool { .. } => TraceKind::Action,
            Event::ToolOutput { .. } => TraceKind::Readout,
            Event::BrokerShutDown { .. } | Event::BrokerStarted { .. } => TraceKind::Broker,
            Event::CommittedRecordsLost { .. } => TraceKind::Loss,
            Event::InvariantBroken { .. } => TraceKind::Violation,
            Event::Caption { .. } | Event::TopicCreated { .. } => TraceKind::Note,
        }
    }

    pub fn level(&self) -> Level {
        match self {
            Event::Line { level, .. } => *level,
            // the leader (partition.rs)
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
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
            | Event::DiskLost { .. }
            | Event::ConfigSet { .. }
            | Event::LeaderElectionTool { .. }
            | Event::ToolOutput { .. }
            | Event::BrokerShutDown { .. }
            | Event::BrokerStarted { .. } => Level::Info,
            Event::Caption { .. } | Event::TopicCreated { .. } => Level::Info,
        }
    }

    /// The broker whose log the line is from, if one.
    pub fn broker(&self) -> Option<BrokerId> {
        match self {
            Event::Line { broker, .. } => *broker,
            // the leader (partition.rs)
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
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
            | Event::DiskLost { .. }
            | Event::ConfigSet { .. }
            | Event::LeaderElectionTool { .. }
            | Event::InvariantBroken { .. } => None,
            Event::ToolOutput { broker, .. } => *broker,
            Event::BrokerShutDown { broker }
            | Event::BrokerStarted { broker, .. }
            | Event::CommittedRecordsLost { broker, .. } => Some(*broker),
            Event::Caption { .. } | Event::TopicCreated { .. } => None,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Line { text, .. } => f.write_str(text),
            // the leader (partition.rs)
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            Event::PartitionHasNoLeader {
                tp,
                isr,
                elr,
                leader_epoch,
            } => write!(
                f,
                "[QuorumController] Partition {tp} has no leader: no eligible replica (Isr: [{}] Elr: [{}]) leader epoch {leader_epoch}",
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
                    "[QuorumController] Setting new leader for topic {}, partition {} to {leader} using {how} (leader epoch {leader_epoch})",
                    tp.topic, tp.partition
                )
            }
            Event::RegistrationRejected { broker } => write!(
                f,
                "[QuorumController] Rejected registration of broker {broker}: DuplicateBrokerRegistrationException: Another broker is registered with that broker id."
            ),
            Event::BrokerRegistered {
                broker,
                broker_epoch,
            } => write!(
                f,
                "[QuorumController] Registered broker {broker} with broker epoch {broker_epoch} (fenced until it catches up)"
            ),
            Event::RegisteredAfterUncleanShutdown {
                broker,
                removed_from_isr_and_elr,
            } => {
                write!(
                    f,
                    "[QuorumController] Broker {broker} registered after an unclean shutdown"
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
                    "[QuorumController] Rejecting AlterPartition request from node {broker} for {tp} because it specified ineligible replicas "
                )?;
                for (i, (id, why)) in ineligible.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{id} ({why})")?;
                }
                write!(f, " in the new ISR {}", Ids(isr))
            }
            Event::BrokerControl { broker, what } => {
                f.write_str("[QuorumController] ")?;
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
            Event::DiskLost { broker } => write!(
                f,
                "broker {broker} lost its disk: its log and checkpoint files are gone (the process is down)"
            ),
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
                records,
                cause,
                ..
            } => {
                let (first, last) = match (records.first(), records.last()) {
                    (Some(a), Some(b)) => (a.offset, b.offset),
                    _ => (0, 0),
                };
                write!(
                    f,
                    "Committed records lost: offsets {first}..{last} ({}) are gone: {cause}.",
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
            } => write!(
                f,
                "Created topic {topic} with replicas {} (leader {}), {brokers} broker(s), min.insync.replicas={min_insync_replicas}",
                Ids(replicas),
                OrNone(replicas.first().copied()),
            ),
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
}

/// Why committed records are gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum LossCause {
    /// The last known leader was elected with ISR and ELR empty (Kafka counts it unclean).
    LastKnownLeader {
        broker: BrokerId,
    },
    UncleanElection {
        broker: BrokerId,
    },
    /// A replica that came back with an empty disk counted as in sync.
    LostDisk {
        broker: BrokerId,
        lost_disks: Vec<BrokerId>,
    },
    /// A clean election lost them: an engine bug (an invariant is broken too).
    CleanElection,
}

impl fmt::Display for LossCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LossCause::LastKnownLeader { broker } => write!(
                f,
                "broker {broker} was elected as the last known leader (ISR and ELR were empty; Kafka counts this as an unclean election) and does not have them"
            ),
            LossCause::UncleanElection { broker } => write!(
                f,
                "broker {broker} became leader through an unclean election and does not have them"
            ),
            LossCause::LostDisk { broker, lost_disks } => write!(
                f,
                "broker {broker} became leader after broker {} lost its disk (a replica that came back empty counted as in sync)",
                Ids(lost_disks)
            ),
            LossCause::CleanElection => f.write_str("a clean election (engine bug)"),
        }
    }
}
