// The cluster overview (issue 14): brokers as columns grouped by rack, partitions as rows,
// each replica's state; the describe filters; choosing a partition shows it in the lanes, and
// it stays chosen when the reader scrubs back. The cluster is the largest: 12 brokers
// in three racks and 200 partitions, with replica lists the test writes itself, so what each
// filter must list is worked out here from Kafka's rules, not read from the page.

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { SPEED_MAX, describe, eventLog, notice, offsets, openFresh, pause, play, poll, produceResults, setRange, shareHash, waitForClock, waitForText } from "../lib/ui.mjs";

const app = useApp();

const BROKERS = 12;
const rackOf = (b) => `z${b % 3}`;
// Partition p of a topic starting at `first`: brokers first+p, +1, +2 (mod 12), 1-based.
const assignment = (count, first) =>
  Array.from({ length: count }, (_, p) => [0, 1, 2].map((k) => ((first + p + k) % BROKERS) + 1));
const TOPICS = [
  { name: "orders", assignment: assignment(120, 0), configs: { "min.insync.replicas": 2 } },
  { name: "clicks", assignment: assignment(80, 5) },
];
const KILLED = 5;

function scenario(timeline, endMs) {
  const racks = {};
  for (let b = 1; b <= BROKERS; b++) racks[String(b)] = rackOf(b);
  return { version: 2, brokers: BROKERS, racks, topics: TOPICS, timeline, end_ms: endMs, title: "overview" };
}

const overview = (page) => page.getByRole("region", { name: "Cluster overview" });
const rowNames = (page) =>
  overview(page).locator("tbody th[scope=row] button").evaluateAll((bs) => bs.map((b) => b.textContent));

test("every partition is a row and every broker a column, grouped by rack", async () => {
  const { page } = await openFresh(app, `/${shareHash(scenario([], 1000))}`);
  const o = overview(page);
  await o.waitFor();
  const names = await rowNames(page);
  assert.equal(names.length, 200);
  assert.deepEqual(names.slice(0, 2), ["orders-0", "orders-1"]);
  assert.equal(names[120], "clicks-0");
  // Racks in name order, each over its four brokers; brokers by id within a rack.
  const racks = await o.locator("thead th.rack").evaluateAll((ths) => ths.map((t) => [t.firstChild.textContent, t.colSpan]));
  assert.deepEqual(racks, [["rack z0", 4], ["rack z1", 4], ["rack z2", 4]]);
  const cols = await o.locator("thead th.broker-col").evaluateAll((ths) => ths.map((t) => t.firstChild.textContent));
  assert.deepEqual(cols, ["3", "6", "9", "12", "1", "4", "7", "10", "2", "5", "8", "11"]);
  // orders-7 = [8, 9, 10]: led by 8, the others in sync; empty cells elsewhere.
  const row = o.locator("tbody tr", { has: page.getByRole("button", { name: "orders-7", exact: true }) });
  const cells = await row.locator("td:not(.marks)").evaluateAll((tds) => tds.map((t) => t.textContent));
  const expected = cols.map((b) => ({ 8: "lead", 9: "isr", 10: "isr" })[b] ?? "");
  assert.deepEqual(cells, expected);
  await app.screenshot(page, "overview-200-partitions");
});

test("the filters list what kafka-topics.sh --describe lists after a broker is lost", async () => {
  // Broker 5 killed at 1 s; by 20 s the controller has fenced it (broker.session.timeout.ms,
  // 9 s) and taken it out of every ISR, electing new leaders where it led.
  const { page } = await openFresh(app, `/?t=20000${shareHash(scenario([{ at: 1000, action: "kill", broker: KILLED }], 20_000))}`);
  const o = overview(page);
  await o.waitFor();
  const withKilled = [];
  const atMin = [];
  for (const t of TOPICS) {
    t.assignment.forEach((replicas, p) => {
      if (!replicas.includes(KILLED)) return;
      withKilled.push(`${t.name}-${p}`);
      // ISR 2 of 3: at the minimum where it is 2 (orders), above it where it is 1 (clicks).
      if (t.configs) atMin.push(`${t.name}-${p}`);
    });
  }
  const filter = o.getByRole("combobox", { name: "Which partitions to list" });
  const listed = async (option) => {
    await filter.selectOption({ label: option });
    return rowNames(page);
  };
  await poll(async () => (await listed("--under-replicated-partitions")).length === withKilled.length, {
    message: "the ISRs have not shrunk",
  });
  assert.deepEqual(await listed("--under-replicated-partitions"), withKilled);
  assert.deepEqual(await listed("--at-min-isr-partitions"), atMin);
  assert.deepEqual(await listed("--under-min-isr-partitions"), []);
  assert.deepEqual(await listed("--unavailable-partitions"), []);
  assert.equal(await o.getByText("No partition matches this filter.").isVisible(), true);
  assert.equal((await listed("all partitions")).length, 200);
  await o.getByText(`200 partitions: ${withKilled.length} under-replicated, 0 under min ISR, ${atMin.length} at min ISR, 0 unavailable`).waitFor();
  // The killed broker's column says so, and so does each of its replicas.
  assert.equal(await o.locator("thead th.broker-col", { hasText: /^5killed$/ }).count(), 1);
  assert.equal(await o.locator("td.r-off").count(), withKilled.length);
  // Kafka's metrics say the same: UnderReplicatedPartitions over the cluster is every
  // partition broker 5 held (each counted by its new leader), and broker 5 answers nothing.
  const metrics = page.getByLabel("Kafka's metrics", { exact: true });
  const row = metrics.locator("tbody tr", { has: page.locator("th", { hasText: /^UnderReplicatedPartitions$/ }) });
  const cells = await row.locator("td").allTextContents();
  assert.equal(cells[0], String(withKilled.length));
  assert.equal(cells[KILLED], "—", "broker 5's column");
  assert.equal(cells.slice(1).filter((c) => c !== "—").reduce((a, c) => a + Number(c), 0), withKilled.length);
  await app.screenshot(page, "overview-broker-lost");
});

test("choosing a partition shows it in the lanes, and it stays chosen in the past", async () => {
  const { page } = await openFresh(app, `/?t=20000${shareHash(scenario([{ at: 1000, action: "kill", broker: KILLED }], 20_000))}`);
  const o = overview(page);
  await o.waitFor();
  await poll(async () => /Topic: orders\s+Partition: 0\s/.test(await describe(page).textContent()));
  // clicks-0 = [6, 7, 8]: untouched by broker 5.
  const choose = page.getByRole("button", { name: "clicks-0", exact: true });
  await choose.click();
  await poll(async () => /^Topic: clicks\s+Partition: 0\s+Leader: 6\s+Replicas: 6,7,8\s+Isr: 6,7,8/.test(await describe(page).textContent()), {
    message: "the lanes do not show clicks-0",
  });
  assert.equal(await choose.getAttribute("aria-pressed"), "true");
  await o.getByText("The lanes below show clicks-0.").waitFor();
  // The settings speak of the shown topic: clicks has no min.insync.replicas of its own, so
  // the brokers' 1 applies (RF 3: two may fail and writes go on, none may be lost for ever).
  const facts = page.locator(".settings .topic-facts");
  await waitForText(facts, /Topic clicks \(shown below\): replication factor 3, the brokers' min\.insync\.replicas=1\./);
  assert.equal(await page.getByTestId("can-fail").textContent(), "2");
  assert.equal(await page.getByTestId("can-lose").textContent(), "0");
  assert.equal(await page.getByRole("slider", { name: "Replication factor", exact: true }).count(), 0, "no slider that would not change the topics");
  // orders-4 = [5, 6, 7]: broker 5 led it; at 20 s broker 6 does, with 5 out of the ISR.
  await page.getByRole("button", { name: "orders-4", exact: true }).click();
  await poll(async () => /^Topic: orders\s+Partition: 4\s+Leader: 6\s+Replicas: 5,6,7\s+Isr: 6,7/.test(await describe(page).textContent()), {
    message: "the lanes do not show orders-4 after the election",
  });
  // orders has its own minimum of 2: one may fail, one may be lost.
  await waitForText(facts, /Topic orders \(shown below\): replication factor 3, its own min\.insync\.replicas=2 \(a topic config/);
  assert.equal(await page.getByTestId("can-fail").textContent(), "1");
  assert.equal(await page.getByTestId("can-lose").textContent(), "1");
  // Back to 0.5 s (before the kill), rebuilt from a checkpoint: still orders-4, led by 5.
  await setRange(page, "Timeline", 500);
  await poll(async () => /^Topic: orders\s+Partition: 4\s+Leader: 5\s+Replicas: 5,6,7\s+Isr: 5,6,7/.test(await describe(page).textContent()), {
    message: "scrubbing back lost the chosen partition",
  });
  assert.equal(await page.getByRole("button", { name: "orders-4", exact: true }).getAttribute("aria-pressed"), "true");
});

test("the cluster sliders build topics, partitions and racks; Produce writes to the partition the lanes show", async () => {
  const { page } = await openFresh(app, "/");
  const o = overview(page);
  assert.equal(await o.isVisible(), false, "one partition: no overview");
  await setRange(page, "Brokers", 6);
  await waitForText(notice(page), /Started a new cluster: 6 broker\(s\), replication factor 3\./);
  await setRange(page, "Racks", 3);
  await waitForText(notice(page), /Started a new cluster: 6 broker\(s\) in 3 rack\(s\), 1 topic\(s\) of 1 partition\(s\), replication factor 3\./);
  await setRange(page, "Partitions per topic", 4);
  await setRange(page, "Topics", 2);
  await waitForText(notice(page), /6 broker\(s\) in 3 rack\(s\), 2 topic\(s\) of 4 partition\(s\), replication factor 3\./);
  await o.waitFor();
  assert.deepEqual(await rowNames(page), ["rep-0", "rep-1", "rep-2", "rep-3", "orders-0", "orders-1", "orders-2", "orders-3"]);
  // Brokers 1 and 4 in rack a, 2 and 5 in b, 3 and 6 in c; every partition has a replica in
  // each rack (StripedReplicaPlacer).
  const racks = await o.locator("thead th.rack").evaluateAll((ths) => ths.map((t) => [t.firstChild.textContent, t.colSpan]));
  assert.deepEqual(racks, [["rack a", 2], ["rack b", 2], ["rack c", 2]]);
  const cols = await o.locator("thead th.broker-col").evaluateAll((ths) => ths.map((t) => t.firstChild.textContent));
  assert.deepEqual(cols, ["1", "4", "2", "5", "3", "6"]);
  for (const row of await o.locator(".overview-table tbody tr").all()) {
    const cells = await row.locator("td:not(.marks)").evaluateAll((tds) => tds.map((t) => t.textContent !== ""));
    for (let r = 0; r < 3; r++) assert.equal(cells[2 * r] + cells[2 * r + 1], 1, "one replica per rack");
  }
  // The sliders read back the cluster they built.
  assert.equal(await page.getByRole("slider", { name: "Partitions per topic", exact: true }).inputValue(), "4");
  assert.equal(await page.getByRole("slider", { name: "Racks", exact: true }).inputValue(), "3");

  // Show rep-2 and write three records there: only rep-2's end offset moves.
  await page.getByRole("button", { name: "rep-2", exact: true }).click();
  await waitForText(page.locator("#actions-h"), /Produce and consume to rep-2/);
  await page.getByLabel("Records", { exact: true }).fill("3");
  await page.getByRole("button", { name: "Produce", exact: true }).click();
  await play(page);
  await waitForText(offsets(page), /rep:2:3/);
  await pause(page);
  // Many partitions: the produce result and the shown partition's leader-epoch-checkpoint
  // name rep-2 (docs/engine.md, "Lines that name their partition"); its leader's file has
  // the entry Partition.makeLeader assigned, (0, 0).
  await waitForText(produceResults(page), /acks=\S+ -> rep-2: ok, offsets?=0/);
  await waitForText(page.locator('pre[aria-label="leader-epoch-checkpoint"]'), /^broker \d+: rep-2: 0 1 0 0$/m);
  // The read-outs speak of the shown partition: the others are still empty.
  for (const other of ["rep-0", "rep-3", "orders-2"]) {
    await page.getByRole("button", { name: other, exact: true }).click();
    const [topic, p] = other.split("-");
    await waitForText(offsets(page), new RegExp(`^${topic}:${p}:0$`));
  }
  await app.screenshot(page, "overview-built-by-sliders");
});

test("a zone lost from the overview: its brokers die, every partition is under-replicated, acks=all writes go on; started again, they rejoin", async () => {
  // Course module 04: three zones, RF 3, min.insync.replicas 2. Brokers 1 and 4 in rack a,
  // 2 and 5 in b, 3 and 6 in c; an acks=all write every 500 ms to a partition in turn.
  const racks = {};
  for (let b = 1; b <= 6; b++) racks[String(b)] = ["a", "b", "c"][(b - 1) % 3];
  const writes = Array.from({ length: 80 }, (_, i) => ({
    at: 500 + i * 500, action: "produce", acks: "all", values: [`w${i}`], topic: i % 2 ? "orders" : "payments", partition: i % 3,
  }));
  const s = {
    version: 2, brokers: 6, racks,
    topics: [
      { name: "orders", partitions: 3, replication_factor: 3, configs: { "min.insync.replicas": 2 } },
      { name: "payments", partitions: 3, replication_factor: 3, configs: { "min.insync.replicas": 2 } },
    ],
    timeline: writes, end_ms: 45_000, title: "zones",
  };
  const { page } = await openFresh(app, `/?t=2000${shareHash(s)}`);
  const o = overview(page);
  await o.waitFor();
  await page.getByRole("button", { name: "Lose zone b", exact: true }).click();
  await waitForText(eventLog(page), /zone lost: kill -9 of every broker in rack b \(brokers 2,5\)/);
  await waitForText(o.locator("thead th.broker-col", { hasText: /^2/ }), /killed/);
  await waitForText(o.locator("thead th.broker-col", { hasText: /^5/ }), /killed/);
  // Past the session timeout: fenced out of every ISR, all six partitions under-replicated,
  // at their minimum, none unavailable.
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForClock(page, 20_000);
  await pause(page);
  await o.getByText("6 partitions: 6 under-replicated, 0 under min ISR, 6 at min ISR, 0 unavailable").waitFor();
  // Every acks=all write so far acknowledged (the producer retried those sent to a dead
  // leader until the new one answered).
  await poll(async () => /^\d+ \/ 0$/.test(await page.locator("dl.metrics dt", { hasText: "Produce ok / failed" }).locator("xpath=following-sibling::dd[1]").textContent()));
  await page.getByRole("button", { name: "Start zone b", exact: true }).click();
  await play(page);
  await waitForClock(page, 40_000, { timeout: 40_000 });
  await pause(page);
  await o.getByText("6 partitions: 0 under-replicated, 0 under min ISR, 0 at min ISR, 0 unavailable").waitFor();
  await app.screenshot(page, "overview-zone-lost-and-back");
});

test("a reassignment started from the overview: the new replica copies and joins, --verify completes it, as module 04's lab step 5", async () => {
  const s = {
    version: 2, brokers: 3,
    topics: [{ name: "move", assignment: [[1, 2]] }],
    timeline: [{ at: 0, action: "produce", acks: "all", prefix: "v", count: 200 }],
    end_ms: 1000, title: "move",
  };
  const { page } = await openFresh(app, `/?t=1000${shareHash(s)}`);
  const o = overview(page);
  await o.waitFor();
  await page.getByLabel("Target replicas", { exact: true }).fill("1,3");
  await page.getByLabel("Throttle", { exact: true }).fill("10000000");
  await page.getByRole("button", { name: "--execute", exact: true }).click();
  await waitForText(eventLog(page), /Successfully started partition reassignment for move-0/);
  // Adding 3 (+), removing 2 (−), in the cells of the overview and the describe line.
  const cells = () => o.locator(".overview-table tbody tr td:not(.marks)").allTextContents();
  assert.deepEqual(await cells(), ["lead", "isr−", "out+"]);
  await waitForText(describe(page), /Replicas: 1,3,2 Isr: 1,2 Adding Replicas: 3 Removing Replicas: 2 /);
  await play(page);
  await waitForClock(page, 3000);
  await pause(page);
  await page.getByRole("button", { name: "--verify", exact: true }).click();
  await waitForText(eventLog(page), /Reassignment of partition move-0 is completed\./);
  await waitForText(describe(page), /^Topic: move Partition: 0 Leader: 1 Replicas: 1,3 Isr: 1,3 /);
  assert.deepEqual(await cells(), ["lead", "", "isr"]);
  // A refusal names what was wrong.
  await page.getByLabel("Target replicas", { exact: true }).fill("1,x");
  await page.getByRole("button", { name: "--execute", exact: true }).click();
  await waitForText(notice(page), /Not done: target replicas are broker ids such as 1,3, got "x"/);
  await app.screenshot(page, "overview-reassignment");
});
