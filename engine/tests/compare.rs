//! Side-by-side runs (`compare`, engine/src/compare.rs): the field's reading, writing and
//! errors, the scenario a variant runs, how a variant takes a person's action, what differs
//! between two runs, and the checking of each run's expectations.

use watermark_engine::compare::{differences, Difference, Variant, MAX_VARIANTS};
use watermark_engine::json::Value;
use watermark_engine::scenario::AcksOrDefault;
use watermark_engine::types::Acks;
use watermark_engine::{Action, Protocol, Scenario, Sim};

/// Three brokers, minimum 2, one produce with acks=all, a set_config and a note.
fn base(compare: &str, expect: &str) -> String {
    format!(
        r#"{{"brokers":3,"seed":3,"config":{{"min.insync.replicas":2,"sim.network.latency.ms":10}},
            "timeline":[
              {{"at":0,"action":"produce","acks":"all","values":["a"]}},
              {{"at":100,"action":"note","text":"Step 1."}},
              {{"at":200,"action":"set_config","name":"min.insync.replicas","value":3}},
              {{"at":300,"action":"produce","acks":"1","values":["b"]}}],
            "end_ms":2000,
            "compare":{compare},
            "expect":{expect}}}"#
    )
}

fn err(compare: &str, expect: &str) -> (String, String) {
    let e = Scenario::from_json(&base(compare, expect)).expect_err("refused");
    (e.field, e.message)
}

#[test]
fn compare_is_read_written_and_left_out_when_empty() {
    let s = Scenario::from_json(&base(
        r#"[{"label":"minimum 1","config":{"min.insync.replicas":1}},
            {"protocol":"no-elr","acks":"0"}]"#,
        r#"[{"at":50,"run":1,"hw":1},{"at":50,"hw":1}]"#,
    ))
    .expect("valid");
    assert_eq!(s.compare.len(), 2);
    assert_eq!(s.compare[0].label, "minimum 1");
    assert_eq!(
        s.compare[0].config.get("min.insync.replicas"),
        Some(&Value::from(1u64))
    );
    assert_eq!(
        (s.compare[1].protocol, s.compare[1].acks),
        (Some(Protocol::NoElr), Some(Acks::Zero))
    );
    assert_eq!(s.expect[0].run, Some(1));
    let text = s.to_json_pretty();
    assert!(
        text.contains("\"compare\": [\n    {\n      \"label\": \"minimum 1\",\n      \"config\": {\n        \"min.insync.replicas\": 1\n      }\n    },\n    {\n      \"protocol\": \"no-elr\",\n      \"acks\": \"0\"\n    }\n  ],\n  \"expect\": [\n    {\n      \"at\": 50,\n      \"run\": 1,"),
        "{text}"
    );
    assert_eq!(Scenario::from_json(&text).unwrap(), s);
    // Through a share link and back.
    let link = watermark_engine::share::encode(&s);
    assert_eq!(watermark_engine::share::decode(&link).unwrap(), s);
    // Without variants the field is not written at all.
    let plain = Scenario::from_json(&base("[]", "[]")).unwrap();
    assert!(plain.compare.is_empty());
    assert!(!plain.to_json_pretty().contains("compare"));
    assert!(!watermark_engine::scenario_json::scenario(&plain, false).contains("compare"));
}

#[test]
fn bad_variants_are_refused_with_the_field_and_the_range() {
    let cases: &[(&str, &str, (&str, &str))] = &[
        (
            r#"[{"acks":"1"},{"acks":"0"},{"protocol":"no-elr"}]"#,
            "[]",
            ("compare", "at most 2 variants, got 3"),
        ),
        (
            r#"[{"label":"only a label"}]"#,
            "[]",
            ("compare[0]", "a variant must change protocol, config, topics or acks"),
        ),
        (
            r#"[{"config":{"min.insync.replicas":0}}]"#,
            "[]",
            (
                "compare[0].config.min.insync.replicas",
                "min.insync.replicas must be a whole number in 1..=12, got 0",
            ),
        ),
        (
            // A text holding a number is taken, as set_config takes it; another is not.
            r#"[{"config":{"min.insync.replicas":"x"}}]"#,
            "[]",
            (
                "compare[0].config.min.insync.replicas",
                "min.insync.replicas must be a whole number in 1..=12, got x",
            ),
        ),
        (
            r#"[{"acks":"1"},{"config":{"min.insync.replica":1}}]"#,
            "[]",
            (
                "compare[1].config.min.insync.replica",
                "unknown config min.insync.replica",
            ),
        ),
        (
            r#"[{"config":{"replica.fetch.wait.max.ms":40000}}]"#,
            "[]",
            (
                "compare[0].config.replica.socket.timeout.ms",
                "replica.socket.timeout.ms (30000) must be at least replica.fetch.wait.max.ms (40000), to prevent unnecessary socket timeouts",
            ),
        ),
        (
            // acks=1 against enable.idempotence=true set for the run: the variant's acks.
            r#"[{"acks":"1","config":{"enable.idempotence":true}}]"#,
            "[]",
            (
                "compare[0].acks",
                "Must set acks to all (got 1) to use the idempotent producer (enable.idempotence=true)",
            ),
        ),
        (
            r#"[{"protocol":"kafka-3"}]"#,
            "[]",
            (
                "compare[0].protocol",
                "unknown protocol \"kafka-3\"; the protocols are: kafka-4, no-elr, pre-kip-903, pre-kip-320, kip-101-without-kip-279, pre-kip-101",
            ),
        ),
        (
            r#"[{"acks":"2"}]"#,
            "[]",
            (
                "compare[0].acks",
                "unknown variant `2`, expected one of `0`, `1`, `all`, `-1`",
            ),
        ),
        (
            r#"[{"acks":"1","label":"12345678901234567890123456789012345678901234567890123456789012345"}]"#,
            "[]",
            (
                "compare[0].label",
                "a label may be at most 64 characters, got 65",
            ),
        ),
        (
            r#"[{"acks":"1","colour":"red"}]"#,
            "[]",
            (
                "compare[0]",
                "unknown field `colour`, expected one of `label`, `protocol`, `config`, `topics`, `acks`",
            ),
        ),
        (
            r#"[{"acks":"1"}]"#,
            r#"[{"at":5,"run":2,"hw":1}]"#,
            (
                "expect[0].run",
                "run must be one of 1..=1 (compare's variants; leave it out for the scenario's own run), got 2",
            ),
        ),
        (
            r#"[{"acks":"1"}]"#,
            r#"[{"at":5,"run":0,"hw":1}]"#,
            (
                "expect[0].run",
                "run must be one of 1..=1 (compare's variants; leave it out for the scenario's own run), got 0",
            ),
        ),
        (
            "[]",
            r#"[{"at":5,"hw":1},{"at":5,"run":1,"hw":1}]"#,
            (
                "expect[1].run",
                "run names one of compare's runs, but the scenario has no compare (leave run out for the scenario's own run), got 1",
            ),
        ),
    ];
    for (compare, expect, (field, message)) in cases {
        assert_eq!(
            err(compare, expect),
            (field.to_string(), message.to_string()),
            "{compare} {expect}"
        );
    }
    assert_eq!(MAX_VARIANTS, 2);
}

#[test]
fn a_variant_runs_the_same_timeline_with_its_changes_and_its_expectations() {
    let s = Scenario::from_json(&base(
        r#"[{"config":{"min.insync.replicas":"1","unclean.leader.election.enable":true}},
            {"protocol":"pre-kip-101","acks":"0"}]"#,
        r#"[{"at":50,"hw":1},{"at":60,"run":2,"label":"two","leo":1},
            {"at":70,"run":1,"leo":1},{"at":80,"run":2,"hw":0}]"#,
    ))
    .unwrap();
    let v0 = s.variant(0).unwrap();
    assert_eq!(v0.config.min_insync_replicas, 1);
    assert!(v0.config.unclean_leader_election_enable);
    assert_eq!(v0.protocol, Protocol::Kafka4);
    // The same actions, notes included, but the change of a config the variant sets: as
    // `adapt` leaves out a person's change of it live, so a saved session runs the same.
    let mut without_its_config = s.timeline.clone();
    without_its_config.retain(
        |t| !matches!(&t.action, Action::SetConfig { name, .. } if name == "min.insync.replicas"),
    );
    assert_eq!(without_its_config.len(), s.timeline.len() - 1);
    assert_eq!(v0.timeline, without_its_config);
    assert!(v0.compare.is_empty());
    assert_eq!(v0.expect.len(), 1);
    assert_eq!((v0.expect[0].at, v0.expect[0].run), (70, None));
    assert_eq!(
        (v0.seed, v0.brokers, v0.end_ms),
        (s.seed, s.brokers, s.end_ms)
    );
    let v1 = s.variant(1).unwrap();
    assert_eq!(v1.protocol, Protocol::PreKip101);
    assert_eq!(v1.config, s.config);
    let acks: Vec<Acks> = v1
        .timeline
        .iter()
        .filter_map(|t| match &t.action {
            Action::Produce(p) => Some(p.acks.0),
            _ => None,
        })
        .collect();
    assert_eq!(acks, [Acks::Zero, Acks::Zero]);
    let kept: Vec<(u64, &str)> = v1.expect.iter().map(|e| (e.at, e.label.as_str())).collect();
    assert_eq!(kept, [(60, "two"), (80, "")]);
    assert!(v1.expect.iter().all(|e| e.run.is_none()));
    let e = s.variant(2).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        (
            "compare[2]",
            "no such variant: the scenario compares 2 (compare[0..2])"
        )
    );
    // The top run keeps `compare` and only its own expectations.
    let top = s.top_run();
    assert_eq!(top.compare, s.compare);
    assert_eq!(top.expect.len(), 1);
    assert_eq!(top.expect[0].at, 50);
}

#[test]
fn a_variant_that_sets_something_is_kept_even_where_it_equals_the_top_run() {
    // The playground offers acks=1 beside a session with no produce yet, and a person may
    // move the top run's setting onto the variant's: the session must still open.
    let s = Scenario::from_json(
        r#"{"brokers":3,"config":{"min.insync.replicas":2},
            "compare":[{"acks":"1"},{"protocol":"kafka-4","config":{"min.insync.replicas":2}}]}"#,
    )
    .unwrap();
    assert_eq!(s.compare.len(), 2);
    assert_eq!(s.variant(0).unwrap().timeline, s.timeline);
    assert_eq!(s.variant(1).unwrap().config, s.config);
}

#[test]
fn titles_come_from_the_label_or_the_changes() {
    let v: Variant = serde_json::from_str(
        r#"{"protocol":"no-elr","config":{"unclean.leader.election.enable":true,"min.insync.replicas":1},"acks":"1"}"#,
    )
    .unwrap();
    assert_eq!(
        v.title(),
        "acks=1, min.insync.replicas=1, unclean.leader.election.enable=true, protocol no-elr"
    );
    let labelled = Variant {
        label: "Kafka 3.x".into(),
        ..v
    };
    assert_eq!(labelled.title(), "Kafka 3.x");
    let acks_all = Variant {
        acks: Some(Acks::All),
        ..Variant::default()
    };
    assert_eq!(acks_all.title(), "acks=all");
}

#[test]
fn a_variant_adapts_a_persons_actions() {
    let v: Variant =
        serde_json::from_str(r#"{"acks":"0","config":{"min.insync.replicas":1}}"#).unwrap();
    let produce = Action::Produce(watermark_engine::scenario::ProduceSpec {
        acks: AcksOrDefault(Acks::All),
        values: vec!["x".into()],
        ..Default::default()
    });
    let Some(Action::Produce(p)) = v.adapt(&produce) else {
        panic!("a produce stays a produce")
    };
    assert_eq!(
        (p.acks.0, p.values.as_slice()),
        (Acks::Zero, &["x".to_string()][..])
    );
    let overridden = Action::SetConfig {
        name: "min.insync.replicas".into(),
        value: Value::from(3u64),
    };
    assert_eq!(v.adapt(&overridden), None);
    let other = Action::SetConfig {
        name: "retries".into(),
        value: Value::from(3u64),
    };
    assert_eq!(v.adapt(&other), Some(other.clone()));
    let kill = Action::Kill { broker: 2 };
    assert_eq!(v.adapt(&kill), Some(kill.clone()));
    // Without acks of its own a variant keeps the produce's.
    let protocol_only = Variant {
        protocol: Some(Protocol::NoElr),
        ..Variant::default()
    };
    assert_eq!(protocol_only.adapt(&produce), Some(produce.clone()));
}

fn diff(what: &str, broker: Option<u32>, top: &str, other: &str) -> Difference {
    Difference {
        what: what.into(),
        broker,
        top: top.into(),
        other: other.into(),
    }
}

#[test]
fn identical_runs_differ_in_nothing() {
    let s = Scenario::from_json(&base(r#"[{"acks":"1"}]"#, "[]")).unwrap();
    let mut a = Sim::new(&s).unwrap();
    let mut b = Sim::new(&s).unwrap();
    for t in [0, 5, 37, 300, 2000] {
        a.advance_to(t);
        b.advance_to(t);
        assert_eq!(differences(&a, &b), vec![], "at {t}");
    }
}

#[test]
fn differences_name_what_differs_in_kafkas_words() {
    // Broker 3 is killed; minimum 2 refuses the second acks=all write, minimum 1 takes it.
    let s = Scenario::from_json(
        r#"{"brokers":3,"seed":1,"config":{"min.insync.replicas":2,"replica.lag.time.max.ms":2000,
              "broker.session.timeout.ms":3000,"broker.heartbeat.interval.ms":1000},
            "timeline":[
              {"at":0,"action":"produce","acks":"all","values":["a"]},
              {"at":500,"action":"kill","broker":3},
              {"at":500,"action":"stop","broker":2},
              {"at":6000,"action":"produce","acks":"all","values":["b"],"retries":0}],
            "end_ms":8000,
            "compare":[{"config":{"min.insync.replicas":1}}]}"#,
    )
    .unwrap();
    let top = watermark_engine::run(&s, true).unwrap();
    let other = watermark_engine::run(&s.variant(0).unwrap(), true).unwrap();
    assert_eq!(
        differences(&top, &other),
        vec![
            // KIP-966: below minimum 2 the ISR's leavers are kept eligible; with 1 it is
            // never below it.
            diff("elr", None, "Elr: [3]", "Elr: []"),
            diff(
                "high watermark",
                None,
                "high watermark 1",
                "high watermark 2"
            ),
            diff(
                "log end offset",
                Some(1),
                "log end offset 1",
                "log end offset 2"
            ),
            diff(
                "produce results",
                None,
                "1 acknowledged, 1 failed, 0 pending",
                "2 acknowledged, 0 failed, 0 pending"
            ),
        ]
    );
    assert_eq!(differences(&top, &top.clone()), vec![]);
}

#[test]
fn variant_runs_are_deterministic() {
    let s = Scenario::from_json(&base(
        r#"[{"acks":"0"},{"protocol":"pre-kip-101","config":{"min.insync.replicas":1}}]"#,
        "[]",
    ))
    .unwrap();
    for i in 0..s.compare.len() {
        let a = watermark_engine::run(&s.variant(i).unwrap(), true).unwrap();
        let b = watermark_engine::run(&s.variant(i).unwrap(), true).unwrap();
        assert_eq!(a.transcript(), b.transcript(), "compare[{i}]");
        assert!(a.violations().is_empty());
    }
}

#[test]
fn check_evaluates_each_expectation_on_its_run() {
    // acks=all is answered only once the followers fetched; acks=0 at once.
    let s = Scenario::from_json(&base(
        r#"[{"acks":"0"}]"#,
        r#"[{"at":1,"produce":"acks=all"},
            {"at":1,"run":1,"label":"sent","produce":"acks=0 -> sent"},
            {"at":2000,"run":1,"produce":"acks=all"}]"#,
    ))
    .unwrap();
    let outcomes = watermark_engine::check::check(&s).unwrap();
    let met: Vec<bool> = outcomes.iter().map(|o| o.met()).collect();
    assert_eq!(met, [false, true, false], "{outcomes:?}");
    assert_eq!(outcomes[1].label, "sent");
    assert_eq!(outcomes[2].index, 2);
}

/// The side-by-side presets.
const COMPARE_PRESETS: [&str; 6] = [
    "acks-steps",
    "min-isr-side-by-side",
    "elr-side-by-side",
    "kip-101-side-by-side",
    "unclean-by-replica-order",
    "topic-min-isr-side-by-side",
];

#[test]
fn the_links_of_every_earlier_preset_keep_their_bytes() {
    // tests/share_links_wasm.rs's digest before `compare` existed, over the same presets;
    // since changed only by the describe lines of the eras before Kafka 3.8 (`Elr: N/A`),
    // which two presets' expectations quote, and by last-replica-standing-no-elr's words on
    // whom an unclean election takes.
    const BEFORE_COMPARE: u64 = 0x97d2_bf46_ffe4_dcff;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in watermark_engine::presets::PRESETS {
        if COMPARE_PRESETS.contains(&p.name) {
            continue;
        }
        let s = watermark_engine::presets::preset(p.name).expect("preset");
        for b in watermark_engine::share::encode(&s).bytes().chain([b'\n']) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    assert_eq!(h, BEFORE_COMPARE, "{h:#x}");
}

#[test]
fn every_side_by_side_preset_checks_every_run() {
    for name in COMPARE_PRESETS {
        let s = watermark_engine::presets::preset(name).expect("preset");
        assert!(!s.compare.is_empty(), "{name} compares");
        let (outcomes, violations) =
            watermark_engine::check::check_with_violations(&s).expect("runs");
        for o in &outcomes {
            assert!(o.met(), "{name}: {}", o.account());
        }
        assert!(violations.is_empty(), "{name}: {violations:?}");
        // The runs' expectations tell them apart: checked all on the top run, some fail.
        let mut blind = s.clone();
        for e in &mut blind.expect {
            e.run = None;
        }
        let blind = watermark_engine::check::check(&blind).expect("runs");
        assert!(
            blind.iter().any(|o| !o.met()),
            "{name}: its runs' expectations differ"
        );
        // Each run, the top one and each variant, has expectations of its own.
        for run in 0..=s.compare.len() {
            let want = (run > 0).then_some(run as u32);
            assert!(
                s.expect.iter().any(|e| e.run == want),
                "{name}: run {run} has expectations"
            );
        }
    }
}

#[test]
fn kip_101_side_by_side_shows_the_loss_and_its_absence() {
    let s = watermark_engine::presets::preset("kip-101-side-by-side").unwrap();
    let top = watermark_engine::run(&s, true).unwrap();
    let kafka4 = watermark_engine::run(&s.variant(0).unwrap(), true).unwrap();
    assert_eq!(
        differences(&top, &kafka4),
        vec![
            diff(
                "leader",
                None,
                "Leader: 1 (leader epoch 1)",
                "Leader: 1 (leader epoch 3)"
            ),
            diff(
                "high watermark",
                None,
                "high watermark 1",
                "high watermark 2"
            ),
            diff(
                "log end offset",
                Some(1),
                "log end offset 1",
                "log end offset 2"
            ),
            diff("committed records lost", None, "offsets 1..1 (m2)", "none"),
        ]
    );
    // Midway, at 15 s: the old process of A was elected and fenced in Kafka 4.x.
    let mut a = Sim::new(&s).unwrap();
    let mut b = Sim::new(&s.variant(0).unwrap()).unwrap();
    a.advance_to(15_000);
    b.advance_to(15_000);
    let found = differences(&a, &b);
    let whats: Vec<(&str, Option<u32>)> =
        found.iter().map(|d| (d.what.as_str(), d.broker)).collect();
    assert_eq!(
        whats,
        [
            ("leader", None),
            ("isr", None),
            ("elr", None),
            ("high watermark", None),
            ("log end offset", Some(1)),
            ("process", Some(1)),
            ("committed records lost", None),
        ]
    );
    assert_eq!(found[5].top, "running");
    assert_eq!(found[5].other, "fenced");
}

#[test]
fn differences_name_the_first_offset_where_a_replicas_log_differs() {
    // KIP-101's Scenario 2: in 0.10.2 A keeps m2 at offset 1 where B wrote m3; in Kafka 4.x
    // A truncates on the leader's diverging epoch and holds m3 too (B's
    // epoch 3 there: Kafka 4.x's elections differ).
    let mut s = watermark_engine::presets::preset("pre-kip-101-divergence").unwrap();
    s.compare = vec![Variant {
        protocol: Some(Protocol::Kafka4),
        ..Variant::default()
    }];
    s.expect.clear();
    let top = watermark_engine::run(&s, true).unwrap();
    let kafka4 = watermark_engine::run(&s.variant(0).unwrap(), true).unwrap();
    let logs: Vec<Difference> = differences(&top, &kafka4)
        .into_iter()
        .filter(|d| d.what == "log")
        .collect();
    assert_eq!(
        logs,
        [diff(
            "log",
            Some(1),
            "offset 1: m2 (leader epoch 0)",
            "offset 1: m3 (leader epoch 3)"
        )]
    );
}

#[test]
fn the_same_value_in_another_leader_epoch_is_a_different_record() {
    // Broker 1 stops and starts again; with a short leader.imbalance.check.interval.seconds
    // the controller moves leadership back to it (epoch 2) before x is written, otherwise
    // broker 2 writes x in epoch 1: the same value at the same offset, another epoch.
    let s = Scenario::from_json(
        r#"{"brokers":3,"seed":2,"timeline":[
              {"at":1000,"action":"stop","broker":1},
              {"at":8000,"action":"start","broker":1},
              {"at":20000,"action":"produce","values":["x"]}],
            "end_ms":22000,
            "compare":[{"config":{"leader.imbalance.check.interval.seconds":1}}]}"#,
    )
    .unwrap();
    let top = watermark_engine::run(&s, true).unwrap();
    let other = watermark_engine::run(&s.variant(0).unwrap(), true).unwrap();
    let found = differences(&top, &other);
    let logs: Vec<&Difference> = found.iter().filter(|d| d.what == "log").collect();
    assert_eq!(logs.len(), 3, "{found:?}");
    assert_eq!(
        logs[0],
        &diff(
            "log",
            Some(1),
            "offset 0: x (leader epoch 1)",
            "offset 0: x (leader epoch 2)"
        )
    );
    assert_eq!(found[0].what, "leader", "{found:?}");
}

// ---- a variant of topics' own configs (version 2) ---------------------------------------

/// Three brokers, two topics on brokers 1, 2 and 3, each with its own
/// `min.insync.replicas=3` over the broker's 2; broker 3 killed, then an acks=all write to
/// each topic with the ISR at 2 of 3.
fn two_topics(compare: &str) -> String {
    format!(
        r#"{{"version":2,"brokers":3,"seed":1,
            "topics":[{{"name":"orders","assignment":[[1,2,3]],"configs":{{"min.insync.replicas":3}}}},
                      {{"name":"payments","assignment":[[1,2,3]],"configs":{{"min.insync.replicas":3}}}}],
            "config":{{"min.insync.replicas":2,"replica.lag.time.max.ms":2000,
                       "broker.session.timeout.ms":3000,"broker.heartbeat.interval.ms":1000}},
            "timeline":[
              {{"at":100,"action":"kill","broker":3}},
              {{"at":200,"action":"set_config","name":"min.insync.replicas","value":1}},
              {{"at":6000,"action":"produce","acks":"all","topic":"orders","values":["o"],"retries":0}},
              {{"at":6000,"action":"produce","acks":"all","topic":"payments","values":["p"],"retries":0}},
              {{"at":7000,"action":"describe"}}],
            "end_ms":8000,
            "compare":{compare}}}"#
    )
}

/// The transcript lines of a run that contain `text`, without their time.
fn lines_with(sim: &Sim, text: &str) -> Vec<String> {
    sim.transcript()
        .iter()
        .filter(|l| l.contains(text))
        .map(|l| {
            l.split_once("] ")
                .map_or(l.as_str(), |(_, rest)| rest)
                .to_string()
        })
        .collect()
}

#[test]
fn a_variant_of_a_topics_configs_runs_with_them_and_the_other_topics_as_they_are() {
    let s = Scenario::from_json(&two_topics(
        r#"[{"topics":{"orders":{"min.insync.replicas":2}}}]"#,
    ))
    .expect("valid");
    let v = s.variant(0).unwrap();
    let configs: Vec<Option<u32>> = v
        .topics
        .iter()
        .map(|t| t.configs.min_insync_replicas)
        .collect();
    assert_eq!(
        configs,
        [Some(2), Some(3)],
        "orders' own configs, payments' kept"
    );
    assert_eq!(v.config, s.config, "the broker configs are the scenario's");
    // No timeline action changes a topic's own configs (set_config is kafka-configs.sh's
    // broker entity): the variant's run has every action, the broker-level change too.
    assert_eq!(v.timeline, s.timeline);
    let top = watermark_engine::run(&s, true).unwrap();
    let other = watermark_engine::run(&v, true).unwrap();
    // Partition.checkEnoughReplicasReachMin: the topic's min.insync.replicas, not the
    // broker's (set to 1 at 200 ms in both runs), against the ISR of 2.
    assert_eq!(
        lines_with(&top, "acks=all ->"),
        [
            "acks=all -> orders-0: NOT_ENOUGH_REPLICAS",
            "acks=all -> payments-0: NOT_ENOUGH_REPLICAS"
        ]
    );
    assert_eq!(
        lines_with(&other, "acks=all ->"),
        [
            "acks=all -> payments-0: NOT_ENOUGH_REPLICAS",
            "acks=all -> orders-0: ok, offset=0 (waited 4 ms)"
        ]
    );
    // kafka-topics.sh --describe's topic line has the variant's configs.
    assert_eq!(
        lines_with(&other, "Configs:")
            .iter()
            .map(|l| l.rsplit_once("Configs: ").unwrap().1)
            .collect::<Vec<_>>(),
        ["min.insync.replicas=2", "min.insync.replicas=3"]
    );
    assert_eq!(
        lines_with(&top, "Created topic orders"),
        ["Created topic orders with replicas 1,2,3 (leader 1), 3 broker(s), min.insync.replicas=3"]
    );
    assert_eq!(
        lines_with(&other, "Created topic orders"),
        ["Created topic orders with replicas 1,2,3 (leader 1), 3 broker(s), min.insync.replicas=2"]
    );
    // What differs, of the partition shown (orders-0): KIP-966 keeps broker 3 eligible
    // below orders' minimum 3, not below 2; the write is in the variant's logs only.
    assert_eq!(
        differences(&top, &other),
        vec![
            diff("elr", None, "Elr: [3]", "Elr: []"),
            diff(
                "high watermark",
                None,
                "high watermark 0",
                "high watermark 1"
            ),
            diff(
                "log end offset",
                Some(1),
                "log end offset 0",
                "log end offset 1"
            ),
            diff(
                "log end offset",
                Some(2),
                "log end offset 0",
                "log end offset 1"
            ),
            diff(
                "produce results",
                None,
                "0 acknowledged, 2 failed, 0 pending",
                "1 acknowledged, 1 failed, 0 pending"
            ),
        ]
    );
    // Shown payments-0, the topic the variant leaves alone: only the produce results.
    let (mut a, mut b) = (top.clone(), other.clone());
    a.set_view_partition("payments", 0).unwrap();
    b.set_view_partition("payments", 0).unwrap();
    assert_eq!(
        differences(&a, &b),
        vec![diff(
            "produce results",
            None,
            "0 acknowledged, 2 failed, 0 pending",
            "1 acknowledged, 1 failed, 0 pending"
        )]
    );
}

#[test]
fn a_variants_topic_configs_override_only_what_they_name() {
    let s = Scenario::from_json(&two_topics(
        r#"[{"topics":{"payments":{"unclean.leader.election.enable":true,"flush.ms":0}}},
            {"acks":"1","topics":{"orders":{"flush.messages":1},"payments":{"min.insync.replicas":1}}}]"#,
    ))
    .expect("valid");
    let configs = |i: usize| -> Vec<watermark_engine::scenario::TopicConfigs> {
        s.variant(i)
            .unwrap()
            .topics
            .iter()
            .map(|t| t.configs)
            .collect()
    };
    let c0 = configs(0);
    assert_eq!(c0[0], s.topics[0].configs);
    assert_eq!(
        (
            c0[1].min_insync_replicas,
            c0[1].unclean_leader_election_enable,
            c0[1].flush_messages,
            c0[1].flush_ms
        ),
        (Some(3), Some(true), None, Some(0))
    );
    let c1 = configs(1);
    assert_eq!(
        (c1[0].min_insync_replicas, c1[0].flush_messages),
        (Some(3), Some(1))
    );
    assert_eq!(c1[1].min_insync_replicas, Some(1));
    // The top run's topics are as written.
    assert_eq!(s.topics[1].configs.unclean_leader_election_enable, None);
}

#[test]
fn a_variants_topic_configs_are_read_written_and_left_out_when_empty() {
    let s = Scenario::from_json(&two_topics(
        r#"[{"label":"orders at 2","topics":{"payments":{"flush.ms":0},"orders":{"unclean.leader.election.enable":true,"min.insync.replicas":2}},"acks":"1"}]"#,
    ))
    .expect("valid");
    assert_eq!(s.compare[0].topics.len(), 2);
    let text = s.to_json_pretty();
    // After `config`, before `acks`; topics in name order, each config in the order of
    // `topics[].configs`.
    assert!(
        text.contains(concat!(
            "\"compare\": [\n    {\n      \"label\": \"orders at 2\",\n",
            "      \"topics\": {\n        \"orders\": {\n          \"min.insync.replicas\": 2,\n",
            "          \"unclean.leader.election.enable\": true\n        },\n",
            "        \"payments\": {\n          \"flush.ms\": 0\n        }\n      },\n",
            "      \"acks\": \"1\"\n    }\n  ]"
        )),
        "{text}"
    );
    let compact = watermark_engine::scenario_json::scenario(&s, false);
    assert!(
        compact.contains(r#""compare":[{"label":"orders at 2","topics":{"orders":{"min.insync.replicas":2,"unclean.leader.election.enable":true},"payments":{"flush.ms":0}},"acks":"1"}]"#),
        "{compact}"
    );
    // The derived `Serialize` writes the same bytes, and both read them back the same.
    let by_serde = serde_json::to_string(&s)
        .unwrap()
        .replace(r#""topic":"rep","#, "")
        .replace(r#""assignment":[],"replication_factor":null,"#, "");
    assert_eq!(compact, by_serde);
    assert_eq!(Scenario::from_json(&text).unwrap(), s);
    let derived: Scenario = serde_json::from_str(&compact).unwrap();
    assert_eq!(derived, s);
    // Through a share link and back, and written again, the same link.
    let link = watermark_engine::share::encode(&s);
    let back = watermark_engine::share::decode(&link).unwrap();
    assert_eq!(back, s);
    assert_eq!(watermark_engine::share::encode(&back), link);
    // A variant without them writes no `topics`.
    let plain = Scenario::from_json(&two_topics(r#"[{"acks":"1"}]"#)).unwrap();
    assert!(plain.compare[0].topics.is_empty());
    let compact = watermark_engine::scenario_json::scenario(&plain, false);
    assert!(compact.contains(r#""compare":[{"acks":"1"}]"#), "{compact}");
}

/// A link written by the build before a variant had `topics` (a version-2 scenario of two
/// topics with a variant of acks and a broker config): it opens as it was, and written
/// again it is the same link.
const LINK_BEFORE_TOPIC_VARIANTS: &str = "w1.pVPbbqMwEP2Vys_IgiS9LNJ-SRRFxgxkFmOztmmLIv59x4BJ6LbqQ3lAMHN8ZuZ4zpW9gnVoNMt3CfPoFbCcGVtS9KEAhyU8CNm43xlLWAlOWuz8BGcUcKa3EubvwpqGDrF8TzymQ0mfxyvTor0xEkw4h7VuQXtKH7Nkl-xPp4RJoyus6ciVtag5ajdoyS10CqUIpOOYrGSdGALBD-h240goB1CyPI3wL9FZwnotFQjN6UWDcFAggwwctCiCZJVQDhIGCmukQMRFDr6qTFxLkCtRc48t8Fa88zYMmdJzy1fg5YW_CfQr4vH_fEHXY6pqSmeb887IBvxUwvT-vgLN661Rijr8GhRpLliHLjzYVtiGywvIpjOoPQlFwVehYmtp3AJ-AWF9AeIDZnePceCCJJvSv5bKf3twnzZVksKk5bDJZbvYsbcIoU52eD687J8Oz3Nw-KgS3T22XIN_MzSSouG0HObknLpT6D77uD34Bz1NN2UWyrgn64Js5p-GSMeEKdRN8McpeK6lmTRMbhF-aU_IxWUNKrW6K_ggmVFP6QbWWVP2ZMUQCsxMTMeocB8EOTLDqFZnocJ3luteqbAFfbDN_OM83Vj8MRrOxXA2-rbZq7ZpsHcETka_2TuYCnR5DrO-LJvWdsLOw33nsnFtPiOm8R8";

#[test]
fn a_link_from_before_topic_variants_opens_unchanged() {
    let s = watermark_engine::share::decode(LINK_BEFORE_TOPIC_VARIANTS).expect("opens");
    assert_eq!(s.title, "orders beside acks=1");
    assert_eq!(s.compare.len(), 1);
    assert!(s.compare[0].topics.is_empty());
    assert_eq!(s.compare[0].title(), "acks=1, min.insync.replicas=1");
    assert_eq!(
        watermark_engine::share::encode(&s),
        LINK_BEFORE_TOPIC_VARIANTS
    );
}

#[test]
fn bad_topic_variants_are_refused_with_the_field_and_the_range() {
    let cases: &[(&str, (&str, &str))] = &[
        (
            r#"[{"topics":{"nope":{"min.insync.replicas":1}}}]"#,
            (
                "compare[0].topics.nope",
                "unknown topic \"nope\"; the topics are: orders, payments",
            ),
        ),
        (
            r#"[{"acks":"1"},{"topics":{"orders":{"retention.ms":1}}}]"#,
            (
                "compare[1].topics.orders",
                "unknown field `retention.ms`, expected one of `min.insync.replicas`, `unclean.leader.election.enable`, `flush.messages`, `flush.ms`",
            ),
        ),
        (
            r#"[{"topics":{"orders":{"min.insync.replicas":0}}}]"#,
            (
                "compare[0].topics.orders.min.insync.replicas",
                "min.insync.replicas must be a whole number in 1..=2147483647, got 0",
            ),
        ),
        (
            r#"[{"topics":{"payments":{"flush.messages":0}}}]"#,
            (
                "compare[0].topics.payments.flush.messages",
                "flush.messages must be a whole number in 1..=9223372036854775807, got 0",
            ),
        ),
        (
            r#"[{"topics":{"orders":{"unclean.leader.election.enable":"yes"}}}]"#,
            (
                "compare[0].topics.orders.unclean.leader.election.enable",
                "invalid type: string \"yes\", expected a boolean",
            ),
        ),
        (
            r#"[{"topics":{"orders":{}}}]"#,
            (
                "compare[0].topics.orders",
                "a variant's topic sets at least one of its configs: min.insync.replicas, unclean.leader.election.enable, flush.messages, flush.ms",
            ),
        ),
        (
            r#"[{"topics":[]}]"#,
            (
                "compare[0].topics",
                "invalid type: sequence, expected a map",
            ),
        ),
        (
            r#"[{"topics":{}}]"#,
            (
                "compare[0]",
                "a variant must change protocol, config, topics or acks",
            ),
        ),
    ];
    for (compare, (field, message)) in cases {
        let e = Scenario::from_json(&two_topics(compare)).expect_err(compare);
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            (*field, *message),
            "{compare}"
        );
    }
    // Version 1 has no topics of its own configs: the field names version 2.
    let (field, message) = err(r#"[{"topics":{"rep":{"min.insync.replicas":1}}}]"#, "[]");
    assert_eq!(
        (field.as_str(), message.as_str()),
        (
            "compare[0].topics",
            "`topics` needs version 2 (\"version\": 2)"
        )
    );
}

#[test]
fn a_variant_is_titled_by_its_topic_configs_after_the_broker_configs() {
    let v: Variant = serde_json::from_str(
        r#"{"protocol":"no-elr","topics":{"payments":{"flush.ms":0,"min.insync.replicas":1},"orders":{"unclean.leader.election.enable":true}},
            "config":{"min.insync.replicas":1},"acks":"1"}"#,
    )
    .unwrap();
    assert_eq!(
        v.title(),
        "acks=1, min.insync.replicas=1, orders: unclean.leader.election.enable=true, payments: min.insync.replicas=1,flush.ms=0, protocol no-elr"
    );
    let only: Variant =
        serde_json::from_str(r#"{"topics":{"orders":{"min.insync.replicas":1}}}"#).unwrap();
    assert_eq!(only.title(), "orders: min.insync.replicas=1");
    // A person's actions: none changes a topic's own configs, so each is taken as it is.
    let set = Action::SetConfig {
        name: "min.insync.replicas".into(),
        value: Value::from(3u64),
    };
    assert_eq!(only.adapt(&set), Some(set.clone()));
}

#[test]
fn topic_variant_runs_are_deterministic() {
    let s = Scenario::from_json(&two_topics(
        r#"[{"topics":{"orders":{"min.insync.replicas":2}}},{"topics":{"payments":{"min.insync.replicas":1,"unclean.leader.election.enable":true}}}]"#,
    ))
    .unwrap();
    for i in 0..s.compare.len() {
        let a = watermark_engine::run(&s.variant(i).unwrap(), true).unwrap();
        let b = watermark_engine::run(&s.variant(i).unwrap(), true).unwrap();
        assert_eq!(a.transcript(), b.transcript(), "compare[{i}]");
        assert!(a.violations().is_empty());
    }
}
