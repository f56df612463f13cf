// The playground's cluster features beyond the overview itself (issue 14, "In the
// playground"): a produce's key and record size, the consumer's client.rack (KIP-392
// follower fetching), a reassignment of several partitions from the overview's form drawn
// as it goes, the calculator per topic, and a zone cut off and healed. Every expectation is
// worked out here from the scenario the test writes and Kafka's rules (murmur2 for a key's
// partition, the batch size, the racks), never read back from the page; and each action the
// UI adds must be in the share link, whose session replays it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { decodeLink, payloadOf } from "../lib/links.mjs";
import { SPEED_MAX, button, describe, eventLog, notice, offsets, openFresh, pause, play, poll, produceResults, setRange, shareHash, waitForClock, waitForText } from "../lib/ui.mjs";

const app = useApp();

const overview = (page) => page.getByRole("region", { name: "Cluster overview" });

/** Kafka's Utils.murmur2 (32-bit, seed 0x9747b28c), in JavaScript's int arithmetic. */
function murmur2(text) {
  const data = Buffer.from(text, "utf8");
  const m = 0x5bd1e995;
  let h = 0x9747b28c ^ data.length;
  const n4 = data.length >> 2;
  for (let i = 0; i < n4; i++) {
    let k = data.readInt32LE(i * 4);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const tail = data.length & ~3;
  switch (data.length % 4) {
    case 3:
      h ^= data[tail + 2] << 16;
    // falls through
    case 2:
      h ^= data[tail + 1] << 8;
    // falls through
    case 1:
      h ^= data[tail];
      h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}
/** BuiltInPartitioner.partitionForKey: toPositive(murmur2(key)) % numPartitions. */
const partitionForKey = (key, n) => (murmur2(key) & 0x7fffffff) % n;

test("murmur2 here is Kafka's (UtilsTest's values)", () => {
  assert.equal(murmur2("21"), -973932308);
  assert.equal(murmur2("foobar"), -790332482);
  assert.equal(murmur2("a-little-bit-long-string"), -985981536);
  assert.equal(murmur2("abc"), 479470107);
});

/** Opens the Share panel if closed and returns the scenario its link carries. */
async function sharedScenario(page) {
  const share = button(page, "Share");
  if ((await share.getAttribute("aria-expanded")) !== "true") await share.click();
  const link = await page.getByLabel("Share link", { exact: true }).inputValue();
  return { link, scenario: decodeLink(payloadOf(link)) };
}

/** A page path for a link the page made (it is on the test server's address). */
const pathOf = (link) => `/${link.slice(app.url.length)}`;

/** The event log's lines, oldest first. */
const logLines = (page) => eventLog(page).locator("li").allTextContents();

/** The actions of a shared scenario's timeline named `name`. */
const actionsNamed = (s, name) => s.timeline.filter((a) => a.action === name);

test("a key sends the records to its partition, the lanes follow it, and the link replays it", async () => {
  const PARTITIONS = 6;
  const s = {
    version: 2, brokers: 3,
    topics: [{ name: "orders", partitions: PARTITIONS, replication_factor: 2 }],
    timeline: [], end_ms: 60_000, title: "keys",
  };
  const { page } = await openFresh(app, `/${shareHash(s)}`);
  await overview(page).waitFor();
  // Two keys that land on different partitions of six, neither on 0 (the shown one).
  const keys = ["alice", "bob", "carol", "dave", "erin", "frank"].filter((k) => partitionForKey(k, PARTITIONS) !== 0);
  const first = keys[0];
  const second = keys.find((k) => partitionForKey(k, PARTITIONS) !== partitionForKey(first, PARTITIONS));
  // The producer chooses by the key (no partition named).
  await page.getByRole("combobox", { name: "Partitioner", exact: true }).selectOption("key");
  for (const [key, records] of [[first, 2], [second, 3]]) {
    const p = partitionForKey(key, PARTITIONS);
    await page.getByLabel("Key", { exact: true }).fill(key);
    await page.getByLabel("Records", { exact: true }).fill(String(records));
    await button(page, "Produce").click();
    await waitForText(notice(page), new RegExp(`Key "${key}" goes to partition orders-${p} \\(murmur2 of its bytes modulo ${PARTITIONS} partitions\\)`));
    await waitForText(page.locator("#actions-h"), new RegExp(`to orders-${p}$`));
    assert.equal(await button(page, `orders-${p}`).getAttribute("aria-pressed"), "true");
    await play(page);
    await waitForText(offsets(page), new RegExp(`^orders:${p}:${records}$`));
    await pause(page);
  }
  // Partition 0, shown at first, got nothing.
  await button(page, "orders-0").click();
  await waitForText(offsets(page), /^orders:0:0$/);
  // The link carries each produce with its key and no partition (the partitioner chooses).
  const { link, scenario } = await sharedScenario(page);
  const produces = actionsNamed(scenario, "produce");
  assert.deepEqual(produces.map((a) => [a.key, a.topic, a.partition]), [[first, "orders", undefined], [second, "orders", undefined]]);
  // And replays it: a fresh page at the link's time has the records where the keys sent them.
  const fresh = await openFresh(app, pathOf(link));
  const p = partitionForKey(second, PARTITIONS);
  await button(fresh.page, `orders-${p}`).click();
  await waitForText(offsets(fresh.page), new RegExp(`^orders:${p}:3$`));
});

test("a record size: records larger than half of batch.size go one batch each; a bad size is refused", async () => {
  // batch.size is 16384 bytes: a batch takes a record while it fits, and its first always
  // (RecordAccumulator). A 10000-byte value makes a record of more than 8192 bytes, so three
  // of them are three batches, each answered on its own; three of the default 1024 bytes
  // are one batch.
  const SIZE = 10_000;
  const BATCH_SIZE = 16_384;
  assert.ok(2 * SIZE > BATCH_SIZE);
  const s = { version: 2, brokers: 3, topics: [{ name: "big", partitions: 2, replication_factor: 3 }], timeline: [], end_ms: 60_000, title: "sizes" };
  const { page } = await openFresh(app, `/${shareHash(s)}`);
  await overview(page).waitFor();
  await page.getByLabel("Records", { exact: true }).fill("3");
  await page.getByLabel("Record size", { exact: true }).fill(String(SIZE));
  await button(page, "Produce").click();
  await play(page);
  await waitForText(offsets(page), /^big:0:3$/);
  await pause(page);
  const lines = async () => (await produceResults(page).locator("li").allTextContents()).filter((l) => /-> big-0: ok/.test(l));
  await poll(async () => (await lines()).length === 3, { message: async () => JSON.stringify(await lines()) });
  // One record a batch: each answered with its one offset.
  assert.deepEqual((await lines()).map((l) => /ok, (offsets?=[\d.]+)/.exec(l)?.[1]).sort(), ["offset=0", "offset=1", "offset=2"]);
  // The default size: one batch of three.
  await page.getByLabel("Record size", { exact: true }).fill("");
  await button(page, "Produce").click();
  await play(page);
  await waitForText(offsets(page), /^big:0:6$/);
  await pause(page);
  await poll(async () => (await lines()).some((l) => /offsets=3\.\.5/.test(l)));
  const { scenario } = await sharedScenario(page);
  assert.deepEqual(actionsNamed(scenario, "produce").map((a) => a.size), [SIZE, undefined]);
  // A size the format does not take is refused, naming the field and its range.
  await page.getByLabel("Record size", { exact: true }).fill("2000000");
  await button(page, "Produce").click();
  await waitForText(notice(page), /Not done: action\.size: size must be a value size in bytes in 0\.\.=1000000, got 2000000/);
});

test("client.rack: with the rack-aware selector the consumer reads from the follower in its rack; the link keeps both settings", async () => {
  // Brokers 1, 2, 3 in racks a, b, c; move-0 on [1, 2, 3], led by 1. A consumer in rack c is
  // sent by the leader to broker 3, the replica in its rack (RackAwareReplicaSelector).
  const racks = { 1: "a", 2: "b", 3: "c" };
  const RACK = "c";
  const follower = Number(Object.keys(racks).find((b) => racks[b] === RACK));
  const s = {
    version: 2, brokers: 3, racks,
    topics: [{ name: "move", assignment: [[1, 2, 3]] }],
    timeline: [{ at: 0, action: "produce", acks: "all", prefix: "r", count: 5 }],
    end_ms: 60_000, title: "follower fetching",
  };
  const { page } = await openFresh(app, `/?t=1000${shareHash(s)}`);
  await overview(page).waitFor();
  const rack = page.getByRole("combobox", { name: "client.rack", exact: true });
  // Its choices: none, then the racks in name order.
  assert.deepEqual(await rack.locator("option").allTextContents(), ["none", "a", "b", "c"]);
  await page.locator("details.advanced > summary").click();
  await page.getByRole("checkbox", { name: "replica.selector.class", exact: true }).check();
  await waitForText(eventLog(page), /kafka-configs\.sh --alter --add-config replica\.selector\.class=org\.apache\.kafka\.common\.replica\.RackAwareReplicaSelector/);
  await rack.selectOption(RACK);
  await waitForText(eventLog(page), /consumer: a new KafkaConsumer with client\.rack=c/);
  await button(page, "Consume from the beginning").click();
  await play(page);
  await waitForText(eventLog(page), new RegExp(`Updating preferred read replica for partition move-0 to ${follower}, .*\\(named by leader 1\\)`));
  await waitForText(eventLog(page), new RegExp(`consumer: r1 r2 r3 r4 r5 \\(offsets 0\\.\\.4, position 5, from follower ${follower}, its preferred read replica\\)`));
  await pause(page);
  const { link, scenario } = await sharedScenario(page);
  const sets = actionsNamed(scenario, "set_config").map((a) => [a.name, a.value]);
  assert.deepEqual(sets, [
    ["replica.selector.class", "org.apache.kafka.common.replica.RackAwareReplicaSelector"],
    ["client.rack", RACK],
  ]);
  // A fresh page from the link: the consumer is in rack c again, and the choice says so.
  const fresh = await openFresh(app, pathOf(link));
  const again = fresh.page.getByRole("combobox", { name: "client.rack", exact: true });
  await poll(async () => (await again.inputValue()) === RACK);
  await waitForText(eventLog(fresh.page), new RegExp(`from follower ${follower}, its preferred read replica`));
  // Back to none: a new consumer without a rack, which knows no preferred read replica,
  // reads from the leader at once.
  await again.selectOption({ label: "none" });
  await poll(async () => (await logLines(fresh.page)).some((l) => /consumer: a new KafkaConsumer with client\.rack=$/.test(l.trim())));
  await button(fresh.page, "Consume from the beginning").click();
  await play(fresh.page);
  await poll(async () => (await logLines(fresh.page)).some((l) => /consumer: r1 r2 r3 r4 r5 \(offsets 0\.\.4, position 5\)$/.test(l.trim())));
  await pause(fresh.page);
});

test("a reassignment of two partitions from the overview: each new replica copies, joins the ISR, the old one leaves; --verify says so", async () => {
  // move-0 on [1, 2] → [1, 3]; move-1 on [2, 3] → [2, 4]. 100 records of 1024 bytes in
  // each, and replica.fetch.max.bytes of one batch (batch.size, 16384), so a new replica
  // copies them over several fetches.
  const RECORDS = 100;
  const s = {
    version: 2, brokers: 4, config: { "replica.fetch.max.bytes": 16384 },
    topics: [{ name: "move", assignment: [[1, 2], [2, 3]] }],
    timeline: [0, 1].map((p) => ({ at: 0, action: "produce", acks: "all", prefix: `p${p}-`, count: RECORDS, topic: "move", partition: p })),
    end_ms: 1000, title: "move two",
  };
  const TARGETS = { 0: [1, 3], 1: [2, 4] };
  const CURRENT = { 0: [1, 2], 1: [2, 3] };
  const { page } = await openFresh(app, `/?t=1000${shareHash(s)}`);
  const o = overview(page);
  await o.waitFor();
  const file = page.getByLabel("Reassignment JSON", { exact: true });
  for (const p of [0, 1]) {
    await button(page, `move-${p}`).click();
    await waitForText(page.locator("#actions-h"), new RegExp(`to move-${p}$`));
    await page.getByLabel("Target replicas", { exact: true }).fill(TARGETS[p].join(","));
    await button(page, "Add to the file").click();
  }
  // The file is the tool's JSON with both partitions.
  assert.deepEqual(JSON.parse(await file.inputValue()), {
    version: 1,
    partitions: [0, 1].map((p) => ({ topic: "move", partition: p, replicas: TARGETS[p] })),
  });
  await button(page, "--execute").click();
  await waitForText(eventLog(page), /Successfully started partition reassignments for move-0,move-1/);
  // Replicas target ∪ current, adding and removing marked in the overview and the describe.
  const row = (p) => o.locator("tbody tr", { has: page.getByRole("button", { name: `move-${p}`, exact: true }) });
  const cells = async (p) => (await row(p).locator("td:not(.marks)").allTextContents());
  for (const p of [0, 1]) {
    const adding = TARGETS[p].filter((b) => !CURRENT[p].includes(b));
    const removing = CURRENT[p].filter((b) => !TARGETS[p].includes(b));
    const expected = [1, 2, 3, 4].map((b) =>
      b === CURRENT[p][0] ? "lead" : removing.includes(b) ? "isr−" : adding.includes(b) ? "out+" : "");
    assert.deepEqual(await cells(p), expected, `move-${p}`);
  }
  // The lanes show move-1: broker 4 is the new replica, empty and out of sync, copying.
  const lane = (b) => page.locator("svg.lane-view").nth(b - 1);
  await waitForText(page.getByRole("region", { name: "In Kafka's words", exact: true }).locator("pre.describe"),
    /^Topic: move Partition: 1 Leader: 2 Replicas: 2,4,3 Isr: 2,3 .*Adding Replicas: 4 Removing Replicas: 3/);
  await waitForText(lane(4), /broker 4 · adding replica, copying.*out of sync.*LEO 0 /);
  await waitForText(lane(3), /broker 3 · removing replica.*in ISR/);
  // Step event by event: broker 4's log end offset grows until it holds all 100 records, it
  // joins the ISR, and broker 3 leaves the replicas.
  const step = button(page, "Step one event");
  const leos = new Set();
  await poll(async () => {
    await step.click();
    const text = await lane(4).textContent();
    leos.add(Number(/LEO (\d+)/.exec(text)[1]));
    return /in ISR/.test(text);
  }, { timeout: 60_000 });
  assert.ok(leos.has(0) && Math.max(...leos) <= RECORDS, `LEOs seen: ${[...leos]}`);
  assert.ok([...leos].some((l) => l > 0 && l < RECORDS), `the copy is drawn as it goes; LEOs seen: ${[...leos]}`);
  await poll(async () => {
    if (/no replica/.test(await lane(3).textContent())) return true;
    await step.click();
    return false;
  }, { timeout: 60_000 });
  await waitForText(lane(4), new RegExp(`LEO ${RECORDS} `));
  await play(page);
  await waitForClock(page, 3000);
  await pause(page);
  await button(page, "--verify").click();
  // The tool's lines are in "In Kafka's words", in its event log.
  const words = page.getByRole("region", { name: "In Kafka's words", exact: true });
  await waitForText(words.getByRole("list", { name: "Event log", exact: true }), /Reassignment of partition move-0 is completed\.[\s\S]*Reassignment of partition move-1 is completed\./);
  for (const p of [0, 1]) {
    const expected = [1, 2, 3, 4].map((b) => (b === TARGETS[p][0] ? "lead" : TARGETS[p].includes(b) ? "isr" : ""));
    assert.deepEqual(await cells(p), expected, `move-${p} after`);
  }
  await waitForText(describe(page), new RegExp(`^Topic: move Partition: 1 Leader: 2 Replicas: ${TARGETS[1].join(",")} Isr: ${TARGETS[1].join(",")} `));
  // The link holds the file as the tool read it, both partitions, for --execute and --verify.
  const { scenario } = await sharedScenario(page);
  for (const name of ["reassign_execute", "reassign_verify"]) {
    const [a] = actionsNamed(scenario, name);
    assert.deepEqual(a.reassignment.partitions.map((p) => [p.partition, p.replicas]), [[0, TARGETS[0]], [1, TARGETS[1]]], name);
  }
  // A file the tool would not read is refused, naming the field.
  await file.fill('{"version":1,"partitions":[{"topic":"move","partition":0}]}');
  await button(page, "--execute").click();
  await waitForText(notice(page), /Not done: reassignment\.partitions\[0\]: missing field `replicas`/);
  await app.screenshot(page, "cluster-ui-reassign-two");
});

test("a reassignment in the lanes: each replica named as the registration lists it, copying, in the ISR, removed, at every step", async () => {
  // move-0 on [1, 2] → [1, 3, 4]: brokers 3 and 4 are adding, broker 2 removing. 20 records
  // of 1024 bytes (two batches) and replica.fetch.max.bytes below a batch, so each new
  // replica copies them over two fetches (KIP-74). The leader takes one new replica into the
  // ISR at a time (Partition.maybeExpandIsr: no second expansion while one is pending), so
  // one adding replica is in the ISR, still adding, while the other copies; the
  // reassignment completes when both are in (ReplicationControlManager's
  // maybeCompleteReassignment): broker 2 leaves, the new ones are plain followers.
  const s = {
    version: 2, brokers: 4, config: { "replica.fetch.max.bytes": 4000 },
    topics: [{ name: "move", assignment: [[1, 2]] }],
    timeline: [{ at: 0, action: "produce", acks: "all", prefix: "m", count: 20 }],
    end_ms: 1000, title: "move to three",
  };
  const { page } = await openFresh(app, `/?t=1000${shareHash(s)}`);
  await overview(page).waitFor();
  await page.getByLabel("Target replicas", { exact: true }).fill("1,3,4");
  await button(page, "--execute").click();
  await waitForText(eventLog(page), /Successfully started partition reassignment for move-0/);
  const title = (b) => page.locator("svg.lane-view").nth(b - 1).locator("text.lane-title").textContent();
  const words = page.getByRole("region", { name: "In Kafka's words", exact: true }).locator("pre.describe");
  const ids = (line, field) => (new RegExp(`${field}: ([\\d,]+)`).exec(line)?.[1] ?? "").split(",").filter(Boolean).map(Number);
  const seen = { 2: [], 3: [], 4: [] };
  const step = button(page, "Step one event");
  await poll(async () => {
    // The lanes and the describe line of the same moment agree.
    const line = await words.textContent();
    const [adding, removing, isr] = ["Adding Replicas", "Removing Replicas", "Isr"].map((f) => ids(line, f));
    for (const b of [2, 3, 4]) {
      const t = await title(b);
      assert.equal(/adding replica/.test(t), adding.includes(b), `${t} | ${line}`);
      assert.equal(/removing replica/.test(t), removing.includes(b), `${t} | ${line}`);
      if (adding.includes(b)) assert.equal(/in ISR/.test(t), isr.includes(b), `${t} | ${line}`);
      if (seen[b].at(-1) !== t) seen[b].push(t);
    }
    if (seen[2].at(-1) === "broker 2 · no replica") return true;
    await step.click();
    return false;
  }, { timeout: 60_000 });
  assert.deepEqual(seen[2], ["broker 2 · removing replica", "broker 2 · no replica"]);
  for (const b of [3, 4]) {
    assert.equal(seen[b][0], `broker ${b} · adding replica, copying`, JSON.stringify(seen[b]));
    assert.equal(seen[b].at(-1), `broker ${b} · follower`, JSON.stringify(seen[b]));
  }
  // The first to join waited in the ISR, still adding, for the other.
  const joined = [3, 4].filter((b) => seen[b].includes(`broker ${b} · adding replica, in ISR`));
  assert.equal(joined.length, 1, JSON.stringify(seen));
  await waitForText(words, /^Topic: move Partition: 0 Leader: 1 Replicas: 1,3,4 Isr: /);
  await app.screenshot(page, "cluster-ui-reassign-lanes");
});

test("the calculator speaks of each topic: its replication factor and min.insync.replicas", async () => {
  const TOPICS = [
    { name: "orders", partitions: 4, replication_factor: 3, configs: { "min.insync.replicas": 2 } },
    { name: "audit", partitions: 2, replication_factor: 3, configs: { "min.insync.replicas": 3 } },
    { name: "clicks", partitions: 3, replication_factor: 2 },
  ];
  const BROKER_MIN_ISR = 1;
  const s = { version: 2, brokers: 4, topics: TOPICS, config: { "min.insync.replicas": BROKER_MIN_ISR }, timeline: [], end_ms: 500, title: "calc" };
  const { page } = await openFresh(app, `/${shareHash(s)}`);
  const table = page.getByRole("table", { name: "Calculator per topic", exact: true });
  await table.waitFor();
  const rows = await table.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  // Article 004: with min.insync.replicas m (at most RF) and RF r, r − m brokers can fail with
  // acks=all writes going on, and m − 1 can be lost for ever without losing a committed one.
  const expected = TOPICS.map((t) => {
    const min = t.configs?.["min.insync.replicas"] ?? BROKER_MIN_ISR;
    const eff = Math.min(min, t.replication_factor);
    return [t.name, t.partitions, t.replication_factor, min, t.replication_factor - eff, eff - 1].map(String);
  });
  assert.deepEqual(rows, expected);
});

test("a zone cut off from the overview and healed: its brokers leave every ISR and come back", async () => {
  // Brokers 1, 4 in rack a; 2, 5 in b; 3, 6 in c; two topics of three partitions at RF 3.
  const racks = {};
  for (let b = 1; b <= 6; b++) racks[String(b)] = ["a", "b", "c"][(b - 1) % 3];
  const s = {
    version: 2, brokers: 6, racks,
    topics: [{ name: "orders", partitions: 3, replication_factor: 3 }, { name: "payments", partitions: 3, replication_factor: 3 }],
    timeline: [], end_ms: 60_000, title: "cut",
  };
  const { page } = await openFresh(app, `/?t=1000${shareHash(s)}`);
  const o = overview(page);
  await o.waitFor();
  await setRange(page, "Speed", SPEED_MAX);
  await button(page, "Cut zone b off").click();
  await waitForText(eventLog(page), /network: cut rack b \(brokers 2,5\) off from the other racks and the controller quorum/);
  // StripedReplicaPlacer puts one replica of each partition in each rack, so once the
  // controller fences zone b's brokers every partition is under-replicated.
  await play(page);
  await o.getByText("6 partitions: 6 under-replicated", { exact: false }).waitFor({ timeout: 40_000 });
  await pause(page);
  await button(page, "Heal zone b").click();
  await waitForText(eventLog(page), /network: heal rack b \(brokers 2,5\): links to the other racks and the controller again/);
  await play(page);
  await o.getByText("6 partitions: 0 under-replicated", { exact: false }).waitFor({ timeout: 40_000 });
  await pause(page);
  const { scenario } = await sharedScenario(page);
  assert.deepEqual(scenario.timeline.filter((a) => /zone/.test(a.action)).map((a) => [a.action, a.zone]), [["cut_zone", "b"], ["heal_zone", "b"]]);
});
