//! Shared by the native golden test and the wasm test.

use watermark_engine::presets::preset;

/// Every preset's golden file, compiled in so the wasm build reads the same bytes.
pub const GOLDEN: &[(&str, &str)] = &[
    (
        "acks-walkthrough",
        include_str!("../golden/acks-walkthrough.txt"),
    ),
    (
        "frozen-follower",
        include_str!("../golden/frozen-follower.txt"),
    ),
    ("min-isr-3", include_str!("../golden/min-isr-3.txt")),
    (
        "diverged-truncation",
        include_str!("../golden/diverged-truncation.txt"),
    ),
    (
        "leader-failover",
        include_str!("../golden/leader-failover.txt"),
    ),
    (
        "unclean-election",
        include_str!("../golden/unclean-election.txt"),
    ),
    (
        "last-replica-standing",
        include_str!("../golden/last-replica-standing.txt"),
    ),
    ("slow-follower", include_str!("../golden/slow-follower.txt")),
];

/// FNV-1a, 64 bits: a digest with no dependency, identical on every target.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The golden text of a preset: its whole transcript, then the digest of its final snapshot.
pub fn golden_text(name: &str) -> String {
    let scenario = preset(name).expect("preset parses");
    let sim = watermark_engine::run(&scenario, true).expect("preset runs");
    let mut out = sim.transcript().join("\n");
    let snapshot = serde_json::to_string(&sim.snapshot()).expect("snapshot serializes");
    out.push_str(&format!(
        "\nsnapshot-fnv1a64: {:016x}\n",
        fnv1a64(snapshot.as_bytes())
    ));
    out
}
