#!/usr/bin/env node
// Frame time of the playground under load, in headless Chromium. Not part of scripts/test:
// speed is measured, never asserted. Run by hand after a release build:
//
//   trunk build --release
//   node tests/perf/frame-time.mjs [--seconds 10] [--speeds 0,1,10,100] [--records 300]
//                                  [--latency 40] [--loads 5] [--css CSS] [--wasm-top N]
//                                  [--cpu-throttle N] [--cluster] [--scroll SELECTOR]
//                                  [--beside] [--open-beside]
//
// For each speed it opens dist/ on a share link (7 brokers, RF 7, latency 40 ms, 300
// single-record produce actions spread over the measured window, ?autoplay=1), sets the
// Speed slider (speed 0 is a baseline: the same page, paused), waits a second, and then:
//   1. for --seconds, inside the page: requestAnimationFrame deltas (median, p95, p99,
//      max, and the share over 16.7 ms, allowing 10% vsync jitter); the time the app's
//      own frame callback takes, from its start to the end of the microtasks it queued
//      (Leptos runs its DOM updates there), timed with performance.now() by a wrapper
//      installed before the app loads; messages in flight (g.packet); over the same
//      window, Chromium's counters (CDP Performance.getMetrics): time in script, style
//      recalculation and layout; and the CPU time Chromium's processes used per frame
//      (/proc), which other work on the machine does not inflate as it does wall time;
//   2. for 3 s, DOM mutations per frame by where they land (a MutationObserver);
//   3. for 3 s, a CPU profile of the page (CDP Profiler), self time grouped into browser
//      work outside JS (style, layout, paint: "(program)"), DOM calls, wasm-bindgen's
//      string decoding, other JS glue, wasm, GC and idle;
//   4. for 3 s, a Chromium trace: time per frame in each step of the rendering pipeline
//      (style, layout, paint, layerize, raster, …) by thread, each thread's busy time per
//      frame, and what the main thread's tasks ran.
// It also prints the app callback of the frames that came late beside all frames', and with
// --wasm-top N the N wasm functions with the most inclusive and self time in the profile
// (this needs a wasm that kept its name section: docs/ui.md, "Profiling").
// Then, over --loads fresh loads: time to first render (navigation start → the element
// [data-wasm="ready"] attached, seen by a MutationObserver) beside the navigation timing;
// and the sizes of dist/'s wasm and JS, raw and gzip -9.

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { constants, gzipSync } from "node:zlib";
import { APP_READY, CHROMIUM_PATH, DIST_DIR, launchBrowser, newWatchedPage, serveStatic } from "../lib/harness.mjs";
import { shareHash } from "../lib/ui.mjs";

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const SECONDS = Number(option("seconds", 10));
const SPEEDS = option("speeds", "0,1,10,100").split(",").map(Number);
const RECORDS = Number(option("records", 300));
const LOADS = Number(option("loads", 5));
// sim.network.latency.ms of the load: longer latencies keep more messages in flight
// (e.g. --latency 300 --records 900 keeps two to three dozen in flight at 1×).
const LATENCY = Number(option("latency", 40));
// For finding where the time goes: a stylesheet added to the page before measuring, e.g.
// --css "ol.log{display:none}" shows what the event log's layout and paint cost.
const CSS = option("css", "");
// A part of the page scrolled into view before measuring, e.g. --scroll section.readouts:
// what a frame costs while a reader watches the read-outs (by default the page is at its top).
const SCROLL = option("scroll", "");
// With N > 0, the N wasm functions with the most inclusive time in the CPU profile. Needs a
// wasm with its name section, which the release build drops; see docs/ui.md "Profiling".
const WASM_TOP = Number(option("wasm-top", 0));
// With N > 1, Chromium runs the page's main thread N times slower (CDP
// Emulation.setCPUThrottlingRate): a stand-in for a slower machine, which shows differences
// that a fast one absorbs in its idle time. Raster and compositor threads are not slowed.
const THROTTLE = Number(option("cpu-throttle", 1));
// --cluster: issue 14's cluster instead (12 brokers in racks z0..z2, 10 topics of 10
// partitions at RF 3, min.insync.replicas 2, the RECORDS produce actions round-robin over
// the partitions): the cluster overview drawn above the lanes of one partition.
const CLUSTER = process.argv.includes("--cluster");
// --beside: the load's scenario with two runs beside it (`compare`: acks=1 and acks=0,
// web/src/beside.rs): three simulations and three cluster views on one clock.
const BESIDE = process.argv.includes("--beside");
// --open-beside (with --beside): each run beside's event log and read-outs open (their
// <details>), so they are rebuilt at each of the run's events.
const OPEN_BESIDE = process.argv.includes("--open-beside");
/** A frame counts as late when it took over 16.7 ms by more than vsync jitter (10%). */
const LATE_MS = 16.7 * 1.1;

/** Speed → the Speed slider's position (0..1000 ↔ 0.1×..100×, log scale; web/src/geometry.rs). */
const sliderPosition = (speed) => Math.round((Math.log10(speed / 0.1) / 3) * 1000);

/**
 * The load: 7 brokers, RF 7, latency LATENCY ms, and RECORDS single-record produce actions
 * (acks=all and acks=1 in turn) spread evenly over the simulated time the measurements
 * cover at `speed`, so records keep arriving and fetches keep flying throughout.
 */
function scenarioFor(speed) {
  const s = loadFor(speed);
  if (BESIDE) {
    s.compare = [{ acks: "1" }, { acks: "0" }];
    s.title += ", beside acks=1 and acks=0";
  }
  return s;
}

function loadFor(speed) {
  const span = Math.max(1, speed) * (SECONDS + 8) * 1000;
  const step = Math.max(1, Math.floor(span / RECORDS));
  if (CLUSTER) {
    const racks = {};
    for (let b = 1; b <= 12; b++) racks[String(b)] = `z${b % 3}`;
    return {
      version: 2,
      title: `Frame-time load: 12 brokers, 100 partitions at RF 3, ${RECORDS} records, latency ${LATENCY} ms`,
      brokers: 12,
      racks,
      topics: Array.from({ length: 10 }, (_, t) => ({
        name: `t${t}`,
        partitions: 10,
        replication_factor: 3,
        configs: { "min.insync.replicas": 2 },
      })),
      config: { "sim.network.latency.ms": LATENCY, "sim.controller.latency.ms": LATENCY },
      timeline: Array.from({ length: RECORDS }, (_, i) => ({
        at: i * step,
        action: "produce",
        acks: i % 2 === 0 ? "all" : "1",
        values: [`r${i}`],
        topic: `t${Math.floor(i / 10) % 10}`,
        partition: i % 10,
      })),
      end_ms: span + 60_000,
    };
  }
  return {
    version: 1,
    title: `Frame-time load: 7 brokers, RF 7, ${RECORDS} records, latency ${LATENCY} ms`,
    brokers: 7,
    replication_factor: 7,
    config: { "min.insync.replicas": 2, "sim.network.latency.ms": LATENCY, "sim.controller.latency.ms": LATENCY },
    timeline: Array.from({ length: RECORDS }, (_, i) => ({
      at: i * step,
      action: "produce",
      acks: i % 2 === 0 ? "all" : "1",
      values: [`r${i}`],
    })),
    end_ms: span + 60_000,
  };
}

// Installed before the page's scripts: times each animation-frame callback the app
// registers (to the end of the microtasks it queues), and notes when the app is ready.
function instrument() {
  const raf = window.requestAnimationFrame.bind(window);
  window.__wm = { ready: null, recording: false, callbacks: [], raf };
  window.requestAnimationFrame = (cb) =>
    raf((ts) => {
      const t0 = performance.now();
      try {
        cb(ts);
      } finally {
        if (window.__wm.recording) {
          // Leptos' effects run as microtasks after the callback; a chain of microtasks
          // queued now ends after them.
          let p = Promise.resolve();
          for (let i = 0; i < 8; i++) p = p.then(() => {});
          p.then(() => window.__wm.callbacks.push([ts, performance.now() - t0]));
        }
      }
    });
  const seen = () => {
    if (window.__wm.ready === null && document.querySelector('[data-wasm="ready"]')) {
      window.__wm.ready = performance.now();
      return true;
    }
    return false;
  };
  new MutationObserver((_, obs) => seen() && obs.disconnect()).observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ["data-wasm"],
  });
}

// In the page: frame deltas, app callback times and messages in flight for `ms`.
function sampleFrames(ms) {
  const raf = window.__wm.raf;
  return new Promise((resolve) => {
    const deltas = [];
    const stamps = [];
    const packets = [];
    window.__wm.callbacks = [];
    window.__wm.recording = true;
    let last = null;
    const start = performance.now();
    const frame = (ts) => {
      if (last !== null) deltas.push(ts - last), stamps.push(last);
      last = ts;
      packets.push(document.querySelectorAll(".cluster g.packet").length);
      if (ts - start < ms) {
        raf(frame);
      } else {
        window.__wm.recording = false;
        resolve({ deltas, stamps, packets, callbacks: window.__wm.callbacks });
      }
    };
    raf(frame);
  });
}

// In the page: DOM mutations per frame for `ms`, by the part of the page they land in.
function countMutations(ms) {
  const raf = window.__wm.raf;
  const parts = [
    ["cluster: log cells", ".cluster g.cell"],
    ["cluster: messages", ".cluster g.packet"],
    ["cluster: lanes", ".cluster g.lane"],
    ["cluster: other", ".cluster"],
    ["time bar", ".timebar"],
    ["waiting requests", "ul.waiting"],
    ["fault buttons", ".broker-actions"],
    ["event log", "ol.log"],
    ["read-outs", "section.readouts"],
    ["settings and actions", "aside.side"],
  ];
  // A removed node is detached by the time the observer runs: it is placed by its own
  // class, or else by the parent it was removed from.
  const where = (node, parent) => {
    const el = node.nodeType === 1 ? node : node.parentElement;
    if (el) for (const [name, selector] of parts) if (el.isConnected ? el.closest(selector) : el.matches(selector.split(" ").pop())) return name;
    return parent ? where(parent) : "other";
  };
  return new Promise((resolve) => {
    const tally = {};
    let frames = 0;
    const observer = new MutationObserver((records) => {
      for (const m of records) {
        // For a childList change the target is the parent, so attribute it by the nodes.
        const node = m.type === "childList" ? (m.addedNodes[0] ?? m.removedNodes[0] ?? m.target) : m.target;
        const key = `${where(node, m.target)}|${m.type === "childList" ? "nodes added or removed" : m.type === "attributes" ? "attributes set" : "text changed"}`;
        tally[key] = (tally[key] ?? 0) + (m.type === "childList" ? m.addedNodes.length + m.removedNodes.length : 1);
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    const start = performance.now();
    const frame = (ts) => {
      frames++;
      if (ts - start < ms) raf(frame);
      else {
        observer.disconnect();
        resolve({ tally, frames });
      }
    };
    raf(frame);
  });
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const median = (xs) => quantile(xs, 0.5);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ms = (x) => `${x.toFixed(1)} ms`;
const pct = (x) => `${(100 * x).toFixed(0)}%`;

async function cdpMetrics(cdp) {
  const { metrics } = await cdp.send("Performance.getMetrics");
  return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
}

// CPU time (user + system, ms) that Chromium's processes have used so far: the browser that
// this script started (a child of this Node process) and all its descendants, split into
// renderers and the rest (browser, GPU/viz compositor, utilities). Unlike wall-clock
// durations, CPU time does not grow when other work on the machine takes the cores.
const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
function chromiumCpu() {
  const procs = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        return { pid: Number(pid), ppid: Number(fields[1]), cpu: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK, cmdline };
      } catch {
        return null;
      }
    })
    .filter(Boolean);
  const mine = new Set(procs.filter((p) => p.ppid === process.pid && p.cmdline.includes("chrom")).map((p) => p.pid));
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) if (!mine.has(p.pid) && mine.has(p.ppid)) mine.add(p.pid), (grew = true);
  }
  let renderer = 0;
  let other = 0;
  for (const p of procs) {
    if (!mine.has(p.pid)) continue;
    if (p.cmdline.includes("--type=renderer")) renderer += p.cpu;
    else other += p.cpu;
  }
  return { renderer, other };
}

function clockSeconds(text) {
  const m = /t = (\d+):(\d\d)\.(\d\d\d)/.exec(text ?? "");
  return m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) / 1000 : NaN;
}

/** Self time of a CPU profile, grouped; values are shares of the profiled wall time. */
function profileGroups(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const DOM = /^(setAttribute|removeAttribute|remove|insertBefore|appendChild|createElementNS|createElement|createTextNode|replaceWith|before|after|set (nodeValue|data|textContent|value|checked|disabled|max))$/;
  const groups = {};
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const { functionName: f, url } = byId.get(profile.samples[i]).callFrame;
    const dt = profile.timeDeltas[i];
    total += dt;
    let g;
    if (f === "(idle)") g = "idle";
    else if (f === "(program)") g = "browser outside JS (style, layout, paint, …)";
    else if (f === "(garbage collector)") g = "garbage collector";
    else if (url.endsWith(".wasm")) g = "wasm (engine, snapshot, Leptos)";
    else if (/^(decode|decodeText|getStringFromWasm0|encode|passStringToWasm0)$/.test(f)) g = "strings between wasm and JS";
    else if (DOM.test(f) || /^__wbg_(set|remove|insert|create|append)/.test(f)) g = "DOM calls";
    else if (url.endsWith(".js")) g = "other JS glue";
    else g = `other: ${f}`;
    groups[g] = (groups[g] ?? 0) + dt;
  }
  return Object.entries(groups)
    .map(([k, v]) => [k, v / total])
    .sort((a, b) => b[1] - a[1]);
}

/**
 * Inclusive time of wasm functions in a CPU profile (each function counted once per sample,
 * however often it recurs on the stack), as shares of the profiled wall time, largest first.
 */
function wasmInclusive(profile, top) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const totals = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i];
    total += dt;
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const { functionName: f, url } = byId.get(id).callFrame;
      if (!url.endsWith(".wasm") || seen.has(f)) continue;
      seen.add(f);
      totals.set(f, (totals.get(f) ?? 0) + dt);
    }
  }
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const { functionName: f, url } = byId.get(profile.samples[i]).callFrame;
    const k = url.endsWith(".wasm") ? f : `${f || "(anonymous)"} [${url.split("/").pop() || "native"}]`;
    self.set(k, (self.get(k) ?? 0) + profile.timeDeltas[i]);
  }
  const share = (m) => [...m.entries()].map(([k, v]) => [k, v / total]).sort((a, b) => b[1] - a[1]).slice(0, top);
  return { inclusive: share(totals), self: share(self) };
}

/**
 * A Chromium trace of `ms`: time per frame in the rendering pipeline's steps (style, layout,
 * paint recording, raster, …), by the thread they ran on. Nested events of the same name
 * are counted once (only the outermost).
 */
async function tracePipeline(cdp, ms) {
  const events = [];
  cdp.on("Tracing.dataCollected", ({ value }) => events.push(...value));
  const done = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
  await cdp.send("Tracing.start", {
    transferMode: "ReportEvents",
    traceConfig: { includedCategories: ["toplevel", "devtools.timeline", "disabled-by-default-devtools.timeline", "cc", "blink", "viz"] },
  });
  await new Promise((r) => setTimeout(r, ms));
  await cdp.send("Tracing.end");
  await done;
  const threads = new Map();
  for (const e of events) if (e.ph === "M" && e.name === "thread_name") threads.set(`${e.pid}:${e.tid}`, e.args.name);
  const wanted = new Set(["UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit", "RasterTask", "PaintArtifactCompositor::Update", "UpdateLayer", "HitTest", "ProxyMain::BeginMainFrame", "FunctionCall", "FireAnimationFrame", "ParseHTML", "GPUTask", "ScheduledTask"]);
  const totals = new Map();
  const open = new Map();
  for (const e of events.sort((a, b) => a.ts - b.ts)) {
    if (!wanted.has(e.name)) continue;
    const thread = (threads.get(`${e.pid}:${e.tid}`) ?? "other").replace(/\d+$/, "");
    const key = `${thread}: ${e.name}`;
    const stackKey = `${e.pid}:${e.tid}:${e.name}`;
    if (e.ph === "X") {
      const until = open.get(stackKey) ?? 0;
      if (e.ts >= until) {
        totals.set(key, (totals.get(key) ?? 0) + (e.dur ?? 0));
        open.set(stackKey, e.ts + (e.dur ?? 0));
      }
    } else if (e.ph === "B") {
      if (!open.has(`B${stackKey}`)) open.set(`B${stackKey}`, e.ts);
    } else if (e.ph === "E") {
      const begin = open.get(`B${stackKey}`);
      if (begin !== undefined) {
        totals.set(key, (totals.get(key) ?? 0) + (e.ts - begin));
        open.delete(`B${stackKey}`);
      }
    }
  }
  // Busy time per thread (outermost tasks), and on the renderer's main thread the tasks'
  // direct children by name: what keeps each thread busy, frame or not.
  const busy = new Map();
  const mainChildren = new Map();
  const byThread = new Map();
  for (const e of events) {
    if (e.ph !== "X" || e.dur === undefined) continue;
    const t = `${e.pid}:${e.tid}`;
    if (!byThread.has(t)) byThread.set(t, []);
    byThread.get(t).push(e);
  }
  for (const [t, list] of byThread) {
    const thread = (threads.get(t) ?? "other").replace(/\d+$/, "");
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const stack = [];
    for (const e of list) {
      while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) stack.pop();
      if (stack.length === 0) busy.set(thread, (busy.get(thread) ?? 0) + e.dur);
      else if (stack.length === 1 && thread === "CrRendererMain") mainChildren.set(e.name, (mainChildren.get(e.name) ?? 0) + e.dur);
      stack.push(e);
    }
  }
  // A main-thread frame is one BeginMainFrame (style, layout, paint and commit of one frame).
  const frames = events.filter((e) => e.name === "ProxyMain::BeginMainFrame" && (e.ph === "X" || e.ph === "B")).length;
  // How much there was to lay out and restyle: counts from the trace's Layout and
  // UpdateLayoutTree events, which the machine's load does not change as it changes times.
  let dirtyObjects = 0;
  let layoutObjects = 0;
  let styledElements = 0;
  for (const e of events) {
    const begin = e.args?.beginData;
    if (e.name === "Layout" && begin) {
      dirtyObjects += begin.dirtyObjects ?? 0;
      layoutObjects += begin.totalObjects ?? 0;
    }
    if (e.name === "UpdateLayoutTree") styledElements += e.args?.elementCount ?? e.args?.endData?.elementCount ?? 0;
  }
  return {
    counts: { dirtyObjects, layoutObjects, styledElements },
    frames: Math.max(1, frames),
    steps: [...totals.entries()].map(([k, us]) => [k, us / 1000]).sort((a, b) => b[1] - a[1]),
    busy: [...busy.entries()].map(([k, us]) => [k, us / 1000]).sort((a, b) => b[1] - a[1]),
    mainTasks: [...mainChildren.entries()].map(([k, us]) => [k, us / 1000]).sort((a, b) => b[1] - a[1]),
  };
}

async function measureSpeed(context, url, speed) {
  const { page, problems } = await newWatchedPage(context);
  await page.addInitScript(instrument);
  const paused = speed === 0;
  await page.goto(`${url}?autoplay=1${shareHash(scenarioFor(paused ? 1 : speed))}`, { waitUntil: "load" });
  await page.locator(APP_READY).waitFor({ state: "attached", timeout: 30_000 });
  const clock = page.getByLabel("Simulated time", { exact: true });
  if (CSS) await page.addStyleTag({ content: CSS });
  if (OPEN_BESIDE) {
    for (const summary of await page.locator("section.beside details > summary").all()) await summary.click();
  }
  if (SCROLL) await page.locator(SCROLL).first().evaluate((el) => el.scrollIntoView({ block: "start" }));
  if (paused) {
    await page.waitForTimeout(2000);
    await page.getByRole("button", { name: "Pause", exact: true }).click();
  } else {
    await page.getByRole("slider", { name: "Speed", exact: true }).fill(String(sliderPosition(speed)));
  }
  await page.waitForTimeout(1000);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  if (THROTTLE > 1) {
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: THROTTLE });
    await page.waitForTimeout(500);
  }
  const t0 = clockSeconds(await clock.textContent());
  const before = await cdpMetrics(cdp);
  const cpuBefore = chromiumCpu();
  const sample = await page.evaluate(sampleFrames, SECONDS * 1000);
  const cpuAfter = chromiumCpu();
  const after = await cdpMetrics(cdp);
  const t1 = clockSeconds(await clock.textContent());
  const mutations = await page.evaluate(countMutations, 3000);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 250 });
  await cdp.send("Profiler.start");
  await page.waitForTimeout(3000);
  const { profile } = await cdp.send("Profiler.stop");
  const pipeline = await tracePipeline(cdp, 3000);
  const speedShown = paused ? "paused" : await page.locator(".speed output").textContent();
  await cdp.detach();
  await page.close();
  if (problems.length) throw new Error(`the page reported problems:\n  ${problems.join("\n  ")}`);
  const perSecond = (k) => (after[k] - before[k]) / SECONDS;
  const { deltas, stamps, packets } = sample;
  const callbacks = sample.callbacks.map(([, d]) => d);
  // The app's callback in the frame that began each late interval, beside all of them.
  const callbackAt = new Map(sample.callbacks);
  const lateCallbacks = deltas.flatMap((d, i) => (d > LATE_MS && callbackAt.has(stamps[i]) ? [callbackAt.get(stamps[i])] : []));
  return {
    lateCallbackMedian: lateCallbacks.length ? median(lateCallbacks) : NaN,
    lateCallbackP95: lateCallbacks.length ? quantile(lateCallbacks, 0.95) : NaN,
    speed: speedShown,
    fps: deltas.length / SECONDS,
    median: median(deltas),
    p95: quantile(deltas, 0.95),
    p99: quantile(deltas, 0.99),
    max: Math.max(...deltas),
    over16: deltas.filter((x) => x > LATE_MS).length / deltas.length,
    callbackMedian: callbacks.length ? median(callbacks) : 0,
    callbackP95: callbacks.length ? quantile(callbacks, 0.95) : 0,
    rendererCpuPerFrame: (cpuAfter.renderer - cpuBefore.renderer) / deltas.length,
    otherCpuPerFrame: (cpuAfter.other - cpuBefore.other) / deltas.length,
    cpuShare: (cpuAfter.renderer - cpuBefore.renderer + cpuAfter.other - cpuBefore.other) / (SECONDS * 1000),
    script: perSecond("ScriptDuration"),
    style: perSecond("RecalcStyleDuration"),
    layout: perSecond("LayoutDuration"),
    task: perSecond("TaskDuration"),
    nodes: after.Nodes,
    packetsMean: mean(packets),
    packetsMax: Math.max(...packets),
    simulated: t1 - t0,
    mutations,
    profile: profileGroups(profile),
    wasmTop: WASM_TOP > 0 ? wasmInclusive(profile, WASM_TOP) : { inclusive: [], self: [] },
    pipeline,
  };
}

async function measureLoad(context, url) {
  const { page, problems } = await newWatchedPage(context);
  await page.addInitScript(instrument);
  await page.goto(url, { waitUntil: "load" });
  await page.locator(APP_READY).waitFor({ state: "attached", timeout: 30_000 });
  const t = await page.evaluate(async () => {
    const nav = performance.getEntriesByType("navigation")[0];
    // The paint entry can come after the app mounted: wait for it (up to 5 s).
    const fcp = await new Promise((resolve) => {
      new PerformanceObserver((list, observer) => {
        const entry = list.getEntriesByName("first-contentful-paint")[0];
        if (entry) {
          observer.disconnect();
          resolve(entry.startTime);
        }
      }).observe({ type: "paint", buffered: true });
      setTimeout(() => resolve(NaN), 5000);
    });
    return {
      ready: window.__wm.ready,
      responseEnd: nav.responseEnd,
      domContentLoaded: nav.domContentLoadedEventEnd,
      load: nav.loadEventEnd,
      fcp,
    };
  });
  await page.close();
  if (problems.length) throw new Error(`the page reported problems:\n  ${problems.join("\n  ")}`);
  return t;
}

function sizes() {
  return readdirSync(DIST_DIR)
    .filter((f) => /\.(wasm|js)$/.test(f))
    .sort()
    .map((f) => {
      const bytes = readFileSync(join(DIST_DIR, f));
      return { file: f, raw: bytes.length, gzip: gzipSync(bytes, { level: constants.Z_BEST_COMPRESSION }).length };
    });
}

const server = await serveStatic();
const context = await launchBrowser();
try {
  const chromium = execFileSync(CHROMIUM_PATH, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model.trim()}); ${chromium}, headless, --disable-gpu; window 1024×640`);
  console.log(
    CLUSTER
      ? `load: 12 brokers in 3 racks, 100 partitions at RF 3, latency ${LATENCY} ms, ${RECORDS} single-record produce actions over each window; ${SECONDS} s per speed`
      : `load: 7 brokers, RF 7, latency ${LATENCY} ms, ${RECORDS} single-record produce actions over each window; ${SECONDS} s per speed`,
  );
  if (CSS) console.log(`extra stylesheet: ${CSS}`);
  if (THROTTLE > 1) console.log(`main thread slowed ${THROTTLE}× (CDP Emulation.setCPUThrottlingRate)`);
  console.log(`load average before: ${loadavg().map((x) => x.toFixed(1)).join(" ")}\n`);

  const results = [];
  for (const speed of SPEEDS) results.push(await measureSpeed(context, server.url, speed));
  const loadAfter = loadavg();

  console.log("| speed | frames/s | frame median | p95 | p99 | max | frames > 16.7 ms (late) | app frame callback median / p95 | script / style / layout (share of wall time) | CPU per frame: renderer + rest of Chromium | Chromium CPU (of 2 cores) | in flight mean / max | simulated |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    console.log(
      `| ${r.speed} | ${r.fps.toFixed(0)} | ${ms(r.median)} | ${ms(r.p95)} | ${ms(r.p99)} | ${ms(r.max)} | ${pct(r.over16)} | ${ms(r.callbackMedian)} / ${ms(r.callbackP95)} | ${pct(r.script)} / ${pct(r.style)} / ${pct(r.layout)} | ${ms(r.rendererCpuPerFrame)} + ${ms(r.otherCpuPerFrame)} | ${pct(r.cpuShare / 2)} | ${r.packetsMean.toFixed(1)} / ${r.packetsMax} | ${r.simulated.toFixed(1)} s |`,
    );
  }
  console.log(`load average after: ${loadAfter.map((x) => x.toFixed(1)).join(" ")}`);

  console.log("\nthe app's frame callback in the frames that came late (median / p95), against all frames:");
  for (const r of results) {
    console.log(`  ${r.speed}: ${Number.isNaN(r.lateCallbackMedian) ? "no late frames" : `${ms(r.lateCallbackMedian)} / ${ms(r.lateCallbackP95)}`}, all ${ms(r.callbackMedian)} / ${ms(r.callbackP95)}`);
  }
  console.log("\nwhere the main thread's time goes (CPU profile, 3 s, share of wall time):");
  for (const r of results) {
    console.log(`  ${r.speed}: ${r.profile.filter(([, v]) => v >= 0.005).map(([k, v]) => `${k} ${pct(v)}`).join(", ")}`);
  }
  if (WASM_TOP > 0) {
    console.log(`\nwasm functions by inclusive time (CPU profile, 3 s, share of wall time; top ${WASM_TOP}; needs a wasm with names):`);
    for (const r of results) {
      console.log(`  ${r.speed}:`);
      for (const [f, v] of r.wasmTop.inclusive) console.log(`    ${(100 * v).toFixed(1).padStart(5)}%  ${f.length > 160 ? `${f.slice(0, 160)}…` : f}`);
    }
    console.log(`\nfunctions by self time, wasm and JS (same profile; top ${WASM_TOP}):`);
    for (const r of results) {
      console.log(`  ${r.speed}:`);
      for (const [f, v] of r.wasmTop.self) console.log(`    ${(100 * v).toFixed(1).padStart(5)}%  ${f.length > 160 ? `${f.slice(0, 160)}…` : f}`);
    }
  }
  console.log("\nrendering pipeline (Chromium trace, 3 s; ms per main-thread frame, by thread: step):");
  for (const r of results) {
    const { frames, steps } = r.pipeline;
    console.log(`  ${r.speed} (${frames} frames): ${steps.filter(([, v]) => v / frames >= 0.05).map(([k, v]) => `${k} ${(v / frames).toFixed(2)}`).join("; ")}`);
    const perFrame = (list) => list.filter(([, v]) => v / frames >= 0.05).map(([k, v]) => `${k} ${(v / frames).toFixed(2)}`).join("; ");
    console.log(`    busy per frame, by thread: ${perFrame(r.pipeline.busy)}`);
    console.log(`    renderer main thread, tasks by what they run: ${perFrame(r.pipeline.mainTasks)}`);
    const c = r.pipeline.counts;
    const each = (n) => (n / frames).toFixed(0);
    console.log(`    per frame: ${each(c.dirtyObjects)} layout objects laid out (of ${each(c.layoutObjects)} in the trees laid out), ${each(c.styledElements)} elements restyled`);
  }
  console.log("\nDOM mutations per frame (3 s, MutationObserver; nodes added + removed, attributes set, texts changed):");
  for (const r of results) {
    const { tally, frames } = r.mutations;
    const top = Object.entries(tally)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([k, v]) => `${k.replace("|", ": ")} ${(v / frames).toFixed(0)}`);
    console.log(`  ${r.speed} (${frames} frames): ${top.join("; ") || "none"}`);
  }

  const loads = [];
  for (let i = 0; i < LOADS; i++) loads.push(await measureLoad(context, server.url));
  const m = (k) => ms(median(loads.map((l) => l[k])));
  console.log(`\ntime to first render, median of ${LOADS} loads from 127.0.0.1 (no cache):`);
  console.log("| response end | DOMContentLoaded | load event | first contentful paint | app mounted ([data-wasm=\"ready\"]) |");
  console.log("|---|---|---|---|---|");
  console.log(`| ${m("responseEnd")} | ${m("domContentLoaded")} | ${m("load")} | ${m("fcp")} | ${m("ready")} |`);
  console.log(`(each load, ms to mounted: ${loads.map((l) => l.ready.toFixed(0)).join(", ")})`);

  console.log("\nsizes of dist/:");
  console.log("| file | raw | gzip -9 |");
  console.log("|---|---|---|");
  const rows = sizes();
  for (const r of rows) console.log(`| ${r.file.replace(/-[0-9a-f]{16}/, "")} | ${(r.raw / 1000).toFixed(1)} kB | ${(r.gzip / 1000).toFixed(1)} kB |`);
  const total = rows.reduce((a, r) => ({ raw: a.raw + r.raw, gzip: a.gzip + r.gzip }), { raw: 0, gzip: 0 });
  console.log(`| total | ${(total.raw / 1000).toFixed(1)} kB | ${(total.gzip / 1000).toFixed(1)} kB |`);
} finally {
  await context.close();
  await server.close();
}
