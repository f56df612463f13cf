//! Built-in scenarios: every lab of the reference articles, reproduced. Each is a scenario
//! file under `engine/presets/`, shared by the command-line runner and the UI.

#[cfg(any(not(target_arch = "wasm32"), feature = "preset-json"))]
use crate::error::{quoted, ScenarioError};
use crate::scenario::Scenario;

/// A built-in scenario: its name and its JSON text (the file's, without the white space
/// between tokens: `build.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub json: &'static str,
}

/// Every preset: one per file of `presets/`, in the order the articles tell them (the
/// table is written by `build.rs` from the folder).
///
/// Native builds always carry the presets' text; a wasm build only with the `preset-json`
/// feature (the engine's own wasm tests turn it on). The playground's wasm does without it:
/// it knows each preset's name, title and digest (`web/build.rs`) and fetches the file
/// (docs/ui.md, "Presets load on demand").
#[cfg(any(not(target_arch = "wasm32"), feature = "preset-json"))]
pub const PRESETS: &[Preset] = include!(concat!(env!("OUT_DIR"), "/presets.rs"));

/// A digest of a scenario: 64-bit FNV-1a of its JSON as a share link carries it (every
/// field written, in one order), so two scenarios have the same digest exactly when they
/// are the same scenario (up to a 64-bit collision). The playground tells an unchanged
/// preset by it, and checks a fetched preset file with it.
pub fn digest(scenario: &Scenario) -> u64 {
    crate::scenario_json::scenario(scenario, false)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The preset called `name`, parsed.
#[cfg(any(not(target_arch = "wasm32"), feature = "preset-json"))]
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

#[cfg(all(test, any(not(target_arch = "wasm32"), feature = "preset-json")))]
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
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
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

    /// The same scenario has the same digest; any change to it (one action less, another
    /// title) gives another; and no two presets share one (the playground tells them apart
    /// by it).
    #[test]
    fn a_digest_names_one_scenario() {
        let a = preset("frozen-follower").unwrap();
        assert_eq!(digest(&a), digest(&preset("frozen-follower").unwrap()));
        let mut fewer = a.clone();
        fewer.timeline.pop();
        assert_ne!(digest(&fewer), digest(&a));
        let mut retitled = a.clone();
        retitled.title.push('.');
        assert_ne!(digest(&retitled), digest(&a));
        let mut all: Vec<u64> = PRESETS
            .iter()
            .map(|p| digest(&preset(p.name).unwrap()))
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), PRESETS.len());
    }

    /// The table (written by build.rs from the folder) keeps the articles' order.
    #[test]
    fn the_presets_come_in_the_articles_order() {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(
            names[..4],
            [
                "acks-walkthrough",
                "fetcher-threads",
                "frozen-follower",
                "min-isr-3"
            ]
        );
        assert_eq!(names.last(), Some(&"zone-outage"));
    }
}
