// dist/ published under a sub-folder (a project page, a folder of a documentation site):
// the page, its links, the share snippet, the example page and the embed loader all work
// from /docs/watermark/, and an embed fits a 700 px documentation column.

import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { APP_READY, DIST_DIR, useApp } from "../lib/harness.mjs";
import { payloadOf, decodeLink } from "../lib/links.mjs";
import { button, openFresh, shareHash, waitForText } from "../lib/ui.mjs";

// A site root with the build copied into docs/watermark/ and a guide page beside it.
const root = mkdtempSync(join(tmpdir(), "watermark-subpath-"));
after(() => rmSync(root, { recursive: true, force: true }));
cpSync(DIST_DIR, join(root, "docs", "watermark"), { recursive: true });
writeFileSync(join(root, "index.html"), '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Site</title><link rel="icon" href="data:,"></head><body><a href="docs/guide.html">Guide</a></body></html>');
mkdirSync(join(root, "docs"), { recursive: true });
const scenario = {
  title: "A frozen follower, in a guide",
  topic: "guide",
  config: { "replica.lag.time.max.ms": 5000 },
  timeline: [
    { at: 0, action: "produce", acks: "all", prefix: "v", count: 10 },
    { at: 0, action: "note", text: "Step 1. Ten records were written with acks=all; every replica has them, so the high watermark is 10. This caption is long enough to need more than one line in a documentation column of 700 pixels, so the embed shows its first line and lets the reader expand it." },
    { at: 2000, action: "freeze", broker: 3 },
  ],
};
writeFileSync(
  join(root, "docs", "guide.html"),
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Guide</title><link rel="icon" href="data:,">
<style>body{margin:0} main{width:700px;margin:0 auto}</style></head>
<body><main><h1>Guide</h1><p>Some text.</p>
<pre class="watermark" data-t="500">${JSON.stringify(scenario).replace(/&/g, "&amp;").replace(/</g, "&lt;")}</pre>
</main><script src="watermark/embed.js" defer></script></body></html>`,
);

const app = useApp({ root });

test("the playground opens from a sub-folder, and its links point there", async () => {
  const { page } = await openFresh(app, "/docs/watermark/");
  const base = `${app.url}docs/watermark/`;
  // Every script, style and wasm file came from the sub-folder (the harness fails on 404s).
  const loaded = await page.evaluate(() => performance.getEntriesByType("resource").map((r) => r.name));
  const own = loaded.filter((u) => /\.(js|wasm|css)$/.test(u));
  assert.ok(own.length >= 2, `${own}`);
  assert.ok(own.every((u) => u.startsWith(base)), `${own}`);

  await button(page, "Share").click();
  const link = await page.getByLabel("Share link", { exact: true }).inputValue();
  assert.ok(link.startsWith(`${base}?t=0#s=w1.`), link);
  const snippet = await page.getByLabel("Embed snippet", { exact: true }).inputValue();
  assert.ok(snippet.includes(`src="${base}?embed=1&`), snippet);
  // The link opens there.
  const { page: shared } = await app.open(link.slice(app.url.length - 1));
  await shared.locator(".cluster").waitFor();

  // A preset link opens there, its file fetched from the sub-folder too.
  const { page: preset } = await app.open("/docs/watermark/?preset=frozen-follower&t=2000");
  const presets = await preset.evaluate(() =>
    performance.getEntriesByType("resource").map((r) => r.name).filter((u) => u.includes("/presets/")),
  );
  assert.equal(presets.length, 1, `${presets}`);
  assert.ok(presets[0].startsWith(`${base}presets/frozen-follower.json`), presets[0]);
  assert.equal(await preset.getByLabel("Preset", { exact: true }).inputValue(), "frozen-follower");
  assert.equal(await preset.getByRole("link", { name: "Link to this preset" }).getAttribute("href"), `${base}?preset=frozen-follower`);

  // The example page beside it embeds two presets.
  const { page: example } = await app.open("/docs/watermark/embed-example.html", { waitForApp: false });
  for (const id of ["#left", "#right"]) {
    await example.frameLocator(id).locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  }
});

test("the data-loss finder's worker loads the page's glue and wasm from the sub-folder", async () => {
  // The worker imports the glue by its own address (web/src/finder.rs): the harness fails
  // on any request that is not found.
  const { page } = await openFresh(app, `/docs/watermark/${shareHash({ ...scenario, config: { "min.insync.replicas": 2 } })}`);
  await page.locator("details.finder > summary").click();
  await page.getByLabel("Schedules to try", { exact: true }).fill("8");
  await button(page, "Find a way to lose acknowledged data").click();
  await waitForText(page.locator(".finder-status"), /^(No way to lose acknowledged data in 8 schedules \(seed 1\)\.|Found, schedule)/, { timeout: 60_000 });
});

test("a guide beside the folder embeds through the loader, and the embed fits a 700 px column", async () => {
  const { page } = await app.open("/docs/guide.html", { waitForApp: false });
  await page.setViewportSize({ width: 1024, height: 900 });
  const frame = page.locator(".watermark-embed iframe");
  await frame.waitFor();
  const src = await frame.getAttribute("src");
  assert.ok(src.startsWith(`${app.url}docs/watermark/?embed=1&`), src);
  assert.equal(decodeLink(payloadOf(src)).title, scenario.title);
  const inner = page.frameLocator(".watermark-embed iframe");
  await inner.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  const open = await inner.getByRole("link", { name: "Open in Watermark" }).getAttribute("href");
  assert.ok(open.startsWith(`${app.url}docs/watermark/?t=`), open);

  // 700 px wide, and the cluster starts within the first 300 px of the frame, with room
  // to see it there.
  const box = await frame.boundingBox();
  assert.equal(Math.round(box.width), 700);
  const cluster = await inner.locator(".cluster").boundingBox();
  const top = cluster.y - box.y;
  assert.ok(top < 200, `the cluster starts ${top} px down the frame`);
  assert.ok(cluster.width > 600, `the cluster is ${cluster.width} px wide`);

  // The long caption is one line, and expands on request.
  const caption = inner.locator("[data-testid=caption]");
  await caption.filter({ hasText: "Step 1." }).waitFor();
  await app.screenshot(page, "subpath-guide-700");
  const lineHeight = await caption.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 20);
  const collapsed = await caption.boundingBox();
  assert.ok(collapsed.height <= lineHeight * 1.5, `caption is ${collapsed.height} px high`);
  await inner.getByRole("button", { name: "Show the whole caption" }).click();
  await page.waitForFunction(
    () => document.querySelector(".watermark-embed iframe").contentDocument.querySelector("[data-testid=caption]").getBoundingClientRect().height > 30,
  );
});
