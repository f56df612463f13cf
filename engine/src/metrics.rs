//! Kafka's metrics, under Kafka's names, read from the nodes as Kafka's gauges compute them
//! (`snapshot::KafkaMetrics`): the view model carries them and the `metrics` action prints
//! them. Gauges are computed from state when asked, as a Yammer gauge is; meters are the
//! counts their node keeps (`partition::BrokerMeters`, the controller's in `Metrics`).

use crate::broker::Broker;
use crate::config::Config;
use crate::controller::Controller;
use crate::partition::Role;
use crate::process::Process;
use crate::snapshot::{BrokerMetrics, KafkaMetrics, Metrics};
use crate::types::{BrokerId, ProcessState};
use crate::vec_map::VecMap;

/// One broker's metrics as its JMX shows them.
pub(crate) fn broker_metrics(config: &Config, b: &Broker) -> BrokerMetrics {
    let mut m = BrokerMetrics {
        broker: b.id,
        running: true,
        isr_shrinks: b.meters.isr_shrinks,
        isr_expands: b.meters.isr_expands,
        failed_produce_requests: b.meters.failed_produce_requests,
        // DelayedOperationPurgatory.watched for "Fetch": a DelayedFetch is watched under
        // each partition of its request.
        fetch_purgatory_size: b
            .delayed_fetches
            .iter()
            .map(|d| d.partitions.len() as u64)
            .sum(),
        ..BrokerMetrics::default()
    };
    for (tp, p) in &b.partitions {
        match &p.role {
            Role::Leader(l) => {
                // ReplicaManager: PartitionCount is allPartitions.size, LeaderCount
                // leaderPartitionsIterator.size (the partitions with a local leader log).
                m.partition_count += 1;
                m.leader_count += 1;
                // Partition.partitionState.isr: the committed ISR, not the maximal one.
                let isr = l.isr_state.isr().len();
                let replicas = l.replicas.len();
                // Partition.isUnderReplicated: "isLeader && (assignmentState.replicationFactor
                // - partitionState.isr.size) > 0".
                if replicas > isr {
                    m.under_replicated_partitions += 1;
                }
                // Partition.effectiveMinIsr: the leader log's min.insync.replicas, never
                // above remoteReplicasMap.size + 1 (the replica count); isUnderMinIsr and
                // isAtMinIsr compare the committed ISR with it.
                let min = b
                    .metadata
                    .as_deref()
                    .and_then(|i| i.min_insync_replicas(*tp))
                    .unwrap_or(config.min_insync_replicas) as usize;
                let min = min.min(replicas);
                if isr < min {
                    m.under_min_isr_partition_count += 1;
                } else if isr == min {
                    m.at_min_isr_partition_count += 1;
                }
                // "Produce" purgatory: a DelayedProduce watched under its one partition.
                m.produce_purgatory_size += l.purgatory.len() as u64;
            }
            Role::Follower(f) => {
                m.partition_count += 1;
                // AbstractFetcherManager's MaxLag: the largest FetcherLagMetrics.lag over the
                // partitions in a fetcher thread (a failed or removed partition is
                // unregistered: markPartitionFailed → removePartitions).
                if !f.failed && f.leader.is_some() {
                    m.replica_fetcher_max_lag = m.replica_fetcher_max_lag.max(f.lag.unwrap_or(0));
                }
            }
            Role::None => {}
        }
    }
    m
}

/// Every broker's metrics (a broker whose process is not running answers nothing), the
/// cluster's sums over the running ones, and the controller's.
pub(crate) fn kafka_metrics(
    config: &Config,
    brokers: &VecMap<BrokerId, Broker>,
    processes: &VecMap<BrokerId, Process>,
    controller: &Controller,
    counters: &Metrics,
) -> KafkaMetrics {
    let mut out = KafkaMetrics {
        unclean_leader_elections: counters.unclean_leader_elections,
        leader_elections: counters.leader_elections,
        ..KafkaMetrics::default()
    };
    let c = &mut out.cluster;
    for b in brokers.values() {
        if processes[&b.id].state != ProcessState::Running {
            out.brokers.push(BrokerMetrics {
                broker: b.id,
                ..BrokerMetrics::default()
            });
            continue;
        }
        let m = broker_metrics(config, b);
        c.running = true;
        c.under_replicated_partitions += m.under_replicated_partitions;
        c.under_min_isr_partition_count += m.under_min_isr_partition_count;
        c.at_min_isr_partition_count += m.at_min_isr_partition_count;
        c.partition_count += m.partition_count;
        c.leader_count += m.leader_count;
        c.isr_shrinks += m.isr_shrinks;
        c.isr_expands += m.isr_expands;
        c.failed_produce_requests += m.failed_produce_requests;
        c.replica_fetcher_max_lag = c.replica_fetcher_max_lag.max(m.replica_fetcher_max_lag);
        c.produce_purgatory_size += m.produce_purgatory_size;
        c.fetch_purgatory_size += m.fetch_purgatory_size;
        out.brokers.push(m);
    }
    // ControllerMetadataMetricsPublisher: OfflinePartitionsCount counts the partitions of the
    // image with no leader (`!partition.hasLeader()`).
    for p in controller.partitions.values() {
        if p.leader.is_none() {
            out.offline_partitions_count += 1;
        }
    }
    out
}
