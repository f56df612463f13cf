// The data-loss finder in the playground (issue 15; web/src/finder.rs, docs/ui.md "The
// data-loss finder"): "Find a way to lose acknowledged data" searches the session's fault
// schedules in a Web Worker over the page's own wasm, shows its progress, can be cancelled,
// answers as `watermark explore` does for the same seed, budget and faults, and opens the
// schedule it found at the moment of the loss (Undo brings the session back). The search
// leaves the main thread free: the time bar plays while it runs.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT, useApp } from "../lib/harness.mjs";
import { button, clockMs, eventLogText, notice, openFresh, parseClock, pause, play, poll, shareHash, waitForText } from "../lib/ui.mjs";

const app = useApp();

/**
 * The explore tests' cluster (engine/tests/explore.rs): three brokers, RF 3, two records a
 * second with `acks` for 10 s, a consume every 2 s, and a kill the finder drops.
 */
function writes(acks, minIsr, protocol = "kafka-4") {
  const timeline = [];
  for (let i = 0; i < 10; i++) {
    timeline.push({ at: i * 1000, action: "produce", acks, prefix: `v${i}-`, count: 2 });
    if (i % 2 === 1) timeline.push({ at: i * 1000 + 500, action: "consume" });
  }
  timeline.push({ at: 4000, action: "kill", broker: 2 });
  return {
    version: 1, title: "t", topic: "t", brokers: 3, replication_factor: 3, protocol,
    config: { "min.insync.replicas": minIsr }, timeline, end_ms: 12000,
  };
}

const PROCESS_FAULTS = "freeze,kill,stop,slow,cut,cut_controller";

/** `watermark explore` on `scenario`, one thread: its lines. */
function explore(scenario, args) {
  const dir = mkdtempSync(join(tmpdir(), "watermark-finder-"));
  try {
    const file = join(dir, "s.json");
    writeFileSync(file, JSON.stringify(scenario));
    const r = spawnSync("cargo", ["run", "-q", "--offline", "-p", "watermark-cli", "--", "explore", file, ...args, "--jobs", "1"], {
      cwd: REPO_ROOT, encoding: "utf8", timeout: 600_000,
    });
    assert.ok(r.status === 0 || r.status === 1, `watermark explore failed: ${r.stderr}`);
    return r.stdout.split("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const field = (page, name) => page.getByLabel(name, { exact: true });
const status = (page) => page.locator(".finder-status");
const progress = (page) => page.locator(".finder-progress");
const findButton = (page) => button(page, "Find a way to lose acknowledged data");

/** Opens the finder (a closed `<details>` in the side panel). */
const openFinder = (page) => page.locator("details.finder > summary").click();

async function settings(page, { budget, seed, faults, kinds }) {
  await openFinder(page);
  await field(page, "Schedules to try").fill(String(budget));
  await field(page, "Seed").fill(String(seed));
  await field(page, "Most faults per schedule").fill(String(faults));
  await field(page, "Fault kinds").selectOption(kinds);
}

/** The number in the progress line, or -1 when there is none. */
const tried = async (page) => {
  const m = /Tried (\d+) of (\d+) schedules/.exec((await progress(page).textContent()) ?? "");
  return m ? Number(m[1]) : -1;
};

test("finds what watermark explore finds, opens it at the moment of the loss, and Undo brings the session back", async () => {
  const scenario = writes("1", 1);
  const cli = explore(scenario, ["--budget", "60", "--seed", "1", "--faults", PROCESS_FAULTS, "--max-faults", "4"]);
  // tried 23 schedules (seed 1): schedule 22 broke acknowledged-loss: an acknowledged record disappeared
  const head = /^tried (\d+) schedules \(seed 1\): schedule (\d+) broke [a-z-]+: (.+)$/.exec(cli[0]);
  assert.ok(head, cli.join("\n"));
  const [, cliTried, cliIndex, cliWords] = head;
  const shrunkAt = cli.findIndex((l) => l.startsWith("shrunk to "));
  const whatAt = cli.findIndex((l) => l.startsWith("what broke: "));
  const cliSchedule = cli.slice(shrunkAt + 1, whatAt).map((l) => l.trim());
  const cliDetail = cli[whatAt].slice("what broke: ".length);

  const { page } = await openFresh(app, `/${shareHash(scenario)}`);
  assert.equal(await page.title(), "t · Watermark");
  await settings(page, { budget: 60, seed: 1, faults: 4, kinds: "process" });
  // Every progress line the page shows, as it shows it.
  await page.evaluate(() => {
    window.finderSeen = [];
    new MutationObserver(() => {
      const t = document.querySelector(".finder-tried")?.textContent;
      if (t && window.finderSeen.at(-1) !== t) window.finderSeen.push(t);
    }).observe(document.querySelector(".finder-progress"), { childList: true, subtree: true, characterData: true });
  });
  await findButton(page).click();
  await waitForText(status(page), /Found, schedule/, { timeout: 120_000 });
  const seen = await page.evaluate(() => window.finderSeen);
  // Progress after each chunk of 8 schedules, then the found one's count.
  const expected = [0];
  for (let c = 8; c < Number(cliTried); c += 8) expected.push(c);
  expected.push(Number(cliTried));
  assert.deepEqual(seen, expected.map((n) => `Tried ${n} of 60 schedules`));

  // The same answer as the command's.
  const found = await page.locator(".finder-found").textContent();
  assert.equal(found, `Found, schedule ${cliIndex} of seed 1 (tried ${cliTried}): ${cliWords}. ${cliDetail}.`);
  assert.deepEqual(await page.locator(".finder-schedule li").allTextContents(), cliSchedule);
  assert.match(cliWords, /^an acknowledged record disappeared$/);

  // Open it: the found scenario, paused at the moment of the loss, which its caption names.
  const open = page.getByRole("button", { name: /^Open it at the moment of loss \(/ });
  const at = parseClock(`t = ${/\((\d+:\d\d\.\d\d\d)\)/.exec(await open.textContent())[1]}`);
  await open.click();
  await waitForText(notice(page), /^Opened the schedule the finder found, at the moment of the loss/);
  assert.equal(await page.title(), "t (found by watermark explore) · Watermark");
  assert.equal(await clockMs(page), at);
  assert.equal(await button(page, "Play").count(), 1, "paused there");
  await waitForText(page.locator("[data-testid=caption]"), new RegExp(`Here an acknowledged record disappeared: ${escape(cliDetail)}`));
  // The record the detail names was acknowledged in the run: a produce result in the log
  // says ok for its offset.
  const offset = Number(/^\S+ at offset (\d+) \(epoch \d+\)/.exec(cliDetail)[1]);
  const acked = [...(await eventLogText(page)).matchAll(/acks=1 -> ok, offsets=(\d+)\.\.(\d+)/g)];
  assert.ok(acked.some(([, a, b]) => Number(a) <= offset && offset <= Number(b)), `offset ${offset} acknowledged`);

  // Undo: the session from before, as it was.
  await button(page, "Undo").click();
  await waitForText(notice(page), /^Restored the session from before/);
  assert.equal(await page.title(), "t · Watermark");
});

test("a loss of committed records opens at the moment it happens, as the command found it", async () => {
  // KIP-101's anomaly (Kafka 0.10.2's truncation to the high watermark): acks=all, min 2.
  const scenario = writes("all", 2, "pre-kip-101");
  const cli = explore(scenario, ["--budget", "300", "--seed", "1", "--faults", PROCESS_FAULTS, "--max-faults", "4"]);
  const head = /^tried (\d+) schedules \(seed 1\): schedule (\d+) broke acknowledged-loss/.exec(cli[0]);
  assert.ok(head, cli.join("\n"));
  const cliDetail = cli.find((l) => l.startsWith("what broke: ")).slice("what broke: ".length);
  assert.match(cliDetail, /^committed records at offsets \d+\.\.\d+ .* left the committed history: .*KIP-101/);

  const { page } = await openFresh(app, `/${shareHash(scenario)}`);
  await settings(page, { budget: 300, seed: 1, faults: 4, kinds: "process" });
  await findButton(page).click();
  await waitForText(status(page), /Found, schedule/, { timeout: 120_000 });
  assert.equal(
    await page.locator(".finder-found").textContent(),
    `Found, schedule ${head[2]} of seed 1 (tried ${head[1]}): an acknowledged record disappeared. ${cliDetail}.`,
  );
  const open = page.getByRole("button", { name: /^Open it at the moment of loss \(/ });
  const clockText = /\((\d+:\d\d\.\d\d\d)\)/.exec(await open.textContent())[1];
  await open.click();
  await waitForText(notice(page), /^Opened the schedule the finder found/);
  assert.equal(await clockMs(page), parseClock(`t = ${clockText}`));
  // The loss is shown at that moment, and not a moment before.
  await waitForText(page.locator("div.loss"), new RegExp(`^Committed records( of \\S+)? were lost at ${escape(clockText)}: offsets`));
  assert.match(await eventLogText(page), /Committed records lost: /);
  // ← goes back 100 ms (the focus off the button, which keeps its keys).
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press("ArrowLeft");
  await poll(async () => (await page.locator("div.loss").count()) === 0, { message: async () => "the loss still shown 100 ms before it" });
});

test("Cancel stops the search at once and leaves the page working", async () => {
  // acks=all with min.insync.replicas 2: nothing to find, so the search would run on.
  const { page } = await openFresh(app, `/${shareHash(writes("all", 2))}`);
  await settings(page, { budget: 100000, seed: 1, faults: 4, kinds: "process" });
  await findButton(page).click();
  assert.equal(await findButton(page).isDisabled(), true, "one search at a time");
  await poll(async () => (await tried(page)) >= 16);
  await button(page, "Cancel").click();
  const text = await waitForText(status(page), /^Search cancelled after \d+ schedules\.$/);
  const n = Number(/after (\d+)/.exec(text)[1]);
  assert.ok(n >= 16 && n % 8 === 0, text);
  assert.equal(await progress(page).locator("progress").count(), 0);
  // The worker is gone: nothing changes any more.
  await page.waitForTimeout(1500);
  assert.equal(await status(page).textContent(), text);
  assert.equal(await progress(page).textContent(), "", "no progress after Cancel");
  assert.equal(await findButton(page).isDisabled(), false);
  // The page still works: the time bar plays.
  const t0 = await clockMs(page);
  await play(page);
  await poll(async () => (await clockMs(page)) > t0 + 500);
  await pause(page);
});

test("the search leaves the page free: the time bar plays while it runs", async () => {
  const { page } = await openFresh(app, `/${shareHash(writes("all", 2))}`);
  await settings(page, { budget: 100000, seed: 1, faults: 4, kinds: "process" });
  await findButton(page).click();
  await poll(async () => (await tried(page)) >= 8, { timeout: 60_000 });
  const t0 = await clockMs(page);
  const n0 = await tried(page);
  await play(page);
  // Frames keep coming while the worker searches (the main thread is not busy with it).
  const frames = await page.evaluate(
    () => new Promise((done) => {
      let n = 0;
      const end = performance.now() + 1000;
      const f = () => (performance.now() < end ? (n++, requestAnimationFrame(f)) : done(n));
      requestAnimationFrame(f);
    }),
  );
  assert.ok(frames >= 20, `${frames} frames in a second while searching`);
  await poll(async () => (await clockMs(page)) > t0 + 500);
  // Still searching meanwhile: its progress moves on.
  await poll(async () => (await tried(page)) > n0, { timeout: 60_000 });
  await pause(page);
  await button(page, "Cancel").click();
  await waitForText(status(page), /^Search cancelled after/);
});

test("a session without writes is told so, in words", async () => {
  const { page } = await openFresh(app, `/${shareHash({ ...writes("1", 1), timeline: [] })}`);
  await openFinder(page);
  await findButton(page).click();
  await waitForText(status(page), /The search stopped: The session writes no records, so there is nothing acknowledged to lose/);
  await field(page, "Most faults per schedule").fill("9");
  await findButton(page).click();
  await waitForText(status(page), /^Not started: Most faults per schedule: a whole number from 1 to 8, please$/);
});

test("a worker that cannot load the page's code is said in words, and the page goes on", async () => {
  const { page } = await openFresh(app, `/${shareHash(writes("1", 1))}`);
  // The glue, as the worker asks for it again, fails to evaluate.
  await page.route(/watermark-web-[0-9a-f]+\.js$/, (route) =>
    route.fulfill({ status: 200, contentType: "text/javascript", body: "throw new Error('no glue here');" }));
  await openFinder(page);
  await findButton(page).click();
  await waitForText(status(page), /^The search stopped: /, { timeout: 30_000 });
  assert.equal(await findButton(page).isDisabled(), false);
  assert.equal(await button(page, "Cancel").isHidden(), true);
});

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
