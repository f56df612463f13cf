//! The saved-links corpus: links written by earlier builds must keep opening. Each file in
//! `tests/links/` holds the title the link must decode to on its first line and the link
//! on its second. Add a file for every format version ever released; never edit one.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::share::decode;

#[test]
fn every_saved_link_still_opens() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/links");
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/links exists")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let text = std::fs::read_to_string(entry.path()).expect("readable");
        let mut lines = text.lines();
        let title = lines.next().expect("a title line");
        let link = lines.next().expect("a link line");
        let scenario = decode(link).unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
        assert_eq!(scenario.title, title, "{}", entry.path().display());
        let sim = watermark_engine::run(&scenario, true).expect("runs");
        assert!(sim.violations().is_empty());
        n += 1;
    }
    assert!(
        n >= 8,
        "the corpus holds a link per preset at least ({n} found)"
    );
}

#[test]
fn expectations_travel_in_links_and_old_links_have_none() {
    use watermark_engine::share::encode;
    // Every preset's expectations survive the round trip.
    for p in watermark_engine::presets::PRESETS {
        let s = watermark_engine::presets::preset(p.name).expect("preset");
        assert!(!s.expect.is_empty(), "{} carries expectations", p.name);
        let back = decode(&encode(&s)).expect("decodes");
        assert_eq!(back.expect, s.expect, "{}", p.name);
        assert_eq!(back, s);
    }
    // A link saved before expectations existed opens with none, and writing it again
    // gives the same link: an empty list is left out of the JSON.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/links");
    let text = std::fs::read_to_string(dir.join("v1-frozen-follower.txt")).expect("saved link");
    let link = text.lines().nth(1).expect("a link line");
    let old = decode(link).expect("opens");
    assert!(old.expect.is_empty());
    assert!(!serde_json::to_string(&old)
        .expect("json")
        .contains("expect"));
    // A link whose expectation is out of range names it.
    let mut bad = old.clone();
    bad.expect.push(watermark_engine::expect::Expectation {
        at: 5_000,
        broker: Some(7),
        hw: Some(1),
        ..Default::default()
    });
    let e = decode(&encode(&bad)).expect_err("rejected");
    assert_eq!(e.field, "expect[0].broker");
    assert!(e.message.contains("1..=3"), "{e}");
}

/// The JSON a link holds.
fn saved_json(link: &str) -> String {
    let payload = link.strip_prefix("w1.").expect("a w1 link");
    let packed = watermark_engine::share::base64url_decode(payload).expect("base64url");
    let json = watermark_engine::inflate::inflate(&packed, 1 << 20).expect("inflates");
    String::from_utf8(json).expect("UTF-8")
}

#[test]
fn a_version_2_scenario_travels_in_a_link() {
    use watermark_engine::share::encode;
    use watermark_engine::Scenario;
    let s = Scenario::from_json(
        r#"{"version":2,"title":"two topics","brokers":6,
            "racks":{"1":"a","2":"a","3":"b","4":"b","5":"c"},
            "topics":[{"name":"orders","partitions":6,"replication_factor":3,
                       "configs":{"min.insync.replicas":2,"unclean.leader.election.enable":true}},
                      {"name":"move","assignment":[[1,2],[2,3]]}],
            "timeline":[{"at":0,"action":"produce","topic":"orders","partition":2,"prefix":"v","count":10},
                        {"at":900,"action":"consume","topic":"move","partition":1}],
            "expect":[{"at":1000,"leader":1}]}"#,
    )
    .expect("valid");
    let link = encode(&s);
    let back = decode(&link).expect("opens");
    assert_eq!(back, s);
    assert_eq!(encode(&back), link, "written again, the same link");
    let json = saved_json(&link);
    assert!(json.contains(r#""topics":[{"name":"orders""#), "{json}");
    assert!(!json.contains(r#""topic":"rep""#), "{json}");
    // A link whose version-2 fields are wrong names the field.
    let mut bad = s.clone();
    bad.timeline[1].action = watermark_engine::Action::Consume {
        max_records: None,
        from_beginning: false,
        topic: Some("move".into()),
        partition: Some(2),
    };
    let e = decode(&encode(&bad)).expect_err("rejected");
    assert_eq!(e.field, "timeline[1].partition");
    assert_eq!(
        e.message,
        "partition must be one of 0..=1 (topic move has 2), got 2"
    );
    bad = s.clone();
    bad.racks.insert(9, "z".into());
    let e = decode(&encode(&bad)).expect_err("rejected");
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("racks.9", "broker must be one of 1..=6, got 9")
    );
}
