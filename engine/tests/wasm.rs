//! The engine compiled to WebAssembly gives the same bytes as natively: every preset's
//! transcript and snapshot digest equal the golden files the native test checks.
//! Runs with `cargo test -p watermark-engine --target wasm32-unknown-unknown`.
#![cfg(target_arch = "wasm32")]

mod common;

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn presets_match_their_golden_transcripts_in_wasm() {
    for (name, expected) in common::GOLDEN {
        let actual = common::golden_text(name);
        assert!(
            actual == *expected,
            "{name}: the wasm transcript differs from the native golden file"
        );
    }
}

#[wasm_bindgen_test]
fn rng_matches_native_reference_values() {
    let mut r = watermark_engine::rng::Rng::new(1_234_567);
    assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
}
