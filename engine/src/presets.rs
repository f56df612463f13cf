//! Built-in scenarios: every lab of the reference articles, reproduced. Each is a scenario
//! file under `engine/presets/`, shared by the command-line runner and the UI.

use crate::error::{quoted, ScenarioError};
use crate::scenario::Scenario;

/// A built-in scenario: its name and its JSON text (the file's, without the white space
/// between tokens: `build.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub json: &'static str,
}

/// Every preset, in the order the articles tell them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "acks-walkthrough",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/acks-walkthrough.json")),
    },
    Preset {
        name: "fetcher-threads",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/fetcher-threads.json")),
    },
    Preset {
        name: "frozen-follower",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/frozen-follower.json")),
    },
    Preset {
        name: "min-isr-3",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/min-isr-3.json")),
    },
    Preset {
        name: "diverged-truncation",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/diverged-truncation.json"
        )),
    },
    Preset {
        name: "leader-failover",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/leader-failover.json")),
    },
    Preset {
        name: "unclean-election",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/unclean-election.json")),
    },
    Preset {
        name: "last-replica-standing",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/last-replica-standing.json"
        )),
    },
    // Historical protocol modes (docs/history.md): the same rules without a KIP.
    Preset {
        name: "last-replica-standing-no-elr",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/last-replica-standing-no-elr.json"
        )),
    },
    Preset {
        name: "pre-kip-903-stale-isr-join",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/pre-kip-903-stale-isr-join.json"
        )),
    },
    Preset {
        name: "pre-kip-320-unfenced-fetch",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/pre-kip-320-unfenced-fetch.json"
        )),
    },
    Preset {
        name: "pre-kip-101-hw-truncation",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/pre-kip-101-hw-truncation.json"
        )),
    },
    Preset {
        name: "pre-kip-101-divergence",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/pre-kip-101-divergence.json"
        )),
    },
    Preset {
        name: "kip-279-divergence",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/kip-279-divergence.json")),
    },
    // Side by side (docs/history.md): one timeline, runs that differ in acks, a config or
    // the protocol, on one clock.
    Preset {
        name: "acks-steps",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/acks-steps.json")),
    },
    Preset {
        name: "min-isr-side-by-side",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/min-isr-side-by-side.json"
        )),
    },
    Preset {
        name: "elr-side-by-side",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/elr-side-by-side.json")),
    },
    Preset {
        name: "kip-101-side-by-side",
        json: include_str!(concat!(
            env!("OUT_DIR"),
            "/presets/kip-101-side-by-side.json"
        )),
    },
    Preset {
        name: "move-replica",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/move-replica.json")),
    },
    Preset {
        name: "throttled-move",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/throttled-move.json")),
    },
    Preset {
        name: "slow-follower",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/slow-follower.json")),
    },
    Preset {
        name: "slow-broker",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/slow-broker.json")),
    },
    Preset {
        name: "rolling-restart",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/rolling-restart.json")),
    },
    Preset {
        name: "zone-outage",
        json: include_str!(concat!(env!("OUT_DIR"), "/presets/zone-outage.json")),
    },
];

/// The preset called `name`, parsed.
pub fn preset(name: &str) -> Result<Scenario, ScenarioError> {
    let p = PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        ScenarioError::new("preset", {
            // The names written in place, not collected and joined.
            let mut text = format!("no preset named {}; the presets are: ", quoted(name));
            for (i, p) in PRESETS.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                text.push_str(p.name);
            }
            text
        })
    })?;
    Scenario::from_json(p.json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_is_titled() {
        for p in PRESETS {
            let s = preset(p.name).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(!s.title.is_empty(), "{} has a title", p.name);
            assert!(!s.source.is_empty(), "{} says where it comes from", p.name);
        }
        assert!(preset("nope")
            .unwrap_err()
            .message
            .contains("frozen-follower"));
    }

    /// The text the crate carries (minified by build.rs) is the file's scenario exactly,
    /// and every file under presets/ is a preset.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn each_preset_is_its_file_without_white_space() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/presets");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).expect("presets/") {
            let path = entry.expect("entry").path();
            let name = path.file_stem().and_then(|n| n.to_str()).expect("a name");
            let file = std::fs::read_to_string(&path).expect("the file");
            let p = PRESETS.iter().find(|p| p.name == name);
            let p = p.unwrap_or_else(|| panic!("{name}.json is not in PRESETS"));
            assert!(p.json.len() < file.len(), "{name}: minified");
            assert!(!p.json.contains('\n'), "{name}: one line");
            let (a, b) = (Scenario::from_json(p.json), Scenario::from_json(&file));
            assert_eq!(a.expect("carried"), b.expect("file"), "{name}");
            files += 1;
        }
        assert_eq!(files, PRESETS.len());
    }
}
