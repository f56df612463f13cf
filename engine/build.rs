//! The presets (`presets/*.json`, written to be read: indented, one field a line) go into
//! the crate without the white space between JSON tokens, so that the playground's wasm
//! carries a fifth less of their text (BENCHMARKS.md, "Issue 14's fifth session": about
//! 1 kB of the shipped gzip). Strings are copied as they are, escapes included, so each
//! preset parses to exactly the scenario its file holds (`presets::tests`).

use std::path::Path;
use std::{env, fs};

fn main() {
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("presets");
    fs::create_dir_all(&out).expect("OUT_DIR/presets");
    println!("cargo:rerun-if-changed=presets");
    let mut files: Vec<_> = fs::read_dir("presets")
        .expect("engine/presets")
        .map(|e| e.expect("a presets entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path).expect("a preset's text");
        let name = path.file_name().expect("a file name");
        fs::write(out.join(name), minify(&text)).expect("the minified preset");
    }
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
