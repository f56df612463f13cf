// Presets load on demand (docs/ui.md, "Presets load on demand"): the page's wasm carries each
// preset's name, title and digest, and fetches `presets/NAME.json` from the built site when
// one is opened: by a preset link (with its time), in the Scenarios panel, in an embed. While
// it loads the page says so and shows no scenario; a missing or wrong file opens the default
// scenario and names the preset. The site's files are the engine's presets.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { APP_READY, DIST_DIR, useApp } from "../lib/harness.mjs";
import { PRESET_TOPICS, presetScenario } from "../lib/links.mjs";
import { choosePreset, clockMs, describe, notice, openFresh, waitForText } from "../lib/ui.mjs";
import { minify, presetNames, PRESETS_DIR } from "../../scripts/lib/presets.mjs";

const app = useApp();

const DEFAULT_DESCRIBE = "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:";

/** A Playwright URL predicate for the preset's file, whatever its query. */
const presetFile = (name) => (url) => url.pathname.endsWith(`/presets/${name}.json`);

/** The notice's text without its dismiss button's "×". */
const noticeText = async (page) => (await notice(page).textContent()).replace(/×$/, "");

/**
 * Routes the preset's file through a gate: the request waits until `release()` is called.
 * Resolves to `{ release, requested }`; `requested` resolves to the URL asked for.
 */
async function hold(page, name) {
  let release;
  const gate = new Promise((ok) => (release = ok));
  let asked;
  const requested = new Promise((ok) => (asked = ok));
  await page.route(presetFile(name), async (route) => {
    asked(route.request().url());
    await gate;
    await route.continue();
  });
  return { release, requested };
}

/** Removes the problems a refused preset file causes on purpose (its 404), and only those. */
function expect404(problems, name) {
  const expected = problems.filter(
    (p) => p.includes(`/presets/${name}.json`) || p === "console error: Failed to load resource: the server responded with a status of 404 (Not Found)",
  );
  assert.ok(expected.length >= 1, `the 404 of ${name}.json was seen: ${problems.join("; ")}`);
  for (const p of expected) problems.splice(problems.indexOf(p), 1);
}

test("the site's preset files are the engine's presets, without white space, and the page carries none of them", () => {
  const names = presetNames();
  assert.deepEqual([...names].sort(), Object.keys(PRESET_TOPICS).sort(), "every preset has a file");
  assert.deepEqual(readdirSync(join(DIST_DIR, "presets")).sort(), names.map((n) => `${n}.json`).sort(), "and nothing else is there");
  const wasm = readFileSync(join(DIST_DIR, readdirSync(DIST_DIR).find((f) => f.endsWith("_bg.wasm"))));
  for (const name of names) {
    const source = readFileSync(join(PRESETS_DIR, `${name}.json`), "utf8");
    const served = readFileSync(join(DIST_DIR, "presets", `${name}.json`), "utf8");
    // As engine/build.rs writes the text the native engine carries: the same scenario, its
    // strings as written, no white space between tokens.
    assert.equal(served, minify(source), name);
    assert.deepEqual(JSON.parse(served), JSON.parse(source), name);
    assert.ok(served.length < source.length && !served.includes("\n"), `${name}: minified`);
    // The wasm has the preset's name, not its timeline.
    assert.ok(wasm.includes(Buffer.from(name)), `${name}: named in the wasm`);
    const timeline = served.slice(served.indexOf('"timeline":'), served.indexOf('"timeline":') + 80);
    assert.ok(timeline.length === 80 && !wasm.includes(Buffer.from(timeline)), `${name}: its timeline is not in the wasm`);
  }
  // tests/e2e/sharing.test.mjs opens every preset link with no notice: the page opens a
  // file only if it is exactly the preset the engine has (its digest), and says so
  // otherwise (below).
});

test("the first page fetches no preset", async () => {
  const { page } = await openFresh(app, "/");
  await page.locator(".cluster").waitFor();
  const fetched = await page.evaluate(() => performance.getEntriesByType("resource").map((r) => r.name));
  assert.deepEqual(fetched.filter((u) => u.includes("/presets/")), []);
});

test("a preset link says it is loading, shows nothing else meanwhile, then opens the preset at its time", async () => {
  const preset = presetScenario("frozen-follower");
  let gate;
  const { page } = await app.open("/?preset=frozen-follower&t=16150", {
    waitForApp: false,
    beforeGoto: async (page) => {
      gate = await hold(page, "frozen-follower");
    },
  });
  const url = new URL(await gate.requested);
  assert.equal(url.pathname, "/presets/frozen-follower.json", "fetched relative to the page");
  const loading = page.locator('[data-wasm="loading"] p.notice[role=status]');
  await loading.waitFor();
  assert.equal(await loading.textContent(), `Loading the preset “${preset.title}” …`);
  assert.equal(await page.locator(APP_READY).count(), 0, "not ready while it loads");
  assert.equal(await page.locator(".cluster").count(), 0, "no scenario shown meanwhile");
  assert.equal(await describe(page).count(), 0);
  gate.release();
  await page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  assert.equal(await clockMs(page), 16150, "the link's time, after loading");
  assert.match(await describe(page).textContent(), /^Topic: rep Partition: 0 /);
  assert.equal(await notice(page).count(), 0);
  assert.equal(await page.getByLabel("Preset", { exact: true }).inputValue(), "frozen-follower");
  assert.equal(await page.title(), `${preset.title} · Watermark`);
});

test("a preset link whose file is missing or wrong opens the default scenario and names the preset", async () => {
  const preset = presetScenario("frozen-follower");
  const missing = await app.open("/?preset=frozen-follower", {
    beforeGoto: (page) => page.route(presetFile("frozen-follower"), (route) => route.fulfill({ status: 404, body: "not found" })),
  });
  assert.equal(
    await noticeText(missing.page),
    `The preset “${preset.title}” (frozen-follower) could not be loaded from presets/frozen-follower.json: HTTP 404. Showing the default scenario instead.`,
  );
  assert.equal(await describe(missing.page).textContent(), DEFAULT_DESCRIBE);
  assert.equal(await clockMs(missing.page), 0);
  expect404(missing.problems, "frozen-follower");

  // Another preset's file in its place is not this preset: the page says so.
  const other = readFileSync(join(DIST_DIR, "presets", "min-isr-3.json"), "utf8");
  const wrong = await app.open("/?preset=frozen-follower", {
    beforeGoto: (page) => page.route(presetFile("frozen-follower"), (route) => route.fulfill({ status: 200, contentType: "application/json", body: other })),
  });
  assert.equal(
    await noticeText(wrong.page),
    `The preset “${preset.title}” (frozen-follower) could not be loaded from presets/frozen-follower.json: the file is not the preset this page was built with. Showing the default scenario instead.`,
  );
  assert.equal(await describe(wrong.page).textContent(), DEFAULT_DESCRIBE);

  // A file that is not a scenario at all.
  const junk = await app.open("/?preset=frozen-follower", {
    beforeGoto: (page) => page.route(presetFile("frozen-follower"), (route) => route.fulfill({ status: 200, body: "<html>" })),
  });
  assert.match(await noticeText(junk.page), /^The preset “.*” \(frozen-follower\) could not be loaded from presets\/frozen-follower\.json: scenario: not a valid scenario: .*\. Showing the default scenario instead\.$/);
  assert.equal(await describe(junk.page).textContent(), DEFAULT_DESCRIBE);
});

test("choosing a preset in the Scenarios panel loads it, keeping the session until it is here", async () => {
  const { page, problems } = await openFresh(app, "/");
  const picker = page.getByLabel("Preset", { exact: true });
  const presetLink = page.getByRole("link", { name: "Link to this preset" });
  // The default scenario is no preset: the picker names none, and describes none.
  assert.equal(await picker.inputValue(), "");
  assert.equal(await picker.locator("option:checked").textContent(), "Choose a preset…");
  assert.equal(await presetLink.count(), 0);
  assert.equal(await page.locator(".preset-about").count(), 0);
  const minIsr = presetScenario("min-isr-3");
  const gate = await hold(page, "min-isr-3");
  await page.getByLabel("Preset", { exact: true }).selectOption("min-isr-3");
  await gate.requested;
  assert.equal(await noticeText(page), `Loading the preset “${minIsr.title}” …`);
  assert.equal(await page.locator('.app[data-wasm="loading"]').count(), 1, "loading");
  assert.equal(await describe(page).textContent(), DEFAULT_DESCRIBE, "the session as it was meanwhile");
  gate.release();
  await page.locator(APP_READY).waitFor({ state: "attached" });
  assert.equal(await noticeText(page), `Opened the preset “${minIsr.title}”. Play it (it pauses at each step), or step through it with Next step.`);
  assert.match(await describe(page).textContent(), /^Topic: strict /);

  // A preset whose file is missing leaves the session and the picker as they were.
  const zone = presetScenario("zone-outage");
  await page.route(presetFile("zone-outage"), (route) => route.fulfill({ status: 404, body: "not found" }));
  await choosePreset(page, "zone-outage");
  assert.equal(
    await noticeText(page),
    `The preset “${zone.title}” (zone-outage) could not be loaded from presets/zone-outage.json: HTTP 404. Your session is as it was; Reset opens the default scenario.`,
  );
  assert.match(await describe(page).textContent(), /^Topic: strict /);
  assert.equal(await picker.inputValue(), "min-isr-3");
  assert.match(await presetLink.getAttribute("href"), /\?preset=min-isr-3$/);
  expect404(problems, "zone-outage");

  // Reset puts the default scenario in its place: the picker names no preset any more.
  await page.getByRole("button", { name: "Reset" }).click();
  await waitForText(describe(page), /^Topic: rep Partition: 0 /);
  assert.equal(await picker.inputValue(), "");
  assert.equal(await presetLink.count(), 0);
  assert.equal(await page.locator(".preset-about").count(), 0);
});

test("an embed of a preset loads it before it tells its host anything, and reports a missing one", async () => {
  const host = (src) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title><link rel="icon" href="data:,"></head>
<body><iframe id="wm" title="Watermark" src="${src}" style="width:720px;height:400px;border:0"></iframe>
<script>window.received = []; addEventListener("message", (e) => { if (e.data && e.data.source === "watermark") window.received.push(e.data); });</script></body></html>`;
  const openHost = async (name, src, route) => {
    const opened = await app.open("about:blank", { waitForApp: false });
    const url = `${app.url}${name}.html`;
    await opened.page.route(url, (r) => r.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: host(src) }));
    const gate = await route(opened.page);
    await opened.page.goto(url, { waitUntil: "load" });
    return { ...opened, gate };
  };

  const { page, gate } = await openHost("preset-host", "index.html?embed=1&t=5000&preset=unclean-election", (p) => hold(p, "unclean-election"));
  const frame = page.frameLocator("#wm");
  await gate.requested;
  await frame.locator('[data-wasm="loading"]').waitFor({ state: "attached" });
  assert.match(await frame.locator("p.notice").textContent(), /^Loading the preset “.+” …$/);
  gate.release();
  await frame.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  await page.waitForFunction(() => window.received.some((m) => m.type === "state"));
  const states = await page.evaluate(() => window.received.filter((m) => m.type === "state"));
  assert.ok(states.every((m) => m.describe.startsWith("Topic: risky2 ")), JSON.stringify(states));
  assert.equal(states[0].time_ms, 5000);

  const missing = await openHost("missing-host", "index.html?embed=1&preset=zone-outage", (p) =>
    p.route(presetFile("zone-outage"), (route) => route.fulfill({ status: 404, body: "not found" })),
  );
  await missing.page.waitForFunction(() => window.received.some((m) => m.type === "error"));
  const error = await missing.page.evaluate(() => window.received.find((m) => m.type === "error"));
  assert.equal(error.opening, true);
  assert.match(error.message, /^The preset “.+” \(zone-outage\) could not be loaded from presets\/zone-outage\.json: HTTP 404\. Showing the default scenario instead\.$/);
  await waitForText(missing.page.frameLocator("#wm").locator('span[aria-label="kafka-topics --describe"]'), /^Topic: rep /);
  expect404(missing.problems, "zone-outage");
});

test("every preset's description fits the panel, a quoted address included", async () => {
  const { page } = await app.open("/");
  for (const name of presetNames()) {
    await choosePreset(page, name);
    const about = page.locator(".preset-about");
    await about.waitFor();
    const [scroll, client] = await about.evaluate((p) => [p.scrollWidth, p.clientWidth]);
    assert.ok(scroll <= client, `${name}: the description is ${scroll} px wide in ${client} px`);
  }
});
