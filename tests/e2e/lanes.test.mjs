// Acting where one looks (issue 12): each broker's faults in a menu on its lane (click,
// keyboard, context menu), produce and consume next to the picture, a legend for every mark
// drawn, Undo after a new cluster discards a session, and a preset's walkthrough (step n of
// N, Previous, Next, a pause at each caption while playing, an end). Each test acts as a
// person does, through accessible names, and polls for what the page shows.

import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_READY, useApp } from "../lib/harness.mjs";
import { presetScenario } from "../lib/links.mjs";
import {
  button,
  clockMs,
  describe,
  eventLog,
  fault,
  laneState,
  menuItem,
  notice,
  openFresh,
  pause,
  play,
  poll,
  setRange,
  shareHash,
  SPEED_MAX,
  waitForClock,
  waitForText,
} from "../lib/ui.mjs";

const app = useApp();

const menu = (page) => page.getByRole("menu");
const laneView = (page, id) => page.locator(".cluster svg.lane-view").nth(id - 1);
const itemsOf = (page) =>
  menu(page).getByRole("menuitem").evaluateAll((items) => items.map((i) => [i.textContent, !i.disabled]));

test("each broker's faults are in a menu on its lane, allowed as its state allows", async () => {
  const { page } = await openFresh(app, "/");
  for (const id of [1, 2, 3]) assert.equal(await button(page, `Faults for broker ${id}`).count(), 1);
  assert.equal(await button(page, "Freeze broker 2").count(), 0, "no row of fault buttons any more");

  // Click: the menu lists broker 2's actions; what a running broker cannot do is disabled.
  const open2 = button(page, "Faults for broker 2");
  await open2.click();
  assert.equal(await open2.getAttribute("aria-expanded"), "true");
  assert.deepEqual(await itemsOf(page), [
    ["Freeze broker 2", true],
    ["Thaw broker 2", false],
    ["Kill broker 2", true],
    ["Stop broker 2", true],
    ["Start broker 2", false],
    ["Slow broker 2…", true],
    ["Cut broker 2 from the controller", true],
    ["Cut broker 2 from broker 1", true],
    ["Cut broker 2 from broker 3", true],
    ["Cut the power to broker 2", true],
    ["Lose the disk of broker 2", true],
  ]);
  await menuItem(page, "Freeze broker 2").click();
  await menu(page).waitFor({ state: "detached" });
  await poll(async () => /\bfrozen\b/.test(await laneState(page, 2)));
  assert.equal(await open2.getAttribute("aria-expanded"), "false");

  // The lane's context menu opens the same menu; frozen, it offers Thaw and not Freeze.
  await laneView(page, 2).click({ button: "right", position: { x: 420, y: 40 } });
  await page.getByRole("menu", { name: "Broker 2", exact: true }).waitFor();
  assert.equal(await menuItem(page, "Freeze broker 2").isDisabled(), true);
  assert.equal(await menuItem(page, "Thaw broker 2").isEnabled(), true);
  await menuItem(page, "Thaw broker 2").click();
  await poll(async () => !/\bfrozen\b/.test(await laneState(page, 2)));

  // A click outside closes the menu without acting.
  await open2.click();
  await menu(page).waitFor();
  await page.locator(".masthead h1").click();
  await menu(page).waitFor({ state: "detached" });

  // Slow asks for the delay, and says which field is wrong and what it takes.
  await open2.click();
  await menuItem(page, "Slow broker 2…").click();
  const delay = page.getByRole("textbox", { name: "Delay (ms) for broker 2", exact: true });
  await delay.waitFor();
  await poll(async () => (await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))) === "Delay (ms) for broker 2");
  const alert = page.getByRole("dialog", { name: "Slow broker 2" }).getByRole("alert");
  for (const bad of ["abc", "0", "700000"]) {
    await delay.fill(bad);
    await delay.press("Enter");
    await waitForText(alert, new RegExp(`^Delay \\(ms\\) must be a whole number from 1 to 600000; got “${bad}”\\.$`));
    assert.equal(await delay.getAttribute("aria-invalid"), "true");
  }
  assert.doesNotMatch(await laneView(page, 2).textContent(), /slow/, "nothing was done");
  await delay.fill("250");
  await button(page, "Slow broker 2").click();
  await waitForText(laneView(page, 2), /· slow/);
  await open2.click();
  await menuItem(page, "Speed up broker 2").click();
  await poll(async () => !/· slow/.test(await laneView(page, 2).textContent()));

  // Cut links name the peer: each other broker and the controller.
  await fault(page, "Cut broker 2 from broker 1");
  await open2.click();
  assert.equal(await menuItem(page, "Heal broker 2 to broker 1").count(), 1);
  assert.equal(await menuItem(page, "Cut broker 2 from broker 3").count(), 1, "only that link is cut");
  await page.keyboard.press("Escape");
  await menu(page).waitFor({ state: "detached" });
  await waitForText(eventLog(page), /cut/i);
  await app.screenshot(page, "lanes-menu");
});

for (const width of [1440, 700]) {
  test(`produce and consume sit by the picture: acting keeps it in view (${width} px)`, async () => {
    const { page } = await openFresh(app, "/");
    await page.setViewportSize({ width, height: 900 });
    await page.reload({ waitUntil: "load" });
    await page.locator(APP_READY).waitFor({ state: "attached" });
    const inView = async (what, locator) => {
      const box = await locator.boundingBox();
      const top = await page.evaluate(() => window.scrollY);
      assert.ok(box, `${what} is drawn`);
      assert.ok(box.y >= 0 && box.y + box.height <= 900, `${what} in view after acting: y ${box.y}, height ${box.height}, scrolled ${top}`);
    };
    const cluster = page.locator(".cluster");
    await inView("the cluster", cluster);
    for (const name of ["Produce", "Consume", "Consume from the beginning"]) {
      await button(page, name).click();
      await inView("the cluster", cluster);
      await inView(name, button(page, name));
    }
    await fault(page, "Freeze broker 3");
    await inView("the cluster", cluster);
    await waitForText(eventLog(page), /Freeze|SIGSTOP|frozen/i);
    await app.screenshot(page, `lanes-acting-${width}`);
  });
}

/** Every mark the picture draws now, by the class it is drawn with. */
const drawnMarks = (page) =>
  page.locator(".cluster").evaluate((c) => {
    const marks = new Set();
    const add = (el, skip) => {
      for (const k of el.classList) if (k !== skip) marks.add(k);
    };
    c.querySelectorAll("g.cell").forEach((g) => add(g, "cell"));
    c.querySelectorAll("g.packet").forEach((g) => add(g, "packet"));
    c.querySelectorAll("g.trail").forEach((g) => add(g, ""));
    c.querySelectorAll("g.lane").forEach((g) => add(g, "lane"));
    if (c.querySelector("text.epoch")) marks.add("epoch");
    for (const k of ["hw-marker", "leo-marker", "lag"]) if (c.querySelector(`g.${k}`)) marks.add(k);
    return [...marks];
  });

test("the legend names every mark the picture draws", async () => {
  const seen = new Set();
  const look = async (page) => {
    for (const m of await drawnMarks(page)) seen.add(m);
  };
  // Records in every state, frozen followers, messages in flight and buffered.
  const busy = {
    version: 1,
    config: { "min.insync.replicas": 2, "sim.network.latency.ms": 40 },
    timeline: [
      { at: 0, action: "produce", acks: "all", prefix: "c", count: 3 },
      { at: 1000, action: "freeze", broker: 2 },
      { at: 1000, action: "freeze", broker: 3 },
      { at: 1500, action: "produce", acks: "1", values: ["tail"] },
    ],
  };
  const { page } = await openFresh(app, `/?t=1540${shareHash(busy)}`);
  await look(page);
  // A killed leader, fenced, and a new leader.
  await fault(page, "Kill broker 1");
  await setRange(page, "Speed", SPEED_MAX);
  for (let i = 0; i < 40; i++) {
    await button(page, "Step one event").click();
    await look(page);
  }
  // An unclean election: records lost, then truncated away.
  await page.goto(`${app.url}?preset=unclean-election`);
  await page.locator(APP_READY).waitFor({ state: "attached" });
  await page.getByRole("checkbox", { name: "Pause at each step", exact: true }).uncheck();
  await setRange(page, "Speed", 500);
  await play(page);
  await poll(async () => {
    await look(page);
    return seen.has("truncated");
  }, { timeout: 60_000, interval: 20, message: async () => [...seen].join(" ") });
  await pause(page);

  for (const m of ["committed", "uncommitted", "lost", "truncated", "epoch", "hw-marker", "leo-marker", "lag",
    "leader", "follower", "frozen", "killed", "fetchresponse"]) {
    assert.ok(seen.has(m), `the run drew ${m} (seen: ${[...seen].join(" ")})`);
  }
  const legend = page.locator("details.legend");
  await legend.locator("summary").click();
  const explained = new Set(
    (await legend.locator("li[data-mark]").evaluateAll((lis) => lis.map((li) => li.dataset.mark))).flatMap((m) => m.split(" ")),
  );
  const missing = [...seen].filter((m) => !explained.has(m));
  assert.deepEqual(missing, [], "every mark drawn has a legend entry");
  for (const li of await legend.locator("li").all()) {
    assert.ok(await li.isVisible());
    assert.ok((await li.textContent()).length > 10, "each entry says what the mark means");
  }
  await app.screenshot(page, "lanes-legend");
});

/** What the page shows of the session, to compare before and after Undo. */
async function shown(page) {
  return {
    clock: await page.getByLabel("Simulated time", { exact: true }).textContent(),
    describe: await describe(page).textContent(),
    lanes: await page.locator(".cluster g.lane").evaluateAll((ls) => ls.map((l) => l.getAttribute("class") + l.textContent)),
    log: await eventLog(page).locator("li").allTextContents(),
  };
}

test("changing brokers or the replication factor after acting can be undone, exactly", async () => {
  const { page } = await openFresh(app, "/");
  // Without actions there is nothing to lose: no Undo.
  await setRange(page, "Brokers", 4);
  await poll(async () => (await page.locator(".cluster g.lane").count()) === 4);
  assert.equal(await button(page, "Undo").count(), 0);
  await setRange(page, "Brokers", 3);

  await button(page, "Produce").click();
  await fault(page, "Freeze broker 3");
  await setRange(page, "Speed", 700);
  await play(page);
  await waitForClock(page, 3_000);
  await pause(page);
  const before = await shown(page);

  for (const [slider, value, lanes] of [["Brokers", 5, 5], ["Replication factor", 2, 3]]) {
    await setRange(page, slider, value);
    await waitForText(page.locator("p.notice"), /Started a new cluster/);
    await poll(async () => (await page.locator(".cluster g.lane").count()) === lanes);
    assert.equal(await clockMs(page), 0, `${slider}: a new cluster`);
    await waitForText(page.locator(".undo-bar"), /The previous session \(2 actions on its timeline\) was put aside\./);
    await button(page, "Undo").click();
    await waitForText(page.locator("p.notice"), /Restored the session from before the new cluster\./);
    assert.equal(await button(page, "Undo").count(), 0);
    assert.deepEqual(await shown(page), before, `${slider}: the session is back as it was`);
    assert.match(await laneState(page, 3), /\bfrozen\b/);
  }
});

test("a preset's walkthrough: step n of N, Previous and Next, a pause at each caption, an end", async () => {
  const preset = presetScenario("frozen-follower");
  const notes = preset.timeline.filter((a) => a.action === "note");
  const n = notes.length;
  const { page } = await openFresh(app, "/?preset=frozen-follower");
  const step = page.getByTestId("step");
  const caption = page.getByTestId("caption");
  const next = button(page, "Next step");
  const previous = button(page, "Previous step");

  assert.equal(await step.textContent(), `Step 0 of ${n}`);
  assert.equal(await previous.isDisabled(), true);
  await next.click();
  assert.equal(await step.textContent(), `Step 1 of ${n}`);
  await next.click();
  assert.equal(await step.textContent(), `Step 2 of ${n}`);
  assert.equal(await caption.textContent(), notes[1].text);
  await previous.click();
  await waitForText(step, new RegExp(`^Step 1 of ${n}$`));
  assert.equal(await clockMs(page), notes[0].at, "Previous goes back to the caption's time");
  assert.equal(await caption.textContent(), notes[0].text);

  // Playing stops at the next caption, and shows it.
  await setRange(page, "Speed", 500);
  await play(page);
  await button(page, "Play").waitFor();
  assert.equal(await step.textContent(), `Step 2 of ${n}`);
  assert.equal(await clockMs(page), notes[1].at, "paused at the caption's own time");
  await play(page);
  await button(page, "Play").waitFor();
  assert.equal(await step.textContent(), `Step 3 of ${n}`);
  assert.equal(await clockMs(page), notes[2].at);

  // "Step one event" runs one event; the walkthrough stays at its step.
  const t = await clockMs(page);
  await button(page, "Step one event").click();
  await poll(async () => (await clockMs(page)) > t);
  assert.ok((await clockMs(page)) < notes[3].at, "one event, not the next caption");
  assert.equal(await step.textContent(), `Step 3 of ${n}`);

  // To the end: it says so and offers to replay.
  for (let i = 0; i < n + 2 && (await next.count()); i++) await next.click();
  await waitForText(step, /^End of the walkthrough$/);
  assert.equal(await clockMs(page), preset.end_ms);
  assert.equal(await next.count(), 0);
  await app.screenshot(page, "lanes-walkthrough-end");
  await button(page, "Replay the walkthrough").click();
  await waitForText(step, new RegExp(`^Step 1 of ${n}$`));
  await button(page, "Play").waitFor();
  assert.equal(await clockMs(page), notes[0].at);
});

test("on a 375 px phone the walkthrough's caption is readable and its buttons are in the window", async () => {
  const { page } = await openFresh(app, "/?preset=unclean-by-replica-order&t=20000");
  await page.setViewportSize({ width: 375, height: 740 });
  const bar = page.getByRole("group", { name: "Walkthrough", exact: true });
  await bar.waitFor();
  for (const control of [
    button(page, "Previous step"),
    button(page, "Next step"),
    page.getByRole("checkbox", { name: "Pause at each step", exact: true }),
  ]) {
    await poll(async () => {
      const box = await control.boundingBox();
      return box && box.x >= 0 && box.x + box.width <= 375;
    }, { message: async () => `${await control.evaluate((e) => e.outerHTML)} lies outside the window: ${JSON.stringify(await control.boundingBox())}` });
  }
  // The caption keeps at least 12rem of width, not a column of a word a line.
  const width = await bar.locator(".caption").evaluate((c) => c.getBoundingClientRect().width);
  assert.ok(width >= 192, `the caption is ${width} px wide`);
  // A lane's menu keeps every item whole inside the window ("… from broker 1" and "… from
  // broker 3" told apart).
  await button(page, "Faults for broker 2").click();
  const items = page.getByRole("menuitem");
  await items.first().waitFor();
  for (const item of await items.all()) {
    const box = await item.boundingBox();
    const name = await item.textContent();
    assert.ok(box.x >= 0 && box.x + box.width <= 375, `${name}: ${JSON.stringify(box)}`);
    const [scroll, client] = await item.evaluate((e) => [e.scrollWidth, e.clientWidth]);
    assert.ok(scroll <= client, `${name} is cut: ${scroll} px in ${client}`);
  }
  assert.ok((await button(page, "Faults for broker 2").boundingBox()).x >= 0);
});

test("\"Pause at each step\" is the reader's choice: unticked, the next preset plays through its captions", async () => {
  const { page } = await openFresh(app, "/?preset=frozen-follower");
  const pausing = page.getByRole("checkbox", { name: "Pause at each step", exact: true });
  assert.equal(await pausing.isChecked(), true, "a full page pauses at captions by default");
  await pausing.uncheck();
  await page.getByLabel("Preset", { exact: true }).selectOption("min-isr-3");
  const minIsr = presetScenario("min-isr-3");
  // The notice ends in its dismiss button's "×".
  const opened = `Opened the preset “${minIsr.title}”. Play it, or step through it with Next step.`;
  await waitForText(notice(page), new RegExp(`^${opened.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}×?$`));
  assert.equal(await pausing.isChecked(), false, "the box still says what the new run does");
  // Playing runs past the second caption without stopping at it (the first is at 0).
  const notes = minIsr.timeline.filter((a) => a.action === "note");
  assert.ok(notes.length >= 2, "the preset has captions to pause at");
  await setRange(page, "Speed", 500);
  await play(page);
  await waitForClock(page, notes[1].at + 1);
  assert.equal(await button(page, "Pause").count(), 1, "still playing after the caption's time");
  await pause(page);
});

test("messages are labelled inside the picture, and each cell's value fits its cell", async () => {
  // Forty records: the log window has slid, so the brokers' log ends (where messages start
  // and land) are near the right edge; 300 ms of latency keeps messages in flight.
  const scenario = {
    version: 1,
    config: { "sim.network.latency.ms": 300 },
    timeline: [
      { at: 0, action: "produce", acks: "1", prefix: "shared-", count: 40 },
      { at: 2000, action: "produce", acks: "all", values: ["last"] },
    ],
  };
  const { page } = await openFresh(app, `/?t=2000${shareHash(scenario)}`);
  const clipped = () =>
    page.locator(".cluster").evaluate((c) => {
      const box = c.getBoundingClientRect();
      const out = [];
      for (const t of c.querySelectorAll("g.packet text.packet-label")) {
        if (!t.textContent) continue;
        const r = t.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(`${t.textContent}: ${r.left}..${r.right} outside ${box.left}..${box.right}`);
      }
      for (const g of c.querySelectorAll("g.cell")) {
        const [rect, text] = [g.querySelector("rect").getBoundingClientRect(), g.querySelector("text.value").getBoundingClientRect()];
        if (text.right > rect.right + 0.5) out.push(`cell ${g.querySelector("text.value").textContent} overflows its cell`);
      }
      return { out, labels: c.querySelectorAll("g.packet text.packet-label").length };
    });
  let seen = 0;
  for (let i = 0; i < 60 && seen < 3; i++) {
    await button(page, "Step one event").click();
    const { out, labels } = await clipped();
    assert.deepEqual(out, [], "nothing is cut off");
    if (labels) seen++;
  }
  assert.ok(seen >= 3, "labelled messages were drawn");
  assert.ok((await page.locator(".cluster g.cell text.value").allTextContents()).includes("s…-40"), "a long value keeps its number");
});

test("playing faster than 4×, messages carry no labels; paused, each label names its own message", async () => {
  // 300 ms of latency and a record every 100 ms keep fetches and produces in flight.
  const scenario = {
    version: 1,
    config: { "sim.network.latency.ms": 300 },
    timeline: Array.from({ length: 80 }, (_, i) => ({ at: i * 100, action: "produce", acks: "all", values: [`v${i}`] })),
  };
  const { page } = await openFresh(app, `/?t=1000${shareHash(scenario)}`);
  // What the labels in the picture say, beside each slot's tooltip (which names the message).
  const labels = () =>
    page.locator(".cluster-flow g.flights").evaluate((g) => ({
      unlabelled: g.classList.contains("unlabelled"),
      drawn: [...g.querySelectorAll(":scope > g:not(.free)")].map((s) => {
        const label = s.querySelector("text.packet-label");
        return { shown: getComputedStyle(label).display !== "none", label: label.textContent, title: s.querySelector("title").textContent };
      }),
    }));
  const before = await labels();
  assert.equal(before.unlabelled, false, "paused: labels are drawn");
  assert.ok(before.drawn.some((d) => d.shown && d.label), "a labelled message is drawn at 1 s");
  await setRange(page, "Speed", 667); // 10×
  await play(page);
  await poll(async () => (await labels()).unlabelled, { message: "the labels are hidden at 10×" });
  const fast = await labels();
  assert.ok(fast.drawn.length > 0, "messages are drawn while playing at 10×");
  assert.deepEqual(fast.drawn.filter((d) => d.shown), [], "no label is shown at 10×");
  await pause(page);
  await poll(async () => !(await labels()).unlabelled, { message: "paused: the labels come back" });
  // A slot shown while labels were hidden got its label when they came back: each label
  // shown is its own message's (a tooltip says "route: summary…", the label the summary).
  const after = await labels();
  assert.ok(after.drawn.some((d) => d.shown && d.label), "labelled messages are drawn after pausing");
  for (const d of after.drawn.filter((d) => d.shown && d.label)) {
    // (Nothing is dropped in this run: each label is its message's summary.)
    assert.ok(d.title.includes(`: ${d.label}`), `label “${d.label}” belongs to “${d.title}”`);
  }
  // Up to 4× playing, labels are drawn.
  await setRange(page, "Speed", 534);
  await play(page);
  await waitForClock(page, (await clockMs(page)) + 500);
  assert.equal((await labels()).unlabelled, false, "labels are drawn playing at 4×");
  await pause(page);
});
