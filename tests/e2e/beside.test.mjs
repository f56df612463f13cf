// Runs side by side (issue 15): the scenario's `compare` runs the session's timeline again
// under another configuration or protocol, each run drawn under the session's own on the
// same clock, with what differs from the top run listed (web/src/beside.rs).

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { decodeLink, linkPath, payloadOf, presetScenario } from "../lib/links.mjs";
import {
  button,
  describe,
  eventLogText,
  fault,
  notice,
  offsets,
  openFresh,
  pause,
  play,
  poll,
  produceResults,
  setRange,
  shareLink,
  shareHash,
  slider,
  SPEED_MAX,
  waitForClock,
  waitForText,
} from "../lib/ui.mjs";

const app = useApp();

const choice = (page) => page.getByRole("combobox", { name: "Side by side with", exact: true });
const top = (page) => page.locator("p.beside-top");
const runs = (page) => page.locator("section.beside");
const run = (page, title) => page.getByRole("region", { name: `Beside: ${title}`, exact: true });
const differences = (section) => section.getByRole("list", { name: "What differs from the top run", exact: true });
const describeOf = (section) => section.locator("p.describe-mini");
const summary = (page) => page.getByTestId("expectations");
const marks = (page) => page.locator("svg.markers line.expect");

test("a side-by-side preset: Kafka 4.x's ELR elects B while Kafka 3.x has no leader, on one clock, every run's expectations met", async () => {
  const preset = presetScenario("elr-side-by-side");
  const { page } = await openFresh(app, "/?preset=elr-side-by-side&t=52100");
  await waitForText(
    top(page),
    /^Side by side, on one clock\. Top: this session's run \(protocol kafka-4\)\. Below: the same timeline with Kafka 3\.x, no ELR\.$/,
  );
  assert.equal(await runs(page).count(), 1);
  const below = run(page, "Kafka 3.x, no ELR");
  await waitForText(below.locator("h2"), /^Below: the same timeline with Kafka 3\.x, no ELR$/);
  // Each run its own picture and describe line at the same moment.
  await waitForText(describe(page), /Leader: 2 Replicas: 1,2,3 Isr: 2/);
  await waitForText(describeOf(below), /^Topic: elr Partition: 0 Leader: none Replicas: 1,2,3 Isr: 1 Elr: LastKnownElr:$/);
  assert.equal(await below.locator(".cluster g.lane").count(), 3, "three lanes beside too");
  // What differs: the leader first, the run beside's value marked, the top's after it.
  const [note, ...items] = await differences(below).locator("li").allTextContents();
  assert.equal(note, "The lanes of the brokers named below are outlined.");
  assert.match(items[0], /^leader /);
  assert.match(items.join("\n"), /Leader: none/);
  assert.match(items.join("\n"), /\(top: Leader: 2/);
  assert.ok((await differences(below).locator("mark").count()) >= 2);
  // Every run's expectations are on the time bar; all met by the end.
  assert.equal(await marks(page).count(), preset.expect.length);
  await page.getByRole("checkbox", { name: "Pause at each step", exact: true }).uncheck();
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForText(summary(page), new RegExp(`^Expectations: ${preset.expect.length} met, 0 not met, 0 ahead$`), { timeout: 30_000 });
  const beside = await marks(page).evaluateAll((els) =>
    els.map((e) => e.querySelector("title")?.textContent ?? "").filter((t) => t.startsWith("Beside (Kafka 3.x, no ELR): ")),
  );
  assert.equal(beside.length, preset.expect.filter((e) => e.run === 1).length);
});

test("acks=1 beside a person's session: each run takes the write with its own acks, both go back in time together, and the link holds both", async () => {
  const { page } = await openFresh(app, "/");
  await choice(page).selectOption("acks=1");
  await waitForText(top(page), /Top: this session's run \(acks=all\)\. Below: the same timeline with acks=1\.$/);
  const below = run(page, "acks=1");
  await waitForText(differences(below), /^Nothing differs from the top run at this moment\.$/);
  // Both followers die; a write with acks=all fails in the top run (the ISR shrinks below
  // the minimum) and is acknowledged by the leader alone in the run beside.
  await play(page);
  await waitForClock(page, 300);
  await pause(page);
  await fault(page, "Kill broker 2");
  await fault(page, "Kill broker 3");
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForText(describe(page), /Isr: 1 /, { timeout: 40_000 });
  await pause(page);
  await page.getByLabel("Value", { exact: true }).fill("x");
  await page.getByLabel("Records", { exact: true }).fill("1");
  await page.getByRole("combobox", { name: "acks", exact: true }).selectOption("all");
  await button(page, "Produce").click();
  await play(page);
  await waitForText(produceResults(page), /NOT_ENOUGH_REPLICAS/, { timeout: 20_000 });
  await pause(page);
  await waitForText(differences(below), /produce results/);
  const diff = await differences(below).textContent();
  assert.match(diff, /1 acknowledged/, diff);
  // The leader's log differs (it appended x below, refused it on top): its lane is
  // outlined below, and only its lane.
  assert.match(diff, /log end offset of broker 1/, diff);
  await poll(async () => /\bd1\b/.test((await below.getAttribute("class")) ?? ""));
  const outlines = await below
    .locator(".cluster > svg.lane-view")
    .evaluateAll((els) => els.map((e) => getComputedStyle(e).outlineStyle));
  assert.deepEqual(outlines, ["solid", "none", "none"]);

  // The link holds the variant; opened again, both runs are there at the same moment.
  const link = await shareLink(page);
  const scenario = decodeLink(payloadOf(link));
  assert.deepEqual(scenario.compare, [{ acks: "1" }]);
  const { page: again } = await openFresh(app, linkPath(payloadOf(link), { t: 100 }));
  await run(again, "acks=1").waitFor();
  assert.equal(await choice(again).inputValue(), "acks=1");
  // Back in time: before the kills the two runs agree; forward again, they differ again.
  await waitForText(differences(run(again, "acks=1")), /^Nothing differs from the top run at this moment\.$/);
  await setRange(again, "Speed", SPEED_MAX);
  await play(again);
  await poll(async () => /produce results/.test((await differences(run(again, "acks=1")).textContent()) ?? ""), {
    timeout: 30_000,
  });
  await pause(again);

  // Nothing beside again: the session's own run goes on as it was.
  await choice(page).selectOption("");
  await runs(page).first().waitFor({ state: "detached" });
  assert.equal(await top(page).isHidden(), true);
  assert.equal(decodeLink(payloadOf(await shareLink(page))).compare, undefined);
});

test("a topic with its own min.insync.replicas: the choice is that topic's, and its write refused on top is acknowledged beside it", async () => {
  // Version 2: orders keeps min.insync.replicas=3 of its own over the broker's 2, so the
  // broker's minimum would change nothing for it (web/src/beside.rs, `choices`).
  const scenario = {
    version: 2,
    brokers: 3,
    topics: [
      { name: "orders", assignment: [[1, 2, 3]], configs: { "min.insync.replicas": 3 } },
      { name: "payments", assignment: [[1, 2, 3]] },
    ],
    config: { "min.insync.replicas": 2 },
    timeline: [
      { at: 100, action: "kill", broker: 3 },
      { at: 12000, action: "produce", topic: "orders", values: ["o"], retries: 0 },
    ],
    end_ms: 14000,
  };
  const { page } = await openFresh(app, `/${shareHash(scenario)}`);
  const options = await choice(page).locator("option").allTextContents();
  assert.ok(options.includes("orders: min.insync.replicas=1"), options.join(" | "));
  assert.ok(!options.includes("min.insync.replicas=1"), options.join(" | "));
  await choice(page).selectOption("orders:min.insync.replicas=1");
  await waitForText(
    top(page),
    /Top: this session's run \(orders: min\.insync\.replicas=3\)\. Below: the same timeline with orders: min\.insync\.replicas=1\.$/,
  );
  const below = run(page, "orders: min.insync.replicas=1");
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForText(produceResults(page), /NOT_ENOUGH_REPLICAS/, { timeout: 30_000 });
  await poll(async () => /1 acknowledged/.test((await differences(below).textContent()) ?? ""), { timeout: 30_000 });
  await pause(page);
  assert.deepEqual(decodeLink(payloadOf(await shareLink(page))).compare, [
    { topics: { orders: { "min.insync.replicas": 1 } } },
  ]);
});

test("three runs: acks=all above acks=1 and acks=0, article 003's step view, in an embed too", async () => {
  const { page } = await openFresh(app, "/?preset=acks-steps&t=1040");
  assert.equal(await runs(page).count(), 2);
  assert.equal(await choice(page).inputValue(), "acks=1|acks=0");
  // At 1.040 s acks=1 has its answer; acks=all waits; acks=0 never gets one.
  await waitForText(differences(run(page, "acks=1")), /produce results/);
  assert.match(await differences(run(page, "acks=1")).textContent(), /1 acknowledged/);
  assert.match(await differences(run(page, "acks=0")).textContent(), /produce results/);

  const { page: embed } = await openFresh(app, "/?embed=1&preset=acks-steps&t=1040");
  await embed.locator("section.beside").nth(1).waitFor();
  assert.equal(await embed.locator("section.beside").count(), 2);
  await waitForText(embed.locator("p.beside-top"), /Top: this session's run \(acks=all\)\. Below: the same timeline with acks=1, then with acks=0\.$/);
});

test("a link whose compare cannot run says what was wrong and opens the default", async () => {
  const bad = {
    version: 1,
    brokers: 3,
    replication_factor: 3,
    compare: [{ label: "nothing" }],
  };
  const { page } = await openFresh(app, `/${shareHash(bad)}`);
  await waitForText(notice(page), /compare\[0\]: a variant must change protocol, config, topics or acks/);
  assert.equal(await runs(page).count(), 0);
  const tooMany = { ...bad, compare: [{ acks: "1" }, { acks: "0" }, { protocol: "no-elr" }] };
  const { page: other } = await openFresh(app, `/${shareHash(tooMany)}`);
  await waitForText(notice(other), /compare: at most 2 variants, got 3/);
  assert.equal(await runs(other).count(), 0);
});

test("a run beside has its own event log and read-outs, at the shown moment, forward and back", async () => {
  // min.insync.replicas 2 on top, 1 below: at 10 s the top run refuses the acks=all write
  // (NOT_ENOUGH_REPLICAS), the run below has it acknowledged by the leader alone.
  const { page } = await openFresh(app, "/?preset=min-isr-side-by-side&t=11500");
  const below = run(page, "min.insync.replicas=1");
  const log = below.getByRole("list", { name: "Event log of the run below (min.insync.replicas=1)", exact: true });
  const outs = below.getByRole("group", { name: "Read-outs of the run below (min.insync.replicas=1)", exact: true });
  const logDetails = below.locator("details.beside-log");
  const outsDetails = below.locator("details.beside-readouts");
  // Closed by default, and built only when opened.
  await describeOf(below).waitFor();
  assert.equal(await logDetails.getAttribute("open"), null);
  assert.equal(await outsDetails.getAttribute("open"), null);
  assert.equal(await log.locator("li").count(), 0);
  assert.equal(await outs.locator("pre").count(), 0);
  await waitForText(logDetails.locator("summary"), /^Event log of the run below \(min\.insync\.replicas=1\) \(newest at the top\)$/);

  await logDetails.locator("summary").click();
  await waitForText(log, /acks=all -> ok, offsets=3\.\.5/);
  const lines = await log.locator("li").allTextContents();
  // Newest first; the run's own offsets read-out (HW 6) and its acknowledgement, never the
  // top run's refusal; the same classes as the session's own log.
  assert.equal(lines[0], "[  11.000s] orders:0:6");
  assert.ok(!lines.some((l) => /acks=all -> NOT_ENOUGH_REPLICAS/.test(l)), lines.join("\n"));
  assert.equal(await log.locator("li.info.produce", { hasText: "offsets=3..5" }).count(), 1);
  const own = await eventLogText(page);
  assert.match(own, /acks=all -> NOT_ENOUGH_REPLICAS/);
  assert.doesNotMatch(own, /offsets=3\.\.5/);

  // The read-outs: the run below's kafka-get-offsets (HW 6 against the top's 3), its
  // produce results and metrics.
  await outsDetails.locator("summary").click();
  await waitForText(outs.locator("pre.offsets"), /^orders:0:6$/);
  await waitForText(offsets(page), /^orders:0:3$/);
  await waitForText(outs.locator("pre.epochs"), /^broker 1: 0 1 0 0\n/);
  assert.match(await outs.locator("ul.results").textContent(), /acks=all -> ok, offsets=3\.\.5/);
  assert.match(await outs.locator("dl.metrics").textContent(), /Produce ok \/ failed2 \/ 0/);
  await outs.locator(".kafka-metrics table").waitFor();

  // Back to 9.95 s, before the write: the line leaves the run's log, its HW is 3 again.
  await slider(page, "Timeline").fill("9950");
  await poll(async () => !/offsets=3\.\.5/.test((await log.textContent()) ?? ""));
  await waitForText(outs.locator("pre.offsets"), /^orders:0:3$/);
  assert.doesNotMatch(await outs.locator("ul.results").textContent(), /offsets=3\.\.5/);
  const back = await log.locator("li").allTextContents();
  assert.ok(back.every((l) => !/\[\s*1[01]\.\d{3}s\]/.test(l)), back.join("\n"));
  // Played forward again: it is back. (Not `play()`: at full speed the session reaches the
  // caption at 10.1 s and pauses there before a "Pause" button could be waited for.)
  await setRange(page, "Speed", SPEED_MAX);
  await button(page, "Play").click();
  await waitForText(log, /acks=all -> ok, offsets=3\.\.5/);
  await button(page, "Play").waitFor();

  // Closed again, the log is left as it was and not followed.
  await logDetails.locator("summary").click();
  assert.equal(await logDetails.getAttribute("open"), null);
});
