// The embed loader (dist/embed.js): a documentation page with one script tag and several
// blocks — scenario JSON in <pre class="watermark">, a link in <div data-watermark>, fenced
// ```watermark blocks as Markdown renderers write them, and broken blocks — gets a sized,
// lazily loaded iframe for each good block and an error in place of each bad one.

import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_READY, useApp } from "../lib/harness.mjs";
import { decodeLink, encodeScenario, payloadOf } from "../lib/links.mjs";

const app = useApp();

const SMALL = { title: "Two brokers", topic: "small", brokers: 2, end_ms: 5000 };
const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A documentation page: prose between blocks, the loader last, as a site would put it. */
function docsPage({ scriptAttrs = "" } = {}) {
  const minIsr = encodeScenario({ title: "Strict", topic: "strict", brokers: 3, config: { "min.insync.replicas": 3 } });
  // What Python-Markdown, Hugo and markdown-it write for a fenced ```watermark block:
  // the JSON escaped as HTML text, in <pre><code class="language-watermark">.
  const fenced = JSON.stringify({ title: "From Markdown", topic: "md", brokers: 4, seed: 7 }, null, 2);
  // MkDocs with pymdownx.superfences: the class is on a wrapping <div>, the text in spans.
  const mkdocs = JSON.stringify({ title: "From MkDocs", topic: "mk", brokers: 3 }, null, 2)
    .split("\n")
    .map((l) => `<span class="line">${escapeHtml(l)}</span>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Docs</title><link rel="icon" href="data:,">
<style>body{max-width:700px;margin:0 auto;font:16px system-ui} .spacer{height:6000px}</style></head>
<body>
<h1>Replication, explained</h1>
<p id="before">Text before the first example.</p>
<pre class="watermark" id="json-block" data-height="360" data-t="1200">${escapeHtml(JSON.stringify(SMALL))}</pre>
<p>A link, started at 3 s without controls:</p>
<div id="link-block" data-watermark="https://elsewhere.example/watermark/?t=9#s=${minIsr}" data-t="3000" data-controls="0"></div>
<p>A fenced block:</p>
<pre id="md-pre"><code class="language-watermark">${escapeHtml(fenced)}</code></pre>
<div class="language-watermark highlight" id="mkdocs-block"><pre><span></span><code>${mkdocs}</code></pre></div>
<div class="language-watermark theme-code-block" id="docusaurus-block"><div class="codeBlockContent"><pre tabindex="0" class="prism-code language-watermark codeBlock"><code class="codeBlockLines"><span class="token-line">${escapeHtml(JSON.stringify({ title: "From Docusaurus", topic: "docu" }))}</span></code></pre></div></div>
<p>Broken blocks:</p>
<pre class="watermark" id="bad-json">{ "brokers": 3, oops }</pre>
<pre class="watermark" id="bad-range">{ "brokers": 50 }</pre>
<div id="bad-link" data-watermark="w1.!!not-a-link"></div>
<pre class="watermark" id="bad-array">[1, 2, 3]</pre>
<p id="after">Text after the examples.</p>
<div class="spacer"></div>
<pre class="watermark" id="far-below">${escapeHtml(JSON.stringify({ title: "Far below", topic: "far" }))}</pre>
<script src="embed.js" ${scriptAttrs}></script>
</body></html>`;
}

async function openDocs(name, body) {
  const opened = await app.open("about:blank", { waitForApp: false });
  const url = `${app.url}${name}.html`;
  await opened.page.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body }));
  await opened.page.goto(url, { waitUntil: "load" });
  return opened;
}

/** The frame of the iframe in `box` (a locator), once its app has mounted. */
async function mountedFrame(page, selector) {
  const frame = page.frameLocator(selector);
  await frame.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  return frame;
}

test("the loader turns every kind of block into an embed and shows errors in place", async () => {
  const { page } = await openDocs("docs", docsPage());
  const embeds = page.locator(".watermark-embed iframe");
  await page.waitForFunction(() => document.querySelectorAll(".watermark-error").length === 4, null, { timeout: 15_000 });
  // Six good blocks (five above, one far below); the four broken ones became errors.
  assert.equal(await embeds.count(), 6);
  for (let i = 0; i < 6; i++) {
    const frame = embeds.nth(i);
    assert.equal(await frame.getAttribute("loading"), "lazy");
    const src = await frame.getAttribute("src");
    assert.ok(src.startsWith(`${app.url}?embed=1&`), `served from where embed.js came from: ${src}`);
    assert.ok((await frame.getAttribute("title")).length > 0);
  }

  // The embeds, in the page's order: each decoded from its src.
  const srcs = await embeds.evaluateAll((els) => els.map((e) => e.getAttribute("src")));
  assert.deepEqual(
    srcs.map((s) => decodeLink(payloadOf(s)).topic),
    ["small", "strict", "md", "mk", "docu", "far"],
  );

  // <pre class="watermark">: the scenario JSON, packed into the link; its options.
  const jsonFrame = embeds.nth(0);
  const src = srcs[0];
  assert.deepEqual(decodeLink(payloadOf(src)), SMALL);
  const query = new URL(src).searchParams;
  assert.equal(query.get("t"), "1200");
  assert.equal(query.get("autoplay"), "0");
  assert.equal(query.get("controls"), "1");
  const small = await mountedFrame(page, ".watermark-embed iframe >> nth=0");
  assert.equal(
    await small.locator('span[aria-label="kafka-topics --describe"]').textContent(),
    "Topic: small Partition: 0 Leader: 1 Replicas: 1,2 Isr: 1,2 Elr: LastKnownElr:",
  );
  assert.equal(await small.locator('[aria-label="Simulated time"]').textContent(), "t = 0:01.200");
  // data-height fixes the height; it does not follow the content.
  await page.waitForTimeout(800);
  assert.equal(Math.round((await jsonFrame.boundingBox()).height), 360);

  // <div data-watermark="LINK">: a whole URL from elsewhere; its payload opens here.
  const linkFrame = page.locator("iframe[src*='t=3000']");
  assert.equal(await linkFrame.count(), 1);
  const linkSrc = await linkFrame.getAttribute("src");
  assert.equal(decodeLink(payloadOf(linkSrc)).topic, "strict");
  assert.equal(new URL(linkSrc).searchParams.get("controls"), "0");
  const strict = await mountedFrame(page, "iframe[src*='t=3000']");
  await strict.locator(".cluster").waitFor();
  assert.equal(await strict.locator('[aria-label="Simulated time"]').count(), 0, "controls=0 hides the time bar");
  // Without data-height the frame follows its content's height.
  await page.waitForFunction(() => {
    const f = document.querySelector("iframe[src*='t=3000']");
    const inner = f.contentDocument && f.contentDocument.documentElement.scrollHeight;
    return inner > 100 && Math.abs(f.getBoundingClientRect().height - inner) <= 1;
  }, null, { timeout: 10_000 });

  // Fenced blocks as Markdown renderers write them: the text, unescaped, is the scenario.
  assert.deepEqual(decodeLink(payloadOf(srcs[2])), { title: "From Markdown", topic: "md", brokers: 4, seed: 7 });
  assert.deepEqual(decodeLink(payloadOf(srcs[3])), { title: "From MkDocs", topic: "mk", brokers: 3 });
  const md = await mountedFrame(page, ".watermark-embed iframe >> nth=2");
  assert.equal(
    await md.locator('span[aria-label="kafka-topics --describe"]').textContent(),
    "Topic: md Partition: 0 Leader: 1 Replicas: 1,2,3,4 Isr: 1,2,3,4 Elr: LastKnownElr:",
  );
  assert.equal(await page.locator("#md-pre").count(), 0, "the fenced <pre> was replaced");
  assert.equal(await page.locator("#mkdocs-block").count(), 0, "the MkDocs wrapper was replaced");
  assert.equal(await page.locator("#docusaurus-block").count(), 0, "the Docusaurus wrapper was replaced");

  // Broken blocks: an error in place, naming the problem, with the block kept below it.
  const errors = page.locator(".watermark-error");
  const texts = await errors.evaluateAll((els) => els.map((e) => e.querySelector("p").textContent));
  assert.match(texts[0], /^Watermark cannot show this scenario: the scenario is not valid JSON \(/);
  assert.ok(await errors.nth(0).locator("#bad-json").isVisible(), "the broken block stays readable");
  assert.equal(texts[1], "Watermark cannot show this scenario: This link could not be opened (brokers: brokers must be in 1..=12, got 50).");
  assert.equal(texts[2], "Watermark cannot show this scenario: data-watermark is not a Watermark link (#s=w1.…)");
  assert.equal(texts[3], 'Watermark cannot show this scenario: the scenario must be a JSON object ({ "version": 1, … })');
  for (let i = 0; i < 4; i++) assert.equal(await errors.nth(i).getAttribute("role"), "alert");
  // The page around them is whole.
  assert.ok(await page.locator("#before").isVisible());
  assert.ok(await page.locator("#after").isVisible());

  // Lazy: the frame far below the fold has not loaded the playground yet; scrolled to, it does.
  const far = embeds.nth(5);
  assert.equal(await far.evaluate((f) => !f.contentDocument || f.contentDocument.querySelector("[data-wasm]") === null), true);
  await far.scrollIntoViewIfNeeded();
  await mountedFrame(page, ".watermark-embed iframe >> nth=5");
  await app.screenshot(page, "loader-docs-page");
});

test("options on the script tag apply to every block; run() renders blocks added later", async () => {
  const { page } = await openDocs("docs-defaults", docsPage({ scriptAttrs: 'data-autoplay="1" data-height="300"' }));
  await page.waitForFunction(() => document.querySelectorAll(".watermark-embed iframe").length >= 5, null, { timeout: 15_000 });
  const linkSrc = await page.locator("iframe[src*='t=3000']").getAttribute("src");
  assert.equal(new URL(linkSrc).searchParams.get("autoplay"), "1");
  // The block's own data-height (360) wins over the script's (300).
  await page.waitForTimeout(800);
  const heights = await page.locator(".watermark-embed iframe").evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().height)));
  assert.equal(heights[0], 360);
  assert.ok(heights.slice(1).every((h) => h === 300), `${heights}`);

  const before = await page.locator(".watermark-embed iframe").count();
  await page.evaluate(async (json) => {
    const pre = document.createElement("pre");
    pre.className = "watermark";
    pre.textContent = json;
    document.body.appendChild(pre);
    await window.watermarkEmbed.run();
    await window.watermarkEmbed.run(); // a second run leaves rendered blocks alone
  }, JSON.stringify({ title: "Added later", topic: "later" }));
  assert.equal(await page.locator(".watermark-embed iframe").count(), before + 1);
  const last = await page.locator(".watermark-embed iframe").last().getAttribute("src");
  assert.equal(decodeLink(payloadOf(last)).topic, "later");
});

test("a preset is embedded by name, from data-watermark-preset or a preset's link", async () => {
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Docs</title><link rel="icon" href="data:,"></head>
<body>
<div id="by-name" data-watermark-preset="frozen-follower" data-t="20000"></div>
<div id="by-link" data-watermark="https://elsewhere.example/watermark/?preset=unclean-election&t=5"></div>
<div id="unknown" data-watermark-preset="no-such-preset"></div>
<div id="not-a-name" data-watermark-preset="Frozen Follower"></div>
<script src="embed.js"></script>
</body></html>`;
  const { page } = await openDocs("docs-presets", body);
  await page.waitForFunction(() => document.querySelectorAll(".watermark-error").length === 2, null, { timeout: 20_000 });
  const embeds = page.locator(".watermark-embed iframe");
  assert.equal(await embeds.count(), 2);
  const srcs = await embeds.evaluateAll((els) => els.map((e) => e.getAttribute("src")));
  // The readable address: the preset's name in the query, no scenario in the fragment.
  assert.equal(srcs[0], `${app.url}?embed=1&t=20000&autoplay=0&controls=1&preset=frozen-follower`);
  assert.equal(srcs[1], `${app.url}?embed=1&autoplay=0&controls=1&preset=unclean-election`);
  // The page fetched the preset's file and opened it at the block's time.
  const frozen = await mountedFrame(page, ".watermark-embed iframe >> nth=0");
  await frozen.locator('[aria-label="Simulated time"]').filter({ hasText: "t = 0:20.000" }).waitFor({ timeout: 15_000 });
  assert.match(await frozen.locator('span[aria-label="kafka-topics --describe"]').textContent(), /^Topic: rep Partition: 0 /);
  const unclean = await mountedFrame(page, ".watermark-embed iframe >> nth=1");
  await unclean.locator('span[aria-label="kafka-topics --describe"]').filter({ hasText: /^Topic: risky2 / }).waitFor({ timeout: 15_000 });
  // An unknown preset: the embed says so and the loader shows it in place; a bad name never
  // reaches a frame.
  const texts = await page.locator(".watermark-error").evaluateAll((els) => els.map((e) => e.id || e.querySelector("p").textContent));
  assert.equal(
    texts.find((t) => t.includes("not a preset name")),
    "Watermark cannot show this scenario: data-watermark-preset is not a preset name (lower-case letters, digits and -, as `watermark presets` lists them)",
  );
  assert.ok(texts.some((t) => t.includes('no preset named "no-such-preset"; the presets are: ')), `${texts}`);
  assert.ok(await page.locator(".watermark-error #not-a-name").count() === 1, "the block stays below its error");
});
