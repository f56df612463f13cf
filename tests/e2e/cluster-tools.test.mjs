// The playground's producer and read-out tools on a version-2 cluster (issue 14, "What
// remains" item 3): the scenario's record_size_bytes in the Advanced settings, a produce that
// names no partition and no key (the built-in sticky partitioner, KIP-794), kafka-dump-log.sh
// and the leader-epoch-checkpoints of the partition the lanes show, and expectations of
// follower fetching and zones marked on the timeline. As in cluster-ui.test.mjs, every
// expectation is worked out here from the scenario the test writes and Kafka's rules
// (DefaultRecord.sizeInBytes, the sticky partitioner's switch at batch.size, the leader
// epochs of a controlled shutdown, RackAwareReplicaSelector), never read back from the page;
// and each action the UI adds must be in the share link, whose session replays it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { decodeLink, payloadOf } from "../lib/links.mjs";
import { button, eventLog, notice, offsets, openFresh, pause, play, poll, produceResults, shareHash, slider, waitForText } from "../lib/ui.mjs";

const app = useApp();

const overview = (page) => page.getByRole("region", { name: "Cluster overview" });
const dumpLog = (page) => page.locator('pre[aria-label="kafka-dump-log"]');
const partitioner = (page) => page.getByRole("combobox", { name: "Partitioner", exact: true });

/** Opens the Share panel if closed and returns the scenario its link carries. */
async function sharedScenario(page) {
  const share = button(page, "Share");
  if ((await share.getAttribute("aria-expanded")) !== "true") await share.click();
  const link = await page.getByLabel("Share link", { exact: true }).inputValue();
  return { link, scenario: decodeLink(payloadOf(link)) };
}
const pathOf = (link) => `/${link.slice(app.url.length)}`;
const actionsNamed = (s, name) => s.timeline.filter((a) => a.action === name);

/** The bytes of a varint (ByteUtils.sizeOfVarint, zigzag) and a varlong of 0. */
function varintSize(v) {
  let z = ((v << 1) ^ (v >> 31)) >>> 0;
  let n = 1;
  while (z >= 0x80) {
    z >>>= 7;
    n++;
  }
  return n;
}
/** DefaultRecord.sizeInBytes of a keyless record without headers, timestamp delta 0. */
function recordSize(offsetDelta, valueSize) {
  const body = 1 + 1 + varintSize(offsetDelta) + varintSize(-1) + varintSize(valueSize) + valueSize + varintSize(0);
  return varintSize(body) + body;
}
/** DefaultRecordBatch's header. */
const BATCH_OVERHEAD = 61;
const BATCH_SIZE = 16_384;

test("record_size_bytes in the Advanced settings sizes the later records; a bad value is refused; the link replays it", async () => {
  // orders-0 on [2, 1, 3], led by broker 2.
  const s = { version: 2, brokers: 3, topics: [{ name: "orders", assignment: [[2, 1, 3], [1, 2, 3]] }], timeline: [], end_ms: 60_000, title: "sizes" };
  const SIZE = 2048;
  const { page } = await openFresh(app, `/${shareHash(s)}`);
  await overview(page).waitFor();
  await page.locator("details.advanced > summary").click();
  const field = page.getByLabel("record_size_bytes", { exact: true });
  assert.equal(await field.inputValue(), "1024", "the format's default");
  await field.fill(String(SIZE));
  await field.press("Tab");
  await waitForText(eventLog(page), new RegExp(`producer: values of ${SIZE} bytes from now on \\(record_size_bytes\\), unless a produce gives its size`));
  // One record to orders-0, then its log on its leader: a value of SIZE bytes, the batch its
  // header and the one record.
  await button(page, "Produce").click();
  await play(page);
  await waitForText(offsets(page), /orders:0:1/);
  await pause(page);
  await page.getByRole("combobox", { name: "Broker to dump", exact: true }).selectOption("2");
  await button(page, "Dump the log").click();
  const batch = BATCH_OVERHEAD + recordSize(0, SIZE);
  await waitForText(dumpLog(page), new RegExp(`^broker 2 log \\(orders-0, log end offset 1\\):\\n  baseOffset: 0 lastOffset: 0 count: 1 .* position: 0 size: ${batch}\\n    \\| offset: 0 keySize: -1 valueSize: ${SIZE} `));
  // Beyond the format's range: refused, naming the field and the range; the field says what
  // holds.
  await field.fill("2000000");
  await field.press("Tab");
  await waitForText(notice(page), /Not done: action\.value: record_size_bytes must be a value size in bytes in 0\.\.=1000000, got 2000000/);
  assert.equal(await field.inputValue(), String(SIZE));
  const { link, scenario } = await sharedScenario(page);
  assert.deepEqual(actionsNamed(scenario, "set_config").map((a) => [a.name, a.value]), [["record_size_bytes", SIZE]]);
  assert.deepEqual(actionsNamed(scenario, "dump_log").map((a) => [a.broker, a.topic, a.partition]), [[2, "orders", 0]]);
  // A fresh page from the link: the setting and the dump, replayed.
  const fresh = await openFresh(app, pathOf(link));
  await waitForText(dumpLog(fresh.page), new RegExp(`valueSize: ${SIZE} `));
  await fresh.page.locator("details.advanced > summary").click();
  assert.equal(await fresh.page.getByLabel("record_size_bytes", { exact: true }).inputValue(), String(SIZE));
});

/**
 * How many of `n` keyless records of `valueSize` bytes the sticky partitioner puts on its
 * partition before it switches (BuiltInPartitioner.updatePartitionInfo with
 * RecordAccumulator.append): a record joins the open batch while it fits in batch.size; when
 * one does not, the batch is full, and once batch.size bytes were produced the next record
 * goes to the next partition drawn; at twice batch.size it switches whatever the batch.
 */
function stickySplit(n, valueSize) {
  // A batch here holds fewer than 64 records, so each offset delta is one byte, as 0's is.
  const size = recordSize(0, valueSize);
  let produced = 0;
  let batch = 0;
  const counts = [0];
  const next = () => {
    counts.push(0);
    produced = 0;
    batch = 0;
  };
  for (let i = 0; i < n; i++) {
    if (batch > 0 && batch + size > BATCH_SIZE) {
      // The batch is full: a switch it held back happens now.
      if (produced >= BATCH_SIZE) next();
      batch = 0;
    }
    batch = (batch === 0 ? BATCH_OVERHEAD : batch) + size;
    produced += size;
    counts[counts.length - 1]++;
    if (produced >= 2 * BATCH_SIZE) next();
  }
  return counts.filter((c) => c > 0);
}

test("a produce with no partition and no key goes where the sticky partitioner sends it; the lanes follow it; the link replays it", async () => {
  const PARTITIONS = 4;
  const s = { version: 2, brokers: 3, topics: [{ name: "orders", partitions: PARTITIONS, replication_factor: 2 }], timeline: [], end_ms: 60_000, title: "sticky" };
  const { page } = await openFresh(app, `/${shareHash(s)}`);
  await overview(page).waitFor();
  // 31 records of 1024 bytes: 15 fill a batch, and the switch waits for a full batch after
  // batch.size bytes, so 30 stay on the first sticky partition and the 31st goes on.
  const N = 31;
  const split = stickySplit(N, 1024);
  assert.deepEqual(split, [30, 1]);
  await partitioner(page).selectOption("sticky");
  await page.getByLabel("Records", { exact: true }).fill(String(N));
  await button(page, "Produce").click();
  const text = await waitForText(notice(page), /^The sticky partitioner \(KIP-794\) sent the 31 record\(s\) to orders-\d/);
  // The next partition is drawn among the four (it may be the first again).
  const m = /to orders-(\d)(?: \((\d+)\) and orders-(\d) \((\d+)\))?; the lanes show orders-(\d)\./.exec(text);
  assert.ok(m, text);
  const first = Number(m[1]);
  const next = m[3] === undefined ? first : Number(m[3]);
  if (m[3] !== undefined) assert.deepEqual([Number(m[2]), Number(m[4])], split);
  assert.equal(Number(m[5]), first, "the lanes show where the first records went");
  await waitForText(page.locator("#actions-h"), new RegExp(`to orders-${first}$`));
  assert.equal(await button(page, `orders-${first}`).getAttribute("aria-pressed"), "true");
  await play(page);
  await waitForText(offsets(page), new RegExp(`orders:${first}:${next === first ? N : split[0]}`));
  await pause(page);
  // Each result names its partition: two batches of 15 on the first, the 31st on the next.
  const results = async () => (await produceResults(page).locator("li").allTextContents()).filter((l) => /acks=all -> orders-\d: ok/.test(l));
  await poll(async () => (await results()).length === 3, { message: async () => JSON.stringify(await results()) });
  const got = (await results()).map((l) => /orders-(\d): ok, (offsets?=[\d.]+)/.exec(l).slice(1).join(" ")).sort();
  const expected = [`${first} offsets=0..14`, `${first} offsets=15..29`, next === first ? `${first} offset=30` : `${next} offset=0`].sort();
  assert.deepEqual(got, expected);
  // The sticky partition holds across sends: one more record goes where the 31st went.
  await page.getByLabel("Records", { exact: true }).fill("1");
  await button(page, "Produce").click();
  await waitForText(notice(page), new RegExp(`sent the 1 record\\(s\\) to orders-${next}; the lanes show orders-${next}\\.`));
  // By key without a key, and the sticky partitioner with one: refused, saying why.
  await partitioner(page).selectOption("key");
  await button(page, "Produce").click();
  await waitForText(notice(page), /Not done: by key needs a Key: murmur2 of its bytes chooses the partition/);
  await partitioner(page).selectOption("sticky");
  await page.getByLabel("Key", { exact: true }).fill("k");
  await button(page, "Produce").click();
  await waitForText(notice(page), /Not done: a record with a key goes to its key's partition/);
  // To the shown partition with a key: the named partition wins (KafkaProducer.partition).
  await partitioner(page).selectOption("shown");
  await button(page, "Produce").click();
  await waitForText(notice(page), new RegExp(`Key "k" sent with the records to orders-${next}, the partition named`));
  // The link: the sticky produces name neither a partition nor a key; the last names both.
  const { link, scenario } = await sharedScenario(page);
  assert.deepEqual(actionsNamed(scenario, "produce").map((a) => [a.count, a.partition, a.key]), [[N, undefined, undefined], [1, undefined, undefined], [1, next, "k"]]);
  // Replayed: the same partitions get the same records.
  const fresh = await openFresh(app, pathOf(link));
  await button(fresh.page, `orders-${first}`).click();
  const firstCount = next === first ? N + 2 : split[0];
  await waitForText(offsets(fresh.page), new RegExp(`orders:${first}:${firstCount}`));
});

test("partitioner.ignore.keys and partitioner.adaptive.partitioning.enable in the Advanced settings: a keyed produce goes sticky; the link replays both", async () => {
  const PARTITIONS = 4;
  const s = { version: 2, brokers: 3, topics: [{ name: "orders", partitions: PARTITIONS, replication_factor: 2 }], timeline: [], end_ms: 60_000, title: "ignore keys" };
  const { page } = await openFresh(app, `/${shareHash(s)}`);
  await overview(page).waitFor();
  await page.locator("details.advanced > summary").click();
  const ignore = page.getByRole("checkbox", { name: "partitioner.ignore.keys", exact: true });
  const adaptive = page.getByRole("checkbox", { name: "partitioner.adaptive.partitioning.enable", exact: true });
  assert.deepEqual([await ignore.isChecked(), await adaptive.isChecked()], [false, true], "ProducerConfig's defaults");
  await ignore.check();
  await waitForText(eventLog(page), /kafka-configs\.sh --alter --add-config partitioner\.ignore\.keys=true/);
  await adaptive.uncheck();
  await waitForText(eventLog(page), /kafka-configs\.sh --alter --add-config partitioner\.adaptive\.partitioning\.enable=false/);
  // By key, 31 records of 1024 bytes with one key: a key would send them all to one
  // partition; ignored, they go where keyless ones go, 30 on the sticky partition and the
  // 31st on the next drawn (as the sticky test above works out).
  const N = 31;
  const split = stickySplit(N, 1024);
  await partitioner(page).selectOption("key");
  await page.getByLabel("Key", { exact: true }).fill("foobar");
  await page.getByLabel("Records", { exact: true }).fill(String(N));
  await button(page, "Produce").click();
  const text = await waitForText(notice(page), /^partitioner\.ignore\.keys is true: key "foobar" goes with the records but does not choose; the sticky partitioner \(KIP-794\) sent the 31 record\(s\) to orders-\d/);
  const m = /to orders-(\d)(?: \((\d+)\) and orders-(\d) \((\d+)\))?; the lanes show orders-(\d)\./.exec(text);
  assert.ok(m, text);
  if (m[3] !== undefined) assert.deepEqual([Number(m[2]), Number(m[4])], split);
  // The sticky partitioner with a key is no longer refused.
  await partitioner(page).selectOption("sticky");
  await page.getByLabel("Records", { exact: true }).fill("1");
  await button(page, "Produce").click();
  await waitForText(notice(page), /^partitioner\.ignore\.keys is true: key "foobar" goes with the records but does not choose; the sticky partitioner \(KIP-794\) sent the 1 record\(s\) to orders-\d/);
  // The link: both settings, then the produces with their key and no partition.
  const { link, scenario } = await sharedScenario(page);
  assert.deepEqual(actionsNamed(scenario, "set_config").map((a) => [a.name, a.value]), [["partitioner.ignore.keys", true], ["partitioner.adaptive.partitioning.enable", false]]);
  assert.deepEqual(actionsNamed(scenario, "produce").map((a) => [a.count, a.key, a.partition]), [[N, "foobar", undefined], [1, "foobar", undefined]]);
  // Replayed: the settings hold on a fresh page from the link, and the records are where
  // the sticky partitioner put them.
  const fresh = await openFresh(app, pathOf(link));
  await fresh.page.locator("details.advanced > summary").click();
  assert.equal(await fresh.page.getByRole("checkbox", { name: "partitioner.ignore.keys", exact: true }).isChecked(), true);
  assert.equal(await fresh.page.getByRole("checkbox", { name: "partitioner.adaptive.partitioning.enable", exact: true }).isChecked(), false);
  const first = Number(m[1]);
  await button(fresh.page, `orders-${first}`).click();
  // The link was taken as the records were sent: they are written once it plays on.
  await play(fresh.page);
  await waitForText(offsets(fresh.page), new RegExp(`orders:${first}:${m[3] === undefined ? N : split[0]}`));
  await pause(fresh.page);
});

test("expectations of what kafka-topics.sh --describe's filters list are marked on the timeline, met or not", async () => {
  // Brokers 1, 2, 3 in racks a, b, c; orders (min.insync.replicas 2) on [1, 2, 3] and
  // [2, 3, 1]. Zone b is lost at 2 s; until the controller fences broker 2 (within
  // heartbeat + session timeout, 11 s) it is in both ISRs and nothing is listed; then both
  // partitions are under-replicated and at their minimum of two, orders-1 led by another.
  const s = {
    version: 2, brokers: 3, racks: { 1: "a", 2: "b", 3: "c" },
    topics: [{ name: "orders", assignment: [[1, 2, 3], [2, 3, 1]], configs: { "min.insync.replicas": 2 } }],
    timeline: [{ at: 2000, action: "lose_zone", zone: "b" }],
    end_ms: 20_000, title: "describe filters",
    expect: [
      { at: 2100, label: "nothing under-replicated before the fence", under_replicated_partitions: 0 },
      { at: 14_000, label: "both under-replicated, at min ISR", under_replicated_partitions: ["orders-1", "orders-0"], at_min_isr_partitions: 2 },
      { at: 14_000, label: "under min ISR in zone b", zone: "b", under_min_isr_partitions: ["orders-1"] },
      { at: 14_000, label: "every orders partition has a live leader", topic: "orders", unavailable_partitions: 0 },
    ],
  };
  const { page } = await openFresh(app, `/?t=20000${shareHash(s)}`);
  const marks = page.locator("svg.markers line.expect");
  assert.equal(await marks.count(), 4);
  assert.deepEqual(await marks.evaluateAll((els) => els.map((e) => e.getAttribute("class"))), ["expect met", "expect met", "expect unmet", "expect met"]);
  const title = await marks.nth(2).locator("title").textContent();
  assert.match(title, /^expect\[2\] at 14\.000s \("under min ISR in zone b"\): NOT MET\n\s+under_min_isr_partitions of zone b: expected orders-1, got none$/);
  await waitForText(page.getByTestId("expectations"), /^Expectations: 3 met, 1 not met, 0 ahead · expect\[2\]/);
  await slider(page, "Timeline").fill("1500");
  await poll(async () => (await marks.nth(1).getAttribute("class")) === "expect pending");
});

test("kafka-dump-log.sh and the leader-epoch-checkpoints of the partition the lanes show; scrubbing back hides a later dump", async () => {
  // orders-1 on [1, 2, 3], led by 1 at epoch 0: three records, then broker 1 stops
  // (controlled shutdown: broker 2, the next in the ISR, leads at epoch 1), two more.
  const s = {
    version: 2, brokers: 3,
    topics: [{ name: "orders", assignment: [[2, 1, 3], [1, 2, 3]] }],
    timeline: [
      { at: 0, action: "produce", acks: "all", topic: "orders", partition: 1, prefix: "a", count: 3 },
      { at: 1000, action: "stop", broker: 1 },
      { at: 2000, action: "produce", acks: "all", topic: "orders", partition: 1, prefix: "b", count: 2 },
    ],
    end_ms: 60_000, title: "dump",
  };
  const { page } = await openFresh(app, `/?t=4000${shareHash(s)}`);
  await overview(page).waitFor();
  await button(page, "orders-1").click();
  await waitForText(page.locator("#actions-h"), /to orders-1$/);
  await waitForText(page.locator(".readouts .tools code"), /^\/var\/lib\/kafka\/data\/orders-1\/00000000000000000000\.log$/);
  await page.getByRole("combobox", { name: "Broker to dump", exact: true }).selectOption("2");
  await button(page, "Dump the log").click();
  // Two batches: the first at epoch 0 (offsets 0..2), the second at epoch 1 (3..4).
  const dump = await waitForText(dumpLog(page), /^broker 2 log \(orders-1, log end offset 5\):/);
  const batches = dump.split("\n").filter((l) => l.startsWith("  baseOffset"));
  assert.deepEqual(batches.map((l) => /baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*partitionLeaderEpoch: (\d+)/.exec(l).slice(1).map(Number)), [[0, 2, 3, 0], [3, 4, 2, 1]]);
  assert.deepEqual(dump.split("\n").filter((l) => l.startsWith("    |")).map((l) => / payload: (\S+)$/.exec(l)[1]), ["a1", "a2", "a3", "b1", "b2"]);
  // The epochs of orders-1 into the event log, each line naming it: broker 2 led epoch 1
  // from offset 3, and broker 3 followed it (version 0, two entries).
  await button(page, "Print the leader-epoch-checkpoints").click();
  for (const b of [2, 3]) await waitForText(eventLog(page), new RegExp(`broker ${b}: orders-1: 0 2 0 0 1 3`));
  await app.screenshot(page, "cluster-tools-dump");
  const { link, scenario } = await sharedScenario(page);
  assert.deepEqual(actionsNamed(scenario, "dump_log").map((a) => [a.broker, a.topic, a.partition]), [[2, "orders", 1]]);
  assert.deepEqual(actionsNamed(scenario, "epochs").map((a) => [a.topic, a.partition]), [["orders", 1]]);
  // Back before the dump: no dump shown (the read-outs say what held at the moment shown).
  await slider(page, "Timeline").fill("3000");
  await poll(async () => !(await dumpLog(page).isVisible()));
  // And the link's session shows it again at its end.
  const fresh = await openFresh(app, pathOf(link));
  await waitForText(dumpLog(fresh.page), /^broker 2 log \(orders-1, log end offset 5\):/);
});

test("expectations of follower fetching and zones are marked on the timeline, met or not, with their accounts", async () => {
  // Brokers 1, 2, 3 in racks a, b, c; orders-0 on [1, 2, 3] led by 1; a consumer in rack c
  // with the rack-aware selector: the leader names broker 3, which it reads from. Zone b is
  // lost at 2 s; the controller fences broker 2 within heartbeat + session timeout (11 s).
  const s = {
    version: 2, brokers: 3, racks: { 1: "a", 2: "b", 3: "c" }, client_rack: "c",
    config: { "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector" },
    topics: [{ name: "orders", assignment: [[1, 2, 3]] }],
    timeline: [
      { at: 0, action: "produce", acks: "all", prefix: "r", count: 5 },
      { at: 1000, action: "consume", from_beginning: true },
      { at: 2000, action: "lose_zone", zone: "b" },
    ],
    end_ms: 20_000, title: "follower and zones",
    expect: [
      { at: 1100, since: 1000, label: "read from the follower in zone c", preferred_read_replica: 3, read_from: 3, client_rack: "c" },
      { at: 1100, since: 1000, label: "read from the leader", read_from: 1 },
      { at: 2100, label: "zone b lost", zone: "b", zone_state: "lost", fenced: [] },
      { at: 14_000, label: "broker 2 fenced", fenced: [2], zone: "a", zone_state: "up" },
    ],
  };
  const { page } = await openFresh(app, `/?t=20000${shareHash(s)}`);
  const marks = page.locator("svg.markers line.expect");
  assert.equal(await marks.count(), 4);
  assert.deepEqual(await marks.evaluateAll((els) => els.map((e) => e.getAttribute("class"))), ["expect met", "expect unmet", "expect met", "expect met"]);
  const title = await marks.nth(1).locator("title").textContent();
  assert.match(title, /^expect\[1\] at 1\.100s \("read from the leader"\): NOT MET\n\s+read_from: expected a read from broker 1 in 1000\.\.=1100 ms, got broker 3 at \d+ ms$/);
  await waitForText(page.getByTestId("expectations"), /^Expectations: 3 met, 1 not met, 0 ahead · expect\[1\]/);
  // Before the zone is lost, its mark waits.
  await slider(page, "Timeline").fill("1500");
  await poll(async () => (await marks.nth(2).getAttribute("class")) === "expect pending");
});
