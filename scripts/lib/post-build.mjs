#!/usr/bin/env node
// Trunk's post_build hook (Trunk.toml) for release builds: optimizes the wasm with wasm-opt
// -Oz (index.html turns Trunk's own wasm-opt off, so it runs once, here), shortening the
// names of its imports and exports as it does so, writes the short names into the
// wasm-bindgen JavaScript glue, minifies the glue with terser, and writes both files' new
// digests into index.html's integrity attributes, which Trunk computed before this hook ran.
//
// Why: wasm-bindgen names each import `__wbg_<name>_<16 hex digits>` and the glue repeats
// every name; the hex digits do not compress, and the glue is written unminified (Trunk's
// --minify cannot parse it: minify-js fails on `export default`). Short names and a
// minified glue took 6.1 kB off the shipped gzip (BENCHMARKS.md, "Shipped size").
//
// The rewrite is checked, not hoped for: each import's name must appear exactly once in the
// glue (as the key of its function), no wasm-bindgen name may be left after it, and every
// export the glue reads must have a new name. Anything else stops the build with a message.
//
// In every profile, first: the presets' files, `presets/NAME.json`, which the page fetches
// when a preset is opened (scripts/lib/presets.mjs).
//
// Environment (set by Trunk): TRUNK_PROFILE, TRUNK_STAGING_DIR. Debug builds are left as
// they are. WATERMARK_WASM_NAMES=1 (for profiling, docs/ui.md "Profiling") keeps the
// function names and wasm-bindgen's names and glue: `wasm-opt -Oz -g`, nothing renamed.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writePresets } from "./presets.mjs";

const fail = (message) => {
  console.error(`post-build: ${message}`);
  process.exit(1);
};

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) fail("TRUNK_STAGING_DIR is not set (this runs as Trunk's post_build hook)");

// Every profile: the presets' files, which the page fetches (scripts/lib/presets.mjs).
{
  const wasm = readdirSync(staging).filter((f) => /^watermark-web-[0-9a-f]+_bg\.wasm$/.test(f));
  if (wasm.length !== 1) fail(`expected one watermark-web-HASH_bg.wasm in ${staging}, found ${wasm.length}`);
  try {
    const written = writePresets(staging, readFileSync(join(staging, wasm[0])));
    console.log(`post-build: ${written.length} presets written to presets/`);
  } catch (e) {
    fail(e.message);
  }
}
if (process.env.TRUNK_PROFILE !== "release") process.exit(0);

// terser and binaryen's wasm-opt are installed in tests/ (tests/package.json pins both).
const tests = new URL("../../tests/", import.meta.url);
const { minify } = createRequire(new URL("package.json", tests))("terser");
const wasmOpt = fileURLToPath(new URL("node_modules/.bin/wasm-opt", tests));

const one = (pattern, what) => {
  const found = readdirSync(staging).filter((f) => pattern.test(f));
  if (found.length !== 1) fail(`expected one ${what} in ${staging}, found ${found.length}`);
  return join(staging, found[0]);
};
const jsFile = one(/^watermark-web-[0-9a-f]+\.js$/, "watermark-web-HASH.js");
const wasmFile = one(/^watermark-web-[0-9a-f]+_bg\.wasm$/, "watermark-web-HASH_bg.wasm");
const digest = (bytes) => "sha384-" + createHash("sha384").update(bytes).digest("base64");

const wasmBefore = readFileSync(wasmFile);
const jsBefore = readFileSync(jsFile, "utf8");

const html = join(staging, "index.html");
let page = readFileSync(html, "utf8");
const redigest = (before, after, file) => {
  if (!page.includes(before)) fail(`index.html does not carry the digest of ${file}`);
  page = page.split(before).join(after);
};

if (process.env.WATERMARK_WASM_NAMES === "1") {
  execFileSync(wasmOpt, [wasmFile, "-Oz", "-g", "-o", wasmFile], { stdio: "inherit" });
  redigest(digest(wasmBefore), digest(readFileSync(wasmFile)), wasmFile);
  writeFileSync(html, page);
  console.log("post-build: WATERMARK_WASM_NAMES=1, the wasm keeps its names, the glue is as written");
  process.exit(0);
}

// wasm-opt prints the renaming as JSON: imports as [module, name, new name], exports as
// [name, new name]. Every import module becomes one short module name.
const mapping = JSON.parse(
  execFileSync(
    wasmOpt,
    // The producers and target-features sections are for tools; browsers ignore them.
    [wasmFile, "-Oz", "--minify-imports-and-exports-and-modules", "--strip-producers",
      "--strip-target-features", "-o", wasmFile],
    { encoding: "utf8", maxBuffer: 1 << 24 },
  ),
);
const wasmAfter = readFileSync(wasmFile);

const escape = (s) => s.replace(/[$]/g, "\\$");
const ident = "(?![A-Za-z0-9_$])";
let js = jsBefore;
const modules = new Set(mapping.imports.map(([module]) => module));
if (modules.size !== 1) fail(`expected the imports of one module, found ${[...modules].join(", ")}`);
const [oldModule] = modules;
const newModule = importModuleOf(wasmAfter);
const moduleKey = JSON.stringify(oldModule) + ":";
if (js.split(moduleKey).length !== 2) fail(`the glue does not name the module ${oldModule} once`);
js = js.replace(moduleKey, JSON.stringify(newModule) + ":");
for (const [, name, short] of mapping.imports) {
  const key = new RegExp(`(^|[\\s,{])${escape(name)}:`, "gm");
  const hits = js.match(key)?.length ?? 0;
  if (hits !== 1) fail(`the import ${name} is defined ${hits} times in the glue, not once`);
  js = js.replace(key, (_, before) => `${before}${JSON.stringify(short)}:`);
}
for (const [name, short] of mapping.exports) {
  js = js.replace(new RegExp(`\\bwasm\\.${escape(name)}${ident}`, "g"), `wasm[${JSON.stringify(short)}]`);
}
const left = js.match(/\bwasm\.[A-Za-z_$][A-Za-z0-9_$]*|__wbg_[A-Za-z0-9_$]*_[0-9a-f]{16}/g) ?? [];
const unknown = left.filter((n) => n !== "__wbg_get_imports");
if (unknown.length) fail(`names left unrenamed in the glue: ${[...new Set(unknown)].join(", ")}`);

// The glue is an ES module: its exports (init and the bindings index.html imports) keep
// their names; everything inside may be renamed.
const out = await minify(js, { module: true, compress: { passes: 2 }, mangle: true });
if (!out.code) fail("terser returned no code");
writeFileSync(jsFile, out.code);

redigest(digest(jsBefore), digest(out.code), jsFile);
redigest(digest(wasmBefore), digest(wasmAfter), wasmFile);
writeFileSync(html, page);
console.log(
  `post-build: wasm ${wasmBefore.length} -> ${wasmAfter.length} bytes, ` +
    `glue ${jsBefore.length} -> ${out.code.length} bytes, ${mapping.imports.length} imports renamed`,
);

/** The module name of the wasm's imports (wasm-opt gives all of them one). */
function importModuleOf(b) {
  let i = 8;
  const leb = () => {
    let r = 0, s = 0, x;
    do { x = b[i++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80);
    return r;
  };
  while (i < b.length) {
    const id = b[i++];
    const end = leb() + i;
    if (id === 2) {
      leb(); // count
      const len = leb();
      return b.toString("utf8", i, i + len);
    }
    i = end;
  }
  fail("the optimized wasm has no import section");
}
