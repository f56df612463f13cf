// Accessibility scan of the release build with axe-core: the default page, then with the
// Advanced settings, the Share panel, the legend and a broker's fault menu open, and with
// the keyboard help shown, in the light and the dark colour scheme. Any violation of impact
// serious or critical fails, listed with its rule and the elements it found.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { button, openFresh, setRange, shareHash } from "../lib/ui.mjs";

const require = createRequire(import.meta.url);
const AXE_PATH = require.resolve("axe-core/axe.min.js");

const app = useApp();

/** Runs axe on the whole document; resolves to the violations, each with its nodes. */
async function scan(page) {
  await page.addScriptTag({ path: AXE_PATH });
  return page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
    }));
  });
}

function report(violations) {
  return violations
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}\n` +
        v.nodes.map((n) => `    ${n.target}\n      ${n.summary?.replace(/\n/g, "\n      ")}`).join("\n"),
    )
    .join("\n  ");
}

async function assertNoSeriousViolations(page, what) {
  const violations = await scan(page);
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  const minor = violations.filter((v) => !serious.includes(v));
  if (minor.length) console.log(`axe, ${what}: minor or moderate only:\n  ${report(minor)}`);
  assert.deepEqual(serious, [], `axe found serious or critical violations (${what}):\n  ${report(serious)}`);
}

// A cluster with records in every state (committed, not yet committed, diverged), a
// message in flight and a frozen broker, so every colour the view draws is checked.
const BUSY = {
  version: 1,
  brokers: 3,
  replication_factor: 3,
  config: { "min.insync.replicas": 2, "sim.network.latency.ms": 40 },
  timeline: [
    { at: 0, action: "produce", acks: "all", prefix: "c", count: 3 },
    { at: 1000, action: "freeze", broker: 2 },
    { at: 1000, action: "freeze", broker: 3 },
    { at: 1500, action: "produce", acks: "1", values: ["tail"] },
  ],
};

for (const colorScheme of ["light", "dark"]) {
  test(`a run under an older protocol, its banner, loss and protocol choice (${colorScheme})`, async () => {
    const { page } = await openFresh(app, "/?preset=pre-kip-101-hw-truncation&t=16000", { colorScheme });
    await page.locator("aside.protocol").waitFor();
    await page.locator("div.loss").waitFor();
    await page.locator("details.advanced > summary").click();
    await assertNoSeriousViolations(page, `protocol pre-kip-101, ${colorScheme}`);
  });

  test(`runs side by side, their differences, event log, read-outs and the side-by-side choice (${colorScheme})`, async () => {
    const { page } = await openFresh(app, "/?preset=elr-side-by-side&t=52100", { colorScheme });
    await page.locator("section.beside ul.differences li").first().waitFor();
    // The run beside's own event log and read-outs, open.
    await page.locator("section.beside details.beside-log > summary").click();
    await page.locator("section.beside details.beside-readouts > summary").click();
    await page.locator("section.beside ol.log li.error").first().waitFor();
    await page.locator("section.beside .beside-outs .kafka-metrics table").waitFor();
    await assertNoSeriousViolations(page, `side by side, ${colorScheme}`);
  });

  test(`the settings' configuration warnings (${colorScheme})`, async () => {
    const { page } = await openFresh(app, "/", { colorScheme });
    await setRange(page, "min.insync.replicas", 1);
    await page.locator("ul.warnings li").first().waitFor();
    await assertNoSeriousViolations(page, `configuration warnings, ${colorScheme}`);
  });

  test(`the default page has no serious accessibility violations (${colorScheme})`, async () => {
    const { page } = await openFresh(app, "/", { colorScheme });
    await assertNoSeriousViolations(page, `default page, ${colorScheme}`);
  });

  test(`with Advanced, Share and the help open, and records drawn (${colorScheme})`, async () => {
    const { page } = await openFresh(app, `/?t=1540${shareHash(BUSY)}`, { colorScheme });
    await page.locator("details.advanced > summary").click();
    await page.locator("details.simplifications > summary").click();
    await button(page, "Share").click();
    await page.getByRole("textbox", { name: "Share link", exact: true }).waitFor();
    await button(page, "Keyboard shortcuts").click();
    await page.getByRole("dialog", { name: "Keyboard shortcuts", exact: true }).waitFor();
    await page.locator("details.legend > summary").click();
    // Last: the menu closes when the focus leaves it.
    await button(page, "Faults for broker 2").click();
    await page.getByRole("menu", { name: "Broker 2", exact: true }).waitFor();
    assert.ok((await page.locator(".cluster g.cell").count()) > 0);
    await app.screenshot(page, `a11y-open-panels-${colorScheme}`);
    await assertNoSeriousViolations(page, `Advanced, Share and help open, ${colorScheme}`);
  });
}

// The data-loss finder's answer (web/src/finder.rs): acks=1 writes, where a search of 60
// schedules finds a loss, with its schedule and Open button. (min.insync.replicas 2: at 1
// the settings' warning list has a serious violation of its own, `li[role=note]`.)
const ACKS_1 = {
  title: "t", topic: "t", brokers: 3, replication_factor: 3, config: { "min.insync.replicas": 2 },
  timeline: Array.from({ length: 10 }, (_, i) => ({ at: i * 1000, action: "produce", acks: "1", prefix: `v${i}-`, count: 2 })),
  end_ms: 12000,
};

for (const colorScheme of ["light", "dark"]) test(`the data-loss finder's settings and answer (${colorScheme})`, async () => {
  const { page } = await openFresh(app, `/${shareHash(ACKS_1)}`, { colorScheme });
  await page.locator("details.finder > summary").click();
  await page.getByLabel("Schedules to try", { exact: true }).fill("60");
  await button(page, "Find a way to lose acknowledged data").click();
  await page.locator(".finder-status :is(.finder-found, .finder-none)").waitFor({ timeout: 120_000 });
  await assertNoSeriousViolations(page, `the finder's answer, ${colorScheme}`);
});

// A version-2 cluster with racks: the overview with its zone buttons, the calculator per
// topic and the reassignment form, the produce row's key and size, the client.rack choice.
const CLUSTER = {
  version: 2,
  brokers: 6,
  racks: { 1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c" },
  topics: [
    { name: "orders", partitions: 6, replication_factor: 3, configs: { "min.insync.replicas": 2 } },
    { name: "audit", partitions: 2, replication_factor: 2 },
  ],
  timeline: [{ at: 0, action: "produce", acks: "all", prefix: "o", count: 4, topic: "orders", partition: 0 }],
  end_ms: 1000,
};

for (const colorScheme of ["light", "dark"]) test(`a version-2 cluster's overview, reassignment form and produce and consume fields (${colorScheme})`, async () => {
  const { page } = await openFresh(app, `/?t=1000${shareHash(CLUSTER)}`, { colorScheme });
  await page.getByRole("region", { name: "Cluster overview", exact: true }).waitFor();
  for (const name of ["Key", "Record size", "Target replicas", "Throttle", "Reassignment JSON"]) {
    assert.ok(await page.getByLabel(name, { exact: true }).isVisible(), name);
  }
  assert.ok(await page.getByRole("combobox", { name: "client.rack", exact: true }).isVisible());
  assert.ok(await page.getByRole("table", { name: "Calculator per topic", exact: true }).isVisible());
  await page.locator("details.advanced > summary").click();
  await app.screenshot(page, `a11y-cluster-v2-${colorScheme}`);
  await assertNoSeriousViolations(page, `a version-2 cluster, ${colorScheme}`);
});
