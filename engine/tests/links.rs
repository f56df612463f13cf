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
