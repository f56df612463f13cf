//! A cluster of several topics and partitions (scenario format version 2), run end to end:
//! the replicas placed (StripedReplicaPlacer, rack-aware) or assigned, writes to the
//! partition named, the read-outs per partition as Kafka's tools print them, a broker's
//! failure handled partition by partition, and the same bytes on every run.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::{Scenario, Sim};

#[path = "common/describe.rs"]
mod describe;
use describe::describe_fields;

const CLUSTER: &str = r#"{
  "version": 2, "brokers": 4, "seed": 7,
  "racks": {"1": "a", "2": "a", "3": "b", "4": "b"},
  "config": {"num.replica.fetchers": 2},
  "topics": [
    {"name": "orders", "partitions": 4, "replication_factor": 3,
     "configs": {"min.insync.replicas": 2}},
    {"name": "move", "assignment": [[1, 2], [2, 3]]}
  ],
  "timeline": [
    {"at": 100, "action": "produce", "topic": "orders", "partition": 2, "prefix": "v", "count": 5},
    {"at": 1000, "action": "offsets"},
    {"at": 1000, "action": "describe"},
    {"at": 1000, "action": "fetcher_threads"},
    {"at": 2000, "action": "kill", "broker": 1},
    {"at": 20000, "action": "describe"},
    {"at": 20000, "action": "offsets"},
    {"at": 20000, "action": "checkpoints"}
  ],
  "end_ms": 21000
}"#;

fn run() -> Sim {
    let scenario = Scenario::from_json(CLUSTER).expect("a valid version-2 scenario");
    let sim = watermark_engine::run(&scenario, true).expect("runs");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    sim
}

/// The tool lines at `t` that start with `prefix`.
fn lines_at(sim: &Sim, t: u64, prefix: &str) -> Vec<String> {
    sim.trace_events()
        .filter(|e| e.time_ms == t && e.text().starts_with(prefix))
        .map(|e| e.text().clone())
        .collect()
}

#[test]
fn replicas_are_placed_rack_aware_or_as_assigned() {
    let sim = run();
    // kafka-topics.sh --describe: the topics in the tool's order (its HashMap puts both
    // names in one bucket, so sorted by name, as TopicService.getTopics lists them), each
    // with its topic line (the topic's own min.insync.replicas among its Configs), then a
    // line per partition.
    let all = lines_at(&sim, 1000, "Topic: ");
    assert_eq!(
        all.len(),
        8,
        "a topic line per topic, a line per partition: {all:?}"
    );
    assert!(
        all[0].starts_with("Topic: move TopicId: ")
            && all[0].ends_with(" PartitionCount: 2 ReplicationFactor: 2 Configs:"),
        "{all:?}"
    );
    assert!(
        all[3].starts_with("Topic: orders TopicId: ")
            && all[3].ends_with(
                " PartitionCount: 4 ReplicationFactor: 3 Configs: min.insync.replicas=2"
            ),
        "{all:?}"
    );
    let before: Vec<String> = all
        .iter()
        .filter(|l| l.contains(" Partition: "))
        .cloned()
        .collect();
    assert_eq!(before.len(), 6, "a line per partition: {before:?}");
    for line in &before[2..] {
        let (replicas, isr, leader) = describe_fields(line);
        // StripedReplicaPlacer: three distinct brokers, over both racks (min(RF, racks) = 2),
        // the first the leader, all in sync at the start.
        let mut distinct = replicas.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{line}");
        assert!(
            replicas.iter().any(|b| *b <= 2) && replicas.iter().any(|b| *b >= 3),
            "{line}"
        );
        assert_eq!(leader, replicas.first().copied(), "{line}");
        assert_eq!(isr, replicas, "{line}");
    }
    // The manual assignment, as given.
    assert!(before[0].starts_with("Topic: move Partition: 0 Leader: 1 Replicas: 1,2 Isr: 1,2"));
    assert!(before[1].starts_with("Topic: move Partition: 1 Leader: 2 Replicas: 2,3 Isr: 2,3"));
}

#[test]
fn writes_reach_the_partition_named_and_offsets_are_per_partition() {
    let sim = run();
    // kafka-get-offsets.sh without --topic: topic:partition:offset for every partition.
    assert_eq!(
        lines_at(&sim, 1000, "orders:")
            .into_iter()
            .chain(lines_at(&sim, 1000, "move:"))
            .collect::<Vec<_>>(),
        [
            "orders:0:0",
            "orders:1:0",
            "orders:2:5",
            "orders:3:0",
            "move:0:0",
            "move:1:0"
        ]
    );
    // acks=all under the topic's min.insync.replicas=2: answered.
    assert!(sim.trace_events().any(|e| e
        .text()
        .starts_with("acks=all -> orders-2: ok, offsets=0..4")));
}

#[test]
fn each_follower_runs_a_fetcher_thread_per_leader_and_fetcher_id() {
    let sim = run();
    let threads = lines_at(&sim, 1000, "broker ");
    assert_eq!(threads.len(), 4, "{threads:?}");
    for line in &threads {
        let (broker, names) = line.split_once(": ").expect("broker N: ...");
        let me: u32 = broker["broker ".len()..].parse().expect("an id");
        for name in names.split(' ').filter(|n| n.starts_with('"')) {
            // ReplicaFetcherThread-{fetcherId}-{leaderId}: fetcher ids 0 and 1
            // (num.replica.fetchers=2), never a thread fetching from itself.
            let parts: Vec<&str> = name.trim_matches('"').split('-').collect();
            assert_eq!(parts[0], "ReplicaFetcherThread", "{line}");
            let (id, leader): (u32, u32) = (parts[1].parse().unwrap(), parts[2].parse().unwrap());
            assert!(id < 2 && leader != me, "{line}");
        }
    }
}

#[test]
fn a_failed_broker_leaves_every_isr_and_its_leaderships_move() {
    let sim = run();
    let after: Vec<String> = lines_at(&sim, 20000, "Topic: ")
        .into_iter()
        .filter(|l| l.contains(" Partition: "))
        .collect();
    assert_eq!(after.len(), 6);
    for line in &after {
        let (replicas, isr, leader) = describe_fields(line);
        // handleBrokerFenced walks every partition with broker 1 in its ISR.
        assert!(!isr.contains(&1), "{line}");
        // A partition whose only other replica is alive gets a leader from its ISR.
        if replicas.iter().any(|r| *r != 1) {
            let l = leader.expect("a leader");
            assert!(l != 1 && isr.contains(&l), "{line}");
        }
    }
    // The records written to orders-2 are still there.
    assert!(lines_at(&sim, 20000, "orders:2:5").len() == 1);
    // Each broker's replication-offset-checkpoint lists the partitions it holds.
    let checkpoints = lines_at(&sim, 20000, "broker ");
    assert!(
        checkpoints.iter().any(|l| l == "broker 3: move 1 0"),
        "{checkpoints:?}"
    );
}

#[test]
fn a_cluster_runs_to_the_same_bytes_every_time() {
    assert_eq!(run().transcript(), run().transcript());
}

/// Keys, sizes and fetch limits end to end (issue 14, steps 5 and 6): keyed records go to
/// `BuiltInPartitioner.partitionForKey` = toPositive(murmur2(key)) % 4, with UtilsTest's
/// murmur2 values: "foobar" -790332482 → 1357151166 % 4 = 2; "abc" 479470107 % 4 = 3;
/// "21" -973932308 → 1173551340 % 4 = 0. The 31 keyless 1 KiB records (1033 bytes each) go
/// to the sticky partition: 15 fill a batch (61 + 15 × 1033 = 15556 of 16384), the 16th
/// starts a second batch there (the switch waits for a full batch), and the 31st closes it
/// with 31112 bytes produced and goes to the next partition drawn: 30 on one partition, 1 on
/// another (the draw may give the same partition again: seed 5's does not).
/// replica.fetch.max.bytes 4000 is below a batch: each fetch
/// takes the first batch alone (KIP-74), and every follower still catches up.
const KEYS: &str = r#"{
  "version": 2, "brokers": 3, "seed": 5,
  "config": {"replica.fetch.max.bytes": 4000},
  "topics": [{"name": "orders", "assignment": [[1, 2, 3], [2, 3, 1], [3, 1, 2], [1, 2, 3]]}],
  "timeline": [
    {"at": 100, "action": "produce", "prefix": "f", "count": 3, "key": "foobar"},
    {"at": 100, "action": "produce", "prefix": "a", "count": 2, "key": "abc"},
    {"at": 100, "action": "produce", "values": ["x"], "key": "21", "size": 10},
    {"at": 200, "action": "produce", "prefix": "s", "count": 31},
    {"at": 5000, "action": "offsets"},
    {"at": 5000, "action": "dump_log", "broker": 2, "topic": "orders", "partition": 0}
  ],
  "end_ms": 6000
}"#;

#[test]
fn keyed_records_go_to_their_keys_partition_and_keyless_ones_stick() {
    let scenario = Scenario::from_json(KEYS).expect("a valid version-2 scenario");
    let sim = watermark_engine::run(&scenario, true).expect("runs");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let hw: Vec<u64> = lines_at(&sim, 5000, "orders:")
        .iter()
        .map(|l| l.rsplit(':').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(hw.len(), 4);
    // What the keys put on partitions 0, 2 and 3; the rest is the keyless records'.
    let keyless: Vec<u64> = hw
        .iter()
        .zip([1, 0, 3, 2])
        .map(|(h, keyed)| h.checked_sub(keyed).expect("the keyed records are there"))
        .filter(|n| *n > 0)
        .collect();
    let mut sorted = keyless.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [1, 30],
        "keyless records per partition (HWs {hw:?})"
    );
    // Every replica caught up (HW = LEO on every broker, fetching batch by batch).
    for b in sim.snapshot().brokers {
        assert_eq!(b.log_end_offset, b.high_watermark, "broker {}", b.id);
    }
    // kafka-dump-log.sh on broker 2 (a follower of orders-0): the keyed batch with its
    // position and size. The record: attributes 1 + offset delta 1 + timestamp delta 1 + key
    // (varint(2) 1 + 2) + value (varint(10) 1 + 10) + headers 1 = 18, plus varint(18) 1: 19;
    // the batch 61 + 19 = 80 bytes, at position 0.
    let dump = lines_at(&sim, 5000, "  baseOffset: 0 ");
    assert_eq!(
        dump,
        ["  baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 0 position: 0 size: 80"]
    );
    assert!(sim.trace_events().any(|e| e.time_ms == 5000
        && e.text()
            == "    | offset: 0 keySize: 2 valueSize: 10 sequence: 0 headerKeys: [] key: 21 payload: x"));
}

/// `partitioner.ignore.keys` (KafkaProducer.partition: `if (serializedKey != null &&
/// !partitionerIgnoreKeys)`): before it, "foobar"'s three records go to its partition (2, as
/// above); set to true, 31 records of that key and 1 KiB go where keyless ones would, the
/// sticky partition, 30 on one partition and the 31st on the next drawn (the switch after a
/// full batch, as above), each produce result naming its partition; no record of them on
/// partition 2 (seed 5's draws are 1, then 0). `partitioner.adaptive.partitioning.enable`
/// false draws the same (the queues are empty whenever the partitioner looks: docs/engine.md
/// simplification 21), and a value that is not a boolean is refused naming the config.
#[test]
fn a_keyed_produce_goes_sticky_with_partitioner_ignore_keys() {
    let text = |adaptive: &str| {
        format!(
            r#"{{"version": 2, "brokers": 3, "seed": 5, "config": {{{adaptive}}},
            "topics": [{{"name": "orders", "assignment": [[1, 2, 3], [2, 3, 1], [3, 1, 2], [1, 2, 3]]}}],
            "timeline": [
              {{"at": 100, "action": "produce", "prefix": "f", "count": 3, "key": "foobar"}},
              {{"at": 200, "action": "set_config", "name": "partitioner.ignore.keys", "value": "true"}},
              {{"at": 300, "action": "produce", "prefix": "s", "count": 31, "key": "foobar", "size": 1024}},
              {{"at": 5000, "action": "offsets"}}
            ],
            "end_ms": 6000}}"#
        )
    };
    let sim = watermark_engine::run(&Scenario::from_json(&text("")).unwrap(), true).unwrap();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let results: Vec<(u64, String)> = sim
        .trace_events()
        .filter(|e| {
            e.text().starts_with("acks=all -> ") || e.text().starts_with("kafka-configs.sh")
        })
        .map(|e| (e.time_ms, e.text()))
        .collect();
    assert_eq!(
        results,
        [
            (
                104,
                "acks=all -> orders-2: ok, offsets=0..2 (waited 4 ms)".to_string()
            ),
            (
                200,
                "kafka-configs.sh --alter --add-config partitioner.ignore.keys=true".to_string()
            ),
            (
                304,
                "acks=all -> orders-1: ok, offsets=0..14 (waited 4 ms)".to_string()
            ),
            (
                304,
                "acks=all -> orders-0: ok, offset=0 (waited 4 ms)".to_string()
            ),
            (
                308,
                "acks=all -> orders-1: ok, offsets=15..29 (waited 4 ms)".to_string()
            ),
        ]
    );
    assert_eq!(
        lines_at(&sim, 5000, "orders:"),
        ["orders:0:1", "orders:1:30", "orders:2:3", "orders:3:0"]
    );
    let adaptive_off = watermark_engine::run(
        &Scenario::from_json(&text(
            r#""partitioner.adaptive.partitioning.enable": false"#,
        ))
        .unwrap(),
        true,
    )
    .unwrap();
    assert_eq!(
        lines_at(&adaptive_off, 5000, "orders:"),
        lines_at(&sim, 5000, "orders:")
    );
    let mut config = watermark_engine::Config::default();
    let e = config
        .set(
            "partitioner.ignore.keys",
            &serde_json::from_str("\"maybe\"").unwrap(),
        )
        .unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        (
            "partitioner.ignore.keys",
            "partitioner.ignore.keys must be true or false, got maybe"
        )
    );
    let e =
        Scenario::from_json(&text(r#""partitioner.adaptive.partitioning.enable": 1"#)).unwrap_err();
    assert_eq!(e.field, "config.partitioner.adaptive.partitioning.enable");
}

/// Step 10, auto.leader.rebalance.enable as KRaft runs it: broker 1, the preferred leader of
/// both partitions, is killed and comes back; its leaderships stay with the others until the
/// balancing task, queued leader.imbalance.check.interval.seconds (300 s) after the controller
/// saw the imbalance (QuorumController.maybeScheduleNextBalancePartitionLeaders), elects the
/// preferred replicas (ReplicationControlManager.maybeBalancePartitionLeaders). With the
/// config off, they stay.
#[test]
fn the_controller_moves_leaderships_back_to_the_preferred_replicas_300_s_after_an_imbalance() {
    let scenario = |enable: &str| {
        Scenario::from_json(&format!(
            r#"{{"version": 2, "brokers": 3,
            "topics": [{{"name": "a", "assignment": [[1, 2, 3], [1, 3, 2]]}}],
            "config": {{{enable}}},
            "timeline": [{{"at": 1000, "action": "kill", "broker": 1}},
                         {{"at": 20000, "action": "start", "broker": 1}},
                         {{"at": 400000, "action": "describe"}}],
            "end_ms": 400000}}"#
        ))
        .unwrap()
    };
    // Fenced at 1 s + broker.session.timeout.ms (9 s, from its last heartbeat): leaders 2 and
    // 3; back to 1 `interval_ms` after the controller saw the imbalance (at the fencing).
    let back_after = |config: &str, interval_ms: u64| {
        let sim = watermark_engine::run(&scenario(config), true).unwrap();
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
        let moved: Vec<(u64, String)> = sim
            .trace_events()
            .filter(|e| {
                e.text()
                    .starts_with("[QuorumController] Setting new leader")
            })
            .map(|e| (e.time_ms, e.text()))
            .collect();
        assert_eq!(
            moved.len(),
            4,
            "two elections at the fencing, two back: {moved:?}"
        );
        let fenced_at = moved[0].0;
        for (t, line) in &moved[2..] {
            assert_eq!(*t, fenced_at + interval_ms, "{moved:?}");
            assert!(
                line.contains(" to 1 using a clean election (leader epoch 2)"),
                "{line}"
            );
        }
        sim
    };
    let sim = back_after("", 300_000);
    // leader.imbalance.check.interval.seconds (ReplicationConfigs; the controller's
    // leaderImbalanceCheckIntervalNs) set to 60.
    back_after(r#""leader.imbalance.check.interval.seconds": 60"#, 60_000);
    let lines = lines_at(&sim, 400_000, "Topic: a Partition:");
    for line in &lines {
        assert_eq!(describe_fields(line).2, Some(1), "{line}");
    }
    let off =
        watermark_engine::run(&scenario(r#""auto.leader.rebalance.enable": false"#), true).unwrap();
    for line in lines_at(&off, 400_000, "Topic: a Partition:") {
        assert_ne!(describe_fields(&line).2, Some(1), "{line}");
    }
}

/// Two topics on three brokers, assigned by hand: `orders` led by 1 and 2, `move` by 1. Every
/// line about one partition names it where the cluster has more than one (docs/engine.md,
/// "Lines that name their partition"). `num.replica.fetchers` 2 puts each partition on thread
/// `Utils.abs(31 * topic.hashCode() + partition) % 2` (AbstractFetcherManager.getFetcherId):
/// "orders".hashCode() = -1008770331 gives orders-0 thread 1 and orders-1 thread 0;
/// "move".hashCode() = 3357649 gives move-0 thread 1.
const TWO_TOPICS: &str = r#"{
  "version": 2, "brokers": 3, "seed": 1,
  "config": {"replica.socket.timeout.ms": 3000, "num.replica.fetchers": 2},
  "topics": [
    {"name": "orders", "assignment": [[1, 2], [2, 1]]},
    {"name": "move", "assignment": [[1, 2]]}
  ],
  "timeline": [
    {"at": 100, "action": "produce", "acks": "all", "topic": "orders", "partition": 1, "values": ["a", "b"]},
    {"at": 200, "action": "consume", "topic": "move", "partition": 0},
    {"at": 300, "action": "produce", "acks": "1", "topic": "move", "values": ["x"]},
    {"at": 400, "action": "consume", "topic": "move", "partition": 0},
    {"at": 1000, "action": "cut", "a": 1, "b": 2}
  ],
  "end_ms": 6000
}"#;

fn two_topics(expect: &str) -> Scenario {
    let text = TWO_TOPICS.replace(r#""end_ms": 6000"#, &format!(r#""end_ms": 6000{expect}"#));
    Scenario::from_json(&text).expect("a valid version-2 scenario")
}

/// The first line of the run at or after `from` that starts with `prefix`.
fn first_line(sim: &Sim, from: u64, prefix: &str) -> Option<(u64, String)> {
    sim.trace_events()
        .find(|e| e.time_ms >= from && e.text().starts_with(prefix))
        .map(|e| (e.time_ms, e.text().clone()))
}

#[test]
fn lines_about_one_partition_name_it_in_a_cluster_of_two_topics() {
    let sim = watermark_engine::run(&two_topics(""), true).expect("runs");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    // The produce result names the batch's partition (ProducerBatch.topicPartition).
    let (_, line) = first_line(&sim, 100, "acks=all -> ").expect("a produce result");
    assert!(
        line.starts_with("acks=all -> orders-1: ok, offsets=0..1 (waited "),
        "{line}"
    );
    // A topic with one partition: the sticky partitioner has only move-0.
    let (_, line) = first_line(&sim, 300, "acks=1 -> ").expect("a produce result");
    assert_eq!(line, "acks=1 -> move-0: ok, offset=0");
    // The consumer's lines name the partition it fetched.
    assert_eq!(
        first_line(&sim, 200, "consumer: ").map(|l| l.1).as_deref(),
        Some("consumer: move-0: no records below the high watermark 0 (position 0)")
    );
    assert_eq!(
        first_line(&sim, 400, "consumer: ").map(|l| l.1).as_deref(),
        Some("consumer: move-0: x (offsets 0..0, position 1)")
    );
    // The cut: each follower's request in flight gets no answer. Broker 2 follows orders-0
    // and move-0 from broker 1 on thread 1; broker 1 follows orders-1 from broker 2 on
    // thread 0. Each line names its thread and its request's partitions (fetchData), in the
    // order the fetcher keeps them (topic by topic, in creation order).
    let (t2, line) = first_line(&sim, 1000, "[ReplicaFetcher replicaId=2, leaderId=1")
        .expect("broker 2's fetch times out");
    assert_eq!(
        line,
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=1] Error sending fetch request for partitions orders-0, move-0: no response within replica.socket.timeout.ms=3000 ms"
    );
    let (t1, line) = first_line(&sim, 1000, "[ReplicaFetcher replicaId=1, leaderId=2")
        .expect("broker 1's fetch times out");
    assert_eq!(
        line,
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error sending fetch request for partitions orders-1: no response within replica.socket.timeout.ms=3000 ms"
    );
    // Sent before the cut, each at most replica.fetch.wait.max.ms (500) before it.
    for t in [t1, t2] {
        assert!((3500..=4000).contains(&t), "timed out at {t}");
    }
}

/// The fetcher's other lines carry their thread's fetcher id too: broker 2 follows orders-0
/// and move-0 from broker 1 on thread 1 (AbstractFetcherManager.getFetcherId, worked out in
/// the test above), so when broker 1's process dies the reset connection is thread 1's line,
/// not thread 0's (it used to print fetcherId=0 whatever the thread).
#[test]
fn a_reset_connection_names_the_thread_it_happened_on() {
    let text = TWO_TOPICS.replace(
        r#"{"at": 1000, "action": "cut", "a": 1, "b": 2}"#,
        r#"{"at": 1000, "action": "kill", "broker": 1}"#,
    );
    let s = Scenario::from_json(&text).expect("a valid version-2 scenario");
    let sim = watermark_engine::run(&s, true).expect("runs");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let (t, line) = first_line(&sim, 1000, "[ReplicaFetcher replicaId=2, leaderId=1")
        .expect("broker 2's fetch fails");
    // The reset reaches broker 2 within the millisecond (sim.network's connection reset).
    assert!((1000..=1001).contains(&t), "at {t}");
    assert!(
        line.starts_with(
            "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=1] Error in response for fetch request"
        ),
        "{line}"
    );
}

/// An expectation names its partition with `topic` and `partition` (version 2): the state
/// checks read that partition, the event checks look at its lines only. The same check met on
/// one partition is not met on the other.
#[test]
fn an_expectation_speaks_of_the_partition_it_names() {
    let s = two_topics(
        r#",
  "expect": [
    {"at": 500, "topic": "orders", "partition": 1, "produce": "acks=all -> ok, offsets=0..1"},
    {"at": 500, "topic": "orders", "partition": 0, "produce": "acks=all -> ok, offsets=0..1"},
    {"at": 500, "topic": "orders", "partition": 1, "leader": 2, "leo": 2, "hw": 2, "offsets": "orders:1:2"},
    {"at": 500, "topic": "orders", "leader": 2, "leo": 2},
    {"at": 500, "topic": "move", "leader": 1, "isr": [1, 2], "leo": 1, "offsets": "move:0:1",
     "describe": "Topic: move Partition: 0 Leader: 1 Replicas: 1,2 Isr: 1,2 Elr: LastKnownElr:"},
    {"at": 500, "produce": "acks=1 -> move-0: ok, offset=0"},
    {"at": 500, "leo": 0}
  ]"#,
    );
    let outcomes = watermark_engine::check::check(&s).expect("runs");
    let met: Vec<bool> = outcomes.iter().map(|o| o.met()).collect();
    assert_eq!(
        met,
        [true, false, true, false, true, true, true],
        "{outcomes:#?}"
    );
    let a = outcomes[1].account();
    assert!(
        a.contains(r#"produce: expected "acks=all -> ok, offsets=0..1" in 0..=500 ms, got no produce result in 0..=500 ms"#),
        "{a}"
    );
    // `topic` alone is its partition 0: led by 1, empty.
    let a = outcomes[3].account();
    assert!(a.contains("leader: expected 2, got 1"), "{a}");
    assert!(a.contains("leo of the leader: expected 2, got 0"), "{a}");
}

/// A partition the scenario does not have, named by an expectation: refused before the run,
/// naming the field and the range; version 1 has no `topic` or `partition` to name.
#[test]
fn an_expectation_naming_no_such_partition_is_refused() {
    let e = Scenario::from_json(&TWO_TOPICS.replace(
        r#""end_ms": 6000"#,
        r#""end_ms": 6000, "expect": [{"at": 1, "topic": "move", "partition": 1, "hw": 0}]"#,
    ))
    .unwrap_err();
    assert_eq!(e.field, "expect[0].partition");
    assert_eq!(
        e.message,
        "partition must be one of 0..=0 (topic move has 1), got 1"
    );
    let e = Scenario::from_json(&TWO_TOPICS.replace(
        r#""end_ms": 6000"#,
        r#""end_ms": 6000, "expect": [{"at": 1, "topic": "payments", "hw": 0}]"#,
    ))
    .unwrap_err();
    assert_eq!(e.field, "expect[0].topic");
    assert!(
        e.message
            .starts_with("topic must be one of the scenario's topics"),
        "{e}"
    );
    let e = Scenario::from_json(r#"{"expect": [{"at": 1, "partition": 0, "hw": 0}]}"#).unwrap_err();
    assert_eq!(e.field, "expect[0].partition");
    assert!(e.message.contains("version 2"), "{e}");
}

/// The tool lines of `tool` at `t`, in order.
fn tool_lines(sim: &Sim, t: u64, tool: watermark_engine::event::Tool) -> Vec<String> {
    sim.trace_events()
        .filter(|e| {
            e.time_ms == t
                && matches!(e.event(), watermark_engine::Event::ToolOutput { tool: x, .. } if *x == tool)
        })
        .map(|e| e.text().clone())
        .collect()
}

/// `epochs` and `dump_log` per partition: each partition's directory holds its own
/// leader-epoch-checkpoint and segment (`/var/lib/kafka/data/orders-1/...`), so the read-out
/// names the partition (one, a topic's, or every one) and each line says whose it is.
#[test]
fn epochs_and_dump_log_read_the_partition_named_or_every_one() {
    use watermark_engine::event::Tool::{DumpLog, LeaderEpochCheckpoints};
    let at = |t: u64, actions: &[&str]| {
        let mut text = TWO_TOPICS.to_string();
        for a in actions {
            text = text.replace(
                r#"{"at": 1000, "action": "cut""#,
                &format!(r#"{{"at": {t}, "action": {a}}}, {{"at": 1000, "action": "cut""#),
            );
        }
        text
    };
    let s = Scenario::from_json(&at(
        500,
        &[
            r#""epochs""#,
            r#""dump_log", "broker": 2"#,
            r#""dump_log", "broker": 3, "topic": "move", "partition": 0"#,
            r#""dump_log", "broker": 1, "topic": "orders""#,
        ],
    ))
    .expect("valid");
    let sim = watermark_engine::run(&s, true).expect("runs");
    // Partition.makeLeader assigns the leader's epoch at its log end
    // (UnifiedLog.maybeAssignEpochStartOffset), so each leader's file has (0, 0); a follower's
    // gets the entry with the first batch it appends (orders-1 and move-0 have records,
    // orders-0 none). Partitions topic by topic, replicas in id order.
    assert_eq!(
        tool_lines(&sim, 500, LeaderEpochCheckpoints),
        [
            "broker 1: orders-0: 0 1 0 0",
            "broker 2: orders-0: 0 0",
            "broker 1: orders-1: 0 1 0 0",
            "broker 2: orders-1: 0 1 0 0",
            "broker 1: move-0: 0 1 0 0",
            "broker 2: move-0: 0 1 0 0",
        ]
    );
    let heads: Vec<String> = tool_lines(&sim, 500, DumpLog)
        .into_iter()
        .filter(|l| l.starts_with("broker "))
        .collect();
    assert_eq!(
        heads,
        [
            // Broker 2: every partition it holds.
            "broker 2 log (orders-0, log end offset 0):",
            "broker 2 log (orders-1, log end offset 2):",
            "broker 2 log (move-0, log end offset 1):",
            // Broker 3 holds no replica of move-0.
            "broker 3 log (move-0): none (no replica of move-0 on broker 3)",
            // Broker 1: the partitions of orders.
            "broker 1 log (orders-0, log end offset 0):",
            "broker 1 log (orders-1, log end offset 2):",
        ]
    );
    // One partition named: only its lines.
    let s = Scenario::from_json(&at(
        500,
        &[r#""epochs", "topic": "orders", "partition": 1"#],
    ))
    .expect("valid");
    let sim = watermark_engine::run(&s, true).expect("runs");
    assert_eq!(
        tool_lines(&sim, 500, LeaderEpochCheckpoints),
        ["broker 1: orders-1: 0 1 0 0", "broker 2: orders-1: 0 1 0 0"]
    );
}

/// `set_config` `record_size_bytes` (version 2, the playground's Advanced setting): each
/// later produce that gives no size has values of that many bytes, a produce with its own
/// size keeps it, and what came before keeps the scenario's (1024 unless it says). Read from
/// kafka-dump-log.sh's record lines (`valueSize`).
#[test]
fn record_size_bytes_set_during_the_run_sizes_the_later_records() {
    let s = Scenario::from_json(
        r#"{"version": 2, "brokers": 1, "topics": [{"name": "t"}],
        "timeline": [
          {"at": 0, "action": "produce", "values": ["a"]},
          {"at": 100, "action": "set_config", "name": "record_size_bytes", "value": 2048},
          {"at": 200, "action": "produce", "values": ["b"]},
          {"at": 300, "action": "produce", "values": ["c"], "size": 10},
          {"at": 400, "action": "set_config", "name": "record_size_bytes", "value": "0"},
          {"at": 500, "action": "produce", "values": ["d"]},
          {"at": 1000, "action": "dump_log", "broker": 1}
        ], "end_ms": 2000}"#,
    )
    .expect("valid");
    let sim = watermark_engine::run(&s, true).expect("runs");
    let sizes: Vec<String> = lines_at(&sim, 1000, "    | offset: ")
        .iter()
        .map(|l| {
            let v = l.split(" valueSize: ").nth(1).unwrap();
            v[..v.find(' ').unwrap()].to_string()
        })
        .collect();
    assert_eq!(sizes, ["1024", "2048", "10", "0"]);
    assert_eq!(
        lines_at(&sim, 100, "producer: ")[0],
        "producer: values of 2048 bytes from now on (record_size_bytes), unless a produce gives its size"
    );
    // A value the format does not take, and version 1, which has no record sizes.
    for (value, got) in [("1000001", "1000001"), ("-1", "-1"), ("\"big\"", "big")] {
        let e = Scenario::from_json(&format!(
            r#"{{"version": 2, "topics": [{{"name": "t"}}], "timeline": [{{"at": 0, "action": "set_config", "name": "record_size_bytes", "value": {value}}}]}}"#
        ))
        .unwrap_err();
        assert_eq!(e.field, "timeline[0].value");
        assert_eq!(
            e.message,
            format!("record_size_bytes must be a value size in bytes in 0..=1000000, got {got}")
        );
    }
    let e = Scenario::from_json(
        r#"{"timeline": [{"at": 0, "action": "set_config", "name": "record_size_bytes", "value": 10}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        (
            "timeline[0].name",
            "`record_size_bytes` needs version 2 (\"version\": 2)"
        )
    );
    // Applied from the UI to a version-1 run, the simulator refuses it too.
    let mut v1 = Sim::new(&Scenario::default()).unwrap();
    let e = v1
        .apply_now(&watermark_engine::Action::SetConfig {
            name: "record_size_bytes".into(),
            value: 10u64.into(),
        })
        .unwrap_err();
    assert_eq!(e.field, "name");
    assert_eq!(v1.record_size_bytes(), None);
}

/// Where a produce sent its records, as the producer appended them (what the playground's
/// lanes follow): the partition named, the key's (murmur2 of "21", 1173551340 made
/// positive, modulo 4 = 0), or the sticky partitioner's: the 31 keyless 1 KiB records of
/// KEYS's reasoning, 30 on one partition and the 31st on the next one drawn (which may be the
/// same).
#[test]
fn a_produce_says_which_partitions_its_records_went_to() {
    let s = Scenario::from_json(
        r#"{"version": 2, "brokers": 3, "seed": 5,
        "topics": [{"name": "orders", "partitions": 4, "replication_factor": 2}], "end_ms": 1000}"#,
    )
    .unwrap();
    let mut sim = Sim::new(&s).unwrap();
    let produce = |sim: &mut Sim, partition: Option<u32>, key: Option<&str>, count: u32| {
        let first = sim.next_produce_job();
        sim.apply_now(&watermark_engine::Action::Produce(
            watermark_engine::scenario::ProduceSpec {
                prefix: Some("v".into()),
                count: Some(count),
                topic: Some("orders".into()),
                partition,
                key: key.map(str::to_string),
                ..Default::default()
            },
        ))
        .unwrap();
        sim.produce_partitions_from(first)
            .into_iter()
            .map(|(tp, n)| (tp.partition, n))
            .collect::<Vec<_>>()
    };
    assert_eq!(produce(&mut sim, Some(2), None, 3), [(2, 3)]);
    assert_eq!(produce(&mut sim, None, Some("21"), 2), [(0, 2)]);
    let sticky = produce(&mut sim, None, None, 31);
    match sticky.as_slice() {
        [(_, 30), (_, 1)] | [(_, 31)] => {}
        other => panic!("{other:?}"),
    }
    // The sticky partition holds across sends: the next keyless record goes where the 31st
    // went (it has not produced batch.size bytes there yet).
    let last = sticky.last().unwrap().0;
    assert_eq!(produce(&mut sim, None, None, 1), [(last, 1)]);
}
