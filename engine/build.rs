//! The presets (`presets/*.json`, written to be read: indented, one field a line) go into
//! the crate without the white space between JSON tokens (BENCHMARKS.md, "Issue 14's fifth
//! session"). Strings are copied as they are, escapes included, so each preset parses to
//! exactly the scenario its file holds (`presets::tests`).
//!
//! The table of presets (`OUT_DIR/presets.rs`, included by `src/presets.rs`) is written here
//! from the folder: adding a JSON file is all it takes to add a preset. They come in the
//! order the articles tell them (`ORDER`); a file not named there follows, by name.
//!
//! The playground's wasm does not carry this text (`src/presets.rs`: the `preset-json`
//! feature); the site serves the same minified files (`scripts/lib/presets.mjs`).

use std::path::Path;
use std::{env, fs};

/// The presets in the order the articles tell them, then the historical protocol modes and
/// the side-by-side presets (docs/history.md), then the clusters' presets. A preset's file that is not listed here
/// comes after these, in the order of the names.
const ORDER: &[&str] = &[
    "acks-walkthrough",
    "fetcher-threads",
    "frozen-follower",
    "min-isr-3",
    "diverged-truncation",
    "leader-failover",
    "unclean-election",
    "last-replica-standing",
    "last-replica-standing-no-elr",
    "pre-kip-903-stale-isr-join",
    "pre-kip-320-unfenced-fetch",
    "pre-kip-101-hw-truncation",
    "pre-kip-101-divergence",
    "kip-279-divergence",
    // Side by side (docs/history.md): one timeline, runs that differ in acks, a config, a
    // topic's own config or the protocol, on one clock.
    "acks-steps",
    "min-isr-side-by-side",
    "elr-side-by-side",
    "kip-101-side-by-side",
    "unclean-by-replica-order",
    "topic-min-isr-side-by-side",
    "move-replica",
    "throttled-move",
    "slow-follower",
    "slow-broker",
    "rolling-restart",
    "zone-outage",
];

fn main() {
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out_dir).join("presets");
    fs::create_dir_all(&out).expect("OUT_DIR/presets");
    println!("cargo:rerun-if-changed=presets");
    let mut names: Vec<String> = fs::read_dir("presets")
        .expect("engine/presets")
        .map(|e| e.expect("a presets entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|path| {
            println!("cargo:rerun-if-changed={}", path.display());
            let text = fs::read_to_string(&path).expect("a preset's text");
            let name = path.file_stem().and_then(|n| n.to_str()).expect("a name");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "presets/{name}.json: a preset's name is lower-case letters, digits and '-'"
            );
            fs::write(out.join(format!("{name}.json")), minify(&text))
                .expect("the minified preset");
            name.to_string()
        })
        .collect();
    for name in ORDER {
        assert!(
            names.iter().any(|n| n == name),
            "build.rs ORDER names {name}, but there is no presets/{name}.json"
        );
    }
    let rank = |n: &str| ORDER.iter().position(|o| *o == n).unwrap_or(ORDER.len());
    names.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    let mut table = String::from("&[\n");
    for name in &names {
        table.push_str(&format!(
            "    Preset {{ name: {name:?}, json: include_str!(concat!(env!(\"OUT_DIR\"), \"/presets/{name}.json\")) }},\n"
        ));
    }
    table.push_str("]\n");
    fs::write(Path::new(&out_dir).join("presets.rs"), table).expect("OUT_DIR/presets.rs");
}

/// `json` without the white space outside its strings.
fn minify(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_ascii_whitespace() {
            out.push(c);
        }
    }
    out
}
