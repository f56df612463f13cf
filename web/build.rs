//! The presets as the page knows them before one is opened (`OUT_DIR/preset_catalog.rs`,
//! included by `src/session.rs`): each preset's name, title, description, source and
//! digest, read from the engine's presets by the engine itself (a build dependency, native,
//! so it carries their JSON). The page's wasm carries this table instead of the presets'
//! JSON, and fetches a preset's file when one is opened (docs/ui.md, "Presets load on
//! demand"); the digest tells an unchanged preset, and checks the file fetched.

use std::path::Path;
use std::{env, fs};

use watermark_engine::presets::{digest, preset, PRESETS};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut table = String::from("pub const CATALOG: &[PresetInfo] = &[\n");
    for p in PRESETS {
        let s = preset(p.name).unwrap_or_else(|e| panic!("the preset {}: {e}", p.name));
        // Debug writes a string as a Rust literal, escapes included.
        table.push_str(&format!(
            "    PresetInfo {{ name: {:?}, title: {:?}, description: {:?}, source: {:?}, digest: {:#018x} }},\n",
            p.name,
            s.title,
            s.description,
            s.source,
            digest(&s)
        ));
    }
    table.push_str("];\n");
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    fs::write(Path::new(&out).join("preset_catalog.rs"), table).expect("the preset catalog");
}
