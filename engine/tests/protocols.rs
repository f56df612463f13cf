//! Historical protocol modes (docs/history.md): each mode's presets reproduce the anomaly
//! its KIP describes, with the lines Kafka printed; the same timeline in kafka-4 mode does
//! not; the presets replay byte for byte; the scenario field is refused when unknown and
//! travels in share links.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::event::{Event, HistoricalAnomaly, LossCause, OwnDataLoss};
use watermark_engine::presets::preset;
use watermark_engine::{Protocol, Scenario, Sim};

/// Runs `scenario` with the invariant checker on; a broken invariant fails the test (the
/// historical anomaly must be reported as a loss, never as an engine bug).
fn run(scenario: &Scenario) -> Sim {
    let sim = watermark_engine::run(scenario, true).expect("runs");
    assert!(
        sim.violations().is_empty(),
        "{}: invariants broken: {:?}",
        scenario.title,
        sim.violations()
    );
    sim
}

/// The preset, and the same preset with its `protocol` field removed (kafka-4).
fn preset_and_kafka_4(name: &str) -> (Scenario, Scenario) {
    let old = preset(name).expect("preset");
    let text = old.to_json_pretty();
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v.as_object_mut().expect("object").remove("protocol");
    let new = Scenario::from_json(&v.to_string()).expect("parses without protocol");
    assert_eq!(new.protocol, Protocol::Kafka4);
    assert_eq!(new.timeline, old.timeline, "the same timeline");
    (old, new)
}

fn lines(sim: &Sim) -> Vec<(u64, String)> {
    sim.trace_events().map(|e| (e.time_ms, e.text())).collect()
}

fn has_line(sim: &Sim, from: u64, to: u64, text: &str) -> bool {
    lines(sim)
        .iter()
        .any(|(t, l)| *t >= from && *t <= to && l == text)
}

/// The records of `broker`'s log at the end, as values.
fn log_values(sim: &Sim, broker: u32) -> Vec<String> {
    let snap = sim.snapshot();
    let b = snap.broker(broker).expect("broker");
    b.records.iter().map(|r| r.value.clone()).collect()
}

/// The run lost committed records once: `offsets`, when `broker` was elected, for `cause`.
fn assert_one_loss(sim: &Sim, broker: u32, offsets: &[u64], cause: LossCause) {
    let found = losses(sim);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1.as_slice()), (broker, offsets));
    assert_eq!(found[0].2, cause);
}

fn losses(sim: &Sim) -> Vec<(u32, Vec<u64>, LossCause)> {
    let mut out = vec![];
    for e in sim.trace_events() {
        if let Event::CommittedRecordsLost {
            broker,
            records,
            cause,
            ..
        } = e.event()
        {
            out.push((
                *broker,
                records.iter().map(|r| r.offset).collect(),
                cause.clone(),
            ));
        }
    }
    out
}

#[test]
fn kip_101_scenario_1_high_watermark_truncation_then_an_election_loses_m2() {
    let (old, new) = preset_and_kafka_4("pre-kip-101-hw-truncation");
    let sim = run(&old);
    // The run says whose rules it follows, once, at the start; a kafka-4 run does not.
    let said: Vec<_> = lines(&sim)
        .into_iter()
        .filter(|(_, l)| l.starts_with("protocol "))
        .collect();
    assert_eq!(said.len(), 1);
    assert_eq!(said[0].0, 0);
    assert!(said[0]
        .1
        .starts_with("protocol pre-kip-101: Kafka 0.10.2 replication"));
    assert!(said[0]
        .1
        .contains("Kafka 0.11.0: https://cwiki.apache.org/"));
    // A (broker 1) restarts with HW 1 from its checkpoint and truncates m2 on becoming
    // follower (ReplicaManager.makeFollowers in 0.10.2), before B fails.
    assert!(has_line(
        &sim,
        6100,
        6100,
        "[KafkaServer id=1] started: kip101-0 loaded with log end offset 2, high watermark 1 (from replication-offset-checkpoint)"
    ));
    assert!(has_line(
        &sim,
        6110,
        6110,
        "[UnifiedLog partition=kip101-0, dir=/tmp/kafka/1/data] Truncating to offset 1"
    ));
    assert!(has_line(
        &sim,
        6110,
        6110,
        "broker 1 threw away offsets 1..1: m2"
    ));
    // The controller kept A in the ISR through its bounce (before KIP-380), so A is
    // elected cleanly when B is fenced.
    assert!(!lines(&sim)
        .iter()
        .any(|(_, l)| l.contains("DuplicateBrokerRegistrationException")));
    assert!(has_line(
        &sim,
        14_000,
        15_000,
        "[QuorumController] Setting new leader for topic kip101, partition 0 to 1 using a clean election (leader epoch 1)"
    ));
    // The loss is the era's anomaly, named as such, not an engine bug.
    assert_one_loss(
        &sim,
        1,
        &[1],
        LossCause::HistoricalProtocol {
            broker: 1,
            protocol: Protocol::PreKip101,
            anomaly: HistoricalAnomaly::HwTruncation,
        },
    );
    assert_eq!(log_values(&sim, 1), ["m1"]);

    // Kafka 4.x, the same timeline: the restarted broker keeps m2 (it truncates by leader
    // epoch, not to its HW) and nothing committed is lost.
    let sim = run(&new);
    assert!(!lines(&sim).iter().any(|(_, l)| l.starts_with("protocol ")));
    assert!(losses(&sim).is_empty(), "{:?}", losses(&sim));
    assert!(!lines(&sim)
        .iter()
        .any(|(_, l)| l.contains("Truncating to offset 1")));
    assert_eq!(log_values(&sim, 1), ["m1", "m2"]);
    // The restarted process is refused while the old one's session lasts
    // (ClusterControlManager.registerBroker), so it never rejoins as if nothing happened.
    assert!(lines(&sim)
        .iter()
        .any(|(t, l)| *t == 6105 && l.contains("DuplicateBrokerRegistrationException")));
}

#[test]
fn kip_101_scenario_2_replicas_diverge_after_a_power_outage() {
    let (old, new) = preset_and_kafka_4("pre-kip-101-divergence");
    let sim = run(&old);
    // The outage takes m2 from B only: A's copy was written back, B's was not.
    assert!(has_line(
        &sim,
        33_500,
        33_500,
        "broker 2: kip101-0 offsets 1..1 were only in the page cache and are gone; the log ends at 1"
    ));
    // B leads without m2: a loss the power loss explains (Kafka's contract allows it when
    // every replica loses power).
    let found = losses(&sim);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].2,
        LossCause::PowerLoss {
            broker: 2,
            power_lost: vec![1, 2]
        }
    );
    // A comes back, truncates to its HW (2: nothing) and never learns its offset 1 differs.
    assert!(!lines(&sim)
        .iter()
        .any(|(t, l)| *t >= 50_000 && (l.contains("Truncating") || l.contains("threw away"))));
    assert_eq!(log_values(&sim, 1), ["m1", "m2"]);
    assert_eq!(log_values(&sim, 2), ["m1", "m3"]);
    let snap = sim.snapshot();
    let (a, b) = (snap.broker(1).unwrap(), snap.broker(2).unwrap());
    assert!(a.in_isr && b.in_isr, "both in the ISR, diverged");
    assert_eq!(a.records[1].offset, b.records[1].offset);

    // Kafka 4.x, the same timeline: A truncates on the leader's diverging epoch and both
    // logs end equal (m2 is still lost: every replica lost power).
    let sim = run(&new);
    assert!(has_line(
        &sim,
        50_000,
        51_000,
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition kip101-0 to offset 1 due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=1)"
    ));
    assert_eq!(log_values(&sim, 1), ["m1", "m3"]);
    assert_eq!(log_values(&sim, 2), ["m1", "m3"]);
}

#[test]
fn without_elr_the_last_replica_standing_run_goes_offline() {
    let with_elr = run(&preset("last-replica-standing").unwrap());
    let (old, new) = preset_and_kafka_4("last-replica-standing-no-elr");
    let without = run(&old);
    // The same preset without its protocol field is the ELR run: B is elected.
    let new = run(&new);
    assert!(losses(&new).is_empty());
    assert_eq!(
        new.snapshot().controller.leader,
        Some(2),
        "kafka-4 elects B from the ELR"
    );
    assert!(has_line(
        &with_elr,
        48_000,
        49_000,
        "[QuorumController] Setting new leader for topic elr, partition 0 to 2 using ELR (leader epoch 1)"
    ));
    assert!(has_line(
        &without,
        48_000,
        49_000,
        "[QuorumController] Partition elr-0 has no leader: no eligible replica (Isr: [1] Elr: []) leader epoch 1"
    ));
    assert!(losses(&without).is_empty());
    let snap = without.snapshot();
    assert!(
        snap.brokers.iter().all(|b| !b.in_elr),
        "no ELR before KIP-966"
    );
    // no-elr is eligible.leader.replicas.version=0: the same run with the feature off
    // gives the same transcript.
    let mut feature_off = preset("last-replica-standing").unwrap();
    feature_off.config.eligible_leader_replicas_version = 0;
    let feature_off = run(&feature_off);
    // Apart from the captions and the line naming the mode.
    let captions = |sim: &Sim| -> Vec<(u64, String)> {
        lines(sim)
            .into_iter()
            .filter(|(_, l)| !l.starts_with("# ") && !l.starts_with("protocol no-elr: "))
            .collect()
    };
    assert_eq!(captions(&feature_off), captions(&without));
}

#[test]
fn the_modes_presets_give_the_same_bytes_twice() {
    for name in [
        "last-replica-standing-no-elr",
        "pre-kip-903-stale-isr-join",
        "pre-kip-320-unfenced-fetch",
        "pre-kip-101-hw-truncation",
        "pre-kip-101-divergence",
        "kip-279-divergence",
    ] {
        let s = preset(name).unwrap();
        let a = run(&s);
        let b = run(&s);
        assert_eq!(a.transcript(), b.transcript(), "{name}");
        assert_eq!(
            serde_json::to_string(&a.snapshot()).unwrap(),
            serde_json::to_string(&b.snapshot()).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn protocol_is_refused_when_unknown_and_travels_in_links() {
    let e = Scenario::from_json(r#"{"protocol": "kafka-3"}"#).unwrap_err();
    assert_eq!(e.field, "protocol");
    assert_eq!(
        e.message,
        "unknown protocol \"kafka-3\"; the protocols are: kafka-4, no-elr, pre-kip-903, pre-kip-320, kip-101-without-kip-279, pre-kip-101"
    );
    let e = Scenario::from_json(r#"{"protocol": 3}"#).unwrap_err();
    assert_eq!(e.field, "protocol");
    // A scenario without the field is kafka-4, and its JSON and link do not name it.
    let plain = preset("frozen-follower").unwrap();
    assert_eq!(plain.protocol, Protocol::Kafka4);
    assert!(!plain.to_json_pretty().contains("\"protocol\""));
    let link = watermark_engine::share::encode(&plain);
    assert!(!watermark_engine::share::decode(&link)
        .unwrap()
        .to_json_pretty()
        .contains("protocol"));
    // A mode goes into the link and comes back.
    let old = preset("pre-kip-101-divergence").unwrap();
    let back = watermark_engine::share::decode(&watermark_engine::share::encode(&old)).unwrap();
    assert_eq!(back.protocol, Protocol::PreKip101);
    assert_eq!(back, old);
}

/// Two brokers, writeback after 5 s: "old" written at 0 (on disk by 5 s), "new" at 8 s
/// (only in the page cache until 13 s), then the `more` actions (JSON, each after a comma).
fn old_and_new(more: &str, end_ms: u64) -> Scenario {
    Scenario::from_json(&format!(
        r#"{{"version": 1, "brokers": 2, "assignment": [1, 2], "seed": 1,
            "config": {{"sim.writeback.delay.ms": 5000}},
            "timeline": [
              {{"at": 0, "action": "produce", "acks": "all", "values": ["old"]}},
              {{"at": 8000, "action": "produce", "acks": "all", "values": ["new"]}}{more}
            ],
            "end_ms": {end_ms}}}"#
    ))
    .expect("scenario")
}

/// `power_loss`: the records appended less than `sim.writeback.delay.ms` before are gone from
/// that broker's log, older ones stay; the leader's HW above a power-lost ISR member is
/// Kafka's contract at work, not a broken invariant; kill -9 loses nothing.
#[test]
fn a_power_loss_takes_what_the_os_had_not_written_back() {
    let scenario = |fault: &str| {
        old_and_new(
            &format!(r#", {{"at": 9000, "action": "{fault}", "broker": 2}}"#),
            9500,
        )
    };
    let sim = run(&scenario("power_loss"));
    assert!(has_line(
        &sim,
        9000,
        9000,
        "broker 2 lost power: the process is down, and what the OS had not written back (appended in the last 5000 ms) is gone"
    ));
    assert!(has_line(
        &sim,
        9000,
        9000,
        "broker 2: rep-0 offsets 1..1 were only in the page cache and are gone; the log ends at 1"
    ));
    assert_eq!(log_values(&sim, 2), ["old"]);
    assert_eq!(log_values(&sim, 1), ["old", "new"]);
    // kill -9: the OS keeps running and writes everything back.
    let sim = run(&scenario("kill"));
    assert_eq!(log_values(&sim, 2), ["old", "new"]);
}

/// The playground keeps the append times whatever the timeline holds
/// (`Sim::track_writeback`), so a power loss applied at any moment takes what the OS had not
/// written back, as one in the timeline does; a run that keeps them prints the same lines.
#[test]
fn a_power_loss_applied_during_a_run_that_tracks_writeback_takes_the_unwritten_tail() {
    let scenario = old_and_new("", 9500);
    let power_loss = watermark_engine::Action::PowerLoss { broker: 2 };
    let run_to_9s = |track: bool| {
        let mut sim = Sim::new(&scenario).expect("sim");
        sim.check_invariants = true;
        if track {
            sim.track_writeback();
        }
        sim.advance_to(9000);
        sim
    };
    let (mut tracked, mut untracked) = (run_to_9s(true), run_to_9s(false));
    assert_eq!(
        tracked.transcript(),
        untracked.transcript(),
        "tracking changes no line"
    );
    tracked.apply_now(&power_loss).expect("applies");
    untracked.apply_now(&power_loss).expect("applies");
    tracked.advance_to(9500);
    untracked.advance_to(9500);
    assert!(tracked.violations().is_empty() && untracked.violations().is_empty());
    assert_eq!(log_values(&tracked, 2), ["old"]);
    assert!(has_line(
        &tracked,
        9000,
        9000,
        "broker 2: rep-0 offsets 1..1 were only in the page cache and are gone; the log ends at 1"
    ));
    // Without the times a run cannot know what was unwritten: it loses nothing (which is
    // why the playground tracks them).
    assert_eq!(log_values(&untracked, 2), ["old", "new"]);
}

/// A clean shutdown flushes every log (LogManager.shutdown: `log.flush(true)` before
/// `close`), so a power loss after it takes nothing.
#[test]
fn a_power_loss_after_a_clean_shutdown_takes_nothing() {
    let scenario = old_and_new(
        r#", {"at": 8200, "action": "stop", "broker": 2},
            {"at": 12000, "action": "power_loss", "broker": 2}"#,
        12_500,
    );
    let sim = run(&scenario);
    assert!(
        lines(&sim)
            .iter()
            .any(|(t, l)| *t < 12_000 && l == "[KafkaServer id=2] shut down completed"),
        "broker 2 shut down cleanly before the power loss"
    );
    assert!(!lines(&sim)
        .iter()
        .any(|(_, l)| l.contains("were only in the page cache")));
    assert_eq!(log_values(&sim, 2), ["old", "new"]);
}

#[test]
fn kip_279_an_answer_without_an_epoch_leaves_replicas_diverged() {
    let (old, new) = preset_and_kafka_4("kip-279-divergence");
    let sim = run(&old);
    // B asks once; A's answer is the start of its next epoch, without an epoch, and it is
    // B's log end: nothing is truncated (ReplicaFetcherThread.maybeTruncate at 1.1.0).
    assert!(has_line(
        &sim,
        35_000,
        35_100,
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition kip279-0 to offset 10 due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=-1, endOffset=10)"
    ));
    assert!(!lines(&sim)
        .iter()
        .any(|(t, l)| *t >= 35_000 && l.contains("threw away")));
    // One question only: later fetches carry no epoch, so the leader never answers another
    // divergence.
    let answers = lines(&sim)
        .iter()
        .filter(|(_, l)| l.contains("due to leader epoch and offset"))
        .count();
    assert_eq!(answers, 1);
    assert_eq!(log_values(&sim, 1)[9], "a-10");
    assert_eq!(log_values(&sim, 2)[9], "b-10");
    let snap = sim.snapshot();
    assert!(snap.broker(1).unwrap().in_isr && snap.broker(2).unwrap().in_isr);
    // b-10 was lost to the unclean election, which the scenario allows.
    assert_eq!(
        losses(&sim).last().map(|l| l.2.clone()),
        Some(LossCause::UncleanElection { broker: 1 })
    );

    // Kafka 4.x (KIP-279's answer with its epoch): B truncates b-10 and copies a-10.
    let sim = run(&new);
    assert!(has_line(
        &sim,
        35_000,
        35_100,
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition kip279-0 to offset 9 due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=10)"
    ));
    assert_eq!(log_values(&sim, 1), log_values(&sim, 2));
}

#[test]
fn kip_903_a_replaced_disk_rejoins_the_isr_on_a_stale_fetch_and_loses_committed_records() {
    let (old, new) = preset_and_kafka_4("pre-kip-903-stale-isr-join");
    let sim = run(&old);
    // A proposes B while B's first process has caught up; the request is lost on the cut.
    assert!(has_line(
        &sim,
        12_515,
        12_515,
        "[Partition kip903-0 broker=1] Expanding ISR from 1 to 1,2"
    ));
    assert!(has_line(
        &sim,
        22_005,
        22_005,
        "[QuorumController] Registered broker 2 with broker epoch 8 (fenced until it catches up)"
    ));
    // Sent again after controller.socket.timeout.ms, without broker epochs: accepted.
    assert!(has_line(
        &sim,
        42_515,
        42_515,
        "[NodeToControllerChannelManager id=1 name=alter-partition] AlterPartition request got no answer within controller.socket.timeout.ms=30000 ms: sending it again"
    ));
    assert!(has_line(
        &sim,
        42_525,
        42_525,
        "[Partition kip903-0 broker=1] ISR updated to 1,2  and version updated to 2"
    ));
    assert!(!lines(&sim)
        .iter()
        .any(|(_, l)| !l.starts_with("# ") && l.contains("INELIGIBLE_REPLICA")));
    assert!(has_line(
        &sim,
        50_947,
        50_947,
        "[QuorumController] Setting new leader for topic kip903, partition 0 to 2 using a clean election (leader epoch 1)"
    ));
    // The loss is the era's anomaly, named as KIP-903's, not a lost disk's or a bug.
    assert_one_loss(
        &sim,
        2,
        &[0, 1, 2],
        LossCause::HistoricalProtocol {
            broker: 2,
            protocol: Protocol::PreKip903,
            anomaly: HistoricalAnomaly::StaleIsrJoin,
        },
    );
    assert!(has_line(
        &sim,
        50_952,
        50_952,
        "Committed records lost: offsets 0..2 (m1 m2 m3) are gone: broker 2 became leader through a clean election without them: protocol pre-kip-903 (it lost its log and rejoined the ISR on a fetch of its process before the restart, the loss KIP-903 fixed)."
    ));
    assert!(log_values(&sim, 1).is_empty() && log_values(&sim, 2).is_empty());

    // Kafka 4.x, the same timeline: the request names B's broker epoch from its fetch (5),
    // the controller has 8 and refuses it; B stays out, A's death leaves the partition
    // without a leader, and A keeps every committed record.
    let sim = run(&new);
    assert!(has_line(
        &sim,
        42_520,
        42_520,
        "[QuorumController] Rejecting AlterPartition request from node 1 for kip903-0 because it specified ineligible replicas 2 (broker epoch mismatch: requested=5 VS expected=8) in the new ISR 1,2"
    ));
    assert!(has_line(
        &sim,
        42_525,
        42_525,
        "[Partition kip903-0 broker=1] Failed to alter partition since the controller rejected the request with INELIGIBLE_REPLICA. Partition state has been reset to the latest committed state (ISR 1)."
    ));
    assert!(losses(&sim).is_empty(), "{:?}", losses(&sim));
    assert_eq!(log_values(&sim, 1), ["m1", "m2", "m3"]);
    assert!(!sim
        .trace_events()
        .any(|e| e.text().contains("using a clean election")));

    // The same run in no-elr (Kafka 3.5+, KIP-903 without ELR) refuses it too: the loss is
    // KIP-903's alone.
    let mut no_elr = old.clone();
    no_elr.protocol = Protocol::NoElr;
    let sim = run(&no_elr);
    assert!(losses(&sim).is_empty(), "{:?}", losses(&sim));
    assert!(lines(&sim)
        .iter()
        .any(|(_, l)| !l.starts_with("# ") && l.contains("INELIGIBLE_REPLICA")));
}

#[test]
fn kip_320_a_follower_that_missed_two_leader_changes_fetches_unfenced_and_y_is_lost() {
    let (old, new) = preset_and_kafka_4("pre-kip-320-unfenced-fetch");
    let sim = run(&old);
    // A truncates x on becoming B's follower (KIP-279's answer, in the truncating state).
    assert!(has_line(
        &sim,
        12_012,
        12_012,
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition kip320-0 to offset 1 due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=1)"
    ));
    assert!(has_line(
        &sim,
        14_005,
        14_005,
        "[QuorumController] Setting new leader for topic kip320, partition 0 to 1 using a clean election (leader epoch 2)"
    ));
    // C (still at epoch 0) is never fenced: no fetch names an epoch before KIP-320.
    let transcript = lines(&sim);
    let engine_lines = transcript
        .iter()
        .filter(|(_, l)| !l.starts_with("# ") && !l.starts_with("protocol "));
    assert!(!engine_lines
        .clone()
        .any(|(_, l)| l.contains("has an older epoch") || l.contains("FENCED_LEADER_EPOCH")));
    assert!(engine_lines.count() > 20);
    // A counted C's fetch from offset 2: its HW is 2 with x, not y, at C's offset 1.
    assert!(has_line(&sim, 15_000, 15_000, "kip320:0:2"));
    assert!(has_line(
        &sim,
        16_005,
        16_005,
        "[QuorumController] Setting new leader for topic kip320, partition 0 to 3 using a clean election (leader epoch 3)"
    ));
    assert_one_loss(
        &sim,
        3,
        &[1],
        LossCause::HistoricalProtocol {
            broker: 3,
            protocol: Protocol::PreKip320,
            anomaly: HistoricalAnomaly::UnfencedFetch,
        },
    );
    assert!(has_line(
        &sim,
        16_581,
        16_581,
        "Committed records lost: offsets 1..1 (y) are gone: broker 3 became leader through a clean election without them: protocol pre-kip-320 (a follower that missed leader epochs fetched from a leader of a later one without its current epoch, and counted toward its high watermark with a diverged log, the loss KIP-320 fixed)."
    ));
    assert_eq!(log_values(&sim, 3), ["m1", "x"]);

    // Kafka 4.x, the same timeline: C's first fetch that reaches A at a later epoch is
    // fenced, C stops fetching, A's HW stays at 1 and y is never committed (its loss at
    // C's election is acks=1's, not a committed record's).
    let sim = run(&new);
    assert!(has_line(
        &sim,
        12_021,
        12_021,
        "[ReplicaFetcher replicaId=3, leaderId=1, fetcherId=0] Partition kip320-0 has an older epoch (0) than the current leader. Will await the new LeaderAndIsr state before resuming fetching."
    ));
    let hw_1 = |sim: &Sim| {
        lines(sim).iter().any(|(t, l)| {
            *t == 15_000
                && l.starts_with(
                    "kafka-get-offsets.sh: OFFSET_NOT_AVAILABLE for kip320-0: the high watermark (1) of leader 1 at leader epoch 2",
                )
        })
    };
    assert!(hw_1(&sim));
    assert!(losses(&sim).is_empty(), "{:?}", losses(&sim));
    assert_eq!(log_values(&sim, 3), ["m1", "x"]);

    // pre-kip-903 (Kafka 3.4) has KIP-320: the same as kafka-4.
    let mut p903 = old.clone();
    p903.protocol = Protocol::PreKip903;
    let sim = run(&p903);
    assert!(losses(&sim).is_empty(), "{:?}", losses(&sim));
    assert!(hw_1(&sim));
}

/// Kafka 2.0 has KIP-279: the preset of its anomaly, run in `pre-kip-320`, truncates as
/// Kafka 4 does (by the answer's epoch), in the one truncating state a new follower has;
/// after it the fetches carry no epoch, so the leader answers no other divergence.
#[test]
fn pre_kip_320_truncates_by_kip_279s_answer_on_becoming_follower_only() {
    let mut s = preset("kip-279-divergence").unwrap();
    s.protocol = Protocol::PreKip320;
    let sim = run(&s);
    assert!(has_line(
        &sim,
        35_000,
        35_100,
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition kip279-0 to offset 9 due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=10)"
    ));
    assert_eq!(log_values(&sim, 1), log_values(&sim, 2));
    let answers = |sim: &Sim| {
        lines(sim)
            .iter()
            .filter(|(_, l)| l.contains("due to leader epoch and offset"))
            .count()
    };
    assert_eq!(answers(&sim), 1);
}

/// Three brokers, RF 3, `min.insync.replicas` 2, `acks=all`, unclean election off. a1 a2
/// are committed on all three; broker 3 dies (kill -9, it stays down); b1 b2 are committed
/// on 1 and 2; broker 1 dies (kill -9: its log survives) and 2 leads alone; 2's machine
/// then loses `fault` (a power loss, or its disk). 2 comes back first, then 1.
fn last_known_leader_after(fault: &str) -> Scenario {
    let json = format!(
        r#"{{"version": 1, "title": "lkl", "topic": "lkl", "brokers": 3, "replication_factor": 3,
            "config": {{"min.insync.replicas": 2}},
            "timeline": [
              {{"at": 0, "action": "produce", "acks": "all", "prefix": "a", "count": 2}},
              {{"at": 1000, "action": "kill", "broker": 3}},
              {{"at": 12000, "action": "produce", "acks": "all", "prefix": "b", "count": 2}},
              {{"at": 14000, "action": "kill", "broker": 1}},
              {{"at": 25000, "action": "{fault}", "broker": 2}},
              {{"at": 40000, "action": "start", "broker": 2}},
              {{"at": 45000, "action": "start", "broker": 1}}
            ], "end_ms": 60000}}"#
    );
    Scenario::from_json(&json).expect("the scenario parses")
}

#[test]
fn kafka_4_elects_the_last_known_leader_though_it_lost_its_data() {
    // KIP-966 as Kafka's trunk builds it (PartitionChangeBuilder.electAnyLeader →
    // canElectLastKnownLeader; ReplicationControlManagerTest
    // testEligibleLeaderReplicas_UncleanShutdown, QuorumControllerTest
    // testUncleanShutdownBroker, PartitionChangeBuilderTest
    // testEligibleLeaderReplicas_ElectLastKnownLeader): 2, the last leader, is fenced with
    // ISR [] ELR [1,2] LastKnownElr [2]. Its unclean restart takes it out of the ELR only;
    // 1's unclean restart empties the ELR, and with ISR and ELR empty the controller elects
    // the last known leader, 2, now unfenced, though it lost a1..b2 and 1 holds them.
    for (fault, how) in [
        ("power_loss", OwnDataLoss::PowerLoss),
        ("lose_disk", OwnDataLoss::LostDisk),
    ] {
        let sim = run(&last_known_leader_after(fault));
        assert!(
            has_line(
                &sim,
                33_000,
                34_000,
                "[QuorumController] Partition lkl-0 has no leader: no eligible replica (Isr: [] Elr: [1,2]) leader epoch 2"
            ),
            "{fault}: {:?}",
            lines(&sim)
        );
        // 2 alone is not elected: 1 is still in the ELR (canElectLastKnownLeader wants it
        // empty); 1's registration empties it and elects 2.
        assert!(!lines(&sim)
            .iter()
            .any(|(t, l)| *t < 45_000 && l.contains("last known leader")));
        assert!(has_line(
            &sim,
            45_005,
            45_005,
            "[QuorumController] Setting new leader for topic lkl, partition 0 to 2 using an unclean election of the last known leader (leader epoch 3)"
        ));
        assert_one_loss(
            &sim,
            2,
            &[0, 1, 2, 3],
            LossCause::LastKnownLeader {
                broker: 2,
                lost_own_data: Some(how),
            },
        );
        // 1 follows 2 and throws the records away: they are on no running replica.
        assert!(log_values(&sim, 1).is_empty(), "{fault}");
        assert!(log_values(&sim, 2).is_empty(), "{fault}");
        let snap = sim.snapshot();
        assert_eq!(snap.controller.leader, Some(2));
    }
}

/// One broker, RF 1: `m` produced at 29 s and `n` at 31 s (one record each, `acks=1`), and
/// the machine loses power at 32.5 s, within `sim.writeback.delay.ms` (30 s) of both. With
/// `config` (extra configs, JSON), what is left of the log after the power loss.
fn log_after_power_loss(config: &str, timeline: &str) -> (Sim, Vec<String>) {
    let json = format!(
        r#"{{"version": 1, "title": "flush", "topic": "f", "brokers": 1, "replication_factor": 1,
            "config": {{"min.insync.replicas": 1{config}}},
            "timeline": [{timeline},
              {{"at": 32500, "action": "power_loss", "broker": 1}}], "end_ms": 33000}}"#
    );
    let sim = run(&Scenario::from_json(&json).expect("the scenario parses"));
    let values = log_values(&sim, 1);
    (sim, values)
}

const AT_29_AND_31: &str = r#"{"at": 29000, "action": "produce", "acks": "1", "prefix": "m", "count": 1},
    {"at": 31000, "action": "produce", "acks": "1", "prefix": "n", "count": 1}"#;

#[test]
fn log_flush_interval_messages_flushes_after_the_append_that_reaches_it() {
    // UnifiedLog.append: "if (localLog.unflushedMessages >= config.flushInterval)
    // flush(false)". Five one-record appends with an interval of 2: flushes after the 2nd
    // and the 4th; a power loss takes the 5th only. Without the config, all five.
    let five = r#"{"at": 10000, "action": "produce", "acks": "1", "prefix": "m", "count": 5, "one_by_one": true}"#;
    let (sim, values) = log_after_power_loss(r#", "log.flush.interval.messages": 2"#, five);
    assert!(has_line(
        &sim,
        32_500,
        32_500,
        "broker 1: f-0 offsets 4..4 were only in the page cache and are gone; the log ends at 4"
    ));
    assert_eq!(values, ["m1", "m2", "m3", "m4"]);
    let (_, values) = log_after_power_loss(r#", "log.flush.interval.messages": 3"#, five);
    assert_eq!(values, ["m1", "m2", "m3"], "flushed after the 3rd only");
    let (_, values) = log_after_power_loss("", five);
    assert!(values.is_empty(), "no forced flush by default: {values:?}");
    // The goldens' default: the config is not written.
    let s = preset("leader-failover").expect("preset");
    assert!(!s.to_json_pretty().contains("log.flush"));
}

#[test]
fn log_flush_interval_ms_flushes_on_the_log_flusher_s_runs() {
    // LogManager schedules flushDirtyLogs 30 s after its start (log.initial.task.delay.ms),
    // then every log.flush.scheduler.interval.ms (Long.MAX_VALUE by default); each run
    // flushes a log last flushed at least flush.ms ago (log.flush.interval.ms, or when not
    // set the scheduler's interval).
    // log.flush.interval.ms alone: the one run at 30 s flushes m; n, appended after, is lost.
    let (sim, values) = log_after_power_loss(r#", "log.flush.interval.ms": 1000"#, AT_29_AND_31);
    assert_eq!(values, ["m1"]);
    assert!(has_line(
        &sim,
        32_500,
        32_500,
        "broker 1: f-0 offsets 1..1 were only in the page cache and are gone; the log ends at 1"
    ));
    // With the scheduler every second, the run at 32 s flushes n too.
    let both = r#", "log.flush.interval.ms": 1000, "log.flush.scheduler.interval.ms": 1000"#;
    let (_, values) = log_after_power_loss(both, AT_29_AND_31);
    assert_eq!(values, ["m1", "n1"]);
    // The scheduler's interval alone is also flush.ms (KafkaConfig.logFlushIntervalMs).
    let sched = r#", "log.flush.scheduler.interval.ms": 1000"#;
    let (_, values) = log_after_power_loss(sched, AT_29_AND_31);
    assert_eq!(values, ["m1", "n1"]);
    // A run that flushed less than flush.ms ago waits: flush.ms 5 s, every second: the run
    // at 30 s flushes m, and the runs at 31 s and 32 s find it flushed 2 s ago at most.
    let slow = r#", "log.flush.interval.ms": 5000, "log.flush.scheduler.interval.ms": 1000"#;
    let (_, values) = log_after_power_loss(slow, AT_29_AND_31);
    assert_eq!(values, ["m1"]);
    // Defaults: no flush, both lost.
    let (_, values) = log_after_power_loss("", AT_29_AND_31);
    assert!(values.is_empty(), "{values:?}");
}

#[test]
fn log_flush_configs_name_the_field_and_range() {
    for (config, says) in [
        (
            r#""log.flush.interval.messages": 0"#,
            "log.flush.interval.messages must be a whole number in 1..=9223372036854775807, got 0",
        ),
        (
            r#""log.flush.scheduler.interval.ms": 0"#,
            "log.flush.scheduler.interval.ms must be a whole number in 1..=9223372036854775807, got 0",
        ),
        (
            r#""log.flush.interval.ms": 9223372036854775808"#,
            "log.flush.interval.ms must be a whole number in 0..=9223372036854775807, got 9223372036854775808",
        ),
    ] {
        let json = format!(
            r#"{{"version": 1, "title": "t", "topic": "t", "brokers": 1, "replication_factor": 1,
                "config": {{{config}}}, "timeline": []}}"#
        );
        let e = Scenario::from_json(&json).expect_err("refused");
        assert!(e.to_string().contains(says), "{e}");
    } // The topic configs, by their path.
    let json = r#"{"version": 2, "brokers": 1, "topics": [{"name": "t", "configs": {"flush.messages": 0}}]}"#;
    let e = Scenario::from_json(json).expect_err("refused");
    assert_eq!(e.field, "topics[0].configs.flush.messages");
    assert!(
        e.to_string()
            .contains("flush.messages must be a whole number in 1..=9223372036854775807, got 0"),
        "{e}"
    );
}

#[test]
fn topic_flush_configs_override_the_broker_s() {
    // LogConfig: a topic's flush.messages and flush.ms override the broker's
    // log.flush.interval.messages and log.flush.interval.ms for its logs only.
    let json = r#"{"version": 2, "brokers": 1,
        "config": {"log.flush.scheduler.interval.ms": 1000, "log.flush.interval.ms": 600000},
        "topics": [
          {"name": "each", "configs": {"flush.messages": 1}},
          {"name": "timed", "configs": {"flush.ms": 1000}},
          {"name": "plain"}
        ],
        "timeline": [
          {"at": 29000, "action": "produce", "topic": "each", "acks": "1", "prefix": "e", "count": 2},
          {"at": 29000, "action": "produce", "topic": "timed", "acks": "1", "prefix": "t", "count": 2},
          {"at": 29000, "action": "produce", "topic": "plain", "acks": "1", "prefix": "p", "count": 2},
          {"at": 31500, "action": "describe"},
          {"at": 31500, "action": "power_loss", "broker": 1}
        ], "end_ms": 32000}"#;
    let sim = run(&Scenario::from_json(json).expect("parses"));
    let text = lines(&sim);
    let lost = |topic: &str| {
        text.iter().any(|(t, l)| {
            *t == 31_500 && l.starts_with(&format!("broker 1: {topic}-0 offsets 0..1 were only"))
        })
    };
    // `each` flushed at its append; `timed` on the flusher's run at 30 s (flush.ms 1 s);
    // `plain` waits for the broker's flush.ms of 10 minutes, and loses its records.
    assert!(!lost("each") && !lost("timed") && lost("plain"), "{text:?}");
    // kafka-topics.sh --describe lists them (the broker's are STATIC_BROKER_CONFIG), in the
    // HashMap's order (flush.ms in bucket 20, flush.messages in 30).
    let configs = |topic: &str| {
        let line = text
            .iter()
            .find(|(_, l)| l.starts_with(&format!("Topic: {topic} TopicId:")))
            .expect("the topic line");
        line.1.split(" Configs: ").nth(1).unwrap_or("").to_string()
    };
    assert_eq!(configs("each"), "flush.ms=600000,flush.messages=1");
    assert_eq!(configs("timed"), "flush.ms=1000");
    assert_eq!(configs("plain"), "flush.ms=600000");
}
