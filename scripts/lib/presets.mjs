// The presets as files of the built site: `presets/NAME.json` beside index.html, one for each
// engine/presets/NAME.json, without the white space between JSON tokens, as engine/build.rs
// writes the text the native engine carries. The page's wasm carries each preset's name,
// title and digest, not its JSON, and fetches the file when the preset is opened (docs/ui.md,
// "Presets load on demand"); it opens a file only if it is exactly the preset it was built
// with (the digest), so a file that differs fails loudly, never quietly.
//
// Run by the post-build hook (scripts/lib/post-build.mjs) in every profile. The build stops
// if a file cannot be written, or if the page's wasm does not name a preset whose file it
// writes (a wasm built from other presets).

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** engine/presets, the presets' source files. */
export const PRESETS_DIR = fileURLToPath(new URL("../../engine/presets/", import.meta.url));

/** `json` without the white space outside its strings (engine/build.rs, `minify`). */
export function minify(json) {
  let out = "";
  let inString = false;
  let escaped = false;
  for (const c of json) {
    if (inString) {
      out += c;
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (!/^[ \t\n\r\f]$/.test(c)) {
      out += c;
    }
  }
  return out;
}

/** The presets' names, from engine/presets/*.json. */
export function presetNames() {
  return readdirSync(PRESETS_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

/**
 * Writes `site/presets/NAME.json` for every preset, and checks that `wasm` (the page's
 * wasm bytes) names each one. Returns the names written and their sizes in bytes.
 */
export function writePresets(site, wasm) {
  const dir = join(site, "presets");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const written = [];
  for (const name of presetNames()) {
    const text = minify(readFileSync(join(PRESETS_DIR, `${name}.json`), "utf8"));
    if (wasm && !wasm.includes(Buffer.from(name))) {
      throw new Error(`the page's wasm does not name the preset ${name} (engine/presets/${name}.json)`);
    }
    writeFileSync(join(dir, `${name}.json`), text);
    written.push({ name, bytes: Buffer.byteLength(text) });
  }
  if (written.length === 0) throw new Error(`no presets in ${PRESETS_DIR}`);
  return written;
}
