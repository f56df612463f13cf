//! The engine compiled to WebAssembly gives the same bytes as natively: every preset's
//! transcript and final snapshot equal the golden files the native test checks.
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

/// The checkpoint bound and the shared trace chunks work the same in wasm32: a session that
/// fills the trace and thins its checkpoints twice rebuilds moments exactly.
#[wasm_bindgen_test]
fn bounded_rewind_with_a_full_trace_rebuilds_exactly_in_wasm() {
    use watermark_engine::rewind::{Rewind, MAX_CHECKPOINTS};
    use watermark_engine::{Action, Scenario, Sim, TimedAction};
    // 7 brokers and an epochs read-out (7 lines) every 10 ms: 21 000 lines in 30 s.
    let scenario = Scenario {
        brokers: 7,
        timeline: (0..3_000)
            .map(|i| TimedAction {
                at: i * 10,
                action: Action::Epochs {
                    topic: None,
                    partition: None,
                },
            })
            .collect(),
        end_ms: Some(30_000),
        ..Scenario::default()
    };
    let mut live = Sim::new(&scenario).unwrap();
    // A checkpoint every 50 ms, frames of 37 ms: 129 checkpoints by about 9.5 s.
    let mut rewind = Rewind::new(&live, 50);
    let mut t = 0;
    while t < 30_000 {
        t += 37;
        live.advance_to(t);
        rewind.observe(&live);
        assert!(rewind.checkpoint_count() <= MAX_CHECKPOINTS);
    }
    assert!(rewind.interval_ms() >= 200, "thinned out twice");
    assert!(
        live.trace_events().next().unwrap().seq > 0,
        "the trace turned over"
    );
    for at in [5_000, 17_777, 29_999] {
        let rebuilt = rewind.state_at(at);
        let mut fresh = Sim::new(&scenario).unwrap();
        let mut f = 0;
        while f + 37 <= at {
            f += 37;
            fresh.advance_to(f);
        }
        fresh.advance_to(at);
        assert!(
            rebuilt.transcript() == fresh.transcript(),
            "transcript at {at}"
        );
        assert!(
            format!("{rebuilt:?}") == format!("{fresh:?}"),
            "state at {at}"
        );
    }
}
