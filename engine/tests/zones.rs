//! Racks and zones end to end (issue 14, step 8): a three-zone cluster at replication factor
//! 3 and `min.insync.replicas` 2 under steady `acks=all` writes, a zone lost or cut off and
//! brought back, and a consumer reading from a follower in its own zone (KIP-392). The
//! describe lines are read as `kafka-topics.sh --describe` prints them (as in clusters.rs);
//! produce results and consumer reads are typed events.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::event::ProduceOutcome;
use watermark_engine::{Event, Scenario, Sim};

#[path = "common/describe.rs"]
mod describe;
use describe::describe_fields;

/// Six brokers in zones a (1, 2), b (3, 4), c (5, 6); two topics at RF 3, min ISR 2; an
/// `acks=all` write to each partition in turn every 250 ms from 100 ms to `writes_until`;
/// describe at 4 s, 30 s and 80 s; then `actions` (JSON timeline entries).
fn zones(actions: &str, writes_until: u64, extra: &str) -> Sim {
    let mut timeline = Vec::new();
    let partitions = [("orders", 6), ("audit", 3)];
    let mut i = 0;
    let mut at = 100;
    while at <= writes_until {
        let (topic, count) = partitions[i % 2];
        let partition = (i / 2) % count;
        timeline.push(format!(
            r#"{{"at": {at}, "action": "produce", "acks": "all", "topic": "{topic}", "partition": {partition}, "values": ["w{i}"]}}"#
        ));
        i += 1;
        at += 250;
    }
    for t in [4_000, 30_000, 80_000] {
        timeline.push(format!(r#"{{"at": {t}, "action": "describe"}}"#));
    }
    timeline.push(actions.to_string());
    let text = format!(
        r#"{{"version": 2, "brokers": 6, "seed": 3,
        "racks": {{"1": "a", "2": "a", "3": "b", "4": "b", "5": "c", "6": "c"}},
        {extra}
        "topics": [
          {{"name": "orders", "partitions": 6, "replication_factor": 3, "configs": {{"min.insync.replicas": 2}}}},
          {{"name": "audit", "partitions": 3, "replication_factor": 3, "configs": {{"min.insync.replicas": 2}}}}
        ],
        "timeline": [{}],
        "end_ms": 90000}}"#,
        timeline.join(",\n")
    );
    let scenario = Scenario::from_json(&text).expect("a valid scenario");
    let sim = watermark_engine::run(&scenario, true).expect("runs");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    sim
}

/// Each describe line at `t`: (replicas, ISR, leader).
fn describe_at(sim: &Sim, t: u64) -> Vec<(Vec<u32>, Vec<u32>, Option<u32>)> {
    let lines: Vec<String> = sim
        .trace_events()
        .filter(|e| {
            e.time_ms == t && e.text().starts_with("Topic: ") && e.text().contains(" Partition: ")
        })
        .map(|e| e.text().clone())
        .collect();
    assert_eq!(lines.len(), 9, "a line per partition at {t}: {lines:?}");
    lines.iter().map(|l| describe_fields(l)).collect()
}

/// The produce results: (acknowledged, failed).
fn produce_results(sim: &Sim) -> (usize, usize) {
    let (mut ok, mut failed) = (0, 0);
    for e in sim.trace_events() {
        match e.event() {
            Event::ProduceResult {
                outcome: ProduceOutcome::Ok { .. },
                ..
            } => ok += 1,
            Event::ProduceResult { .. } => failed += 1,
            _ => {}
        }
    }
    (ok, failed)
}

const ZONE_B: [u32; 2] = [3, 4];

#[test]
fn a_lost_zone_leaves_two_in_sync_replicas_and_acks_all_writes_continue() {
    // Module 04, "How do you spread a cluster over three zones?": "With three replicas,
    // each partition gets one replica in each zone. With a minimum of 2, losing a whole zone
    // leaves two in-sync replicas, and writes continue."
    let sim = zones(
        r#"{"at": 5000, "action": "lose_zone", "zone": "b"},
           {"at": 45000, "action": "start_zone", "zone": "b"}"#,
        40_000,
        "",
    );
    for (replicas, isr, leader) in describe_at(&sim, 4_000) {
        // StripedReplicaPlacer with three racks: one replica per zone.
        let mut racks: Vec<u32> = replicas.iter().map(|b| (b - 1) / 2).collect();
        racks.sort_unstable();
        assert_eq!(racks, [0, 1, 2], "{replicas:?}");
        assert_eq!(isr.len(), 3);
        assert!(leader.is_some());
    }
    for (replicas, isr, leader) in describe_at(&sim, 30_000) {
        // Under-replicated: the zone's replica left every ISR, the leaders moved out of it.
        assert_eq!(isr.len(), 2, "{replicas:?} {isr:?}");
        assert!(isr.iter().all(|b| !ZONE_B.contains(b)), "{isr:?}");
        assert!(leader.is_some_and(|l| !ZONE_B.contains(&l)), "{leader:?}");
    }
    // start_zone: the brokers recover from their logs, catch up and rejoin every ISR.
    for (replicas, isr, _) in describe_at(&sim, 80_000) {
        let (mut isr, mut replicas) = (isr.clone(), replicas.clone());
        isr.sort_unstable();
        replicas.sort_unstable();
        assert_eq!(isr, replicas, "back in every ISR");
    }
    let (ok, failed) = produce_results(&sim);
    assert_eq!((ok, failed), (160, 0), "every acks=all write acknowledged");
    assert!(sim.losses().is_empty(), "{:?}", sim.losses());
    // The zone action's own line, then a kill -9 per broker.
    let zone: Vec<&Event> = sim
        .trace_events()
        .filter(|e| e.time_ms == 5_000)
        .map(|e| e.event())
        .filter(|e| matches!(e, Event::Zone { .. } | Event::Signal { .. }))
        .collect();
    assert_eq!(zone.len(), 3, "{zone:?}");
    assert!(
        matches!(zone[0], Event::Zone { brokers, .. } if brokers == &ZONE_B.to_vec()),
        "{zone:?}"
    );
}

#[test]
fn a_cut_zone_leaves_the_isrs_and_rejoins_them_when_healed() {
    // A zone cut off from the other zones and from the controller quorum (its majority is
    // in the other two zones): its brokers' heartbeats stop reaching the controller, which
    // fences them after broker.session.timeout.ms and removes them from every ISR
    // (ReplicationControlManager.handleBrokerFenced), electing leaders outside the zone for
    // the partitions they led. Healed, they register their heartbeats again, are unfenced,
    // catch up and rejoin every ISR (Partition.maybeExpandIsr).
    let sim = zones(
        r#"{"at": 5000, "action": "cut_zone", "zone": "a"},
           {"at": 40000, "action": "heal_zone", "zone": "a"}"#,
        30_000,
        "",
    );
    let zone_a = [1, 2];
    let before = describe_at(&sim, 4_000);
    assert!(
        before
            .iter()
            .any(|(_, _, l)| l.is_some_and(|l| zone_a.contains(&l))),
        "zone a leads some partitions before the cut"
    );
    for (replicas, isr, leader) in describe_at(&sim, 30_000) {
        assert!(
            isr.iter().all(|b| !zone_a.contains(b)),
            "{replicas:?} {isr:?}"
        );
        assert!(leader.is_some_and(|l| !zone_a.contains(&l)), "{leader:?}");
        assert_eq!(isr.len(), 2);
    }
    for (replicas, isr, _) in describe_at(&sim, 80_000) {
        let mut isr = isr.clone();
        isr.sort_unstable();
        let mut replicas = replicas.clone();
        replicas.sort_unstable();
        assert_eq!(isr, replicas, "back in every ISR");
    }
    let (_, failed) = produce_results(&sim);
    assert_eq!(failed, 0, "acks=all writes outlive the cut (retries)");
    assert!(sim.losses().is_empty(), "{:?}", sim.losses());
}

#[test]
fn a_consumer_reads_from_the_follower_in_its_zone() {
    // KIP-392: replica.selector.class = RackAwareReplicaSelector on the brokers, client.rack
    // = c on the consumer. Every partition has a replica in zone c; for one led elsewhere
    // the leader names that follower, the consumer fetches from it at once and reads up to
    // its HW.
    let sim = zones(
        r#"{"at": 20000, "action": "consume", "topic": "orders", "partition": 0, "from_beginning": true},
           {"at": 20100, "action": "consume", "topic": "orders", "partition": 1, "from_beginning": true},
           {"at": 20200, "action": "consume", "topic": "orders", "partition": 2, "from_beginning": true}"#,
        10_000,
        r#""client_rack": "c",
        "config": {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"},"#,
    );
    let zone_c = [5, 6];
    let mut named = 0;
    let mut from_follower = 0;
    for e in sim.trace_events() {
        match e.event() {
            Event::ConsumerPreferredReadReplica {
                leader, replica, ..
            } => {
                assert!(!zone_c.contains(leader) && zone_c.contains(replica));
                named += 1;
            }
            Event::ConsumerRead { from: Some(b), .. } => {
                assert!(zone_c.contains(b));
                from_follower += 1;
            }
            _ => {}
        }
    }
    assert!(
        named >= 1,
        "a leader outside zone c names its follower there"
    );
    assert_eq!(from_follower, named, "each named follower is read from");
}

#[test]
fn setting_the_consumers_client_rack_moves_its_reads_to_the_follower_in_that_zone_and_back() {
    // The playground's client.rack (set_config, version 2): the brokers run the rack-aware
    // selector; the consumer starts without a rack, so every read is the leader's (KIP-392:
    // RackAwareReplicaSelector returns the leader for a client without one). From 30 s it is
    // a consumer in zone c, which a leader outside c sends to its follower there; from 40 s
    // it has no rack again, a new consumer that knows no preferred read replica, so it reads
    // from the leaders at once (not after metadata.max.age.ms).
    let consume = |at: u64| {
        (0..3)
            .map(|p| {
                format!(
                    r#"{{"at": {}, "action": "consume", "topic": "orders", "partition": {p}, "from_beginning": true}}"#,
                    at + 100 * p
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let sim = zones(
        &format!(
            r#"{},
            {{"at": 30000, "action": "set_config", "name": "client.rack", "value": "c"}},
            {},
            {{"at": 40000, "action": "set_config", "name": "client.rack", "value": ""}},
            {}"#,
            consume(20_000),
            consume(30_100),
            consume(40_100)
        ),
        10_000,
        r#""config": {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"},"#,
    );
    let zone_c = [5, 6];
    // (named, read from a follower) before 30 s, between 30 and 40 s, after 40 s.
    let mut counts = [(0, 0); 3];
    let mut reads = [0; 3];
    let mut set_lines = vec![];
    for e in sim.trace_events() {
        let span = match e.time_ms {
            t if t < 30_000 => 0,
            t if t < 40_000 => 1,
            _ => 2,
        };
        match e.event() {
            Event::ConsumerPreferredReadReplica {
                leader, replica, ..
            } => {
                assert!(!zone_c.contains(leader) && zone_c.contains(replica));
                counts[span].0 += 1;
            }
            Event::ConsumerRead { from, .. } => {
                reads[span] += 1;
                if let Some(b) = from {
                    assert!(zone_c.contains(b), "read from {b}");
                    counts[span].1 += 1;
                }
            }
            Event::ConfigSet { .. } => set_lines.push(e.text()),
            _ => {}
        }
    }
    assert_eq!(reads.map(|r| r > 0), [true; 3], "{reads:?}");
    assert_eq!(counts[0], (0, 0), "no rack: the leaders answer");
    assert!(
        counts[1].0 >= 1,
        "a leader outside zone c names its follower"
    );
    assert_eq!(counts[1].1, counts[1].0, "each named follower is read from");
    assert_eq!(
        counts[2],
        (0, 0),
        "no rack again: the leaders answer at once"
    );
    assert_eq!(set_lines.len(), 2);
    assert!(
        set_lines[0].ends_with("consumer: a new KafkaConsumer with client.rack=c"),
        "{}",
        set_lines[0]
    );
    assert!(set_lines[1].ends_with("client.rack="), "{}", set_lines[1]);
}

#[test]
fn client_rack_set_config_is_version_2_and_a_rack_name() {
    let v1 =
        r#"{"timeline": [{"at": 0, "action": "set_config", "name": "client.rack", "value": "a"}]}"#;
    let e = Scenario::from_json(v1).unwrap_err();
    assert_eq!(e.field, "timeline[0].name");
    assert_eq!(e.message, "`client.rack` needs version 2 (\"version\": 2)");
    let bad = r#"{"version": 2, "topics": [{"name": "t"}], "timeline": [{"at": 0, "action": "set_config", "name": "client.rack", "value": "a b"}]}"#;
    let e = Scenario::from_json(bad).unwrap_err();
    assert_eq!(e.field, "timeline[0].value");
    assert!(
        e.message
            .starts_with("client.rack is a rack name of 1..=64 characters"),
        "{}",
        e.message
    );
    assert!(e.message.ends_with("got \"a b\""), "{}", e.message);
    for ok in [r#""a""#, r#""""#, "null"] {
        let s = format!(
            r#"{{"version": 2, "topics": [{{"name": "t"}}], "timeline": [{{"at": 0, "action": "set_config", "name": "client.rack", "value": {ok}}}]}}"#
        );
        Scenario::from_json(&s).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

/// Four brokers: 1 in zone a, 2 and 4 in zone b, 3 in zone c; `orders-0` on [1, 2, 3], led by
/// 1; the brokers run the rack-aware selector and the consumer is in zone c. Then the
/// timeline below and `expect` (JSON entries).
fn follower_and_zones(expect: &str) -> Scenario {
    Scenario::from_json(&format!(
        r#"{{"version": 2, "brokers": 4,
        "racks": {{"1": "a", "2": "b", "3": "c", "4": "b"}},
        "client_rack": "c",
        "config": {{"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}},
        "topics": [{{"name": "orders", "assignment": [[1, 2, 3]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "r", "count": 5}},
          {{"at": 1000, "action": "consume", "from_beginning": true}},
          {{"at": 1200, "action": "set_config", "name": "client.rack", "value": ""}},
          {{"at": 1200, "action": "produce", "acks": "all", "values": ["s1", "s2"]}},
          {{"at": 1300, "action": "consume"}},
          {{"at": 1500, "action": "kill", "broker": 4}},
          {{"at": 2000, "action": "lose_zone", "zone": "b"}},
          {{"at": 14000, "action": "cut_zone", "zone": "c"}},
          {{"at": 16000, "action": "heal_zone", "zone": "c"}},
          {{"at": 16000, "action": "start_zone", "zone": "b"}}
        ],
        "end_ms": 17000,
        "expect": [{expect}]}}"#
    ))
    .expect("a valid scenario")
}

/// What an expectation says of follower fetching (KIP-392) and of the zones: the consumer's
/// preferred read replica (SubscriptionState.preferredReadReplica), the broker a read came
/// from, the consumer's client.rack, the brokers the controller fenced, and a zone lost, cut
/// off or up. Each is worked out from Kafka's rules, not read from a run: the leader in zone a
/// names the consumer's follower in zone c (RackAwareReplicaSelector), which it then reads
/// from; a consumer without a rack reads from the leader; a killed broker is fenced within
/// broker.heartbeat.interval.ms + broker.session.timeout.ms (2 + 9 s) of its death; a zone
/// cut off cuts broker 1's link to broker 3 too.
#[test]
fn expectations_speak_of_follower_fetching_and_of_zones() {
    let s = follower_and_zones(
        r#"{"at": 500, "preferred_read_replica": "none", "client_rack": "c", "fenced": []},
        {"at": 1100, "since": 1000, "preferred_read_replica": 3, "read_from": 3},
        {"at": 1100, "since": 1000, "read_from": 1},
        {"at": 1100, "client_rack": ""},
        {"at": 1400, "since": 1300, "read_from": 1, "preferred_read_replica": "none", "client_rack": ""},
        {"at": 1600, "zone": "b", "zone_state": "lost"},
        {"at": 1600, "zone": "a", "zone_state": "up", "fenced": []},
        {"at": 2100, "zone": "b", "zone_state": "lost"},
        {"at": 2100, "zone": "b", "zone_state": "up"},
        {"at": 13500, "fenced": [4, 2]},
        {"at": 14100, "zone": "c", "zone_state": "cut"},
        {"at": 14100, "zone": "c", "zone_state": "lost"},
        {"at": 14100, "zone": "a", "zone_state": "up"},
        {"at": 16100, "zone": "a", "zone_state": "up"},
        {"at": 16100, "zone": "b", "zone_state": "up"},
        {"at": 16100, "zone": "c", "zone_state": "up"}"#,
    );
    let outcomes = watermark_engine::check::check(&s).expect("runs");
    let met: Vec<bool> = outcomes.iter().map(|o| o.met()).collect();
    assert_eq!(
        met,
        [
            true, true, false, false, true, false, true, true, false, true, true, false, false,
            true, true, true
        ],
        "{outcomes:#?}"
    );
    let account = |i: usize| outcomes[i].account();
    // The reads between 1000 and 1100 came from the follower in zone c only.
    assert!(
        account(2).contains(
            "read_from: expected a read from broker 1 in 1000..=1100 ms, got broker 3 at "
        ),
        "{}",
        account(2)
    );
    assert!(
        account(3).contains("client_rack: expected none, got \"c\""),
        "{}",
        account(3)
    );
    // Broker 4 killed, broker 2 not yet: zone b is not lost; neither is it up.
    assert!(
        account(5).contains(
            "zone b: expected lost, got broker 2 running, broker 4 killed; 0 of its 6 links cut"
        ),
        "{}",
        account(5)
    );
    assert!(
        account(8).contains("zone b: expected up, got lost"),
        "{}",
        account(8)
    );
    assert!(
        account(11).contains("zone c: expected lost, got cut"),
        "{}",
        account(11)
    );
    // Zone c cut off: broker 1's link to broker 3 is one of zone a's four (brokers 2, 3, 4
    // and the controller).
    assert!(
        account(12).contains("zone a: expected up, got broker 1 running; 1 of its 4 links cut"),
        "{}",
        account(12)
    );
}

/// The new checks' errors name the field and what it takes; the consumer's rack and the
/// zones are version 2's.
#[test]
fn follower_and_zone_expectations_are_checked_before_the_run() {
    let err = |expect: &str| {
        let text = follower_and_zones("").to_json_pretty().replace(
            "\"end_ms\": 17000",
            &format!("\"end_ms\": 17000, \"expect\": [{expect}]"),
        );
        Scenario::from_json(&text).expect_err("refused")
    };
    let cases = [
        (r#"{"at": 1, "zone": "d", "zone_state": "lost"}"#, "expect[0].zone", "zone must be one of the racks a, b, c, got \"d\""),
        (r#"{"at": 1, "zone": "a"}"#, "expect[0].zone", "zone names the rack whose zone_state or partitions are expected: give zone_state, under_replicated_partitions, under_min_isr_partitions, at_min_isr_partitions or unavailable_partitions with it"),
        (r#"{"at": 1, "zone_state": "lost"}"#, "expect[0].zone_state", "zone_state needs zone, the rack it speaks of"),
        (r#"{"at": 1, "zone": "a", "zone_state": "down"}"#, "expect[0].zone_state", "zone_state must be one of lost, cut, up, got \"down\""),
        (r#"{"at": 1, "read_from": 5}"#, "expect[0].read_from", "broker must be one of 1..=4, got 5"),
        (r#"{"at": 1, "preferred_read_replica": 0}"#, "expect[0].preferred_read_replica", "broker must be one of 1..=4, got 0"),
        (r#"{"at": 1, "fenced": [2, 2]}"#, "expect[0].fenced[1]", "broker 2 appears twice"),
        (r#"{"at": 1, "client_rack": "a b"}"#, "expect[0].client_rack", "client_rack is a rack name of 1..=64 characters of ASCII letters, digits, '.', '_' and '-', or \"\" for none, got \"a b\""),
        (r#"{"at": 1, "preferred_read_replica": "leader"}"#, "expect[0].preferred_read_replica", "invalid value: string \"leader\", expected a broker id or \"none\""),
    ];
    for (expect, field, message) in cases {
        let e = err(expect);
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            (field, message),
            "{expect}"
        );
    }
    for (expect, field) in [
        (r#"{"at": 1, "client_rack": "a"}"#, "expect[0].client_rack"),
        (
            r#"{"at": 1, "zone": "a", "zone_state": "up"}"#,
            "expect[0].zone",
        ),
    ] {
        let e = Scenario::from_json(&format!(r#"{{"expect": [{expect}]}}"#)).unwrap_err();
        assert_eq!(e.field, field, "{expect}");
        assert!(
            e.message.ends_with("needs version 2 (\"version\": 2)"),
            "{e}"
        );
    }
    // Version 1 has brokers to fence and a consumer to read: those checks are its too.
    let v1 = Scenario::from_json(
        r#"{"timeline": [{"at": 0, "action": "produce", "values": ["a"]}, {"at": 100, "action": "consume"}],
            "expect": [{"at": 200, "since": 100, "read_from": 1, "preferred_read_replica": "none", "fenced": []}]}"#,
    )
    .expect("valid");
    let outcomes = watermark_engine::check::check(&v1).expect("runs");
    assert!(outcomes[0].met(), "{}", outcomes[0].account());
}

/// SubscriptionState.preferredReadReplica(tp, timeMs): the replica a leader named holds until
/// it expires, metadata.max.age.ms (5 minutes) after the response that named it
/// (FetchCollector: "set to expire at"), and is none after, though the consumer has not
/// fetched again.
#[test]
fn an_expected_preferred_read_replica_expires_with_metadata_max_age_ms() {
    let s = Scenario::from_json(
        r#"{"version": 2, "brokers": 3, "racks": {"1": "a", "2": "b", "3": "c"}, "client_rack": "c",
        "config": {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"},
        "topics": [{"name": "orders", "assignment": [[1, 2, 3]]}],
        "timeline": [
          {"at": 0, "action": "produce", "acks": "all", "values": ["a"]},
          {"at": 1000, "action": "consume", "from_beginning": true}
        ],
        "end_ms": 302000,
        "expect": [
          {"at": 1100, "preferred_read_replica": 3},
          {"at": 300900, "preferred_read_replica": 3},
          {"at": 301500, "preferred_read_replica": "none"}
        ]}"#,
    )
    .expect("valid");
    for o in watermark_engine::check::check(&s).expect("runs") {
        assert!(o.met(), "{}", o.account());
    }
}

/// Four brokers: 1 in zone a, 2 and 4 in zone b, 3 in zone c; `orders` (min.insync.replicas
/// 2) on [1, 2, 3], [2, 3, 1], [3, 1, 4], `audit` (the brokers' default of 1) on [1, 4]. Zone b
/// is lost at 1 s, broker 3 killed at 14 s and broker 1 at 26 s; each is fenced within
/// broker.heartbeat.interval.ms + broker.session.timeout.ms (11 s) of its death.
fn losing_zones(expect: &str) -> Scenario {
    Scenario::from_json(&losing_zones_text(expect)).expect("a valid scenario")
}

fn losing_zones_text(expect: &str) -> String {
    format!(
        r#"{{"version": 2, "brokers": 4,
        "racks": {{"1": "a", "2": "b", "3": "c", "4": "b"}},
        "topics": [{{"name": "orders", "assignment": [[1, 2, 3], [2, 3, 1], [3, 1, 4]],
                     "configs": {{"min.insync.replicas": 2}}}},
                   {{"name": "audit", "assignment": [[1, 4]]}}],
        "timeline": [
          {{"at": 1000, "action": "lose_zone", "zone": "b"}},
          {{"at": 14000, "action": "kill", "broker": 3}},
          {{"at": 26000, "action": "kill", "broker": 1}}
        ],
        "end_ms": 40000,
        "expect": [{expect}]}}"#
    )
}

/// What `kafka-topics.sh --describe`'s filters list, expected of the cluster, a topic or a
/// zone as a whole, worked out from TopicCommand's rules (PartitionDescription): before the
/// fence the dead brokers are still in the ISRs and live to describeCluster, so nothing is
/// listed; once zone b is fenced every partition has lost a replica (under-replicated), the
/// orders partitions are at 2 in-sync replicas of their minimum 2 and audit-0 at 1 of 1 (at
/// min ISR); with broker 3 fenced too the orders partitions are under their minimum; with
/// broker 1 fenced no partition has a leader (unavailable, and under min ISR too).
#[test]
fn expectations_speak_of_what_the_describe_filters_list() {
    let s = losing_zones(
        r#"{"at": 1500, "under_replicated_partitions": 0, "unavailable_partitions": [],
            "at_min_isr_partitions": 0, "under_min_isr_partitions": 0},
        {"at": 13000, "under_replicated_partitions": 4, "at_min_isr_partitions": ["audit-0", "orders-2", "orders-1", "orders-0"],
            "under_min_isr_partitions": [], "unavailable_partitions": 0},
        {"at": 13000, "under_replicated_partitions": 3},
        {"at": 13000, "topic": "audit", "under_replicated_partitions": ["audit-0"]},
        {"at": 13000, "zone": "c", "under_replicated_partitions": ["orders-0", "orders-1", "orders-2"]},
        {"at": 13000, "zone": "c", "under_replicated_partitions": ["orders-0", "orders-1"]},
        {"at": 25500, "under_min_isr_partitions": ["orders-0", "orders-1", "orders-2"], "at_min_isr_partitions": ["audit-0"]},
        {"at": 25500, "topic": "orders", "under_min_isr_partitions": 2},
        {"at": 38000, "unavailable_partitions": 4, "under_min_isr_partitions": 4, "zone": "a"},
        {"at": 38000, "unavailable_partitions": ["orders-0"]}"#,
    );
    let outcomes = watermark_engine::check::check(&s).expect("runs");
    let met: Vec<bool> = outcomes.iter().map(|o| o.met()).collect();
    assert_eq!(
        met,
        [true, true, false, true, true, false, true, false, true, false],
        "{outcomes:#?}"
    );
    let account = |i: usize| outcomes[i].account();
    let listed = |i: usize| {
        let a = account(i);
        let got = a.rsplit_once("got ").map(|(_, g)| g.to_string());
        got.unwrap_or_default()
    };
    assert!(
        account(2).contains("under_replicated_partitions: expected 3, got 4 ("),
        "{}",
        account(2)
    );
    let mut all: Vec<String> = listed(2)
        .trim_start_matches("4 (")
        .trim_end_matches(')')
        .split(", ")
        .map(str::to_string)
        .collect();
    all.sort();
    assert_eq!(all, ["audit-0", "orders-0", "orders-1", "orders-2"]);
    assert!(
        account(5).contains(
            "under_replicated_partitions of zone c: expected orders-0, orders-1, got orders-0, orders-1, orders-2"
        ),
        "{}",
        account(5)
    );
    assert!(
        account(7).contains("under_min_isr_partitions of topic orders: expected 2, got 3 (orders-0, orders-1, orders-2)"),
        "{}",
        account(7)
    );
    assert!(
        account(9).contains("unavailable_partitions: expected orders-0, got "),
        "{}",
        account(9)
    );
}

/// A describe filter's expectation is version 2's, counts at most the cluster's partitions
/// and lists its partitions (of `topic`'s when it names one), each once; both readers refuse
/// a value of another type alike.
#[test]
fn describe_filter_expectations_are_checked_before_the_run() {
    let err = |expect: &str| {
        let text = losing_zones_text(expect);
        let by_hand = Scenario::from_json(&text).expect_err("refused");
        let by_serde = serde_json::from_str::<Scenario>(&text).map_err(|e| e.to_string());
        (by_hand, by_serde)
    };
    let cases = [
        (r#"{"at": 1, "under_replicated_partitions": 5}"#, "expect[0].under_replicated_partitions", "under_replicated_partitions must be a count in 0..=4 (the cluster's partitions), got 5"),
        (r#"{"at": 1, "at_min_isr_partitions": ["orders-3"]}"#, "expect[0].at_min_isr_partitions[0]", "at_min_isr_partitions lists topic-partitions of the scenario's topics such as orders-0, got \"orders-3\""),
        (r#"{"at": 1, "unavailable_partitions": ["orders-01"]}"#, "expect[0].unavailable_partitions[0]", "unavailable_partitions lists topic-partitions of the scenario's topics such as orders-0, got \"orders-01\""),
        (r#"{"at": 1, "topic": "audit", "under_min_isr_partitions": ["orders-0"]}"#, "expect[0].under_min_isr_partitions[0]", "under_min_isr_partitions lists topic-partitions of topic audit such as audit-0, got \"orders-0\""),
        (r#"{"at": 1, "under_replicated_partitions": ["audit-0", "audit-0"]}"#, "expect[0].under_replicated_partitions[1]", "audit-0 appears twice"),
        (r#"{"at": 1, "under_replicated_partitions": "all"}"#, "expect[0].under_replicated_partitions", "invalid type: string \"all\", expected a count of partitions or a list of topic-partitions"),
        (r#"{"at": 1, "under_replicated_partitions": -1}"#, "expect[0].under_replicated_partitions", "invalid type: integer `-1`, expected a count of partitions or a list of topic-partitions"),
        (r#"{"at": 1, "under_replicated_partitions": [1]}"#, "expect[0].under_replicated_partitions[0]", "invalid type: integer `1`, expected a string"),
    ];
    for (expect, field, message) in cases {
        let (e, serde) = err(expect);
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            (field, message),
            "{expect}"
        );
        if message.starts_with("invalid type") {
            let serde = serde.expect_err("serde refuses it too");
            assert!(serde.starts_with(message), "{serde}");
        }
    }
    let e = Scenario::from_json(r#"{"expect": [{"at": 1, "under_replicated_partitions": 0}]}"#)
        .unwrap_err();
    assert_eq!(e.field, "expect[0].under_replicated_partitions");
    assert!(
        e.message.ends_with("needs version 2 (\"version\": 2)"),
        "{}",
        e.message
    );
}
