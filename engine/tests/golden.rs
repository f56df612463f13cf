//! Scenario goldens and determinism: each preset's full transcript (every trace line, with
//! its simulated time) and its final snapshot, as readable JSON (`common::readable_json`),
//! must match `tests/golden/NAME.txt` byte for byte, run after run. The same files are checked by the wasm build
//! (`tests/wasm.rs`), so the engine gives the same bytes natively and in WebAssembly.
//!
//! After an intended change of behaviour, regenerate with
//! `WATERMARK_UPDATE_GOLDEN=1 cargo test -p watermark-engine --test golden` and review the
//! diff line by line.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{golden_text, GOLDEN};

#[test]
fn presets_match_their_golden_transcripts() {
    let update = std::env::var("WATERMARK_UPDATE_GOLDEN").is_ok();
    let mut mismatches = vec![];
    for (name, expected) in GOLDEN {
        let actual = golden_text(name);
        if update {
            let path = format!("{}/tests/golden/{name}.txt", env!("CARGO_MANIFEST_DIR"));
            std::fs::write(&path, &actual).expect("write golden");
            continue;
        }
        if actual != *expected {
            let first = actual
                .lines()
                .zip(expected.lines())
                .position(|(a, e)| a != e)
                .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
            mismatches.push(format!(
                "{name}: first difference at line {}:\n  expected: {:?}\n  actual:   {:?}",
                first + 1,
                expected.lines().nth(first),
                actual.lines().nth(first)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_same_scenario_gives_the_same_bytes_twice_and_from_a_clone() {
    for (name, _) in GOLDEN {
        assert_eq!(
            golden_text(name),
            golden_text(name),
            "{name} is deterministic"
        );
        // A clone taken midway continues exactly as the original.
        let scenario = watermark_engine::presets::preset(name).unwrap();
        let mut a = watermark_engine::Sim::new(&scenario).unwrap();
        a.advance_to(scenario.end_ms() / 2);
        let mut b = a.clone();
        a.advance_to(scenario.end_ms());
        b.advance_to(scenario.end_ms());
        assert_eq!(a.transcript(), b.transcript(), "{name}");
        assert_eq!(
            serde_json::to_string(&a.snapshot()).unwrap(),
            serde_json::to_string(&b.snapshot()).unwrap(),
            "{name}"
        );
    }
}
