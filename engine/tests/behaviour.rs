//! Behaviour of single rules, each driven through a small scenario and checked against what
//! Kafka does (the class and method are named beside each test).
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::rewind::Rewind;
use watermark_engine::scenario::{ControllerName, Endpoint};
use watermark_engine::{Action, Scenario, Sim};

fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}"))
}

fn texts(sim: &Sim) -> Vec<(u64, String)> {
    sim.trace_events()
        .map(|e| (e.time_ms, e.text.clone()))
        .collect()
}

fn find<'a>(lines: &'a [(u64, String)], needle: &str) -> Option<&'a (u64, String)> {
    lines.iter().find(|(_, l)| l.contains(needle))
}

fn run(json: &str) -> (Sim, Vec<(u64, String)>) {
    let sim = watermark_engine::run(&scenario(json), true).unwrap();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let lines = texts(&sim);
    (sim, lines)
}

#[test]
fn acks_all_times_out_with_request_timed_out() {
    // DelayedProduce.onExpiration: the pre-written REQUEST_TIMED_OUT goes out after TimeoutMs
    // (the producer's request.timeout.ms) when the HW never reaches the record.
    let (_, lines) = run(
        r#"{"brokers":2,"config":{"request.timeout.ms":5000,"replica.lag.time.max.ms":60000,"broker.session.timeout.ms":60000},
            "timeline":[{"at":0,"action":"freeze","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["x"],"retries":0}],
            "end_ms":10000}"#,
    );
    let (t, _) = find(&lines, "acks=all -> REQUEST_TIMED_OUT").expect("times out");
    assert!(
        (6000..=6100).contains(t),
        "at {t}: sent at 1000 + latency, expired 5000 ms later"
    );
}

#[test]
fn a_write_to_a_follower_is_not_leader_or_follower() {
    let (_, lines) = run(
        r#"{"timeline":[{"at":100,"action":"produce","acks":"1","values":["x"],"to":2,"retries":0}]}"#,
    );
    assert!(find(&lines, "acks=1 -> NOT_LEADER_OR_FOLLOWER").is_some());
}

#[test]
fn retriable_errors_are_retried_until_the_isr_recovers() {
    // NotEnoughReplicasException is retriable: with the default retries the producer resends
    // every retry.backoff.ms until broker 2 is back in the ISR.
    let (sim, lines) = run(r#"{"brokers":2,"config":{"min.insync.replicas":2},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["patient"]},
                        {"at":3000,"action":"start","broker":2}],
            "end_ms":20000}"#);
    assert!(find(&lines, "retrying").is_some(), "it retried");
    let (t, l) = find(&lines, "acks=all -> ok, offset=0").expect("eventually written once");
    assert!(*t > 3000, "{l}");
    assert_eq!(
        sim.broker(1).unwrap().log.log_end_offset(),
        1,
        "a rejected attempt writes nothing"
    );
}

#[test]
fn delivery_timeout_expires_the_batch() {
    let (_, lines) = run(
        r#"{"brokers":2,"config":{"min.insync.replicas":2,"delivery.timeout.ms":3000},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["late"]}],
            "end_ms":8000}"#,
    );
    let (t, l) = find(&lines, "TimeoutException: Expiring 1 record(s) for rep-0").expect("expires");
    assert!((3900..=4200).contains(t), "{t} {l}");
}

#[test]
fn a_frozen_broker_is_fenced_after_the_session_timeout() {
    // broker.session.timeout.ms (9000): heartbeats stop, the controller fences the broker
    // and removes it from the ISR itself (handleBrokerFenced), without the leader's help.
    let (sim, lines) = run(r#"{"config":{"replica.lag.time.max.ms":600000},
            "timeline":[{"at":1000,"action":"freeze","broker":3},{"at":15000,"action":"describe"}],
            "end_ms":15000}"#);
    let (t, _) = find(
        &lines,
        "Fencing broker 3 because its session has timed out.",
    )
    .expect("fenced");
    assert!(
        (9000..=11000).contains(t),
        "fenced at {t}: last heartbeat before 1000 + 9000"
    );
    assert!(find(&lines, "Isr: 1,2 Elr:").is_some());
    assert!(
        find(&lines, "Shrinking ISR").is_none(),
        "the leader did not shrink it: lag is 600 s"
    );
    assert_eq!(sim.snapshot().brokers[2].state, "frozen");
}

#[test]
fn controlled_shutdown_moves_leadership_first() {
    // BrokerHeartbeatManager.calculateNextBrokerState: an unfenced broker that leads and
    // wants to shut down is granted CONTROLLED_SHUTDOWN (handleBrokerInControlledShutdown
    // moves its leaderships and takes it out of the ISR); SHUTDOWN_NOW comes at a later
    // heartbeat, once it leads nothing and every unfenced broker's metadata offset has
    // reached its controlled-shutdown offset (lowestActiveOffset): within a couple of
    // broker.heartbeat.interval.ms (2000), not in the same heartbeat.
    let (sim, lines) = run(
        r#"{"timeline":[{"at":1000,"action":"stop","broker":1},{"at":2000,"action":"describe"}],"end_ms":8000}"#,
    );
    assert!(find(
        &lines,
        "Unfenced broker 1 has requested and been granted a controlled shutdown."
    )
    .is_some());
    let (granted, _) = find(
        &lines,
        "The request from broker 1 to shut down has been granted since the lowest active offset",
    )
    .expect("granted later");
    assert!(
        (1_050..=5_100).contains(granted),
        "at a later heartbeat: {granted}"
    );
    assert!(find(
        &lines,
        "Topic: rep Partition: 0 Leader: 2 Replicas: 1,2,3 Isr: 2,3 Elr: LastKnownElr:"
    )
    .is_some());
    let (t, _) = find(&lines, "[KafkaServer id=1] shut down completed").expect("stops");
    let (e, _) = find(&lines, "to 2 using a clean election").expect("elected first");
    assert!(e <= t);
    assert_eq!(
        sim.broker(1).unwrap().clean_shutdown_epoch,
        sim.broker(1).unwrap().broker_epoch
    );
}

#[test]
fn a_follower_that_leads_nothing_is_granted_an_immediate_shutdown() {
    // BrokerHeartbeatManager.calculateNextBrokerState, UNFENCED with wantShutDown and no
    // leaderships: "has requested and been granted an immediate shutdown" → SHUTDOWN_NOW,
    // which processBrokerHeartbeat handles with handleBrokerFenced: out of the ISR and
    // fenced in that one heartbeat, with no controlled-shutdown state in between.
    let (_, lines) = run(
        r#"{"timeline":[{"at":1000,"action":"stop","broker":3},{"at":1100,"action":"describe"}],"end_ms":3000}"#,
    );
    let (t, _) = find(
        &lines,
        "Unfenced broker 3 has requested and been granted an immediate shutdown.",
    )
    .expect("granted");
    assert_eq!(
        *t, 1_005,
        "the heartbeat sent at the SIGTERM, one controller latency later"
    );
    assert!(find(&lines, "granted a controlled shutdown").is_none());
    assert!(find(&lines, "inControlledShutdown=1").is_none());
    let (d, _) = find(&lines, "[KafkaServer id=3] shut down completed").expect("stops");
    assert_eq!(*d, 1_010, "when the heartbeat response arrives");
    assert!(find(&lines, "Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr:").is_some());
}

#[test]
fn a_frozen_leader_comes_back_as_a_follower_and_truncates_its_uncommitted_tail() {
    // SIGSTOP the leader right after an acks=1 write only it has: the controller fences it
    // and elects broker 2; after SIGCONT the old leader processes what waited in its socket
    // buffer, learns it is a follower, and truncates the record nobody else has.
    let (sim, lines) = run(r#"{"config":{"replica.lag.time.max.ms":60000},
            "timeline":[{"at":1000,"action":"produce","acks":"all","prefix":"c-","count":3},
                        {"at":2000,"action":"freeze","broker":2},{"at":2000,"action":"freeze","broker":3},
                        {"at":3000,"action":"produce","acks":"1","values":["only-on-1"]},
                        {"at":3100,"action":"freeze","broker":1},
                        {"at":3100,"action":"thaw","broker":2},{"at":3100,"action":"thaw","broker":3},
                        {"at":20000,"action":"thaw","broker":1},
                        {"at":25000,"action":"describe"}],
            "end_ms":25000}"#);
    assert!(
        find(&lines, "Leader: 2 Replicas: 1,2,3 Isr: 1,2,3").is_some(),
        "broker 1 rejoined"
    );
    assert!(find(&lines, "broker 1 threw away offsets 3..3: only-on-1").is_some());
    let values: Vec<&str> = sim
        .broker(1)
        .unwrap()
        .log
        .records
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(values, ["c-1", "c-2", "c-3"]);
    assert!(
        sim.losses().is_empty(),
        "the acks=1 record was never committed"
    );
}

#[test]
fn a_leader_cut_off_from_the_controller_cannot_shrink_the_isr() {
    // The leader's AlterPartition never reaches the controller: the ISR change stays a
    // proposal and acks=all keeps waiting, until the controller fences the leader.
    let (_, lines) = run(
        r#"{"config":{"replica.lag.time.max.ms":2000,"broker.session.timeout.ms":20000,"request.timeout.ms":60000},
            "timeline":[{"at":500,"action":"cut","a":1,"b":"controller"},
                        {"at":600,"action":"freeze","broker":3},
                        {"at":1000,"action":"produce","acks":"all","values":["x"],"retries":0},
                        {"at":12000,"action":"describe"}],
            "end_ms":30000}"#,
    );
    assert!(
        find(&lines, "Shrinking ISR from 1,2,3 to 1,2").is_some(),
        "the leader tries"
    );
    assert!(
        find(&lines, "ISR updated to 1,2 ").is_none(),
        "but is never confirmed"
    );
    assert!(find(
        &lines,
        "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3"
    )
    .is_some());
    let (t, _) = find(&lines, "Fencing broker 1").expect("the controller fences the leader");
    assert!(*t >= 20000);
}

#[test]
fn without_elr_the_last_isr_member_stays_in_the_isr() {
    let (_, lines) = run(
        r#"{"brokers":2,"config":{"eligible.leader.replicas.version":0},
            "timeline":[{"at":0,"action":"stop","broker":2},{"at":1000,"action":"stop","broker":1},
                        {"at":2000,"action":"describe"}],
            "end_ms":3000}"#,
    );
    assert!(find(
        &lines,
        "Topic: rep Partition: 0 Leader: none Replicas: 1,2 Isr: 1 Elr: LastKnownElr:"
    )
    .is_some());
}

#[test]
fn a_lost_disk_is_refilled_from_the_leader() {
    let (sim, lines) = run(
        r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"d-","count":20},
                        {"at":1000,"action":"lose_disk","broker":3},
                        {"at":12000,"action":"start","broker":3},
                        {"at":20000,"action":"describe"}],
            "end_ms":20000}"#,
    );
    assert!(find(&lines, "broker 3 lost its disk").is_some());
    assert!(find(&lines, "Broker 3 registered after an unclean shutdown").is_some());
    assert!(find(&lines, "Isr: 1,2,3").is_some());
    assert_eq!(sim.broker(3).unwrap().log.log_end_offset(), 20);
    assert_eq!(
        sim.broker(3).unwrap().log.epoch_cache.checkpoint_line(),
        "0 1 0 0"
    );
}

#[test]
fn an_idle_partition_releases_follower_fetches_after_fetch_wait_max() {
    // DelayedFetch: with nothing new the leader holds a follower's fetch for
    // replica.fetch.wait.max.ms before answering.
    let s = scenario(
        r#"{"config":{"replica.fetch.wait.max.ms":500,"sim.network.latency.ms":10},"end_ms":5000}"#,
    );
    let mut sim = Sim::new(&s).unwrap();
    sim.advance_to(3000);
    // Count fetch round trips from broker 2 in 2 s: each takes 10 + 500 + 10 ms.
    let mut count = 0;
    let mut held_seen = false;
    let mut t = 3000;
    let mut seen = std::collections::BTreeSet::new();
    while t < 5000 {
        t += 5;
        sim.advance_to(t);
        let snap = sim.snapshot();
        for m in snap
            .in_flight
            .iter()
            .filter(|m| m.kind == "Fetch" && m.from == watermark_engine::types::Node::Broker(2))
        {
            assert_eq!(
                m.deliver_ms - m.sent_ms,
                10,
                "in-flight messages carry send and delivery times"
            );
            if seen.insert(m.id) {
                count += 1;
            }
        }
        held_seen |= snap
            .held_fetches
            .iter()
            .any(|h| h.replica == 2 && h.deadline_ms - h.since_ms == 500);
    }
    assert!(
        held_seen,
        "the leader's held fetch is visible with its deadline"
    );
    assert!(
        (3..=4).contains(&count),
        "{count} fetches from broker 2 in 2 s"
    );
}

#[test]
fn snapshot_shows_the_purgatory_with_deadlines() {
    let s = scenario(
        r#"{"config":{"replica.lag.time.max.ms":60000,"broker.session.timeout.ms":60000},
            "timeline":[{"at":0,"action":"freeze","broker":3},
                        {"at":100,"action":"produce","acks":"all","values":["w"],"retries":0}],
            "end_ms":2000}"#,
    );
    let mut sim = Sim::new(&s).unwrap();
    sim.advance_to(1000);
    let snap = sim.snapshot();
    assert_eq!(snap.purgatory.len(), 1);
    let p = &snap.purgatory[0];
    assert_eq!(p.broker, 1);
    assert_eq!(p.required_offset, 1);
    assert_eq!(p.deadline_ms - p.created_ms, 30_000);
    assert!(
        !snap.metrics.under_replicated,
        "broker 3 is still in the ISR"
    );
    let b3 = &snap.brokers[2];
    assert!(b3.since_caught_up_ms.is_some());
}

#[test]
fn rewind_rebuilds_any_moment_exactly_including_inputs() {
    let s = scenario(
        r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"r-","count":5}],"end_ms":60000}"#,
    );
    let mut live = Sim::new(&s).unwrap();
    let mut rewind = Rewind::new(&live, 1_000);
    let mut snapshots = vec![];
    let mut t = 0;
    while t < 20_000 {
        t += 333;
        live.advance_to(t);
        rewind.observe(&live);
        if t == 3330 {
            rewind
                .apply(&mut live, &Action::Freeze { broker: 2 })
                .unwrap();
        }
        if t == 6660 {
            rewind
                .apply(
                    &mut live,
                    &Action::Produce(
                        serde_json::from_str(r#"{"acks":"1","values":["late"]}"#).unwrap(),
                    ),
                )
                .unwrap();
        }
        if t == 9990 {
            rewind
                .apply(
                    &mut live,
                    &Action::Cut {
                        a: Endpoint::Broker(3),
                        b: Endpoint::Controller(ControllerName::Controller),
                    },
                )
                .unwrap();
        }
        // state_at(t) means "every event at t processed", inputs' own included.
        live.advance_to(t);
        snapshots.push((t, serde_json::to_string(&live.snapshot()).unwrap()));
    }
    assert!(rewind.checkpoint_count() > 10);
    for (t, expected) in &snapshots {
        let rebuilt = rewind.state_at(*t);
        assert_eq!(
            &serde_json::to_string(&rebuilt.snapshot()).unwrap(),
            expected,
            "state at {t}"
        );
    }
    // Acting while scrubbed back discards the future from that point.
    rewind.discard_after(5_000);
    let at_8000 = rewind.state_at(8_000);
    assert!(
        at_8000
            .broker(1)
            .unwrap()
            .log
            .records
            .iter()
            .all(|r| r.value != "late"),
        "the later input is gone"
    );
    assert_eq!(
        at_8000.broker(2).unwrap().process,
        watermark_engine::sim::ProcessState::Frozen,
        "the earlier one stays"
    );
}

#[test]
fn bad_inputs_name_the_field_and_change_nothing() {
    let mut sim = Sim::new(&Scenario::default()).unwrap();
    let before = serde_json::to_string(&sim.snapshot()).unwrap();
    let e = sim.apply_now(&Action::Kill { broker: 7 }).unwrap_err();
    assert_eq!(e.field, "action.broker");
    assert!(e.message.contains("1..=3"));
    let e = sim
        .apply_now(&Action::SetConfig {
            name: "replica.lag.time.max.ms".into(),
            value: serde_json::json!(-5),
        })
        .unwrap_err();
    assert!(e.message.contains("replica.lag.time.max.ms"), "{e}");
    assert_eq!(serde_json::to_string(&sim.snapshot()).unwrap(), before);
}

#[test]
fn trace_is_read_by_cursor() {
    let (sim, _) = run(
        r#"{"timeline":[{"at":0,"action":"describe"},{"at":1,"action":"offsets"},{"at":2,"action":"epochs"}]}"#,
    );
    let (first, cursor) = sim.trace_since(0, 2);
    assert_eq!(first.len(), 2);
    let (rest, end) = sim.trace_since(cursor, 1000);
    assert!(rest.iter().all(|e| e.seq >= cursor));
    assert!(sim.trace_since(end, 1000).0.is_empty());
}

#[test]
fn lowering_replica_lag_time_max_ms_reschedules_isr_expiration_at_once() {
    // Kafka schedules isr-expiration once, at startup, every replica.lag.time.max.ms / 2
    // (ReplicaManager.startup), and the config is not dynamically reconfigurable. The
    // playground applies a change at once on every broker, as if each had been restarted with
    // the new value: the isr-expiration task then runs on the new period straight away, not
    // after the one queued at the old period (here up to 15 s later).
    for seed in 1..=8 {
        let json = format!(
            r#"{{"seed":{seed},"config":{{"replica.lag.time.max.ms":30000,"broker.session.timeout.ms":60000}},
                "timeline":[{{"at":2000,"action":"freeze","broker":3}},
                            {{"at":3000,"action":"produce","acks":"1","values":["behind"]}},
                            {{"at":5000,"action":"set_config","name":"replica.lag.time.max.ms","value":1000}}],
                "end_ms":25000}}"#
        );
        let (sim, lines) = run(&json);
        let (t, l) = find(&lines, "Shrinking ISR from 1,2,3 to 1,2")
            .unwrap_or_else(|| panic!("seed {seed}: broker 3 never left the ISR"));
        // Broker 3 last caught up before 2000, so it is out of sync as soon as the lag is
        // 1000 ms; the new task (period 500 ms) runs within 500 ms of the change.
        assert!(
            (5000..5500).contains(t),
            "seed {seed}: shrunk at {t}, want within 500 ms of the change at 5000: {l}"
        );
        assert_eq!(
            run(&json).1,
            lines,
            "seed {seed}: the same scenario gives the same transcript"
        );
        assert!(sim.losses().is_empty());
    }
}

#[test]
fn the_end_offset_never_goes_backwards_across_a_leader_change() {
    // KIP-207, Partition.fetchOffsetForTimestamp: a new leader whose HW is still below the
    // start offset of its epoch answers ListOffsets LATEST with OFFSET_NOT_AVAILABLE, so
    // kafka-get-offsets.sh never prints an end offset below one it printed before.
    let scenario = scenario(
        r#"{"config":{"sim.network.latency.ms":20},
            "timeline":[{"at":100,"action":"produce","acks":"1","prefix":"v","count":40,"one_by_one":true},
                        {"at":400,"action":"kill","broker":1}],
            "end_ms":20000}"#,
    );
    let mut sim = Sim::new(&scenario).unwrap();
    sim.check_invariants = true;
    let mut printed: Vec<u64> = vec![];
    let mut refused = 0;
    while sim.now() < 20_000 && sim.step() {
        let line = sim.snapshot().offsets;
        if let Some(n) = line.strip_prefix("rep:0:") {
            let n: u64 = n.parse().unwrap();
            if printed.last() != Some(&n) {
                printed.push(n);
            }
        } else if line.contains("OFFSET_NOT_AVAILABLE") {
            refused += 1;
        }
    }
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    assert!(
        printed.windows(2).all(|w| w[0] <= w[1]),
        "the end offset went backwards: {printed:?}"
    );
    assert!(
        refused > 0,
        "the new leader answered OFFSET_NOT_AVAILABLE for a while: {printed:?}"
    );
    assert!(printed.len() > 3, "{printed:?}");
}

#[test]
fn a_killed_leader_resets_its_connections_so_the_producer_retries_at_once() {
    // kill -9 leaves the machine's kernel running: it resets the process's connections, so
    // the producer's in-flight batch fails with a disconnect (Sender.handleProduceResponse:
    // NETWORK_EXCEPTION, retriable) and is retried after retry.backoff.ms, instead of
    // waiting request.timeout.ms (30000) for an answer that cannot come.
    let (_, lines) = run(
        r#"{"config":{"min.insync.replicas":2,"sim.network.latency.ms":10},
            "timeline":[{"at":0,"action":"freeze","broker":2},{"at":0,"action":"freeze","broker":3},
                        {"at":1000,"action":"produce","acks":"all","values":["x"]},
                        {"at":2000,"action":"kill","broker":1}],
            "end_ms":5000}"#,
    );
    let (t, l) = find(&lines, "Error: NETWORK_EXCEPTION").expect("a disconnect");
    assert_eq!(*t, 2_010, "one latency after the kill: {l}");
    assert!(
        find(&lines, "REQUEST_TIMED_OUT").is_none(),
        "no request timeout"
    );
    // The retry goes to the dead broker again (it is still the leader until the controller
    // fences it): nothing listens, so the connection is refused after a round trip.
    let retries: Vec<u64> = lines
        .iter()
        .filter(|(_, l)| l.contains("Error: NETWORK_EXCEPTION"))
        .map(|(t, _)| *t)
        .collect();
    assert!(retries.len() > 3, "{retries:?}");
    assert_eq!(
        retries[1] - retries[0],
        100 + 2 * 10,
        "retry.backoff.ms, then a round trip"
    );
}

#[test]
fn a_frozen_leader_keeps_its_connections_open_so_the_producer_times_out() {
    // SIGSTOP: the process still holds its sockets; nothing resets them, so the producer
    // waits for request.timeout.ms.
    let (_, lines) = run(
        r#"{"config":{"request.timeout.ms":3000,"broker.session.timeout.ms":60000},
            "timeline":[{"at":1000,"action":"freeze","broker":1},
                        {"at":1000,"action":"produce","acks":"all","values":["x"],"retries":0}],
            "end_ms":6000}"#,
    );
    assert!(find(&lines, "NETWORK_EXCEPTION").is_none());
    let (t, _) = find(&lines, "acks=all -> REQUEST_TIMED_OUT").expect("times out");
    assert!(*t >= 4_000, "after request.timeout.ms: {t}");
}

#[test]
fn a_follower_whose_leader_was_killed_learns_it_at_once() {
    // ReplicaFetcherThread: the fetch fails with "Connection to 1 was disconnected before
    // the response was read" as soon as the reset arrives, then backs off
    // replica.fetch.backoff.ms, rather than waiting replica.socket.timeout.ms (30000).
    let (_, lines) = run(r#"{"config":{"sim.network.latency.ms":10},
            "timeline":[{"at":2000,"action":"kill","broker":1}],"end_ms":4000}"#);
    let (t, l) = find(&lines, "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error in response for fetch request: java.io.IOException: Connection to 1 was disconnected").expect("disconnected");
    assert_eq!(*t, 2_010, "{l}");
    assert!(find(&lines, "no response within replica.socket.timeout.ms").is_none());
}
