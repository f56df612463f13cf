#!/usr/bin/env node
// How much main-thread work an idle playground does, in headless Chromium. Not part of
// scripts/test: measured, never asserted. Run by hand after a release build:
//
//   trunk build --release
//   node tests/perf/idle.mjs [--seconds 5] [--rounds 3]
//
// For each case it opens the page, waits 2 s for it to settle, then reads Chromium's
// TaskDuration counter (CDP Performance.getMetrics: seconds the renderer's main thread spent
// in tasks) at the start and end of --seconds, and prints the difference in ms per second,
// the median of --rounds rounds. The cases:
//   blank:       about:blank, the floor
//   paused:      the playground, paused (its default)
//   playing:     the playground playing at 1× (for comparison)
//   hidden:      the playground playing, then told it is hidden (visibilitychange)
//   embed-away:  a host page with an autoplaying ?embed=1 iframe 3000 px below the fold
//                (the host's counters: the iframe is same-origin, in the same renderer)
// WM_DIST=DIR measures a copied build instead of dist/ (to compare two builds in turn).

import { launchBrowser, newWatchedPage, serveStatic, APP_READY } from "../lib/harness.mjs";

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const SECONDS = Number(option("seconds", 5));
const ROUNDS = Number(option("rounds", 3));

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

async function taskSeconds(cdp) {
  const { metrics } = await cdp.send("Performance.getMetrics");
  return metrics.find((m) => m.name === "TaskDuration").value;
}

async function measure(context, server, kind) {
  const { page } = await newWatchedPage(context);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  if (kind === "blank") {
    await page.goto("about:blank");
  } else if (kind === "embed-away") {
    const url = `${server.url}host-idle.html`;
    const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title><link rel="icon" href="data:,"></head>
<body><div style="height:3000px">A long article.</div>
<iframe title="Watermark" src="/?embed=1&autoplay=1" style="width:720px;height:480px;border:0"></iframe></body></html>`;
    await page.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body }));
    await page.goto(url, { waitUntil: "load" });
    await page.frameLocator("iframe").locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  } else {
    const autoplay = kind === "paused" ? "" : "?autoplay=1";
    await page.goto(`${server.url}${autoplay}`, { waitUntil: "load" });
    await page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
    if (kind === "hidden") {
      // Headless Chromium keeps every tab visible (another tab in front or a minimized
      // window leaves visibilityState "visible"): the page is told it is hidden, as on a
      // tab switch (tests/e2e/idle.test.mjs does the same).
      await page.evaluate(() => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
        Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
        document.dispatchEvent(new Event("visibilitychange"));
      });
    }
  }
  await sleep(2_000);
  const start = await taskSeconds(cdp);
  await sleep(SECONDS * 1_000);
  const end = await taskSeconds(cdp);
  await page.close();
  return ((end - start) * 1_000) / SECONDS;
}

const server = await serveStatic();
const context = await launchBrowser();
const kinds = ["blank", "paused", "playing", "hidden", "embed-away"];
const results = Object.fromEntries(kinds.map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of kinds) results[kind].push(await measure(context, server, kind));
}
await context.close();
await server.close();
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
console.log(`main-thread task time over ${SECONDS} s, ms per second (median of ${ROUNDS}; all rounds)`);
for (const kind of kinds) {
  console.log(`${kind.padEnd(12)} ${median(results[kind]).toFixed(2).padStart(7)}   ${results[kind].map((v) => v.toFixed(2)).join(" ")}`);
}
