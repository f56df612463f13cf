//! Fuzzing the share-link decoder: random and mutated links must give a clear error or a
//! valid scenario — never a panic and never a hang (each decode is bounded by the limits in
//! `share.rs`; a slow input would show as a slow run).
//!
//! CI runs `WATERMARK_FUZZ_CASES` (default 20 000) inputs. The recorded million-input run:
//! `WATERMARK_FUZZ_CASES=1000000 cargo test --release -p watermark-engine --test share_fuzz`
//! (figures in BENCHMARKS.md).
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::inflate::{inflate, InflateError};
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

/// A random scenario: random cluster, configs and a timeline of every kind of action.
fn random_scenario(rng: &mut Rng) -> watermark_engine::Scenario {
    use watermark_engine::scenario::{
        AcksOrDefault, ControllerName, Endpoint, ProduceSpec, TimedAction,
    };
    use watermark_engine::types::Acks;
    use watermark_engine::{Action, Config, Scenario};
    let brokers = 1 + rng.below_or_equal(8) as u32;
    let b = |rng: &mut Rng| 1 + rng.below_or_equal(u64::from(brokers - 1)) as u32;
    let text = |rng: &mut Rng| -> String {
        let n = rng.below_or_equal(12) as usize;
        (0..n)
            .map(|_| {
                ['a', 'Z', '7', ' ', '-', 'é', '"', '<', '🙂', '\\'][rng.below_or_equal(9) as usize]
            })
            .collect()
    };
    let mut timeline = vec![];
    for _ in 0..rng.below_or_equal(30) {
        let at = rng.below_or_equal(600_000);
        let action = match rng.below_or_equal(12) {
            0 => Action::Produce(ProduceSpec {
                acks: AcksOrDefault(
                    [Acks::Zero, Acks::One, Acks::All][rng.below_or_equal(2) as usize],
                ),
                values: (0..1 + rng.below_or_equal(3)).map(|_| text(rng)).collect(),
                one_by_one: rng.below_or_equal(1) == 1,
                retries: (rng.below_or_equal(1) == 1).then(|| rng.below_or_equal(5) as u32),
                ..ProduceSpec::default()
            }),
            1 => Action::Freeze { broker: b(rng) },
            2 => Action::Thaw { broker: b(rng) },
            3 => Action::Kill { broker: b(rng) },
            4 => Action::Start { broker: b(rng) },
            5 => Action::Slow {
                broker: b(rng),
                ms: rng.below_or_equal(10_000),
            },
            6 => Action::Cut {
                a: Endpoint::Broker(b(rng)),
                b: Endpoint::Controller(ControllerName::Controller),
            },
            7 => Action::SetConfig {
                name: "replica.lag.time.max.ms".into(),
                value: rng.below_or_equal(60_000).max(500).into(),
            },
            8 => Action::Note { text: text(rng) },
            9 => Action::Consume {
                max_records: Some(1 + rng.below_or_equal(100) as u32),
                from_beginning: rng.below_or_equal(1) == 1,
                topic: None,
                partition: None,
            },
            10 => Action::ElectUnclean,
            11 => Action::DumpLog {
                broker: b(rng),
                topic: None,
                partition: None,
            },
            _ => Action::Describe(Default::default()),
        };
        timeline.push(TimedAction { at, action });
    }
    let mut s = Scenario {
        title: text(rng),
        description: text(rng),
        brokers,
        replication_factor: Some(1 + rng.below_or_equal(u64::from(brokers - 1)) as u32),
        seed: rng.next_u64(),
        config: Config {
            min_insync_replicas: 1 + rng.below_or_equal(8) as u32,
            // At least replica.fetch.wait.max.ms (500), as KafkaConfig requires.
            replica_lag_time_max_ms: rng.below_or_equal(600_000).max(500),
            unclean_leader_election_enable: rng.below_or_equal(1) == 1,
            network_jitter_ms: rng.below_or_equal(50),
            ..Config::default()
        },
        timeline,
        end_ms: (rng.below_or_equal(1) == 1).then(|| rng.below_or_equal(700_000)),
        ..Scenario::default()
    };
    // Expectations last, so the rest is drawn as before they existed.
    let end = s.end_ms();
    for _ in 0..rng.below_or_equal(6) {
        s.expect.push(random_expectation(rng, brokers, end, &text));
    }
    s
}

/// A valid expectation with a random set of checks (at least one).
fn random_expectation(
    rng: &mut Rng,
    brokers: u32,
    end: u64,
    text: &dyn Fn(&mut Rng) -> String,
) -> watermark_engine::expect::Expectation {
    use watermark_engine::expect::{Expectation, LeaderExpect, NoLeader};
    let b = |rng: &mut Rng| 1 + rng.below_or_equal(u64::from(brokers - 1)) as u32;
    let ids = |rng: &mut Rng| -> Vec<u32> {
        (1..=brokers)
            .filter(|_| rng.below_or_equal(1) == 1)
            .collect()
    };
    let non_empty = |rng: &mut Rng| format!("x{}", text(rng));
    let at = rng.below_or_equal(end);
    let mut e = Expectation {
        at,
        label: text(rng),
        since: (rng.below_or_equal(1) == 1).then(|| rng.below_or_equal(at)),
        ..Expectation::default()
    };
    loop {
        match rng.below_or_equal(12) {
            0 => e.describe = Some(text(rng)),
            1 => {
                e.leader = Some(if rng.below_or_equal(1) == 1 {
                    LeaderExpect::Broker(b(rng))
                } else {
                    LeaderExpect::None(NoLeader::None)
                })
            }
            2 => e.isr = Some(ids(rng)),
            3 => e.elr = Some(ids(rng)),
            4 => {
                e.broker = (rng.below_or_equal(1) == 1).then(|| b(rng));
                e.leo = Some(rng.below_or_equal(1_000_000));
            }
            5 => e.hw = Some(rng.below_or_equal(1_000_000)),
            6 => e.offsets = Some(text(rng)),
            7 => e.produce = Some(non_empty(rng)),
            8 => {
                e.error = Some(
                    ["NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT"][rng.below_or_equal(1) as usize]
                        .into(),
                )
            }
            9 => e.loss = Some(rng.below_or_equal(1) == 1),
            10 => {
                let first = rng.below_or_equal(100);
                e.lost = Some([first, first + rng.below_or_equal(100)]);
            }
            11 => e.caption = Some(non_empty(rng)),
            _ => e.line = Some(non_empty(rng)),
        }
        if rng.below_or_equal(2) == 0 {
            return e;
        }
    }
}

#[test]
fn random_scenarios_round_trip_exactly_through_links() {
    let cases: u64 = std::env::var("WATERMARK_ROUNDTRIP_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000);
    let mut rng = Rng::new(0x5CA1AB1E);
    for i in 0..cases {
        let s = random_scenario(&mut rng);
        s.validate()
            .unwrap_or_else(|e| panic!("case {i}: generated an invalid scenario: {e}"));
        let link = encode(&s);
        assert!(
            link.starts_with("w1.")
                && link
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c)),
            "URL-safe"
        );
        assert_eq!(
            decode(&link).unwrap_or_else(|e| panic!("case {i}: {e}")),
            s,
            "case {i}"
        );
        // miniz_oxide, which opened the links of earlier builds, opens these too.
        let packed = watermark_engine::share::base64url_decode(&link[3..]).expect("base64url");
        assert_eq!(
            miniz_oxide::inflate::decompress_to_vec(&packed).expect("miniz_oxide inflates it"),
            watermark_engine::scenario_json::scenario(&s, false).into_bytes(),
            "case {i}"
        );
    }
}

/// What miniz_oxide's inflater (which opened links before `watermark_engine::inflate`) makes
/// of `data`: the bytes, or whether the limit or damage stopped it.
fn miniz_inflate(data: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    miniz_oxide::inflate::decompress_to_vec_with_limit(data, limit).map_err(|e| {
        if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput {
            InflateError::TooLarge
        } else {
            InflateError::Damaged
        }
    })
}

/// The link inflater gives what miniz_oxide gives, on every kind of stream (stored, fixed
/// and dynamic blocks, from each compression level) damaged in every way: bits flipped,
/// bytes changed, cut short, spliced, or random; and at limits around the true size.
#[test]
fn the_inflater_agrees_with_miniz_oxide() {
    let cases: u64 = std::env::var("WATERMARK_INFLATE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut rng = Rng::new(0x1F1A7E);
    let texts: Vec<Vec<u8>> = PRESETS
        .iter()
        .map(|p| p.json.as_bytes().to_vec())
        .chain([
            vec![],
            b"a".to_vec(),
            vec![b'x'; 70_000],
            (0..3000).map(|i| (i * 7919 % 251) as u8).collect(),
        ])
        .collect();
    let mut streams: Vec<Vec<u8>> = vec![];
    for t in &texts {
        for level in [0, 1, 6, 9] {
            streams.push(miniz_oxide::deflate::compress_to_vec(t, level));
        }
    }
    let (mut same_ok, mut same_err) = (0u64, 0u64);
    for i in 0..cases {
        let base = &streams[rng.below_or_equal(streams.len() as u64 - 1) as usize];
        let mut s = base.clone();
        match rng.below_or_equal(5) {
            0 if !s.is_empty() => {
                for _ in 0..=rng.below_or_equal(3) {
                    let at = rng.below_or_equal(s.len() as u64 * 8 - 1) as usize;
                    s[at / 8] ^= 1 << (at % 8);
                }
            }
            1 if !s.is_empty() => {
                let at = rng.below_or_equal(s.len() as u64 - 1) as usize;
                s[at] = rng.next_u64() as u8;
            }
            2 => s.truncate(rng.below_or_equal(s.len() as u64) as usize),
            3 if !s.is_empty() => {
                let a = rng.below_or_equal(s.len() as u64 - 1) as usize;
                let b = (a + rng.below_or_equal(32) as usize).min(s.len());
                let piece = s[a..b].to_vec();
                let to = rng.below_or_equal(s.len() as u64) as usize;
                s.splice(to..to, piece);
            }
            4 => {
                let n = rng.below_or_equal(64) as usize;
                s = (0..n).map(|_| rng.next_u64() as u8).collect();
            }
            _ => {}
        }
        let full = miniz_inflate(base, usize::MAX).map_or(0, |v| v.len());
        let limit = match rng.below_or_equal(3) {
            0 => full.saturating_sub(rng.below_or_equal(2) as usize),
            1 => full + rng.below_or_equal(1) as usize,
            _ => watermark_engine::share::MAX_INFLATED_BYTES,
        };
        let ours = inflate(&s, limit);
        assert_eq!(
            ours,
            miniz_inflate(&s, limit),
            "case {i}: limit {limit}, {s:?}"
        );
        if ours.is_ok() {
            same_ok += 1;
        } else {
            same_err += 1;
        }
    }
    println!("inflate: {cases} streams, {same_ok} inflated alike, {same_err} refused alike");
}
