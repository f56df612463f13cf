// Expectations on the timeline: each of a scenario's expectations is a mark at its time,
// grey until the shown moment reaches it, then green when it held or red when it did not,
// with a summary line that names the last one not met.

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { presetScenario } from "../lib/links.mjs";
import { button, openFresh, play, shareHash, slider, waitForText } from "../lib/ui.mjs";

const app = useApp();

const marks = (page) => page.locator("svg.markers line.expect");
const summary = (page) => page.getByTestId("expectations");
const classes = (page) => marks(page).evaluateAll((els) => els.map((e) => e.getAttribute("class")));

test("a preset's expectations are marked, and each turns met as the clock passes it", async () => {
  const preset = presetScenario("frozen-follower");
  const n = preset.expect.length;
  const { page } = await openFresh(app, "/?preset=frozen-follower");
  assert.equal(await marks(page).count(), n);
  assert.deepEqual(await classes(page), Array(n).fill("expect pending"));
  assert.equal(await summary(page).textContent(), `Expectations: 0 met, 0 not met, ${n} ahead`);
  // Each mark sits at its time and says what it checks.
  const xs = await marks(page).evaluateAll((els) => els.map((e) => Number(e.getAttribute("x1"))));
  assert.deepEqual(xs, preset.expect.map((e) => e.at));
  const title = await marks(page).nth(1).locator("title").textContent();
  assert.equal(title, `expect[1] at 14.000s (${JSON.stringify(preset.expect[1].label)})`);

  const { page: later } = await openFresh(app, "/?preset=frozen-follower&t=16150");
  const due = preset.expect.filter((e) => e.at <= 16150).length;
  assert.ok(due > 0 && due < n);
  assert.deepEqual(
    await classes(later),
    preset.expect.map((e) => (e.at <= 16150 ? "expect met" : "expect pending")),
  );
  assert.equal(await summary(later).textContent(), `Expectations: ${due} met, 0 not met, ${n - due} ahead`);
  assert.match(await marks(later).nth(0).locator("title").textContent(), /: met$/);
});

test("an expectation that does not hold turns red when reached, and says why", async () => {
  const scenario = presetScenario("frozen-follower");
  const i = scenario.expect.findIndex((e) => e.offsets === "rep:0:18");
  assert.ok(i >= 0, "the preset expects rep:0:18");
  scenario.expect[i].offsets = "rep:0:17";
  // A label is text, never markup.
  scenario.expect[i].label = '<img src=x onerror="document.title=1">';
  const at = scenario.expect[i].at;
  const { page } = await openFresh(app, `/?t=${at}${shareHash(scenario)}`);
  const mark = marks(page).nth(i);
  assert.equal(await mark.getAttribute("class"), "expect unmet");
  assert.match(await mark.locator("title").textContent(), /NOT MET\n\s+offsets: expected rep:0:17, got rep:0:18$/);
  assert.ok((await mark.locator("title").textContent()).includes('("<img src=x onerror=\\"document.title=1\\">")'));
  assert.equal(await page.locator("svg.markers img").count(), 0);
  const text = await summary(page).textContent();
  assert.match(text, /^Expectations: \d+ met, 1 not met, \d+ ahead · expect\[\d+\] at 24\.000s /);
  assert.match(text, /offsets: expected rep:0:17, got rep:0:18$/);

  // Back before it: grey again (the outcome waits for the clock); played past it: red.
  await slider(page, "Timeline").fill(String(at - 1500));
  await waitForText(summary(page), /, 0 not met, /);
  assert.equal(await mark.getAttribute("class"), "expect pending");
  // Played through, not step by step (the walkthrough would pause at its next caption).
  await page.getByRole("checkbox", { name: "Pause at each step", exact: true }).uncheck();
  await play(page);
  await waitForText(summary(page), /, 1 not met, /, { timeout: 10_000 });
  assert.equal(await mark.getAttribute("class"), "expect unmet");
  await button(page, "Pause").click();
});

test("a scenario without expectations shows no marks and no summary", async () => {
  const { page } = await openFresh(app, "/");
  assert.equal(await marks(page).count(), 0);
  assert.equal(await summary(page).isVisible(), false);
});
