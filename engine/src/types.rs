//! Small shared vocabulary: ids, nodes, Kafka error codes, acks.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A broker's node id (1..=12).
pub type BrokerId = u32;
/// Simulated time in milliseconds since the scenario started.
pub type TimeMs = u64;

/// A topic partition, kept in every identifier so more partitions can come later.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: u32,
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// A partition as the engine names it inside: its topic's index in the cluster's topics
/// table (creation order) and its partition index. Small and `Copy`, so that maps keyed by
/// partition, timers and messages stay cheap at hundreds of partitions; the name
/// ([`TopicPartition`]) comes from the topics table (`metadata::Topics`) where a line is
/// rendered. Kafka's wire does the same with a topic id and a partition index
/// (FetchRequestData.FetchTopic.topicId).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tp {
    pub topic: u16,
    pub partition: u16,
}

/// The first partition of the first topic: a version-1 scenario's one partition (tests).
#[cfg(test)]
pub(crate) const TP0: Tp = Tp {
    topic: 0,
    partition: 0,
};

/// An endpoint of the simulated network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    Broker(BrokerId),
    /// The KRaft controller quorum, modelled as one always-available node.
    Controller,
    /// A client (producer or consumer) by client number.
    Client(u32),
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Broker(b) => write!(f, "broker {b}"),
            Node::Controller => f.write_str("controller"),
            Node::Client(c) => write!(f, "client {c}"),
        }
    }
}

/// Kafka's error codes that this simulation can produce, spelled as Kafka spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum ErrorCode {
    NONE,
    OFFSET_OUT_OF_RANGE,
    NOT_LEADER_OR_FOLLOWER,
    REQUEST_TIMED_OUT,
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    FENCED_LEADER_EPOCH,
    UNKNOWN_LEADER_EPOCH,
    LEADER_NOT_AVAILABLE,
    INVALID_REQUEST,
    INVALID_UPDATE_VERSION,
    INELIGIBLE_REPLICA,
    NOT_CONTROLLER,
    STALE_BROKER_EPOCH,
    ELECTION_NOT_NEEDED,
    ELIGIBLE_LEADERS_NOT_AVAILABLE,
    PREFERRED_LEADER_NOT_AVAILABLE,
    /// ProducerAppendInfo.checkSequence: the batch's sequence does not follow the producer's
    /// last one (OutOfOrderSequenceException).
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    /// ProducerAppendInfo.checkProducerEpoch: the batch's producer epoch is older than the
    /// one the partition last saw (InvalidProducerEpochException).
    INVALID_PRODUCER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
    NETWORK_EXCEPTION,
    OPERATION_NOT_ATTEMPTED,
    OFFSET_NOT_AVAILABLE,
    NEW_LEADER_ELECTED,
    /// InvalidReplicaAssignmentException (AlterPartitionReassignments).
    INVALID_REPLICA_ASSIGNMENT,
    /// NoReassignmentInProgressException (a cancel with nothing to cancel).
    NO_REASSIGNMENT_IN_PROGRESS,
    /// The producer's own TimeoutException: the batch expired after delivery.timeout.ms.
    DELIVERY_TIMEOUT,
}

impl ErrorCode {
    /// Kafka's numeric error code.
    pub fn code(self) -> i16 {
        use ErrorCode::*;
        match self {
            NONE => 0,
            OFFSET_OUT_OF_RANGE => 1,
            LEADER_NOT_AVAILABLE => 5,
            NOT_LEADER_OR_FOLLOWER => 6,
            REQUEST_TIMED_OUT => 7,
            NOT_CONTROLLER => 41,
            INVALID_REQUEST => 42,
            NOT_ENOUGH_REPLICAS => 19,
            NOT_ENOUGH_REPLICAS_AFTER_APPEND => 20,
            ELECTION_NOT_NEEDED => 84,
            PREFERRED_LEADER_NOT_AVAILABLE => 80,
            ELIGIBLE_LEADERS_NOT_AVAILABLE => 83,
            FENCED_LEADER_EPOCH => 74,
            UNKNOWN_LEADER_EPOCH => 75,
            STALE_BROKER_EPOCH => 77,
            INVALID_UPDATE_VERSION => 95,
            INELIGIBLE_REPLICA => 107,
            OUT_OF_ORDER_SEQUENCE_NUMBER => 45,
            INVALID_PRODUCER_EPOCH => 47,
            UNKNOWN_TOPIC_OR_PARTITION => 3,
            NETWORK_EXCEPTION => 13,
            OPERATION_NOT_ATTEMPTED => 55,
            OFFSET_NOT_AVAILABLE => 78,
            NEW_LEADER_ELECTED => 112,
            INVALID_REPLICA_ASSIGNMENT => 39,
            NO_REASSIGNMENT_IN_PROGRESS => 85,
            DELIVERY_TIMEOUT => -1,
        }
    }

    /// Kafka's RetriableException subclasses, as the producer treats them.
    /// OutOfOrderSequenceException and InvalidProducerEpochException are plain
    /// ApiExceptions: the idempotent producer retries the first by its own rule
    /// (TransactionManager.canRetry, in `client.rs`) and fails a batch on the second.
    pub fn is_retriable(self) -> bool {
        use ErrorCode::*;
        matches!(
            self,
            NOT_LEADER_OR_FOLLOWER
                | REQUEST_TIMED_OUT
                | NOT_ENOUGH_REPLICAS
                | NOT_ENOUGH_REPLICAS_AFTER_APPEND
                | LEADER_NOT_AVAILABLE
                | FENCED_LEADER_EPOCH
                | UNKNOWN_LEADER_EPOCH
                | OFFSET_OUT_OF_RANGE
                | UNKNOWN_TOPIC_OR_PARTITION
                | NETWORK_EXCEPTION
                | OFFSET_NOT_AVAILABLE
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The producer's `acks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Acks {
    #[serde(rename = "0")]
    Zero,
    #[serde(rename = "1")]
    One,
    /// `acks=all`, -1 on the wire.
    #[serde(rename = "all", alias = "-1")]
    All,
}

impl fmt::Display for Acks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Acks::Zero => "0",
            Acks::One => "1",
            Acks::All => "all",
        })
    }
}

/// Broker ids as Kafka's tools print them: `1,2,3`. A `Display`, so a log line writes the
/// ids in place: no String per id and no Vec of them to join (each such join was its own
/// few hundred bytes of wasm at every call site).
pub struct Ids<'a>(pub &'a [BrokerId]);

impl fmt::Display for Ids<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Joined(self.0, ",").fmt(f)
    }
}

/// Broker ids with `.1` between them, written in place ([`Ids`] uses `,`, the invariants'
/// messages `, ` as `{:?}` does).
pub struct Joined<'a>(pub &'a [BrokerId], pub &'static str);

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, id) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(self.1)?;
            }
            fmt::Display::fmt(id, f)?;
        }
        Ok(())
    }
}

/// An optional number as the log lines print it: the number, or `none` (written in place,
/// not through a String made for it).
pub struct OrNone<T>(pub Option<T>);

impl<T: fmt::Display> fmt::Display for OrNone<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(v) => v.fmt(f),
            None => f.write_str("none"),
        }
    }
}

/// The ids of `ids` for which `keep` holds, in order. One function (the predicate through
/// `dyn`) for the engine's id filters: each `iter().copied().filter(..).collect()` was its
/// own ~300 bytes of wasm.
#[inline(never)]
pub fn ids_where(ids: &[BrokerId], keep: &dyn Fn(BrokerId) -> bool) -> Vec<BrokerId> {
    let mut out = Vec::new();
    for &id in ids {
        if keep(id) {
            out.push(id);
        }
    }
    out
}

/// Joins broker ids as Kafka's tools print them: `1,2,3`.
pub fn join_ids(ids: &[BrokerId]) -> String {
    Ids(ids).to_string()
}

/// How a new leader was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ElectionKind {
    /// From the ISR.
    Clean,
    /// From the ELR while the ISR was empty (KIP-966).
    Elr,
    /// The last known leader, when ISR and ELR are empty (balanced recovery; Kafka marks it
    /// unclean).
    LastKnownLeader,
    /// From outside the ISR and ELR: committed records may be lost.
    Unclean,
}

/// What kind of request or response a message on the wire is, by Kafka's API names (a
/// connection reset is the network's, not an API's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MessageKind {
    Fetch,
    FetchResponse,
    Produce,
    ProduceResponse,
    ConsumerFetch,
    ConsumerFetchResponse,
    BrokerRegistration,
    BrokerRegistrationResponse,
    BrokerHeartbeat,
    BrokerHeartbeatResponse,
    AlterPartition,
    AlterPartitionResponse,
    Metadata,
    ConnectionReset,
}

impl MessageKind {
    /// The API's name, as written in labels and the legend (`FetchResponse`).
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::Fetch => "Fetch",
            MessageKind::FetchResponse => "FetchResponse",
            MessageKind::Produce => "Produce",
            MessageKind::ProduceResponse => "ProduceResponse",
            MessageKind::ConsumerFetch => "ConsumerFetch",
            MessageKind::ConsumerFetchResponse => "ConsumerFetchResponse",
            MessageKind::BrokerRegistration => "BrokerRegistration",
            MessageKind::BrokerRegistrationResponse => "BrokerRegistrationResponse",
            MessageKind::BrokerHeartbeat => "BrokerHeartbeat",
            MessageKind::BrokerHeartbeatResponse => "BrokerHeartbeatResponse",
            MessageKind::AlterPartition => "AlterPartition",
            MessageKind::AlterPartitionResponse => "AlterPartitionResponse",
            MessageKind::Metadata => "Metadata",
            MessageKind::ConnectionReset => "ConnectionReset",
        }
    }
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a broker's process is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessState {
    Running,
    /// SIGSTOP: nothing runs; what arrives waits in the socket buffer.
    Frozen,
    /// kill -9: the process is gone; its disk stays.
    Killed,
    /// Stopped after a controlled shutdown (SIGTERM).
    Stopped,
}

impl ProcessState {
    /// The process exists (running or frozen).
    pub fn is_up(self) -> bool {
        matches!(self, ProcessState::Running | ProcessState::Frozen)
    }
}

/// A link between two nodes, its endpoints in order (a link is the same either way).
pub fn link(a: Node, b: Node) -> (Node, Node) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}
