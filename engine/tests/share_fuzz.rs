//! Fuzzing the share-link decoder: random and mutated links must give a clear error or a
//! valid scenario — never a panic and never a hang (each decode is bounded by the limits in
//! `share.rs`; a slow input would show as a slow run).
//!
//! CI runs `WATERMARK_FUZZ_CASES` (default 20 000) inputs. The recorded million-input run:
//! `WATERMARK_FUZZ_CASES=1000000 cargo test --release -p watermark-engine --test share_fuzz`
//! (figures in BENCHMARKS.md).
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::presets::{preset, PRESETS};
use watermark_engine::rng::Rng;
use watermark_engine::share::{base64url_encode, decode, encode};

fn mutate(rng: &mut Rng, seed_links: &[String]) -> String {
    let base = &seed_links[rng.below_or_equal(seed_links.len() as u64 - 1) as usize];
    let mut bytes: Vec<u8> = base.as_bytes().to_vec();
    match rng.below_or_equal(7) {
        // Flip characters.
        0 => {
            for _ in 0..=rng.below_or_equal(4) {
                let i = rng.below_or_equal(bytes.len() as u64 - 1) as usize;
                bytes[i] = b"ABCxyz019-_.!%w"[rng.below_or_equal(14) as usize];
            }
        }
        // Cut short.
        1 => bytes.truncate(rng.below_or_equal(bytes.len() as u64) as usize),
        // Duplicate a slice.
        2 => {
            let a = rng.below_or_equal(bytes.len() as u64 - 1) as usize;
            let b = (a + rng.below_or_equal(64) as usize).min(bytes.len());
            let slice = bytes[a..b].to_vec();
            bytes.splice(a..a, slice);
        }
        // Random base64url payload behind a valid tag.
        3 => {
            let n = rng.below_or_equal(300) as usize;
            let raw: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            return format!("w1.{}", base64url_encode(&raw));
        }
        // Compressed garbage JSON behind a valid tag.
        4 => {
            let n = rng.below_or_equal(200) as usize;
            let junk: Vec<u8> = (0..n)
                .map(|_| {
                    b"{}[]\":,0123456789abcdefnulltruebrokers timeline"
                        [rng.below_or_equal(46) as usize]
                })
                .collect();
            return format!(
                "w1.{}",
                base64url_encode(&miniz_oxide::deflate::compress_to_vec(&junk, 6))
            );
        }
        // A valid scenario edited in its JSON, re-packed.
        5 => {
            let s = preset(PRESETS[rng.below_or_equal(PRESETS.len() as u64 - 1) as usize].name)
                .expect("preset");
            let mut json = serde_json::to_string(&s).expect("json").into_bytes();
            for _ in 0..=rng.below_or_equal(3) {
                let i = rng.below_or_equal(json.len() as u64 - 1) as usize;
                json[i] = b"0123456789-\"{}[],:xe"[rng.below_or_equal(19) as usize];
            }
            return format!(
                "w1.{}",
                base64url_encode(&miniz_oxide::deflate::compress_to_vec(&json, 6))
            );
        }
        // Random bytes, no tag.
        6 => {
            let n = rng.below_or_equal(100) as usize;
            bytes = (0..n).map(|_| (rng.next_u64() % 128) as u8).collect();
        }
        _ => {}
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn the_decoder_survives_random_and_mutated_links() {
    let cases: u64 = std::env::var("WATERMARK_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let seed_links: Vec<String> = PRESETS
        .iter()
        .map(|p| encode(&preset(p.name).expect("preset")))
        .collect();
    let mut rng = Rng::new(0xF022);
    let (mut ok, mut rejected) = (0u64, 0u64);
    let start = std::time::Instant::now();
    let mut slowest = std::time::Duration::ZERO;
    for _ in 0..cases {
        let link = mutate(&mut rng, &seed_links);
        let t = std::time::Instant::now();
        match decode(&link) {
            Ok(s) => {
                // Whatever decodes is a valid scenario: it builds.
                assert!(
                    watermark_engine::Sim::new(&s).is_ok(),
                    "decoded but does not build: {link}"
                );
                ok += 1;
            }
            Err(e) => {
                assert!(!e.field.is_empty() && !e.message.is_empty());
                rejected += 1;
            }
        }
        slowest = slowest.max(t.elapsed());
    }
    println!(
        "fuzz: {cases} links, {ok} decoded, {rejected} rejected with a message, {:.1} s, slowest decode {:.2} ms",
        start.elapsed().as_secs_f64(),
        slowest.as_secs_f64() * 1000.0
    );
}
