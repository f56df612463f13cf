//! Kafka's metrics, under Kafka's names, read from the nodes as Kafka's gauges compute them
//! (`snapshot::KafkaMetrics`): the view model carries them and the `metrics` action prints
//! them. Gauges are computed from state when asked, as a Yammer gauge is; meters are the
//! counts their node keeps (`partition::BrokerMeters`, the controller's in `Metrics`); the
//! replication quotas' `byte-rate` is their sensor's rate measured at the time asked
//! (`quota::SampledRate::byte_rate`).

use crate::broker::Broker;
use crate::config::Config;
use crate::controller::Controller;
use crate::partition::Role;
use crate::process::Process;
use crate::snapshot::{BrokerMetrics, KafkaMetrics, Metrics};
use crate::types::{BrokerId, ProcessState, TimeMs};
use crate::vec_map::VecMap;

/// One broker's metrics as its JMX shows them at `now`.
pub(crate) fn broker_metrics(config: &Config, b: &Broker, now: TimeMs) -> BrokerMetrics {
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
        // QuotaManagers.leader and .follower (ReplicationQuotaManager's sensor, a SimpleRate).
        leader_replication_byte_rate: b.leader_quota.rate.byte_rate(now),
        follower_replication_byte_rate: b.fetcher.quota.rate.byte_rate(now),
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
                // OngoingReassignmentState.replicationFactor: the adding replicas do not
                // count while a reassignment runs.
                let adding = b
                    .metadata
                    .as_deref()
                    .and_then(|i| i.partition(*tp))
                    .map_or(0, |r| r.adding_replicas.len());
                let replicas = l.replicas.len() - adding.min(l.replicas.len());
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

/// Every broker's metrics at `now` (a broker whose process is not running answers nothing),
/// the cluster's sums over the running ones, and the controller's.
pub(crate) fn kafka_metrics(
    now: TimeMs,
    config: &Config,
    brokers: &VecMap<BrokerId, Broker>,
    processes: &VecMap<BrokerId, Process>,
    controller: &Controller,
    counters: &Metrics,
) -> KafkaMetrics {
    let mut out = KafkaMetrics {
        unclean_leader_elections: counters.unclean_leader_elections,
        leader_elections: counters.leader_elections,
        record_error_total: counters.record_errors,
        record_retry_total: counters.record_retries,
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
        let m = broker_metrics(config, b, now);
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
        c.leader_replication_byte_rate += m.leader_replication_byte_rate;
        c.follower_replication_byte_rate += m.follower_replication_byte_rate;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::DelayedFetch;
    use crate::partition::{DelayedProduce, FollowerState, IsrState, LeaderState};
    use crate::scenario::Scenario;
    use crate::types::{Node, Tp};

    /// A hand-built broker's metrics at time 0.
    fn at_0(config: &Config, b: &Broker) -> BrokerMetrics {
        broker_metrics(config, b, 0)
    }

    fn tp(partition: u16) -> Tp {
        Tp {
            topic: 0,
            partition,
        }
    }

    fn leader(replicas: &[u32], isr_state: IsrState) -> Role {
        Role::Leader(Box::new(LeaderState {
            leader_epoch: 0,
            partition_epoch: 0,
            epoch_start_offset: 0,
            isr_state,
            replicas: replicas.to_vec(),
            remote: VecMap::new(),
            purgatory: Vec::new(),
            high_watermark_at_start: 0,
        }))
    }

    fn committed(isr: &[u32]) -> IsrState {
        IsrState::Committed { isr: isr.to_vec() }
    }

    fn follower(lag: Option<u64>, failed: bool) -> Role {
        Role::Follower(FollowerState {
            leader: Some(2),
            leader_epoch: 0,
            partition_epoch: 0,
            in_flight_fetch: None,
            backing_off_until: None,
            failed,
            lag,
            fetch_state_lag: lag,
            awaiting_epoch_end: false,
        })
    }

    fn produce(request_id: u64) -> DelayedProduce {
        DelayedProduce {
            request_id,
            client: Node::Broker(9),
            first_offset: 0,
            required_offset: 1,
            created_ms: 0,
            deadline_ms: 30_000,
        }
    }

    /// Broker 1 holding partitions 0..roles.len() of one topic with these roles.
    fn broker(roles: Vec<Role>) -> Broker {
        let mut b = Broker::new(1, 0, (0..roles.len() as u16).map(tp));
        for (i, role) in roles.into_iter().enumerate() {
            b.partitions[&tp(i as u16)].role = role;
        }
        b
    }

    fn config(min_isr: u32) -> Config {
        Config {
            min_insync_replicas: min_isr,
            ..Config::default()
        }
    }

    #[test]
    fn under_replicated_counts_the_led_partitions_whose_committed_isr_is_short() {
        // PartitionTest.testUnderReplicatedPartitionsCorrectSemantics: ISR 2 of 3 replicas
        // is under-replicated, all 3 is not.
        let m = at_0(
            &config(1),
            &broker(vec![leader(&[1, 2, 3], committed(&[1, 2]))]),
        );
        assert_eq!(m.under_replicated_partitions, 1);
        let m = at_0(
            &config(1),
            &broker(vec![leader(&[1, 2, 3], committed(&[1, 2, 3]))]),
        );
        assert_eq!(m.under_replicated_partitions, 0);
        // partitionState.isr is the committed ISR: a pending expand to all three still
        // counts; a follower's partition never does (isLeader).
        let pending = IsrState::PendingExpand {
            isr: vec![1, 2],
            new_in_sync: 3,
            proposal: 1,
        };
        let m = at_0(
            &config(1),
            &broker(vec![leader(&[1, 2, 3], pending), follower(Some(0), false)]),
        );
        assert_eq!(m.under_replicated_partitions, 1);
    }

    #[test]
    fn under_and_at_min_isr_compare_the_isr_with_the_effective_minimum() {
        // PartitionTest.testAtMinIsr: min.insync.replicas 1 (the default), ISR [leader] of 3.
        let m = at_0(
            &config(1),
            &broker(vec![leader(&[1, 2, 3], committed(&[1]))]),
        );
        assert_eq!(
            (
                m.at_min_isr_partition_count,
                m.under_min_isr_partition_count
            ),
            (1, 0)
        );
        // PartitionTest.testIsUnderMinIsr: min 2, ISR of two: not under (at it); ISR of one:
        // under.
        let m = at_0(
            &config(2),
            &broker(vec![leader(&[1, 2], committed(&[1, 2]))]),
        );
        assert_eq!(
            (
                m.at_min_isr_partition_count,
                m.under_min_isr_partition_count
            ),
            (1, 0)
        );
        let m = at_0(&config(2), &broker(vec![leader(&[1, 2], committed(&[1]))]));
        assert_eq!(
            (
                m.at_min_isr_partition_count,
                m.under_min_isr_partition_count
            ),
            (0, 1)
        );
        // effectiveMinIsr: min 3 over two replicas counts as 2, so a full ISR is at it.
        let m = at_0(
            &config(3),
            &broker(vec![leader(&[1, 2], committed(&[1, 2]))]),
        );
        assert_eq!(
            (
                m.at_min_isr_partition_count,
                m.under_min_isr_partition_count
            ),
            (1, 0)
        );
    }

    #[test]
    fn counts_lag_and_purgatories_of_a_hand_built_broker() {
        let mut b = broker(vec![
            leader(&[1, 2, 3], committed(&[1, 2, 3])),
            leader(&[1, 2, 3], committed(&[1, 2])),
            follower(Some(7), false),
            // markPartitionFailed unregisters its lag.
            follower(Some(30), true),
            follower(None, false),
            Role::None,
        ]);
        if let Role::Leader(l) = &mut b.partitions[&tp(1)].role {
            l.purgatory = vec![produce(1), produce(2)];
        }
        b.delayed_fetches.push(DelayedFetch {
            fetch_id: 1,
            replica_id: 2,
            partitions: vec![(tp(0), 0, 0), (tp(1), 0, 0)],
            since_ms: 0,
            deadline_ms: 500,
        });
        b.meters.isr_shrinks = 4;
        let m = at_0(&config(1), &b);
        assert_eq!(
            m,
            BrokerMetrics {
                broker: 1,
                running: true,
                under_replicated_partitions: 1,
                under_min_isr_partition_count: 0,
                at_min_isr_partition_count: 0,
                // allPartitions: the five it hosts (a failed follower's too), not the one
                // it has no role for.
                partition_count: 5,
                leader_count: 2,
                isr_shrinks: 4,
                isr_expands: 0,
                failed_produce_requests: 0,
                replica_fetcher_max_lag: 7,
                produce_purgatory_size: 2,
                // A DelayedFetch is watched under each of its two partitions.
                fetch_purgatory_size: 2,
                // No throttled traffic: no sensor, read as 0.
                leader_replication_byte_rate: 0,
                follower_replication_byte_rate: 0,
            }
        );
    }

    /// Kafka's metrics at the end of a scenario.
    fn metrics_of(json: &str) -> KafkaMetrics {
        let s = Scenario::from_json(json).expect("scenario");
        crate::run(&s, true).expect("runs").kafka_metrics()
    }

    #[test]
    fn isr_shrinks_and_expands_are_marked_on_the_leader_when_the_controller_accepts() {
        // A frozen follower is shrunk out by its leader's isr-expiration task and expanded
        // back after it thaws: one of each on broker 1 (AlterPartitionListener), none on the
        // others. A controller-side ISR change (a fenced broker) marks no broker's meter.
        let m = metrics_of(
            r#"{"brokers": 3, "config": {"replica.lag.time.max.ms": 1000},
              "timeline": [{"at": 100, "action": "freeze", "broker": 3},
                           {"at": 200, "action": "produce", "values": ["a"], "acks": "1"},
                           {"at": 4000, "action": "thaw", "broker": 3}],
              "end_ms": 8000}"#,
        );
        let shrinks: Vec<u64> = m.brokers.iter().map(|b| b.isr_shrinks).collect();
        let expands: Vec<u64> = m.brokers.iter().map(|b| b.isr_expands).collect();
        assert_eq!((shrinks, expands), (vec![1, 0, 0], vec![1, 0, 0]));
        assert_eq!((m.cluster.isr_shrinks, m.cluster.isr_expands), (1, 1));
        let m = metrics_of(
            r#"{"brokers": 3, "timeline": [{"at": 100, "action": "kill", "broker": 3}],
              "end_ms": 15000}"#,
        );
        assert_eq!(m.cluster.isr_shrinks, 0, "the controller shrank it: {m:?}");
        assert!(!m.brokers[2].running);
        assert_eq!(m.cluster.under_replicated_partitions, 1);
    }

    #[test]
    fn failed_produce_requests_count_not_enough_replicas_but_not_not_leader() {
        // ReplicaManager.appendToLocalLog: NotEnoughReplicasException marks
        // failedProduceRequestRate; NOT_LEADER_OR_FOLLOWER is a known error and does not.
        let m = metrics_of(
            r#"{"brokers": 3, "config": {"min.insync.replicas": 3, "retries": 0},
              "timeline": [{"at": 100, "action": "kill", "broker": 3},
                           {"at": 15000, "action": "produce", "values": ["a"]},
                           {"at": 15100, "action": "produce", "values": ["b"], "acks": "1", "to": 2}],
              "end_ms": 16000}"#,
        );
        assert_eq!(
            (
                m.brokers[0].failed_produce_requests,
                m.brokers[1].failed_produce_requests
            ),
            (1, 0),
            "{m:?}"
        );
    }

    #[test]
    fn unclean_elections_and_offline_partitions() {
        // UncleanLeaderElectionTest.verifyUncleanLeaderElectionEnabled: RF 2, the follower
        // shut down (count 0), then the leader, and the follower started: it is elected
        // uncleanly, count 1. Without a leader in between, OfflinePartitionsCount is 1.
        let script = |end: u64| {
            format!(
                r#"{{"brokers": 2, "config": {{"unclean.leader.election.enable": true}},
                  "timeline": [{{"at": 100, "action": "produce", "values": ["first"]}},
                               {{"at": 1000, "action": "stop", "broker": 2}},
                               {{"at": 6000, "action": "produce", "values": ["second"]}},
                               {{"at": 7000, "action": "stop", "broker": 1}},
                               {{"at": 12000, "action": "start", "broker": 2}}],
                  "end_ms": {end}}}"#
            )
        };
        let m = metrics_of(&script(6500));
        assert_eq!(
            (m.unclean_leader_elections, m.offline_partitions_count),
            (0, 0)
        );
        let m = metrics_of(&script(11000));
        assert_eq!(
            (m.unclean_leader_elections, m.offline_partitions_count),
            (0, 1)
        );
        let m = metrics_of(&script(30000));
        assert_eq!(
            (m.unclean_leader_elections, m.offline_partitions_count),
            (1, 0),
            "{m:?}"
        );
        // One election of a leader: broker 2's at 12 s (broker 1 led from the topic's
        // creation, which is no election; losing it is a change to no leader).
        assert_eq!(m.leader_elections, 1);
    }

    #[test]
    fn the_read_out_prints_one_line_per_broker_and_the_cluster() {
        let m = metrics_of(
            r#"{"brokers": 2, "timeline": [{"at": 100, "action": "kill", "broker": 2}],
              "end_ms": 15000}"#,
        );
        assert_eq!(
            m.lines(Some("UnderReplicatedPartitions")),
            [
                "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions broker=1 Value=1",
                "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions broker=2 (not running)",
                "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions cluster Value=1",
            ]
        );
        assert_eq!(
            m.lines(Some("UncleanLeaderElectionsPerSec")),
            ["kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec controller Count=0"]
        );
        // Every metric: three lines for each of the broker's thirteen, one for each of the
        // controller's three and the producer's two.
        assert_eq!(m.lines(None).len(), 13 * 3 + 3 + 2);
        assert_eq!(
            m.lines(Some("record-error-total")),
            ["kafka.producer:type=producer-metrics,client-id=producer-1 record-error-total=0"]
        );
    }
}
