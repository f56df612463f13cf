//! The link deflater (`watermark_engine::deflate`) against miniz_oxide, whose level 9 wrote
//! links before it: every stream it writes inflates to its input by both inflaters, and no
//! preset's link is more than 2% longer than miniz_oxide's (nor all of them together longer).
//!
//! The per-preset lengths: `cargo test -p watermark-engine --test share_deflate -- --nocapture`.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::deflate::deflate;
use watermark_engine::inflate::inflate;
use watermark_engine::presets::{preset, PRESETS};
use watermark_engine::rng::Rng;
use watermark_engine::share::{base64url_encode, encode};

/// `data` deflated, then inflated by ours and by miniz_oxide's: both give `data` back.
fn round_trips(data: &[u8], what: &str) -> Vec<u8> {
    let packed = deflate(data);
    assert_eq!(
        inflate(&packed, usize::MAX).as_deref(),
        Ok(data),
        "{what}: our inflater"
    );
    assert_eq!(
        miniz_oxide::inflate::decompress_to_vec(&packed)
            .unwrap_or_else(|e| panic!("{what}: miniz_oxide refuses it: {e}")),
        data,
        "{what}: miniz_oxide's inflater"
    );
    packed
}

#[test]
fn preset_links_are_no_longer_than_miniz_level_9() {
    let (mut ours_total, mut miniz_total) = (0, 0);
    for p in PRESETS {
        let s = preset(p.name).expect("preset");
        let json = watermark_engine::scenario_json::scenario(&s, false);
        round_trips(json.as_bytes(), p.name);
        let ours = encode(&s).len();
        let miniz = format!(
            "w1.{}",
            base64url_encode(&miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 9))
        )
        .len();
        println!(
            "{:<24} json {:>5}  miniz 9 {:>5}  ours {:>5}  {:+.2}%",
            p.name,
            json.len(),
            miniz,
            ours,
            (ours as f64 / miniz as f64 - 1.0) * 100.0
        );
        assert!(
            ours * 100 <= miniz * 102,
            "{}: {ours} characters, miniz_oxide {miniz}",
            p.name
        );
        ours_total += ours;
        miniz_total += miniz;
    }
    println!(
        "{:<24} {:>17}  {miniz_total:>5}  {ours_total:>5}",
        "total", ""
    );
    assert!(ours_total <= miniz_total, "{ours_total} > {miniz_total}");
}

#[test]
fn every_kind_of_input_round_trips_through_both_inflaters() {
    let mut rng = Rng::new(0xDEF1A7E);
    let mut random = |n: usize, alphabet: u64| -> Vec<u8> {
        (0..n)
            .map(|_| rng.below_or_equal(alphabet - 1) as u8)
            .collect()
    };
    let presets_joined: Vec<u8> = PRESETS.iter().flat_map(|p| p.json.bytes()).collect();
    let mut inputs: Vec<(String, Vec<u8>)> = vec![
        ("empty".into(), vec![]),
        ("one byte".into(), b"a".to_vec()),
        ("two bytes".into(), b"ab".to_vec()),
        ("three equal bytes".into(), b"aaa".to_vec()),
        ("one byte repeated".into(), vec![b'x'; 70_000]),
        ("a short period".into(), b"abc".repeat(40_000)),
        ("a long period".into(), random(1000, 256).repeat(100)),
        ("every byte value".into(), (0..=255).collect()),
        // Stored blocks: each holds at most 65 535 bytes.
        ("incompressible, 200 kB".into(), random(200_000, 256)),
        ("incompressible, 65 535 bytes".into(), random(65_535, 256)),
        ("two symbols".into(), random(20_000, 2)),
        ("text of 16 letters".into(), random(50_000, 16)),
        // Longer than the 32 kB window and than one block's symbols.
        ("every preset, 20 times".into(), presets_joined.repeat(20)),
    ];
    for n in [1, 2, 3, 4, 5, 10, 100, 258, 259, 1000, 10_000] {
        inputs.push((format!("random {n} bytes"), random(n, 256)));
        inputs.push((format!("random {n} of 4 letters"), random(n, 4)));
    }
    for (what, data) in &inputs {
        let packed = round_trips(data, what);
        // The output depends on the input only.
        assert_eq!(deflate(data), packed, "{what}: deterministic");
    }
    // Incompressible data grows by the stored blocks' headers only (a block for each
    // 16 384 literals).
    let noise = &inputs[8].1;
    assert!(deflate(noise).len() <= noise.len() + 5 * noise.len().div_ceil(16_384));
}
