// The playground as a person uses it, in the release build: the cluster settings, acks=all
// waiting in the purgatory, messages in flight, a frozen follower leaving the ISR, a leader failover, scrubbing
// the timeline, the keyboard, and the layout on a phone and in dark mode. Each test drives
// the page through its controls' accessible names and reads the result from what the page
// shows (the describe line, the clock, the lists), polling rather than sleeping.

import assert from "node:assert/strict";
import { test } from "node:test";
import { OUTPUT_DIR, useApp } from "../lib/harness.mjs";
import {
  button,
  clock,
  clockMs,
  describe,
  eventLog,
  eventLogText,
  fault,
  menuItem,
  notice,
  openFresh,
  parseClock,
  pause,
  play,
  poll,
  produceResults,
  setRange,
  shareHash,
  slider,
  SPEED_MAX,
  waitForClock,
  waitForText,
  waiting,
} from "../lib/ui.mjs";

const app = useApp();

const lanes = (page) => page.locator(".cluster g.lane");
const lane = (page, index) => lanes(page).nth(index);
const laneClass = (page, index) => lane(page, index).getAttribute("class");
const calculator = async (page) => [
  await page.locator("[data-testid=can-fail]").textContent(),
  await page.locator("[data-testid=can-lose]").textContent(),
];
const warnings = (page) => page.locator("ul.warnings li");

test("the sliders set the cluster: brokers and RF start a new one, min.insync.replicas moves the calculator", async () => {
  const { page } = await openFresh(app, "/");

  // The default scenario: 3 brokers, RF 3, min.insync.replicas=2.
  assert.match(await describe(page).textContent(), /Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 /);
  assert.equal(await lanes(page).count(), 3);
  assert.deepEqual(await calculator(page), ["1", "1"], "RF 3, min 2: one broker can fail, one can be lost");
  assert.equal(await warnings(page).count(), 0);

  // Article 004's calculator, live, without a new cluster.
  await setRange(page, "min.insync.replicas", 1);
  await poll(async () => (await calculator(page)).join() === "2,0", {
    message: async () => `calculator ${await calculator(page)}`,
  });
  await waitForText(warnings(page).first(), /min\.insync\.replicas=1 with replication factor 3/);
  await setRange(page, "min.insync.replicas", 3);
  await poll(async () => (await calculator(page)).join() === "0,2", {
    message: async () => `calculator ${await calculator(page)}`,
  });
  await waitForText(warnings(page).first(), /min\.insync\.replicas equals the replication factor \(3\)/);
  await waitForText(eventLog(page), /--add-config min\.insync\.replicas=3/);
  assert.match(await describe(page).textContent(), /Replicas: 1,2,3 /, "a live config change keeps the cluster");
  await setRange(page, "min.insync.replicas", 2);
  await poll(async () => (await calculator(page)).join() === "1,1");

  // Five brokers: a new cluster with five lanes and five rows of fault buttons; RF stays 3.
  await setRange(page, "Brokers", 5);
  await poll(async () => (await lanes(page).count()) === 5, {
    message: async () => `${await lanes(page).count()} lanes`,
  });
  await waitForText(notice(page), /Started a new cluster: 5 broker\(s\), replication factor 3/);
  assert.equal(await button(page, "Faults for broker 5").count(), 1, "a menu on each lane");
  assert.match(await describe(page).textContent(), /Replicas: 1,2,3 Isr: 1,2,3 /);

  // RF 4: replicas 1..4, the fifth broker hosts none.
  await setRange(page, "Replication factor", 4);
  await waitForText(describe(page), /Leader: 1 Replicas: 1,2,3,4 Isr: 1,2,3,4 /);
  assert.equal(await lanes(page).count(), 5);
  await waitForText(lane(page, 4), /no replica/);
  assert.deepEqual(await calculator(page), ["2", "1"], "RF 4, min 2 (kept over the restart)");
  assert.equal(await slider(page, "Replication factor").inputValue(), "4");

  await app.screenshot(page, "playground-5-brokers-rf-4");
});

test("acks=all waits in the purgatory while a follower is frozen, and completes once it catches up", async () => {
  const { page } = await openFresh(app, "/");

  await fault(page, "Freeze broker 3");
  await waitForText(lane(page, 2), /frozen/);
  await button(page, "Produce").click();
  // Step, event by event, until the produce request reaches the leader and waits there.
  await poll(
    async () => {
      if (/Purgatory/.test(await waiting(page).textContent())) return true;
      await button(page, "Step one event").click();
      return false;
    },
    { timeout: 10_000, interval: 0, message: async () => `waiting: ${await waiting(page).textContent()}` },
  );
  const entry = page.getByRole("listitem").filter({ hasText: "Purgatory on broker 1" });
  assert.match(await entry.textContent(), /^Purgatory on broker 1: acks=all offsets 0\.\.0 waits for HW ≥ 1 \(HW now 0\); REQUEST_TIMED_OUT in /);

  // Let simulated seconds pass: broker 2 has the record, broker 3 does not, so the HW
  // stays 0 and the request keeps waiting (the ISR is still 1,2,3).
  // About 3×: even a slow machine pauses long before the controller fences broker 3 at 9 s.
  await setRange(page, "Speed", 500);
  await play(page);
  await waitForClock(page, 1_500);
  await pause(page);
  const frozenFor = await clockMs(page);
  assert.ok(frozenFor < 9_000, `paused at ${frozenFor} ms, before the controller fences the frozen broker`);
  assert.match(await entry.textContent(), /waits for HW ≥ 1 \(HW now 0\)/);
  assert.doesNotMatch(await produceResults(page).textContent(), /acks=all/);
  assert.match(await describe(page).textContent(), /Isr: 1,2,3 /);
  await app.screenshot(page, "playground-purgatory");

  // Thaw: broker 3 fetches, the HW moves to 1, and the request completes.
  await fault(page, "Thaw broker 3");
  await play(page);
  const result = await waitForText(produceResults(page), /acks=all -> ok, offset=0 \(waited \d+ ms\)/);
  await pause(page);
  const waited = Number(/waited (\d+) ms/.exec(result)[1]);
  assert.ok(waited >= frozenFor, `waited ${waited} ms, at least the ${frozenFor} ms broker 3 was frozen`);
  assert.equal(await entry.count(), 0, "the purgatory is empty");
  await waitForText(page.locator('pre[aria-label="kafka-get-offsets"]'), /^rep:0:1$/);
});

test("a frozen follower that falls behind leaves the ISR after replica.lag.time.max.ms", async () => {
  const { page } = await openFresh(app, "/");

  await setRange(page, "replica.lag.time.max.ms", 2000);
  // Keep the controller from fencing the frozen broker (9 s by default), so only the
  // leader's lag check can take it out of the ISR.
  await page.locator("details.advanced > summary").click();
  await setRange(page, "broker.session.timeout.ms", 60000);
  await waitForText(eventLog(page), /--add-config broker\.session\.timeout\.ms=60000/);
  await waitForText(eventLog(page), /--add-config replica\.lag\.time\.max\.ms=2000/);

  // Broker 3 stops at t=0, then a record arrives that it will never fetch.
  await fault(page, "Freeze broker 3");
  await button(page, "Produce").click();
  await setRange(page, "Speed", 666); // 10×
  await play(page);
  await waitForText(describe(page), /Leader: 1 Replicas: 1,2,3 Isr: 1,2 /);
  await pause(page);
  await waitForText(lane(page, 2), /out of sync/);

  // The leader shrank the ISR (not the controller): broker 3 last caught up with its fetch
  // at 40 ms, so it is out once 40 + 2000 ms have passed, at the leader's next lag check.
  const log = await eventLogText(page);
  const shrink = /\[\s*(\d+)\.(\d{3})s\] \[Partition rep-0 broker=1\] Shrinking ISR from 1,2,3 to 1,2\. .*\(brokerId: 3, endOffset: 0, lastCaughtUpTimeMs: (\d+)\)/.exec(log);
  assert.ok(shrink, `no leader-side ISR shrink of broker 3 in the log:\n${log}`);
  const shrunkAt = Number(shrink[1]) * 1000 + Number(shrink[2]);
  const caughtUp = Number(shrink[3]);
  assert.ok(shrunkAt > caughtUp + 2000, `shrunk at ${shrunkAt} ms, within the lag time of ${caughtUp} ms`);
  // Changing the lag time restarts the isr-expiration task on its new period (2000 / 2 ms),
  // so the first check past the lag time comes within one period.
  assert.ok(shrunkAt <= caughtUp + 2000 + 1000, `shrunk at ${shrunkAt} ms, over a check period after ${caughtUp} + 2000 ms`);
  assert.doesNotMatch(log, /Fencing broker 3/);
  // With broker 3 out, the ISR of two meets min.insync.replicas=2 and the write commits.
  const result = await waitForText(produceResults(page), /acks=all -> ok, offset=0 \(waited \d+ ms\)/);
  assert.ok(Number(/waited (\d+) ms/.exec(result)[1]) >= shrunkAt, result);
  await app.screenshot(page, "playground-isr-shrunk");

  // Scrubbed back to just before the lag time ran out, broker 3 is still in the ISR.
  await slider(page, "Timeline").fill(String(caughtUp + 1900));
  await waitForText(clock(page), new RegExp(`^t = ${fmt(caughtUp + 1900).replace(".", "\\.")}$`));
  assert.match(await describe(page).textContent(), /Isr: 1,2,3 /);
});

test("an idle frozen follower stays in the ISR: it is not behind", async () => {
  // Kafka's rule: a follower whose log end equals the leader's is caught up, however long
  // ago it fetched. Opened from a share link at 20 s: frozen at 0, nothing written.
  const scenario = {
    version: 1,
    brokers: 3,
    replication_factor: 3,
    config: {
      "min.insync.replicas": 2,
      "replica.lag.time.max.ms": 2000,
      "broker.session.timeout.ms": 60000,
      "sim.network.latency.ms": 40,
    },
    timeline: [{ at: 0, action: "freeze", broker: 3 }],
  };
  const { page } = await openFresh(app, `/?t=20000${shareHash(scenario)}`);
  assert.equal(await clockMs(page), 20_000);
  assert.match(await describe(page).textContent(), /Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 /);
  assert.match(await laneClass(page, 2), /\bfrozen\b/);
  await waitForText(lane(page, 2), /in ISR/);
  // One record, and the next lag check (within 1 s) takes it out.
  await button(page, "Produce").click();
  await setRange(page, "Speed", 666);
  await play(page);
  await waitForText(describe(page), /Isr: 1,2 /);
  await pause(page);
  assert.ok((await clockMs(page)) > 20_000);
  assert.match(await eventLogText(page), /Shrinking ISR from 1,2,3 to 1,2/);
});

test("killing the leader elects a new leader in a new leader epoch", async () => {
  const { page } = await openFresh(app, "/");
  const controller = page.locator(".cluster g.controller");
  assert.match(await controller.textContent(), /leader epoch 0/);

  await fault(page, "Kill broker 1");
  await waitForText(lane(page, 0), /killed/);
  // Its menu offers what a killed broker allows: Start, not Kill.
  await button(page, "Faults for broker 1").click();
  assert.equal(await menuItem(page, "Start broker 1").isEnabled(), true);
  assert.equal(await menuItem(page, "Kill broker 1").isDisabled(), true);
  await page.keyboard.press("Escape");
  // The controller fences broker 1 after broker.session.timeout.ms (9 s simulated).
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  const line = await waitForText(describe(page), /Leader: 2 /);
  await pause(page);
  assert.match(line, /Leader: 2 Replicas: 1,2,3 Isr: 2,3 /);
  await waitForText(controller, /leader epoch 1/);
  await waitForText(lane(page, 1), /broker 2 · leader/);
  const log = await eventLogText(page);
  assert.match(log, /\[\s*9\.000s\] \[QuorumController\] Fencing broker 1/);
  assert.match(log, /Setting new leader for topic rep, partition 0 to 2 using a clean election \(leader epoch 1\)/);
  // The narration for screen readers says it too.
  await waitForText(page.locator('div.sr-only[aria-live="polite"]'), /leader|ISR/i);
  await app.screenshot(page, "playground-new-leader");
});

test("the timeline scrubs back and forward, and acting in the past discards the future", async () => {
  const { page } = await openFresh(app, "/");
  const timeline = slider(page, "Timeline");
  const backToLive = button(page, "Back to the live run");

  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForClock(page, 3_000);
  await pause(page);
  const killedAt = await clockMs(page);
  await fault(page, "Kill broker 1");
  await play(page);
  await waitForText(describe(page), /Leader: 2 /);
  await waitForClock(page, killedAt + 15_000);
  await pause(page);
  const live = await clockMs(page);
  assert.equal(await timeline.evaluate((el) => Number(el.max)), live);
  assert.equal(await backToLive.count(), 0, "following the live run");

  // Back to before the kill: broker 1 runs and leads.
  const before = killedAt - 500;
  await timeline.fill(String(before));
  await waitForText(clock(page), new RegExp(`^t = ${fmt(before).replace(".", "\\.")}$`));
  assert.match(await describe(page).textContent(), /Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 /);
  assert.match(await laneClass(page, 0), /\brunning\b/);
  await backToLive.waitFor();
  assert.match(await page.locator(".scrub-note").textContent(), /Viewing the past/);
  assert.equal(await button(page, "Play").count(), 1, "scrubbing pauses");
  await app.screenshot(page, "playground-scrubbed-back");

  // Forward, still in the past: after the fence broker 2 leads.
  await timeline.fill(String(killedAt + 12_000));
  await waitForText(describe(page), /Leader: 2 Replicas: 1,2,3 Isr: 2,3 /);
  assert.equal(await clockMs(page), killedAt + 12_000);
  assert.match(await laneClass(page, 0), /\bkilled\b/);

  // Back to the live run: the present again.
  await backToLive.click();
  await backToLive.waitFor({ state: "detached" });
  assert.equal(await clockMs(page), live);
  assert.match(await describe(page).textContent(), /Leader: 2 /);

  // Acting while scrubbed back discards what came after, and says so.
  await timeline.fill(String(before));
  await waitForText(describe(page), /Leader: 1 /);
  await fault(page, "Freeze broker 3");
  const note = await waitForText(notice(page), /discarded/);
  assert.match(note, new RegExp(`Acting at ${fmt(before).replace(".", "\\.")} discarded the ${live - before} ms that had been simulated after it`));
  await backToLive.waitFor({ state: "detached" });
  assert.equal(await timeline.evaluate((el) => Number(el.max)), before, "the live run now ends where we acted");
  assert.match(await describe(page).textContent(), /Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 /, "the kill is gone");
  assert.match(await laneClass(page, 0), /\brunning\b/);
  assert.match(await laneClass(page, 2), /\bfrozen\b/);
});

test("the keyboard plays, pauses, steps and goes back; ? opens the help; Tab reaches every action", async () => {
  const { page } = await openFresh(app, "/?t=5000");
  assert.equal(await clockMs(page), 5000, "?t=5000 opens at 5 s");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts", exact: true });

  await page.keyboard.press("?");
  await help.waitFor();
  assert.match(await help.textContent(), /Play or pause/);
  await app.screenshot(page, "playground-help");
  await page.keyboard.press("?");
  await help.waitFor({ state: "detached" });
  await page.keyboard.press("?");
  await help.waitFor();
  await page.keyboard.press("Escape");
  await help.waitFor({ state: "detached" });

  // ← goes back 100 ms (into the past), → runs the next event from there.
  await page.keyboard.press("ArrowLeft");
  await waitForText(clock(page), /^t = 0:04\.900$/);
  await button(page, "Back to the live run").waitFor();
  await page.keyboard.press("ArrowRight");
  const stepped = parseClock(await waitForText(clock(page), /^t = 0:0[45]\.\d{3}$/));
  await poll(async () => (await clockMs(page)) > 4900, { message: async () => await clock(page).textContent() });
  assert.ok((await clockMs(page)) <= 5000, `one step from 4.900 s stays within the run (at ${stepped})`);

  // Space plays and pauses: the Play/Pause button's name follows.
  await page.keyboard.press(" ");
  await button(page, "Pause").waitFor();
  const from = await clockMs(page);
  await poll(async () => (await clockMs(page)) > from + 50);
  await page.keyboard.press(" ");
  await button(page, "Play").waitFor();
  const stopped = await clockMs(page);
  await new Promise((ok) => setTimeout(ok, 200));
  assert.equal(await clockMs(page), stopped, "paused: the clock stands still");

  // Tab goes through every control; Enter on a focused button acts.
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      return el?.getAttribute("aria-label") ?? (el?.getAttribute("role") === "menuitem" ? el.textContent : el?.tagName);
    });
  // One full round: stop at the first element focused twice.
  const seen = [];
  for (let i = 0; i < 150; i++) {
    await page.keyboard.press("Tab");
    const { name, again } = await page.evaluate(() => {
      const el = document.activeElement;
      window.__tabbed ??= new WeakSet();
      const again = window.__tabbed.has(el);
      window.__tabbed.add(el);
      return { name: el?.getAttribute("aria-label") ?? el?.tagName, again };
    });
    if (again) break;
    seen.push(name);
  }
  const actions = [
    "Keyboard shortcuts", "Play", "Step one event", "Speed", "Timeline",
    "Brokers", "Replication factor", "min.insync.replicas", "replica.lag.time.max.ms",
    "Value", "Records", "acks", "Produce", "Consume", "Consume from the beginning",
    "Elect the preferred leader", "Force an unclean election", "Share", "Preset",
  ];
  for (const id of [1, 2, 3]) actions.push(`Faults for broker ${id}`);
  const missing = actions.filter((a) => !seen.includes(a));
  assert.deepEqual(missing, [], `not reached with Tab; the order was:\n  ${seen.join("\n  ")}`);

  // A broker's faults from the keyboard: Enter on its lane's button opens its menu on the
  // first item it allows; the arrows skip what its state forbids; Enter acts and gives the
  // focus back to the lane's button.
  await poll(async () => {
    if ((await focused()) === "Faults for broker 3") return true;
    await page.keyboard.press("Tab");
    return false;
  }, { interval: 0 });
  await page.keyboard.press("Enter");
  await page.getByRole("menu", { name: "Broker 3", exact: true }).waitFor();
  await poll(async () => (await focused()) === "Freeze broker 3", { message: focused });
  await page.keyboard.press("ArrowDown");
  assert.equal(await focused(), "Kill broker 3", "Thaw is disabled (broker 3 is not frozen) and skipped");
  await page.keyboard.press("ArrowUp");
  assert.equal(await focused(), "Freeze broker 3");
  await page.keyboard.press("End");
  assert.equal(await focused(), "Lose the disk of broker 3");
  await page.keyboard.press("Home");
  assert.equal(await focused(), "Freeze broker 3");
  await page.keyboard.press("Enter");
  await page.getByRole("menu").waitFor({ state: "detached" });
  await poll(async () => /\bfrozen\b/.test(await laneClass(page, 2)));
  assert.equal(await focused(), "Faults for broker 3", "the focus is back on the lane's button");
  assert.equal(await button(page, "Play").count(), 1, "Enter acted; it did not play");
  // Frozen: now Thaw is the first item allowed and Freeze is disabled; Escape closes.
  await page.keyboard.press("Enter");
  await poll(async () => (await focused()) === "Thaw broker 3", { message: focused });
  assert.equal(await menuItem(page, "Freeze broker 3").isDisabled(), true);
  await page.keyboard.press("Escape");
  await page.getByRole("menu").waitFor({ state: "detached" });
  assert.equal(await focused(), "Faults for broker 3");
  assert.match(await laneClass(page, 2), /\bfrozen\b/, "Escape did nothing else");
  // Space on the lane's button opens the menu too (and does not play); Enter thaws.
  await page.keyboard.press(" ");
  await poll(async () => (await focused()) === "Thaw broker 3", { message: focused });
  await page.keyboard.press("Enter");
  await poll(async () => !/\bfrozen\b/.test(await laneClass(page, 2)));
  assert.equal(await button(page, "Play").count(), 1);
});

test("a share link opens its scenario; each cell says in words whether it is committed, and its producer id and sequence", async () => {
  const scenario = {
    version: 1,
    brokers: 3,
    replication_factor: 3,
    config: { "sim.network.latency.ms": 40, "min.insync.replicas": 2 },
    timeline: [
      { at: 0, action: "produce", acks: "all", prefix: "c", count: 3 },
      { at: 1000, action: "freeze", broker: 2 },
      { at: 1000, action: "freeze", broker: 3 },
      { at: 1500, action: "produce", acks: "1", values: ["tail"] },
    ],
  };
  const { page } = await openFresh(app, `/?t=2000${shareHash(scenario)}`);
  assert.equal(await clockMs(page), 2000);
  const titles = await page
    .locator(".cluster g.cell")
    .evaluateAll((cells) => cells.map((c) => [c.getAttribute("class"), c.querySelector("title").textContent]));
  assert.ok(
    titles.some(([k, t]) => k === "cell committed" && t === "offset 0 epoch 0: c1 (committed), producerId 0 producerEpoch 0 sequence 0"),
    JSON.stringify(titles),
  );
  assert.ok(
    titles.some(([k, t]) => k === "cell uncommitted" && t === "offset 3 epoch 0: tail (not yet committed)"),
    JSON.stringify(titles),
  );
  assert.equal(titles.filter(([k]) => k === "cell committed").length, 9, "three records on three replicas");
  assert.match(await page.locator('pre[aria-label="kafka-get-offsets"]').textContent(), /^rep:0:3$/);
});

test("messages fly between the brokers, labelled in Kafka's fields, moving only while the clock does", async () => {
  // 300 ms of network latency keeps each message in flight for many frames.
  const scenario = {
    version: 1,
    brokers: 3,
    replication_factor: 3,
    config: { "sim.network.latency.ms": 300 },
    timeline: [{ at: 0, action: "produce", acks: "all", values: ["m"] }],
  };
  const { page } = await openFresh(app, `/?t=1000${shareHash(scenario)}`);
  await play(page);
  const fetch = page.locator(".cluster g.packet.fetch").first();
  await fetch.waitFor({ timeout: 10_000 });
  const [label, title] = await fetch.evaluate((g) => [g.querySelector("text").textContent, g.querySelector("title").textContent]);
  assert.match(label, /^Fetch replicaId=[23] fetchOffset=1 lastFetchedEpoch=0 currentLeaderEpoch=0$/);
  assert.match(title, /^broker [23] → broker 1: Fetch replicaId=[23] fetchOffset=1 /);
  // Responses carry the leader's high watermark.
  await waitForText(page.locator(".cluster g.packet.fetchresponse text").first(), /^FetchResponse records=0 highWatermark=1$/);

  // While playing, one and the same message moves from frame to frame.
  await poll(
    () =>
      page.evaluate(
        () =>
          new Promise((resolve) => {
            // Slots are pooled (web/src/cluster.rs): the same message is the same data-id.
            const g = document.querySelector(".cluster g.packet");
            const [id, before] = [g?.getAttribute("data-id"), g?.getAttribute("transform")];
            setTimeout(
              () =>
                resolve(Boolean(g?.isConnected && g.matches(".packet") && g.getAttribute("data-id") === id && g.getAttribute("transform") !== before)),
              100,
            );
          }),
      ),
    { timeout: 5_000, message: async () => "no message moved in 100 ms" },
  );
  // Paused, nothing moves.
  const transforms = async () => (await page.locator(".cluster g.packet").evaluateAll((gs) => gs.map((g) => g.getAttribute("transform")))).join(" | ");
  await pause(page);
  await poll(
    async () => {
      if ((await page.locator(".cluster g.packet").count()) > 0) return true;
      await button(page, "Step one event").click();
      return false;
    },
    { timeout: 10_000, interval: 0, message: async () => "no message in flight after stepping" },
  );
  const still = await transforms();
  await page.waitForTimeout(500);
  assert.equal(await transforms(), still);
});

test("a message that arrived leaves a trail at its destination for 0.6 s of simulated time, and a dropped one says why", async () => {
  // At the default 40 ms a message flies for two or three frames at 1×; its trail (a hollow
  // ring where it arrived, the path it took, its label) is what a person can follow.
  const scenario = {
    version: 1,
    brokers: 3,
    replication_factor: 3,
    timeline: [{ at: 0, action: "produce", acks: "all", values: ["m"] }],
  };
  const { page } = await openFresh(app, `/?t=4000${shareHash(scenario)}`);
  const timeline = slider(page, "Timeline");
  const at_ = async (ms) => {
    await timeline.fill(String(ms));
    await waitForText(clock(page), new RegExp(`^t = ${fmt(ms).replace(".", "\\.")}$`));
    return (await drawn()).find((d) => d.id === trail?.id);
  };
  const drawn = () =>
    page.locator(".cluster g.flights").evaluate((f) =>
      [...f.children]
        .filter((g) => !g.matches(".free"))
        .map((g) => ({
          id: g.dataset.id,
          trail: g.matches(".trail"),
          packet: g.matches(".packet"),
          kind: [...g.classList].filter((k) => !["trail", "packet", "dropped", "buffered"].includes(k)).join(" "),
          transform: g.getAttribute("transform"),
          label: g.querySelector("text").textContent,
          title: g.querySelector("title").textContent,
          fade: g.style.getPropertyValue("--fade"),
        })),
    );
  // At 2.5 s the cluster is idle: each follower's fetch waits at the leader.
  let trail;
  await at_(2500);
  const trails = (await drawn()).filter((d) => d.trail);
  trail = trails.find((d) => d.kind === "fetch");
  assert.ok(trail, `a fetch's trail is drawn at 2500 ms: ${JSON.stringify(await drawn())}`);
  const at = Number(/; arrived at (\d+) ms$/.exec(trail.title)?.[1]);
  assert.ok(at <= 2500 && at > 1900, `${trail.title}`);
  assert.match(trail.title, /^broker [23] → broker 1: Fetch replicaId=[23] fetchOffset=1 /);
  assert.match(trail.label, /^Fetch replicaId=[23] fetchOffset=1 lastFetchedEpoch=0 currentLeaderEpoch=0$/);
  // What arrived is never also drawn in flight.
  for (const d of await drawn()) assert.ok(d.trail !== d.packet, JSON.stringify(d));
  assert.equal((await drawn()).filter((d) => d.id === trail.id).length, 1);

  // Scrubbed to just before it arrived, it is in flight (a filled dot) on its way; at the
  // moment it arrived, a trail at one place, fading in steps, until 600 ms later or until
  // the next message on its route arrives (an idle follower's next fetch reaches the leader
  // about 500 ms later: the leader holds each fetch for replica.fetch.wait.max.ms, 500).
  const flying = await at_(at - 1);
  assert.ok(flying?.packet && !flying.trail, `in flight at ${at - 1}: ${JSON.stringify(flying)}`);
  const landed = await at_(at);
  assert.ok(landed?.trail, `a trail at ${at}`);
  await page.locator(".cluster").screenshot({ path: `${OUTPUT_DIR}/playground-trail.png` });
  assert.equal(landed.fade, "0.9");
  assert.notEqual(landed.transform, flying.transform);
  const mid = await at_(at + 300);
  assert.equal(mid?.fade, "0.6", `fading at ${at + 300}`);
  const late = await at_(at + 450);
  assert.ok(late?.trail, `still a trail at ${at + 450}`);
  assert.equal(late.transform, landed.transform, "a trail stays where the message arrived");
  assert.equal(late.fade, "0.3", `faded at ${at + 450}`);
  assert.equal(await at_(at + 600), undefined, `gone at ${at + 600}`);
  // Gone, or replaced by the next message on its route: one trail per route.
  const route = trail.title.split(":")[0];
  const onRoute = (await drawn()).filter((d) => d.trail && d.title.startsWith(`${route}:`));
  assert.ok(onRoute.length <= 1, JSON.stringify(onRoute));
  for (const d of onRoute) assert.ok(Number(/; arrived at (\d+) ms$/.exec(d.title)?.[1]) > at, d.title);

  // A message on a link cut while it flew: dropped, in red, saying why.
  const cut = {
    version: 1,
    brokers: 2,
    config: { "sim.network.latency.ms": 300 },
    timeline: [{ at: 100, action: "cut", a: 1, b: 2 }],
  };
  const other = await openFresh(app, `/?t=320${shareHash(cut)}`);
  const dropped = await other.page.locator(".cluster g.trail.dropped").first();
  await dropped.waitFor({ state: "attached" });
  assert.match(await dropped.locator("text").textContent(), /^Fetch(Response)? dropped: the link is cut$/);
  assert.match(await dropped.locator("title").textContent(), /; dropped: the link is cut at 3\d\d ms$/);
});

test("a message drawn in flight that reaches a frozen broker turns into a waiting one", async () => {
  // Broker 2's fetch reaches the leader at 300 ms and is held 500 ms; the answer flies from
  // about 800 ms and reaches broker 2, frozen at 200 ms, at about 1100 ms.
  const scenario = {
    version: 1,
    brokers: 2,
    config: { "sim.network.latency.ms": 300 },
    timeline: [{ at: 200, action: "freeze", broker: 2 }],
  };
  const { page } = await openFresh(app, `/?t=900${shareHash(scenario)}`);
  const answer = page.locator(".cluster g.packet.fetchresponse");
  await answer.first().waitFor({ state: "attached" });
  const id = await answer.first().getAttribute("data-id");
  assert.doesNotMatch(await answer.first().getAttribute("class"), /buffered/);
  await play(page);
  await waitForClock(page, 1_300);
  await pause(page);
  const same = page.locator(`.cluster g[data-id="${id}"]`);
  assert.equal(await same.getAttribute("class"), "packet fetchresponse buffered", "the same slot, now waiting in the socket buffer");
});

test("the event log follows its newest line while it grows, unless the reader scrolled up", async () => {
  const scenario = {
    version: 1,
    timeline: Array.from({ length: 60 }, (_, i) => ({ at: i * 100, action: "produce", acks: "1", values: [`v${i}`] })),
  };
  const { page } = await openFresh(app, `/?t=2000${shareHash(scenario)}`);
  const log = page.locator("ol.log");
  const position = () => log.evaluate((ol) => [ol.scrollTop, ol.clientHeight, ol.scrollHeight]);
  const atBottom = ([top, height, all]) => top + height >= all - 24;
  /** Resolves after the page has drawn two more frames (the log is scrolled in a frame). */
  const frames = () => page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  await play(page);
  await waitForClock(page, 3_000);
  // Lines keep arriving (a produce every 100 ms) and the log keeps its newest in view.
  await poll(async () => atBottom(await position()), { timeout: 5_000, message: async () => `${await position()}` });
  await pause(page);
  await frames();
  const [, height, all] = await position();
  assert.ok(all > height * 1.5, `the log overflows its box: ${all} px in ${height}`);
  assert.ok(atBottom(await position()));

  // The log grows (an action adds a line) and the reader scrolls up before the next frame,
  // which would scroll it: the reader stays where they are. (Done in one task, so no frame
  // comes between; the scroll event is dispatched at once, as the browser does before the
  // frame's callbacks.)
  // (Broker 3's faults are in its lane's menu: open it first; choosing the item is the act.)
  await button(page, "Faults for broker 3").click();
  await menuItem(page, "Freeze broker 3").waitFor();
  await page.evaluate(async () => {
    const ol = document.querySelector("ol.log");
    const before = ol.children.length;
    const freeze = [...document.querySelectorAll('[role="menuitem"]')].find((b) => b.textContent.trim() === "Freeze broker 3");
    freeze.click();
    // The new line is drawn in microtasks (Leptos' effects), within this task.
    for (let i = 0; i < 1000 && ol.children.length === before; i++) await Promise.resolve();
    if (ol.children.length === before) throw new Error("the action added no line");
    for (let i = 0; i < 100; i++) await Promise.resolve();
    ol.scrollTop = 0;
    ol.dispatchEvent(new Event("scroll"));
  });
  await frames();
  assert.equal((await position())[0], 0, "the reader is not pulled back to the newest line");

  // Scrolled up, it stays where the reader put it while lines arrive.
  await play(page);
  const lines = await log.locator("li").count();
  await poll(async () => (await log.locator("li").count()) > lines + 3);
  await pause(page);
  await frames();
  assert.equal((await position())[0], 0, "the reader's place is kept");

  // Back at the bottom, it follows again.
  await log.evaluate((ol) => {
    ol.scrollTop = ol.scrollHeight;
    ol.dispatchEvent(new Event("scroll"));
  });
  await fault(page, "Thaw broker 3");
  await poll(async () => atBottom(await position()), { message: async () => `${await position()}` });
});

test("off screen the read-outs are not rendered, and shown again the event log is at its newest line", async () => {
  // A cluster whose overview (100 partitions) puts the read-outs far below the window:
  // the case where rendering them every frame cost the most (BENCHMARKS.md, "UI").
  const racks = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [String(i + 1), `z${(i + 1) % 3}`]));
  const scenario = {
    version: 2,
    brokers: 12,
    racks,
    topics: Array.from({ length: 10 }, (_, t) => ({ name: `t${t}`, partitions: 10, replication_factor: 3 })),
    timeline: Array.from({ length: 60 }, (_, i) => ({ at: i * 100, action: "produce", acks: "1", values: [`v${i}`], topic: "t0", partition: 0 })),
  };
  const { page } = await openFresh(app, `/?t=1000${shareHash(scenario)}`);
  const readouts = page.locator("section.readouts");
  const log = page.locator("ol.log");
  // checkVisibility with contentVisibilityAuto is false for what the browser skips: the
  // section's contents (content-visibility: auto, style/main.css), not the section itself.
  const rendered = () => log.evaluate((ol) => ol.checkVisibility({ contentVisibilityAuto: true }));
  const frames = () => page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  assert.ok((await readouts.evaluate((s) => s.getBoundingClientRect().top)) > 2 * 640, "the read-outs start far below the window");
  await frames();
  assert.equal(await rendered(), false, "off screen, the read-outs are not rendered");
  // Lines arrive while nobody sees the log; its DOM is current all the same.
  const before = await log.locator("li").count();
  await play(page);
  await waitForClock(page, 4_000);
  await pause(page);
  assert.ok((await log.locator("li").count()) > before + 10, "the log's lines were added off screen");
  assert.match(await eventLogText(page), /acks=1 -> t0-0: ok, offset=3\d/);
  // A reader scrolls down to it: it is rendered, scrolled to its newest line.
  await readouts.evaluate((s) => s.scrollIntoView({ block: "start" }));
  await poll(rendered, { timeout: 5_000, message: async () => "the read-outs were not rendered once in view" });
  await frames();
  const [top, height, all] = await log.evaluate((ol) => [ol.scrollTop, ol.clientHeight, ol.scrollHeight]);
  assert.ok(all > height, `the log overflows its box: ${all} px in ${height}`);
  assert.ok(top + height >= all - 24, `the log shows its newest line: scrolled to ${top} of ${all} px in ${height}`);
});

test("on a 375 px phone and in dark mode the page fits its width and keeps the cluster view", async () => {
  const scenario = {
    version: 1,
    brokers: 3,
    replication_factor: 3,
    config: { "sim.network.latency.ms": 40, "min.insync.replicas": 2 },
    timeline: [{ at: 0, action: "produce", acks: "all", prefix: "r", count: 6 }],
  };
  const { page } = await openFresh(app, `/?t=1500${shareHash(scenario)}`, { colorScheme: "dark" });
  await page.setViewportSize({ width: 375, height: 740 });
  // The cluster view follows the window's width (web/src/app.rs, on resize).
  await poll(async () => (await page.locator(".cluster").evaluate((s) => s.getBoundingClientRect().width)) <= 375);
  const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(widths[0] <= widths[1], `the page scrolls sideways: ${widths[0]} px wide in a ${widths[1]} px window`);
  assert.equal(await lanes(page).count(), 3);
  assert.ok((await page.locator(".cluster g.cell").count()) > 0, "cells are drawn");
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), "rgb(15, 18, 22)");
  await button(page, "Produce").scrollIntoViewIfNeeded();
  assert.ok(await button(page, "Produce").isVisible());
  await app.screenshot(page, "playground-375-dark");

  await page.setViewportSize({ width: 1280, height: 800 });
  await poll(async () => (await page.locator(".cluster").evaluate((s) => s.getBoundingClientRect().width)) > 375);
  await app.screenshot(page, "playground-desktop-dark");
});

test("on a 375 px and a 320 px phone every control of a cluster's page is in the window, or in a box that scrolls", async () => {
  // A version-2 cluster (the produce row's partitioner, key and size; the overview; zones)
  // and a side-by-side one, every <details> opened.
  for (const [path, width] of [
    ["/?preset=zone-outage&t=20000", 375],
    ["/?preset=topic-min-isr-side-by-side&t=20000", 375],
    ["/?preset=unclean-by-replica-order&t=52100", 320],
  ]) {
    const { page } = await openFresh(app, path);
    await page.setViewportSize({ width, height: 740 });
    await page.locator(".produce").first().waitFor();
    for (const summary of await page.locator("details:not([open]) > summary").all()) {
      if (await summary.isVisible()) await summary.click();
    }
    await poll(async () => {
      const out = await page.evaluate(() => {
        const bad = [];
        for (const e of document.querySelectorAll("button, input, select, a, textarea, summary")) {
          const r = e.getBoundingClientRect();
          if (r.width === 0 || r.height === 0 || (r.right <= window.innerWidth + 1 && r.left >= -1)) continue;
          let up = e.parentElement;
          while (up && !(/(auto|scroll)/.test(getComputedStyle(up).overflowX) && up.scrollWidth > up.clientWidth)) up = up.parentElement;
          if (!up) bad.push(`${e.getAttribute("aria-label") || e.textContent.trim().slice(0, 30)} at ${Math.round(r.left)}–${Math.round(r.right)} px`);
        }
        return bad;
      });
      return out.length === 0 || out;
    }).then((r) => assert.equal(r, true, `${path}: out of reach: ${r}`));
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `${path} at ${width} px: the page scrolls sideways: ${widths}`);
  }
});

/** 5000 → `0:05.000`, as the page's clock shows it. */
function fmt(ms) {
  return `${Math.floor(ms / 60_000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}.${String(ms % 1000).padStart(3, "0")}`;
}
