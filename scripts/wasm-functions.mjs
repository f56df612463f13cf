#!/usr/bin/env node
// Function body sizes of a wasm file that keeps its name section, summed by crate and
// listed largest first. twiggy 0.7 cannot read wasm-bindgen's output ("should not parse
// the same key into multiple items"), so this reads the code and name sections itself.
//
// Usage (BENCHMARKS.md, "Shipped size"):
//   cargo build -p watermark-web --release --target wasm32-unknown-unknown
//   wasm-bindgen --target web --no-typescript --out-dir /tmp/wb --out-name watermark-web \
//     target/wasm32-unknown-unknown/release/watermark-web.wasm
//   wasm-opt -Oz -g /tmp/wb/watermark-web_bg.wasm -o /tmp/named.wasm
//   node scripts/wasm-functions.mjs /tmp/named.wasm [N]

import { readFileSync } from "node:fs";

const [file, n = "40"] = process.argv.slice(2);
const b = readFileSync(file);
let i = 8;
const leb = () => {
  let r = 0, s = 0, x;
  do { x = b[i++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80);
  return r;
};
const name = () => { const l = leb(); const t = b.toString("utf8", i, i + l); i += l; return t; };
let imported = 0;
const bodies = [], names = new Map(), sections = {};
while (i < b.length) {
  const id = b[i++];
  const size = leb();
  const end = i + size;
  if (id === 2) {
    for (let k = leb(); k > 0; k--) {
      name(); name();
      const kind = b[i++];
      if (kind === 0) { leb(); imported++; }
      else if (kind === 1) { i++; const f = b[i++]; leb(); if (f & 1) leb(); }
      else if (kind === 2) { const f = b[i++]; leb(); if (f & 1) leb(); }
      else i += 2;
    }
  } else if (id === 10) {
    for (let k = leb(); k > 0; k--) { const start = i; const l = leb(); i += l; bodies.push(i - start); }
  } else if (id === 0 && name() === "name") {
    while (i < end) {
      const sub = b[i++];
      const len = leb();
      const subEnd = i + len;
      if (sub === 1) for (let k = leb(); k > 0; k--) { const idx = leb(); names.set(idx, name()); }
      i = subEnd;
    }
  }
  sections[id] = (sections[id] ?? 0) + size;
  i = end;
}
const fns = bodies.map((size, k) => [size, names.get(k + imported) ?? `func${k + imported}`]).sort((a, c) => c[0] - a[0]);
const byCrate = new Map();
for (const [size, fn] of fns) {
  const crate = fn.match(/^[<&\s]*(?:mut\s+|dyn\s+)?([A-Za-z_][A-Za-z0-9_]*)/)?.[1] ?? fn;
  byCrate.set(crate, (byCrate.get(crate) ?? 0) + size);
}
console.log(`code section ${sections[10]} bytes, ${bodies.length} functions; data section ${sections[11] ?? 0} bytes`);
for (const [crate, size] of [...byCrate].sort((a, c) => c[1] - a[1]).slice(0, 20)) console.log(`${String(size).padStart(8)}  ${crate}`);
console.log("");
for (const [size, fn] of fns.slice(0, Number(n))) console.log(`${String(size).padStart(8)}  ${fn}`);
