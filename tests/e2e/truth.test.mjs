// The picture never misleads (issue 12): a committed record stays drawn as committed when
// the leader that committed it dies; a dead leader's lane says what it was; the line above
// the picture says when the partition is offline and when the controller will fence a dead
// leader; committed records that an unclean election lost are drawn as lost.

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { button, describe, fault, openFresh, pause, play, poll, setRange, SPEED_MAX, waitForText } from "../lib/ui.mjs";

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
  for (let i = 0; i < n; i++) {
    const [input, output] = await Promise.all([
      rows.nth(i).locator("input").boundingBox(),
      rows.nth(i).locator("output").boundingBox(),
    ]);
    const name = await rows.nth(i).locator("input").getAttribute("aria-label");
    assert.ok(output.y < input.y + input.height && output.y + output.height > input.y, `${name}: the value is beside its slider`);
    assert.ok(output.height < 30, `${name}: its value is one line (${output.height} px)`);
  }
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
