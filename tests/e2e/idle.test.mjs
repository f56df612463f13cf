// The page sleeps when nothing moves: paused, hidden, or (an embed) scrolled out of view, it
// requests no animation frames and sets no timers (docs/ui.md, "The frame loop sleeps").
// requestAnimationFrame, setTimeout and setInterval are wrapped before the app loads, so
// the page's own calls are counted in `window.__wm`. How much CPU an idle page takes is
// measured, not asserted: `node tests/perf/idle.mjs` (BENCHMARKS.md, "Idle page").

import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_READY, useApp } from "../lib/harness.mjs";
import { button, clockMs, eventLog, fault, pause, play, poll } from "../lib/ui.mjs";

const app = useApp();

/** Counts the animation frames run and the timers set, in every frame of the page. */
const COUNTERS = `(() => {
  const w = window;
  w.__wm = { frames: 0, timers: 0 };
  const raf = w.requestAnimationFrame.bind(w);
  w.requestAnimationFrame = (cb) => raf((t) => { w.__wm.frames += 1; cb(t); });
  for (const name of ["setTimeout", "setInterval"]) {
    const original = w[name].bind(w);
    w[name] = (...args) => { w.__wm.timers += 1; return original(...args); };
  }
})();`;

/** Opens `path` with the counters installed, on a clean local storage. */
async function openCounted(path) {
  const opened = await app.open("about:blank", { waitForApp: false });
  const { page } = opened;
  await page.addInitScript(COUNTERS);
  await page.goto(new URL(path.replace(/^\//, ""), app.url).href, { waitUntil: "load" });
  await page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  await page.evaluate(() => localStorage.clear());
  await page.reload({ waitUntil: "load" });
  await page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  return opened;
}

/** A tab switch as the page sees it: `document.hidden`, `visibilityState`, the event. */
function setHidden(page, hidden) {
  return page.evaluate((hidden) => {
    if (hidden) {
      Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
    } else {
      delete document.hidden;
      delete document.visibilityState;
    }
    document.dispatchEvent(new Event("visibilitychange"));
  }, hidden);
}

const counters = (target) => target.evaluate(() => ({ ...window.__wm }));

/**
 * Waits until no animation frame runs and no timer is set for `quiet` ms (a page that
 * sleeps gets there; one that runs a frame loop never does), then checks it stays so for
 * another `quiet` ms. Returns the counters.
 */
async function asleep(target, what, { quiet = 600, timeout = 10_000 } = {}) {
  const deadline = Date.now() + timeout;
  let before = await counters(target);
  for (;;) {
    await new Promise((ok) => setTimeout(ok, quiet));
    const now = await counters(target);
    if (now.frames === before.frames && now.timers === before.timers) break;
    assert.ok(Date.now() < deadline, `${what}: the page kept running frames or timers (${JSON.stringify(now)})`);
    before = now;
  }
  await new Promise((ok) => setTimeout(ok, quiet));
  assert.deepEqual(await counters(target), before, `${what}: the page woke up by itself`);
  return before;
}

test("a paused page runs no animation frames and no timers, and wakes for what a person does", async () => {
  const { page } = await openCounted("/");
  const idle = await asleep(page, "paused");

  // An action while paused is drawn, and the event log follows its newest line; then the
  // page sleeps again.
  const log = eventLog(page);
  const lines = await log.locator("li").count();
  await fault(page, "Freeze broker 3");
  await poll(async () => (await log.locator("li").count()) > lines);
  await poll(() => log.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 2), {
    message: () => log.evaluate((el) => `scrollTop ${el.scrollTop} of ${el.scrollHeight}`),
  });
  const acted = await asleep(page, "after an action");
  assert.ok(acted.frames > idle.frames, "the action was drawn in a frame");

  // Playing runs frames and moves the clock; pausing stops both.
  await play(page);
  await poll(async () => (await clockMs(page)) > 500);
  await pause(page);
  const paused = await asleep(page, "paused again");
  assert.ok(paused.frames > acted.frames + 10, `frames while playing: ${paused.frames - acted.frames}`);
  const t = await clockMs(page);
  await new Promise((ok) => setTimeout(ok, 300));
  assert.equal(await clockMs(page), t, "the clock stays");
});

test("a playing page that is hidden stops its frames and its clock, and plays on when shown again", async () => {
  const { page } = await openCounted("/");
  await play(page);
  await poll(async () => (await clockMs(page)) > 300);

  // The person switches to another tab. Headless Chromium keeps every tab visible (another
  // tab in front, or a minimized window, leaves visibilityState "visible"), so the test does
  // what the browser does on a tab switch: the document's hidden and visibilityState change
  // and a visibilitychange event fires.
  await setHidden(page, true);
  await asleep(page, "hidden");
  const hiddenAt = await clockMs(page);
  await new Promise((ok) => setTimeout(ok, 500));
  assert.equal(await clockMs(page), hiddenAt, "the simulated time stands still while hidden");

  // Back to this tab: it plays on from where it was, without a jump.
  await setHidden(page, false);
  await poll(async () => (await clockMs(page)) > hiddenAt);
  assert.ok((await clockMs(page)) < hiddenAt + 5_000, "no jump over the hidden time");
  assert.equal(await button(page, "Pause").count(), 1, "still playing");
});

test("an embed scrolled out of its host's view sleeps, and plays when scrolled into view", async () => {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title><link rel="icon" href="data:,"></head>
<body><h1>Host page</h1><div style="height:3000px">A long article.</div>
<iframe id="wm" title="Watermark" src="/?embed=1&autoplay=1" style="width:720px;height:480px;border:0"></iframe>
<div style="height:3000px"></div></body></html>`;
  const opened = await app.open("about:blank", { waitForApp: false });
  const { page } = opened;
  await page.addInitScript(COUNTERS);
  const url = `${app.url}host-idle.html`;
  await page.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body }));
  await page.goto(url, { waitUntil: "load" });
  const frame = page.frameLocator("#wm");
  await frame.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  const embed = page.frames().find((f) => f.url().includes("embed=1"));
  assert.ok(embed, "the embed's frame");
  const clock = async () => {
    const text = await frame.getByLabel("Simulated time", { exact: true }).textContent();
    const m = /t = (\d+):(\d\d)\.(\d\d\d)/.exec(text ?? "");
    assert.ok(m, text);
    return Number(m[1]) * 60_000 + Number(m[2]) * 1000 + Number(m[3]);
  };

  // Below the fold, autoplay or not, nothing runs and the clock does not move.
  await asleep(embed, "out of view");
  const before = await clock();
  await new Promise((ok) => setTimeout(ok, 500));
  assert.equal(await clock(), before, "the clock stands still out of view");

  // Scrolled into view, it plays; scrolled away again, it sleeps.
  await page.locator("#wm").scrollIntoViewIfNeeded();
  await poll(async () => (await clock()) > before + 300);
  await page.evaluate(() => window.scrollTo(0, 0));
  await asleep(embed, "scrolled away");
  const away = await clock();
  await new Promise((ok) => setTimeout(ok, 500));
  assert.equal(await clock(), away);
});
