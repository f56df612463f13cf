// The first page of the release build: it loads, the wasm app mounts and shows the engine's
// version, the stylesheet applies in both colour schemes, and nothing goes wrong on the way.

import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_READY, lockedVersion, useApp } from "../lib/harness.mjs";

const app = useApp();

test("the page has its title, and the wasm app renders the heading and engine version", async () => {
  const { page } = await app.open("/");

  assert.equal(await page.title(), "Watermark");
  // index.html has no heading and no data-wasm attribute: both come from the wasm module.
  assert.equal(await page.locator(APP_READY).count(), 1);
  assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Watermark");
  const version = lockedVersion("watermark-engine");
  assert.equal(await page.locator("#engine-version").textContent(), `engine v${version}`);

  // The stylesheet from style/ is linked and applied.
  const display = await page.locator(".masthead").evaluate((el) => getComputedStyle(el).display);
  assert.equal(display, "flex");

  await app.screenshot(page, "first-page-light");
});

test("the colours follow prefers-color-scheme", async () => {
  const background = async (colorScheme) => {
    const { page } = await app.open("/", { colorScheme });
    const color = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await app.screenshot(page, `first-page-${colorScheme}`);
    return color;
  };
  const light = await background("light");
  const dark = await background("dark");
  assert.equal(light, "rgb(247, 248, 250)");
  assert.equal(dark, "rgb(15, 18, 22)");
});
