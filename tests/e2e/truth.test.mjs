// The picture never misleads (issue 12): a committed record stays drawn as committed when
// the leader that committed it dies; a dead leader's lane says what it was; the line above
// the picture says when the partition is offline and when the controller will fence a dead
// leader; committed records that an unclean election lost are drawn as lost.

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { decodeLink, payloadOf } from "../lib/links.mjs";
import {
  button,
  describe,
  eventLog,
  fault,
  openFresh,
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
} from "../lib/ui.mjs";

const app = useApp();

const laneView = (page, index) => page.locator(".cluster svg.lane-view").nth(index);
const cells = (page, index, kind) => laneView(page, index).locator(`g.cell.${kind}`);
const status = (page) => page.getByTestId("cluster-status");

test("killing the leader keeps its committed records committed, and the picture says it is dead", async () => {
  const { page } = await openFresh(app, "/");
  await page.getByLabel("Records", { exact: true }).fill("3");
  await button(page, "Produce").click();
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForText(page.locator("pre.offsets"), /:3$/m);
  await pause(page);
  for (const i of [0, 1, 2]) assert.equal(await cells(page, i, "committed").count(), 3, `lane ${i}`);
  assert.equal(await status(page).textContent(), "", "all is well");

  // Killed: the controller still names broker 1 as leader until it fences it.
  await fault(page, "Kill broker 1");
  await waitForText(laneView(page, 0), /broker 1 · leader \(down\)/);
  await waitForText(status(page), /^Leader broker 1 is killed: writes and reads to it get no answer; the controller fences it in \d+\.\d s/);
  for (const i of [0, 1, 2]) {
    assert.equal(await cells(page, i, "committed").count(), 3, `lane ${i}: still committed`);
    assert.equal(await cells(page, i, "uncommitted").count(), 0, `lane ${i}`);
  }

  // Fenced: broker 2 leads, and the dead broker is a replica that is down.
  await play(page);
  await waitForText(describe(page), /Leader: 2 /);
  await pause(page);
  await waitForText(laneView(page, 0), /broker 1 · replica \(down\)/);
  await waitForText(status(page), /^$/);
  await app.screenshot(page, "truth-dead-leader");
});

test("a leaderless partition is drawn as offline, and records an unclean election lost as lost", async () => {
  const { page } = await openFresh(app, "/?preset=unclean-election");
  // This test plays through the steps (the walkthrough's pauses have a test of their own).
  await page.getByRole("checkbox", { name: "Pause at each step", exact: true }).uncheck();
  const next = button(page, "Next step");
  // Broker 1 holds no replica (the assignment is 2,3): broker 2 is the second lane.
  // Steps 1-4: broker 2, the only in-sync replica, stops; broker 3 may not lead.
  for (let i = 0; i < 4; i++) await next.click();
  await waitForText(page.getByTestId("caption"), /^Step 4\./);
  // Broker 2 leads, so the controller grants it a controlled shutdown: its leadership goes
  // at once (no replica may lead), and the process ends a heartbeat or so later, once every
  // broker has read that far (BrokerHeartbeatManager); step 5 comes at 30 s.
  await play(page);
  await waitForText(status(page), /^Partition offline: no leader\./);
  await waitForText(laneView(page, 1), /broker 2 · replica \(down\)/);
  await pause(page);
  assert.match(await describe(page).textContent(), /Leader: none /);
  // Broker 2's twenty records were committed, and still are.
  assert.equal(await cells(page, 1, "committed").count(), 20);
  assert.equal(await cells(page, 1, "uncommitted").count(), 0);

  // Step 5: the unclean election makes broker 3 leader; broker 2's records 11..20 were
  // committed and are lost.
  await next.click();
  await waitForText(page.getByTestId("caption"), /^Step 5\./);
  // The election takes the controller a moment (at 1×, broker 2 comes back 2 s later).
  const lost = cells(page, 1, "lost");
  await play(page);
  await poll(async () => (await lost.count()) === 10, { message: async () => `${await lost.count()} lost cells` });
  await pause(page);
  assert.match(await describe(page).textContent(), /Leader: 3 /);
  await waitForText(status(page), /^$/);
  assert.match(await lost.first().locator("title").textContent(), /^offset 10 epoch 0: 11 \(committed, then lost\), producerId 0 producerEpoch 0 sequence 10$/);
  assert.equal(await cells(page, 1, "committed").count(), 10, "records 1..10 are still committed");
  await app.screenshot(page, "truth-unclean-lost");
});

test("min.insync.replicas stops at the replication factor, and slider values stay on their line", async () => {
  const { page } = await openFresh(app, "/");
  await page.setViewportSize({ width: 1440, height: 900 });
  const min = page.getByRole("slider", { name: "min.insync.replicas", exact: true });
  assert.equal(await min.evaluate((el) => el.max), "3");
  await setRange(page, "Replication factor", 2);
  await waitForText(describe(page), /Replicas: 1,2 /);
  assert.equal(await min.evaluate((el) => el.max), "2", "no value above RF 2 is offered");

  // Each slider's value sits on the slider's line, never wrapped below it.
  await page.locator("details.advanced > summary").click();
  const rows = page.locator(".settings label").filter({ has: page.locator('input[type="range"]') });
  const n = await rows.count();
  assert.ok(n >= 9, `${n} sliders`);
  for (const width of [1440, 700]) {
    await page.setViewportSize({ width, height: 900 });
    await poll(() => page.evaluate((w) => window.innerWidth === w, width));
    for (let i = 0; i < n; i++) {
      const [input, output] = await Promise.all([
        rows.nth(i).locator("input").boundingBox(),
        rows.nth(i).locator("output").boundingBox(),
      ]);
      const name = await rows.nth(i).locator("input").getAttribute("aria-label");
      assert.ok(output.y < input.y + input.height && output.y + output.height > input.y, `${width} px, ${name}: the value is beside its slider`);
      assert.ok(output.height < 30, `${width} px, ${name}: its value is one line (${output.height} px)`);
    }
  }
});

test("a slider moved step by step with the keyboard logs one config change, the value it settles on", async () => {
  const { page } = await openFresh(app, "/");
  await play(page);
  await waitForClock(page, 300);
  await pause(page);
  const log = eventLog(page);
  const changes = (name) => log.locator("li").filter({ hasText: `--add-config ${name}=` });
  const min = slider(page, "min.insync.replicas");
  await min.focus();
  // 2 → 1 → 2 → 3, one change event per key.
  for (const key of ["ArrowLeft", "ArrowRight", "ArrowRight"]) await page.keyboard.press(key);
  // The slider's own value, beside it.
  await waitForText(min.locator("xpath=following-sibling::output[1]"), /^3$/);
  await poll(async () => (await changes("min.insync.replicas").count()) > 0);
  const lines = await changes("min.insync.replicas").allTextContents();
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0], /^\[   0\.\d{3}s\] kafka-configs\.sh --alter --add-config min\.insync\.replicas=3$/);
  const lag = slider(page, "replica.lag.time.max.ms");
  await lag.focus();
  for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowLeft");
  await poll(async () => (await changes("replica.lag.time.max.ms").count()) > 0);
  await waitForText(changes("replica.lag.time.max.ms"), /replica\.lag\.time\.max\.ms=28000$/);
  assert.equal(await changes("replica.lag.time.max.ms").count(), 1);
  // The session holds the two changes, not seven: a reload replays them.
  await page.reload({ waitUntil: "load" });
  await waitForText(changes("replica.lag.time.max.ms"), /=28000$/);
  assert.equal(await log.locator("li").filter({ hasText: "--add-config" }).count(), 2);
});

// Broker 3 is frozen and falls out of the ISR (at 2.883 s broker 1 asks the controller,
// which answers 2 s later); min.insync.replicas=3, so the acks=all write at 8 s is refused
// with NOT_ENOUGH_REPLICAS and retried, each backoff twice the one before (KIP-580: about
// 100, 200, 400, 800 ms, ±20%, then 1000), each after a round trip of 80 ms.
const retrying = {
  version: 1,
  config: { "replica.lag.time.max.ms": 2000, "sim.controller.latency.ms": 1000, "sim.network.latency.ms": 40, "min.insync.replicas": 3 },
  timeline: [
    { at: 1000, action: "freeze", broker: 3 },
    { at: 1500, action: "produce", acks: "1", values: ["a"] },
    { at: 8000, action: "produce", acks: "all", values: ["b"] },
  ],
};

const metric = (page, name) => page.locator("dl.metrics dt", { hasText: name }).locator("xpath=following-sibling::dd[1]");

test("the status line says when an ISR change waits for the controller and when writes are retried, and a retrying send is one line that can be cancelled", async () => {
  const { page } = await openFresh(app, `/?t=3500${shareHash(retrying)}`);
  await waitForText(status(page), /ISR change pending until the controller answers: broker 1's AlterPartition to drop 3 from the ISR 1,2,3; the HW still counts 3\./);

  await setRange(page, "Speed", 667); // 10×
  await play(page);
  await waitForClock(page, 10_000);
  await pause(page);
  const line = await waitForText(status(page), /Writes fail with NOT_ENOUGH_REPLICAS, retry \d+: the producer gives up at delivery\.timeout\.ms, within \d+\.\d s\./);
  assert.doesNotMatch(line, /ISR change pending/, "the controller answered");
  const retries = Number(/retry (\d+):/.exec(line)[1]);
  // By 10 s, about two seconds after the first refusal: at least three retries whatever the
  // draws (the slowest, 119 + 239 + 479 ms plus three round trips, end before 9.2 s).
  assert.ok(retries >= 3, line);

  // One line for all those retries, in the results and in the event log, with a Cancel.
  for (const list of [produceResults(page), eventLog(page)]) {
    const rows = list.locator("li").filter({ hasText: "Got error produce response" });
    assert.equal(await rows.count(), 1, "one line");
    await waitForText(rows, new RegExp(`Error: NOT_ENOUGH_REPLICAS \\(×${retries}\\) · retry ${retries}: the producer gives up at delivery\\.timeout\\.ms, within \\d+\\.\\d s`));
  }
  assert.equal(await metric(page, "Produce ok / failed").textContent(), "1 / 0");
  assert.equal(await metric(page, "record-retry-total").textContent(), String(retries));
  assert.equal(await metric(page, "record-error-total").textContent(), "0");

  await produceResults(page).getByRole("button", { name: "Cancel the send" }).click();
  await waitForText(produceResults(page).locator("li").first(), /acks=all -> KafkaException: Producer is closed forcefully\. \(1 record\(s\) not delivered\)$/);
  assert.equal(await metric(page, "Produce ok / failed").textContent(), "1 / 1");
  assert.equal(await metric(page, "record-error-total").textContent(), "1");
  await waitForText(status(page), /^(?!.*Writes fail)/);
  assert.equal(await page.getByRole("button", { name: "Cancel the send" }).count(), 0);
  // The cancel is on the session's timeline: reopened from the saved session, it replays.
  await page.goto(app.url, { waitUntil: "load" });
  await waitForText(produceResults(page), /KafkaException: Producer is closed forcefully/);
  assert.equal(await metric(page, "record-error-total").textContent(), "1");
});

test("a produce request waiting at a frozen leader shows on the status line until the producer gives up on it", async () => {
  const frozen = {
    version: 1,
    config: { "sim.network.latency.ms": 40 },
    timeline: [
      { at: 1000, action: "freeze", broker: 1 },
      { at: 1000, action: "produce", acks: "all", values: ["x"] },
    ],
  };
  // Sent at 1 s; the producer gives up at request.timeout.ms (30 s) after a round trip and
  // its slack: at 31.13 s.
  const { page } = await openFresh(app, `/?t=5000${shareHash(frozen)}`);
  await waitForText(status(page), /1 produce request\(s\) pending at broker 1 \(leader, frozen\): it keeps its sockets open, so no answer comes; the producer gives up at request\.timeout\.ms, within 26\.1 s\./);
});

test("the event log's first line follows the Brokers slider", async () => {
  const { page } = await openFresh(app, "/");
  const log = page.getByRole("list", { name: "Event log", exact: true });
  await waitForText(log.locator("li").first(), /Created topic rep with replicas 1,2,3 \(leader 1\), 3 broker\(s\)/);
  await setRange(page, "Brokers", 5);
  await waitForText(log.locator("li").first(), /Created topic rep with replicas 1,2,3 \(leader 1\), 5 broker\(s\)/);
  await setRange(page, "Replication factor", 4);
  await waitForText(log.locator("li").first(), /Created topic rep with replicas 1,2,3,4 \(leader 1\), 5 broker\(s\)/);
  assert.equal(await log.locator("li").count(), 1, "only the new cluster's line");
});

test("a preset's captions say so once the person acts off its script", async () => {
  const { page } = await openFresh(app, "/?preset=frozen-follower");
  const caption = page.getByTestId("caption");
  const next = button(page, "Next step");
  for (let i = 0; i < 4; i++) await next.click();
  await waitForText(caption, /^Step 4\./);
  assert.equal(await caption.getAttribute("class"), "caption", "on script: the caption is true");
  // Off script: broker 1 is killed in the middle of the walkthrough.
  await fault(page, "Kill broker 1");
  for (let i = 0; i < 3; i++) await next.click();
  await waitForText(caption, /^Off script since 0:16\.000 \(you acted\), so this step describes the scenario's own run, not this one: Step 7\./);
  assert.equal(await caption.getAttribute("class"), "caption stale");
  // Shared, or reopened from the saved session, it is still off its script (the scenario
  // it saves says since when).
  const share = button(page, "Share");
  await share.click();
  const link = await page.getByLabel("Share link", { exact: true }).inputValue();
  for (const [path, step] of [[`/${link.slice(app.url.length)}`, 7], ["/", 9]]) {
    await page.goto(`${app.url}${path.slice(1)}`, { waitUntil: "load" });
    await waitForText(caption, new RegExp(`^Off script since 0:16\\.000 \\(you acted\\), so this step describes the scenario's own run, not this one: Step ${step}\\.`));
    assert.equal(await caption.getAttribute("class"), "caption stale", path);
  }
});

test("a person's own title and captions go into the link and the embed, and make the run the scenario's own", async () => {
  const { page, problems } = await openFresh(app, "/?preset=frozen-follower");
  page.on("dialog", async (d) => {
    problems.push(`dialog opened: ${d.message()}`);
    await d.dismiss().catch(() => {});
  });
  const caption = page.getByTestId("caption");
  const next = button(page, "Next step");
  for (let i = 0; i < 4; i++) await next.click();
  await waitForText(caption, /^Step 4\./);
  await fault(page, "Kill broker 1");
  for (let i = 0; i < 3; i++) await next.click();
  await waitForText(caption, /^Off script since 0:16\.000/);
  const shown = await page.getByLabel("Simulated time", { exact: true }).textContent();
  const at = shown.replace(/^t = /, "");

  await button(page, "Share").click();
  const title = page.getByRole("textbox", { name: "Scenario title", exact: true });
  assert.equal(await title.inputValue(), "A frozen follower, the ISR, the HW and acks=all", "the preset's title to start from");
  await title.fill("Broker 1 died mid-lab");
  await title.press("Tab");
  const draft = page.getByRole("textbox", { name: "Caption", exact: true });
  await draft.fill("  Broker 1 is killed; broker 2 takes over.  ");
  await button(page, "Add caption at this moment").click();
  await waitForText(
    page.locator("p.notice"),
    new RegExp(`^Added your caption at ${at.replace(".", "\\.")}\\. This run is now the scenario's own: \\d+ of its captions from 0:16\\.000 on described the run before you acted there, so they were removed\\.`),
  );
  assert.equal(await draft.inputValue(), "", "the draft is cleared");
  // The caption shown is the person's, and true: no longer off script.
  await waitForText(caption, /^Broker 1 is killed; broker 2 takes over\.$/);
  assert.equal(await caption.getAttribute("class"), "caption");
  const list = page.getByRole("list", { name: "Captions", exact: true });
  const items = await list.locator("li").allTextContents();
  assert.equal(items.at(-1), `${at} Broker 1 is killed; broker 2 takes over. Remove`);
  assert.match(await page.getByTestId("step").textContent(), new RegExp(`^Step ${items.length} of ${items.length}$`));
  assert.equal(await page.title(), "Broker 1 died mid-lab · Watermark");

  // The link carries them, and no longer says the run left its script.
  const link = await page.getByLabel("Share link", { exact: true }).inputValue();
  const shared = decodeLink(payloadOf(link));
  assert.equal(shared.title, "Broker 1 died mid-lab");
  assert.equal(shared.off_script_ms, undefined);
  const notes = shared.timeline.filter((a) => a.action === "note");
  const [min, sec] = at.split(":");
  const atMs = Number(min) * 60_000 + Math.round(Number(sec) * 1000);
  assert.ok(atMs > 16_000, at);
  assert.deepEqual(notes.at(-1), { at: atMs, action: "note", text: "Broker 1 is killed; broker 2 takes over." });
  assert.ok(notes.every((n) => n.at < 16_000 || n.text.startsWith("Broker 1")), "the stale captions are gone");
  assert.ok(shared.timeline.some((a) => a.action === "kill" && a.at === 16_000), "the kill is in the scenario");

  // The embed snippet holds the scenario itself (no longer the unchanged preset); the
  // embed shows its title and, at its moment, the caption.
  const snippet = await page.getByRole("textbox", { name: "Embed snippet", exact: true }).inputValue();
  assert.doesNotMatch(snippet, /preset=/);
  const src = /src="([^"]+)"/.exec(snippet)[1].replaceAll("&amp;", "&");
  const embed = await app.open(`/${src.slice(app.url.length)}`);
  await waitForText(embed.page.locator(".embed-title"), /^Broker 1 died mid-lab$/);
  await waitForText(embed.page.getByTestId("caption"), /^Broker 1 is killed; broker 2 takes over\.$/);

  // Remove takes it out again; text is text, never markup.
  await button(page, `Remove caption ${items.length}`).click();
  await waitForText(page.locator("p.notice"), new RegExp(`^Removed caption ${items.length}\\.`));
  assert.equal(await list.locator("li").count(), items.length - 1);
  await draft.fill("<img src=x onerror=alert(1)>");
  await button(page, "Add caption at this moment").click();
  await waitForText(list.locator("li").last(), /<img src=x onerror=alert\(1\)> Remove$/);
  assert.equal(await list.locator("img").count(), 0);
  // Empty: refused, saying why.
  await button(page, "Add caption at this moment").click();
  await waitForText(page.locator("p.notice"), /^Caption not added: caption: a caption needs some text/);
});

test("a truncation says what it threw away, below or above the HW", async () => {
  const { page } = await openFresh(app, "/?preset=unclean-election");
  // This test plays through the steps (the walkthrough's pauses have a test of their own).
  await page.getByRole("checkbox", { name: "Pause at each step", exact: true }).uncheck();
  const next = button(page, "Next step");
  for (let i = 0; i < 7; i++) await next.click();
  await waitForText(page.getByTestId("caption"), /^Step 7\./);
  // Broker 2 comes back as a follower of broker 3 and truncates its records 11..20.
  await play(page);
  await waitForText(status(page), /Broker 2 truncated offsets 10\.\.19 \(below its HW 20: records it held as committed\)\./);
  await pause(page);
  const ghost = page.locator(".cluster-flow g.cell.truncated");
  assert.ok((await ghost.count()) > 0, "its records fall away");
  assert.equal(await ghost.first().locator("text.value").evaluate((el) => getComputedStyle(el).textDecorationLine), "line-through");
});
