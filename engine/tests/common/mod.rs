//! Shared by the native golden test and the wasm test.

use watermark_engine::presets::preset;

/// Every preset's golden file, compiled in so the wasm build reads the same bytes.
pub const GOLDEN: &[(&str, &str)] = &[
    (
        "acks-walkthrough",
        include_str!("../golden/acks-walkthrough.txt"),
    ),
    (
        "fetcher-threads",
        include_str!("../golden/fetcher-threads.txt"),
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
    ("move-replica", include_str!("../golden/move-replica.txt")),
    (
        "throttled-move",
        include_str!("../golden/throttled-move.txt"),
    ),
    ("slow-follower", include_str!("../golden/slow-follower.txt")),
    ("slow-broker", include_str!("../golden/slow-broker.txt")),
    (
        "rolling-restart",
        include_str!("../golden/rolling-restart.txt"),
    ),
    ("zone-outage", include_str!("../golden/zone-outage.txt")),
    (
        "last-replica-standing-no-elr",
        include_str!("../golden/last-replica-standing-no-elr.txt"),
    ),
    (
        "pre-kip-903-stale-isr-join",
        include_str!("../golden/pre-kip-903-stale-isr-join.txt"),
    ),
    (
        "pre-kip-320-unfenced-fetch",
        include_str!("../golden/pre-kip-320-unfenced-fetch.txt"),
    ),
    (
        "pre-kip-101-hw-truncation",
        include_str!("../golden/pre-kip-101-hw-truncation.txt"),
    ),
    (
        "pre-kip-101-divergence",
        include_str!("../golden/pre-kip-101-divergence.txt"),
    ),
    (
        "kip-279-divergence",
        include_str!("../golden/kip-279-divergence.txt"),
    ),
    ("acks-steps", include_str!("../golden/acks-steps.txt")),
    (
        "min-isr-side-by-side",
        include_str!("../golden/min-isr-side-by-side.txt"),
    ),
    (
        "elr-side-by-side",
        include_str!("../golden/elr-side-by-side.txt"),
    ),
    (
        "kip-101-side-by-side",
        include_str!("../golden/kip-101-side-by-side.txt"),
    ),
    (
        "unclean-by-replica-order",
        include_str!("../golden/unclean-by-replica-order.txt"),
    ),
    (
        "topic-min-isr-side-by-side",
        include_str!("../golden/topic-min-isr-side-by-side.txt"),
    ),
];

/// The golden text of a preset: its whole transcript, then its final snapshot as readable
/// JSON (`readable_json`), so that a change of state shows in the diff as the lines that
/// moved, not as a new digest.
/// A preset that compares runs (`compare`) goes on with each variant's header
/// (`=== compare[0]: acks=1 ===`), transcript and final snapshot, then what differs from the
/// top run at the end (`=== differences at 2.500s ===`), as `watermark run` prints them.
pub fn golden_text(name: &str) -> String {
    let scenario = preset(name).expect("preset parses");
    let sim = watermark_engine::run(&scenario, true).expect("preset runs");
    let mut out = run_text(&sim);
    let mut runs = Vec::new();
    for (i, v) in scenario.compare.iter().enumerate() {
        let variant = scenario.variant(i).expect("the variant is valid");
        let other = watermark_engine::run(&variant, true).expect("the variant runs");
        out.push_str(&format!("=== compare[{i}]: {} ===\n", v.title()));
        out.push_str(&run_text(&other));
        runs.push(other);
    }
    if !runs.is_empty() {
        let time = watermark_engine::trace::format_time(sim.now());
        out.push_str(&format!("=== differences at {} ===\n", time.trim()));
        for (i, other) in runs.iter().enumerate() {
            let found = watermark_engine::compare::differences(&sim, other);
            if found.is_empty() {
                out.push_str(&format!("compare[{i}]: no difference\n"));
            }
            for d in found {
                out.push_str(&format!(
                    "compare[{i}]: {}\n",
                    d.line(&format!("compare[{i}]"))
                ));
            }
        }
    }
    out
}

/// A run's whole transcript, then its final snapshot as readable JSON.
fn run_text(sim: &watermark_engine::Sim) -> String {
    let mut out = sim.transcript().join("\n");
    let snapshot = serde_json::to_value(sim.snapshot()).expect("snapshot serializes");
    out.push_str("\nfinal snapshot:\n");
    readable_json(&snapshot, 0, &mut out);
    out.push('\n');
    out
}

/// Widest value written on one line.
const LINE: usize = 100;

/// JSON one member a line, except that a value whose compact form is at most [`LINE`]
/// characters stays on one line (a record, a message, a list of ids): short enough to
/// read, and a changed field changes one line. Keys are in serde_json's order (sorted).
pub fn readable_json(v: &serde_json::Value, indent: usize, out: &mut String) {
    use serde_json::Value;
    let compact = v.to_string();
    if compact.len() <= LINE {
        out.push_str(&compact);
        return;
    }
    let pad = "  ".repeat(indent + 1);
    match v {
        Value::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                out.push_str(if k == 0 { "\n" } else { ",\n" });
                out.push_str(&pad);
                readable_json(item, indent + 1, out);
            }
            out.push('\n');
            out.push_str(&"  ".repeat(indent));
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (k, (key, value)) in members.iter().enumerate() {
                out.push_str(if k == 0 { "\n" } else { ",\n" });
                out.push_str(&pad);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                readable_json(value, indent + 1, out);
            }
            out.push('\n');
            out.push_str(&"  ".repeat(indent));
            out.push('}');
        }
        // A long string or number stays whole.
        _ => out.push_str(&compact),
    }
}
