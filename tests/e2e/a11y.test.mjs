// Accessibility scan of the release build with axe-core: the default page, then with the
// Advanced settings, the Share panel, the legend and a broker's fault menu open, and with
// the keyboard help shown, in the light and the dark colour scheme. Any violation of impact
// serious or critical fails, listed with its rule and the elements it found.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { button, openFresh, shareHash } from "../lib/ui.mjs";

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
