//! The data-loss finder (engine/src/explore.rs): what it finds in which configuration, its
//! shrinking, its written scenario, its determinism and its errors. Native only: the search
//! runs on threads there (the playground will run it in a Web Worker).
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::explore::{self, Explorer, FaultKind, Options, Property};
use watermark_engine::Scenario;

/// Three brokers, RF 3: a produce of two records every second for 10 s, a consume every
/// 2 s, and a fault of the original (which the finder drops).
fn scenario(acks: &str, min_isr: u32, unclean: bool, protocol: &str) -> Scenario {
    let mut timeline = vec![];
    for i in 0..10 {
        timeline.push(format!(
            r#"{{"at": {}, "action": "produce", "acks": "{acks}", "prefix": "v{i}-", "count": 2}}"#,
            i * 1000
        ));
        if i % 2 == 1 {
            timeline.push(format!(
                r#"{{"at": {}, "action": "consume"}}"#,
                i * 1000 + 500
            ));
        }
    }
    timeline.push(r#"{"at": 4000, "action": "kill", "broker": 2}"#.to_string());
    let json = format!(
        r#"{{"version": 1, "title": "t", "topic": "t", "brokers": 3, "replication_factor": 3,
            "protocol": "{protocol}",
            "config": {{"min.insync.replicas": {min_isr}, "unclean.leader.election.enable": {unclean},
                        "sim.unclean.election.interval.ms": 1000}},
            "timeline": [{}], "end_ms": 12000}}"#,
        timeline.join(",")
    );
    Scenario::from_json(&json).expect("the test scenario parses")
}

/// The process and network faults: no broker loses data.
const PROCESS_FAULTS: &str = "freeze,kill,stop,slow,cut,cut_controller";

fn explorer(s: &Scenario, faults: Option<&str>) -> Explorer {
    let kinds: Option<Vec<FaultKind>> =
        faults.map(|f| explore::parse_fault_kinds(f).expect("fault kinds"));
    Explorer::new(s, 4, kinds.as_deref()).expect("explorer")
}

fn opts(budget: u64, seed: u64) -> Options {
    Options {
        budget,
        seed,
        max_faults: 4,
    }
}

/// Searches, and checks what every found schedule must satisfy: the shrunk schedule is no
/// longer than the found one and still breaks the same property when replayed, and the
/// written scenario runs, breaks it too and meets its expectations.
fn search_and_verify(s: &Scenario, faults: Option<&str>, budget: u64) -> explore::Report {
    let ex = explorer(s, faults);
    let r = ex.search(opts(budget, 1)).expect("search");
    if let Some(f) = &r.found {
        assert_eq!(r.tried, f.index + 1);
        assert!(f.shrunk.len() <= f.schedule.len(), "{f:?}");
        assert!(!f.shrunk.is_empty());
        assert_eq!(f.shrunk_violation.property, f.violation.property);
        let replay = ex.check(&f.shrunk).expect("replay").expect("still breaks");
        assert_eq!(replay, f.shrunk_violation);
        // Each fault's time is as early as halving could move it.
        let written = ex.found_scenario(&f.shrunk, &f.shrunk_violation);
        let json = written.to_json_pretty();
        let back = Scenario::from_json(&json).expect("the written scenario reads back");
        let again = explore::check_run(&back).expect("runs").expect("breaks");
        assert_eq!(again.property, f.violation.property, "{json}");
        let (outcomes, _) = watermark_engine::check::check_with_violations(&back).expect("check");
        assert!(
            !outcomes.is_empty(),
            "an expectation states the loss: {json}"
        );
        assert!(outcomes.iter().all(|o| o.met()), "{outcomes:?}\n{json}");
        // Notes explain each step.
        let notes = back
            .timeline
            .iter()
            .filter(|a| matches!(&a.action, watermark_engine::Action::Note { text } if text.starts_with("Step ")))
            .count();
        assert_eq!(notes, 2 * f.shrunk.len(), "{json}");
    }
    r
}

#[test]
fn a_side_by_side_scenarios_finding_keeps_its_runs_beside_and_says_whose_run_broke() {
    // acks=1 on top, acks=all beside it: the search runs the top run; the written scenario
    // keeps `compare`, and its words name the top run.
    let mut s = scenario("1", 1, false, "kafka-4");
    s.compare = vec![serde_json::from_str(r#"{"acks": "all"}"#).expect("a variant")];
    let r = search_and_verify(&s, Some(PROCESS_FAULTS), 400);
    let f = r.found.expect("acks=1 loses a record");
    let written = explorer(&s, Some(PROCESS_FAULTS)).found_scenario(&f.shrunk, &f.shrunk_violation);
    assert_eq!(written.compare, s.compare);
    assert!(
        written.description.starts_with(&format!(
            "watermark explore found a schedule of {} fault{} under which, in its own run (the top one; the runs beside take the same faults), ",
            f.shrunk.len(),
            if f.shrunk.len() == 1 { "" } else { "s" }
        )),
        "{}",
        written.description
    );
    let here = written
        .timeline
        .iter()
        .filter(|a| matches!(&a.action, watermark_engine::Action::Note { text } if text.starts_with("Here, in the top run, ")))
        .count();
    assert_eq!(here, 1, "{}", written.to_json_pretty());
    // The variant runs with the same faults.
    let beside = written.variant(0).expect("the variant");
    let faults = |sc: &Scenario| {
        sc.timeline
            .iter()
            .filter(|a| !matches!(&a.action, watermark_engine::Action::Produce { .. }))
            .count()
    };
    assert_eq!(faults(&beside), faults(&written));
    // Without `compare`, the words are as before.
    let plain = scenario("1", 1, false, "kafka-4");
    let ex = explorer(&plain, Some(PROCESS_FAULTS));
    let f = ex
        .search(opts(400, 1))
        .expect("search")
        .found
        .expect("found");
    let written = ex.found_scenario(&f.shrunk, &f.shrunk_violation);
    let here = format!("Here {}: ", f.shrunk_violation.property.words());
    assert!(
        written.timeline.iter().any(
            |a| matches!(&a.action, watermark_engine::Action::Note { text } if text.starts_with(&here))
        ),
        "{}",
        written.to_json_pretty()
    );
}

#[test]
fn kafka_4_with_acks_all_min_isr_2_and_no_unclean_election_loses_nothing() {
    // Every process and network fault, 400 schedules (about 2 s in a debug build).
    let r = search_and_verify(
        &scenario("all", 2, false, "kafka-4"),
        Some(PROCESS_FAULTS),
        400,
    );
    assert_eq!(r.tried, 400);
    assert!(r.found.is_none(), "{:?}", r.found);
}

#[test]
fn kafka_4_loses_committed_records_to_the_last_known_leader_after_a_data_loss() {
    // With power loss and lost disks, Kafka 4.x's last-known-leader election (KIP-966,
    // PartitionChangeBuilder.canElectLastKnownLeader) can elect the broker that lost its
    // data while the replicas that have it are out of the ISR and ELR: the finder finds
    // it, at schedule 537. Kafka does the same (docs/history.md, "What it found";
    // protocols.rs kafka_4_elects_the_last_known_leader_though_it_lost_its_data), so the
    // loss's explanation says the elected broker lost its own data.
    let r = search_and_verify(&scenario("all", 2, false, "kafka-4"), None, 600);
    let f = r.found.expect("a loss");
    assert_eq!(r.tried, 537);
    assert_eq!(f.violation.property, Property::AcknowledgedLoss);
    assert!(
        f.violation.detail.contains("last known leader")
            && f.violation
                .detail
                .contains("even with unclean.leader.election.enable=false"),
        "{}",
        f.violation.detail
    );
}

#[test]
fn acks_1_loses_an_acknowledged_record_quickly() {
    let r = search_and_verify(
        &scenario("1", 2, false, "kafka-4"),
        Some(PROCESS_FAULTS),
        50,
    );
    let f = r.found.expect("a loss");
    assert_eq!(r.tried, 23);
    assert_eq!(f.violation.property, Property::AcknowledgedLoss);
    assert!(f
        .violation
        .ack_line
        .as_deref()
        .is_some_and(|l| l.starts_with("acks=1 -> ok")));
}

#[test]
fn min_insync_replicas_1_loses_committed_records_quickly() {
    let r = search_and_verify(&scenario("all", 1, false, "kafka-4"), None, 50);
    let f = r.found.expect("a loss");
    assert_eq!(r.tried, 27);
    assert_eq!(f.violation.property, Property::AcknowledgedLoss);
}

#[test]
fn unclean_leader_election_loses_committed_records() {
    let r = search_and_verify(
        &scenario("all", 2, true, "kafka-4"),
        Some(PROCESS_FAULTS),
        300,
    );
    let f = r.found.expect("a loss");
    assert_eq!(r.tried, 276);
    assert_eq!(f.violation.property, Property::AcknowledgedLoss);
    assert!(
        f.violation.detail.contains("unclean election"),
        "{}",
        f.violation.detail
    );
}

#[test]
fn pre_kip_101_loses_committed_records_by_truncating_to_the_high_watermark() {
    let r = search_and_verify(
        &scenario("all", 2, false, "pre-kip-101"),
        Some(PROCESS_FAULTS),
        150,
    );
    let f = r.found.expect("a loss");
    assert_eq!(r.tried, 104);
    assert_eq!(f.violation.property, Property::AcknowledgedLoss);
    assert!(
        f.violation.detail.contains("KIP-101"),
        "{}",
        f.violation.detail
    );
}

#[test]
fn the_same_seed_finds_the_same_schedule_whatever_the_thread_count() {
    let s = scenario("1", 2, false, "kafka-4");
    let ex = explorer(&s, Some(PROCESS_FAULTS));
    let one = ex.search(opts(50, 1)).unwrap();
    assert_eq!(one, ex.search(opts(50, 1)).unwrap());
    for threads in [1, 2, 4, 7] {
        assert_eq!(
            explore::search_parallel(&ex, opts(50, 1), threads).unwrap(),
            one
        );
    }
    // Where most schedules break it, threads find several: the lowest index wins.
    let easy = explorer(&scenario("1", 1, true, "pre-kip-101"), None);
    let first = easy.search(opts(64, 5)).unwrap();
    for threads in [2, 4] {
        assert_eq!(
            explore::search_parallel(&easy, opts(64, 5), threads).unwrap(),
            first
        );
    }
    // Nothing found: the count is the budget, with any thread count.
    let safe = explorer(&scenario("all", 2, false, "kafka-4"), Some(PROCESS_FAULTS));
    let r = explore::search_parallel(&safe, opts(40, 3), 3).unwrap();
    assert_eq!(r, safe.search(opts(40, 3)).unwrap());
    // Another seed draws other schedules.
    assert_ne!(ex.schedule(1, 0), ex.schedule(2, 0));
    assert_eq!(ex.schedule(1, 5), ex.schedule(1, 5));
}

#[test]
fn schedules_keep_the_fault_model() {
    let s = scenario("all", 2, false, "kafka-4");
    let ex = explorer(&s, None);
    for i in 0..300 {
        let sch = ex.schedule(9, i);
        assert!((1..=4).contains(&sch.len()), "{sch:?}");
        assert!(ex.fits(&sch), "{sch:?}");
        assert!(sch.windows(2).all(|w| w[0].at <= w[1].at));
        let scn = ex.scenario(&sch, false);
        // The original's kill is gone; every fault is undone before the quiet phase.
        let end = scn.end_ms();
        for f in &sch {
            assert!(f.at <= 12_000 && f.at % explore::TIME_STEP_MS == 0);
            assert!(f.at + f.duration_ms + 49_000 <= end);
        }
    }
    let base = ex.base();
    assert!(!base
        .timeline
        .iter()
        .any(|a| matches!(a.action, watermark_engine::Action::Kill { .. })));
    assert_eq!(
        base.timeline.len(),
        15,
        "10 produces and 5 consumes are kept"
    );
}

#[test]
fn shrinking_removes_the_faults_that_do_not_matter() {
    let s = scenario("1", 2, false, "kafka-4");
    let ex = explorer(&s, Some(PROCESS_FAULTS));
    let f = ex.search(opts(50, 1)).unwrap().found.unwrap();
    // A fault that cannot matter (a 200 ms slow broker at the very end) added to the found
    // schedule is removed again.
    let mut padded = f.shrunk.clone();
    padded.push(explore::ScheduledFault {
        at: 12_000,
        duration_ms: 200,
        fault: explore::Fault::Slow(3),
    });
    assert!(ex.fits(&padded));
    let (shrunk, v) = ex.shrink(&padded, f.violation.property).unwrap();
    assert_eq!(shrunk, f.shrunk);
    assert_eq!(v.property, f.violation.property);
}

#[test]
fn shrinking_shortens_each_fault_to_the_shortest_duration_that_still_breaks() {
    let s = scenario("1", 2, false, "kafka-4");
    let ex = explorer(&s, Some(PROCESS_FAULTS));
    let f = ex.search(opts(50, 1)).unwrap().found.unwrap();
    let property = f.violation.property;
    // Every fault of the shrunk schedule is as short as it can be: each shorter duration of
    // the grid no longer breaks the property (or leaves the fault model).
    for (i, fault) in f.shrunk.iter().enumerate() {
        for d in explore::DURATIONS_MS
            .into_iter()
            .filter(|&d| d < fault.duration_ms)
        {
            let mut c = f.shrunk.clone();
            c[i].duration_ms = d;
            let still = ex.fits(&c)
                && ex
                    .check(&c)
                    .unwrap()
                    .is_some_and(|v| v.property == property);
            assert!(!still, "fault {i} at {d} ms still breaks it: {c:?}");
        }
    }
    // A needed fault made needlessly long: the longest duration of the grid with which the
    // schedule still breaks the property. It shrinks back to the same schedule; twice the
    // same (deterministic).
    let breaks = |c: &[explore::ScheduledFault]| {
        ex.fits(c) && ex.check(c).unwrap().is_some_and(|v| v.property == property)
    };
    let long = (0..f.shrunk.len())
        .flat_map(|i| explore::DURATIONS_MS.into_iter().rev().map(move |d| (i, d)))
        .filter(|&(i, d)| d > f.shrunk[i].duration_ms)
        .map(|(i, d)| {
            let mut c = f.shrunk.clone();
            c[i].duration_ms = d;
            c
        })
        .find(|c| breaks(c))
        .unwrap_or_else(|| panic!("no longer duration breaks it: {f:?}"));
    let (shrunk, v) = ex.shrink(&long, property).unwrap();
    assert_eq!(shrunk, f.shrunk, "from {long:?}");
    assert_eq!(v.property, property);
    assert_eq!(ex.shrink(&long, property).unwrap(), (shrunk, v));
}

#[test]
fn bad_input_names_the_field() {
    let s = scenario("all", 2, false, "kafka-4");
    let e = explore::parse_fault_kinds("kill,explode").unwrap_err();
    assert_eq!(e.field, "faults");
    assert!(
        e.to_string().contains("explode") && e.to_string().contains("power_loss"),
        "{e}"
    );
    let e = Explorer::new(&s, 0, None).unwrap_err();
    assert_eq!(e.field, "faults");
    assert!(e.to_string().contains("1 to 8"), "{e}");
    let e = Explorer::new(&s, 4, Some(&[FaultKind::LoseZone])).unwrap_err();
    assert!(e.to_string().contains("racks"), "{e}");
    let ex = explorer(&s, None);
    assert_eq!(ex.search(opts(0, 1)).unwrap_err().field, "budget");
    let e = explore::search_parallel(&ex, opts(0, 1), 2).unwrap_err();
    assert_eq!(e.field, "budget");
    assert!(e.to_string().contains("allowed 1 to"), "{e}");
}

#[test]
fn the_properties_on_the_presets_of_the_historical_anomalies() {
    // Each preset run as written (its own faults, no quiet phase): the property its anomaly
    // breaks, and nothing on Kafka 4.x's failover.
    let property = |name: &str| {
        let s = watermark_engine::presets::preset(name).expect("preset");
        explore::check_run(&s).expect("runs").map(|v| v.property)
    };
    assert_eq!(property("leader-failover"), None);
    assert_eq!(
        property("pre-kip-101-hw-truncation"),
        Some(Property::AcknowledgedLoss)
    );
    // KIP-101's second scenario: both replicas lose power, and the committed m2 goes
    // before the logs diverge (property 1 is checked first).
    assert_eq!(
        property("pre-kip-101-divergence"),
        Some(Property::AcknowledgedLoss)
    );
    // KIP-279's preset ends in an unclean election that loses b-10.
    assert_eq!(
        property("kip-279-divergence"),
        Some(Property::AcknowledgedLoss)
    );
}

#[test]
fn kip_101_without_kip_279_leaves_replicas_diverged_after_convergence() {
    // KIP-279's anomaly: after fast leader changes a follower keeps a batch of another
    // epoch at the same offsets (here the producer's resend of the same values), and the
    // quiet phase does not repair it. Seed 3 finds it at schedule 34.
    let s = scenario("all", 2, false, "kip-101-without-kip-279");
    let ex = explorer(&s, Some(PROCESS_FAULTS));
    let r = ex.search(opts(60, 3)).expect("search");
    assert_eq!(r.tried, 34);
    let f = r.found.expect("a divergence");
    assert_eq!(f.violation.property, Property::Divergence);
    assert!(
        f.violation.detail.contains("(epoch 1) at offset"),
        "{}",
        f.violation.detail
    );
    let replay = ex.check(&f.shrunk).expect("replay").expect("still breaks");
    assert_eq!(replay.property, Property::Divergence);
    assert!(f.shrunk.len() <= f.schedule.len());
    // The written scenario shows it too (no expectation can state it: none is written).
    let written = ex.found_scenario(&f.shrunk, &f.shrunk_violation);
    assert!(written.expect.is_empty());
    let back = Scenario::from_json(&written.to_json_pretty()).expect("reads back");
    let again = explore::check_run(&back).expect("runs").expect("breaks");
    assert_eq!(again.property, Property::Divergence);
}

#[test]
fn the_fault_model_keeps_at_most_rf_minus_one_brokers_down() {
    use explore::{Fault, ScheduledFault};
    let ex = explorer(&scenario("all", 2, false, "kafka-4"), None);
    let f = |at, duration_ms, fault| ScheduledFault {
        at,
        duration_ms,
        fault,
    };
    // Two brokers down at once: allowed (RF 3); three: not.
    let two = vec![f(0, 3_000, Fault::Kill(1)), f(1_000, 3_000, Fault::Stop(2))];
    assert!(ex.fits(&two));
    let mut three = two.clone();
    three.push(f(2_000, 200, Fault::Freeze(3)));
    assert!(!ex.fits(&three));
    // A killed broker counts as down until its start plus the session timeout (9 s), a
    // stopped one only until its start.
    assert!(!ex.fits(&[
        f(0, 1_000, Fault::Kill(1)),
        f(5_000, 1_000, Fault::Stop(2)),
        f(5_500, 200, Fault::Freeze(3)),
    ]));
    assert!(ex.fits(&[
        f(0, 1_000, Fault::Stop(1)),
        f(5_000, 1_000, Fault::Stop(2)),
        f(5_500, 200, Fault::Freeze(3)),
    ]));
    // A broker that lost data counts as down from then on; one data loss per schedule.
    assert!(!ex.fits(&[
        f(0, 200, Fault::LoseDisk(1)),
        f(50_000, 200, Fault::Kill(2)),
        f(50_000, 200, Fault::Stop(3)),
    ]));
    assert!(!ex.fits(&[
        f(0, 200, Fault::LoseDisk(1)),
        f(50_000, 200, Fault::PowerLoss(2)),
    ]));
    // Cuts and slow brokers count against nothing; two faults on one broker never overlap.
    assert!(ex.fits(&[
        f(0, 3_000, Fault::Kill(1)),
        f(0, 3_000, Fault::Kill(2)),
        f(0, 3_000, Fault::CutController(3)),
        f(5_000, 200, Fault::Cut(1, 2)),
    ]));
    assert!(!ex.fits(&[f(0, 3_000, Fault::Kill(1)), f(2_000, 100, Fault::Slow(1))]));
}
