//! What a handler asks of the simulator. For now: the timers a node sets, and what the queue
//! holds ([`Scheduled`]), here so that this module needs nothing from the simulator (`sim`
//! imports it, not the other way).

use crate::types::BrokerId;

/// Timers that belong to one broker process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokerTimer {
    /// The fetcher sends its next Fetch (generation guards against stale timers).
    SendFetch { generation: u64 },
    /// replica.socket.timeout.ms passed with no response to this fetch.
    FetchTimeout { fetch_id: u64 },
    /// replica.fetch.wait.max.ms passed for a fetch held by the leader.
    HeldFetchExpire { fetch_id: u64 },
    /// ReplicaManager's isr-expiration task (every replica.lag.time.max.ms / 2). The
    /// generation is the broker's `isr_expiration_generation` when it was scheduled; a change
    /// of replica.lag.time.max.ms bumps it, so the task queued at the old period is stale.
    IsrExpiration { generation: u64 },
    /// ReplicaManager's highwatermark-checkpoint task.
    HwCheckpoint,
    /// BrokerLifecycleManager's heartbeat.
    Heartbeat,
    /// One heartbeat out of turn (the periodic one keeps its own schedule).
    HeartbeatOnce,
    /// A DelayedProduce's request timeout.
    ProduceExpire { request_id: u64 },
    /// Give up waiting for the controller during controlled shutdown.
    ShutdownTimeout,
    /// controller.socket.timeout.ms passed with no answer to this AlterPartition request.
    AlterPartitionTimeout { request_id: u64 },
    /// DefaultAlterPartitionManager retries after a top-level error.
    AlterPartitionRetry,
    /// BrokerLifecycleManager: (re)send the registration until it is answered.
    Register,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControllerTimer {
    SessionCheck { broker: BrokerId },
    UncleanElection,
    PreferredRebalance,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientTimer {
    /// The producer (re)sends the current batch of a job.
    ProducerSend { job: u64 },
    /// The producer's in-flight request got no answer in time.
    ProducerRequestTimeout { job: u64, request_id: u64 },
    /// A batch reaches `delivery.timeout.ms`: Sender.sendProducerData expires it wherever it
    /// is (held in the accumulator, backing off, or in flight), at that very time.
    ProducerExpire { job: u64, batch: u64 },
}

/// What the queue holds: a message to deliver or a node's timer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheduled {
    Deliver {
        message_id: u64,
    },
    Broker {
        broker: BrokerId,
        incarnation: u32,
        timer: BrokerTimer,
    },
    Controller(ControllerTimer),
    Client(ClientTimer),
}
