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
