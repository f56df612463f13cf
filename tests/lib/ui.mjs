// Helpers for driving the playground page in browser tests: a fresh page without a restored
// session, the read-outs by their accessible names, range sliders, the simulated clock,
// polling for a state, and share links built in Node.
//
//   const app = useApp();
//   const { page } = await openFresh(app, "/");
//   await setRange(page, "Brokers", 5);
//   await waitForText(describe(page), /Replicas: 1,2,3,4 /);

import assert from "node:assert/strict";
import { deflateRawSync } from "node:zlib";
import { APP_READY } from "./harness.mjs";

/** Local storage key of the saved session (web/src/session.rs, STORAGE_KEY). */
export const SESSION_KEY = "watermark.session.v1";

/**
 * Opens `path` like `app.open`, but on a clean slate: the browser profile is shared by the
 * tests of one file, and the page restores the last session from local storage, so a
 * stored session is removed and the page loaded again.
 */
export async function openFresh(app, path = "/", options = {}) {
  const opened = await app.open(path, options);
  const { page } = opened;
  const stored = await page.evaluate((key) => {
    const had = localStorage.getItem(key) !== null;
    localStorage.clear();
    return had;
  }, SESSION_KEY);
  if (stored) {
    await page.reload({ waitUntil: "load" });
    await page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  }
  return opened;
}

/** The `kafka-topics --describe` read-out. */
export const describe = (page) => page.locator('pre[aria-label="kafka-topics --describe"]');
/** The `kafka-get-offsets` read-out. */
export const offsets = (page) => page.locator('pre[aria-label="kafka-get-offsets"]');
/** The simulated clock, `t = m:ss.mmm`. */
export const clock = (page) => page.getByLabel("Simulated time", { exact: true });
export const waiting = (page) => page.getByRole("list", { name: "Waiting requests", exact: true });
export const produceResults = (page) => page.getByRole("list", { name: "Produce results", exact: true });
export const eventLog = (page) => page.getByRole("list", { name: "Event log", exact: true });
/**
 * The event log's lines, one per line (each row's text), read from the DOM: the read-outs
 * are not rendered while off screen (`content-visibility: auto`), so `innerText`, which
 * reads the rendering, is empty then.
 */
export const eventLogText = (page) =>
  eventLog(page).evaluate((ol) => Array.from(ol.children, (li) => li.textContent).join("\n"));
export const notice = (page) => page.locator("p.notice");
export const button = (page, name) => page.getByRole("button", { name, exact: true });
export const slider = (page, name) => page.getByRole("slider", { name, exact: true });

/**
 * Chooses a preset in the Scenarios panel as a person does, and waits until it has opened
 * (or failed to): its file is fetched when chosen, and the app is `data-wasm="loading"`
 * until then (web/src/share_ui.rs).
 */
export async function choosePreset(page, name) {
  await page.getByLabel("Preset", { exact: true }).selectOption(name);
  await page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
}

/** `t = 1:02.345` → 62345 (ms). */
export function parseClock(text) {
  const m = /t = (\d+):(\d\d)\.(\d\d\d)/.exec(text ?? "");
  assert.ok(m, `not a clock: ${JSON.stringify(text)}`);
  return Number(m[1]) * 60_000 + Number(m[2]) * 1000 + Number(m[3]);
}

/** The simulated time the page shows, in ms. */
export async function clockMs(page) {
  return parseClock(await clock(page).textContent());
}

/**
 * Sets a range slider by its accessible name and fires `input` and `change`, as a person
 * dragging it and letting go does (the cluster settings apply on `change`).
 */
export async function setRange(page, name, value) {
  await slider(page, name).fill(String(value));
}

/** Speed slider position for 100× (0..1000 map to 0.1×..100× on a log scale). */
export const SPEED_MAX = 1000;

/** Starts playing (no-op when already playing). */
export async function play(page) {
  if (await button(page, "Play").count()) await button(page, "Play").click();
  await button(page, "Pause").waitFor();
}

/** Pauses (no-op when already paused). */
export async function pause(page) {
  if (await button(page, "Pause").count()) await button(page, "Pause").click();
  await button(page, "Play").waitFor();
}

/**
 * Polls until `check()` resolves to a truthy value and returns it; fails after `timeout` ms
 * with `message()` (or the last value) so a timeout says what was seen.
 */
export async function poll(check, { timeout = 20_000, interval = 50, message } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await check();
    if (last) return last;
    if (Date.now() > deadline) {
      const seen = message ? await message() : JSON.stringify(last);
      assert.fail(`timed out after ${timeout} ms; last seen: ${seen}`);
    }
    await new Promise((ok) => setTimeout(ok, interval));
  }
}

/** Waits until the locator's text matches `pattern`; returns the text. */
export async function waitForText(locator, pattern, { timeout = 20_000 } = {}) {
  let text = "";
  await poll(
    async () => {
      text = (await locator.textContent()) ?? "";
      return pattern.test(text);
    },
    { timeout, message: async () => `${JSON.stringify(text)} does not match ${pattern}` },
  );
  return text;
}

/** Waits until the simulated clock reaches `ms`. */
export async function waitForClock(page, ms, { timeout = 20_000 } = {}) {
  let now = 0;
  await poll(
    async () => {
      now = await clockMs(page);
      return now >= ms;
    },
    { timeout, message: async () => `clock at ${now} ms, waiting for ${ms} ms` },
  );
  return now;
}

/** A share link fragment for a scenario object: `#s=w1.` + base64url(raw DEFLATE(JSON)). */
export function shareHash(scenario) {
  const json = Buffer.from(JSON.stringify(scenario));
  return `#s=w1.${deflateRawSync(json, { level: 9 }).toString("base64url")}`;
}

/** A menu item by its accessible name (a broker's faults, web/src/lane_menu.rs). */
export const menuItem = (page, name) => page.getByRole("menuitem", { name, exact: true });

/**
 * Runs one of a broker's faults as a person does: opens the menu on its lane ("Faults for
 * broker 3") and chooses the item (`name`, e.g. "Freeze broker 3"); the menu closes.
 */
export async function fault(page, name) {
  const id = /broker (\d+)/.exec(name)?.[1];
  assert.ok(id, `not a broker's fault: ${name}`);
  await button(page, `Faults for broker ${id}`).click();
  await menuItem(page, name).click();
  await page.getByRole("menu").waitFor({ state: "detached" });
}

/** The class of broker `id`'s lane in the picture (`lane follower frozen`, …). */
export async function laneState(page, id) {
  return (await page.locator(".cluster g.lane").nth(id - 1).getAttribute("class")) ?? "";
}

/** The session's share link, read from the Share panel (opened and closed again). */
export async function shareLink(page) {
  await button(page, "Share").click();
  const link = await page.getByLabel("Share link", { exact: true }).inputValue();
  await button(page, "Share").click();
  return link;
}
