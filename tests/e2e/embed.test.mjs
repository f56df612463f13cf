// The embed: an iframe of `?embed=1` driven by its host page through postMessage (height,
// state, play, pause, seek, load, errors), its options (controls=0, autoplay, t), its link
// back to the full page, the Share panel's snippet, and the example page in dist/.

import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_READY, useApp } from "../lib/harness.mjs";
import { decodeLink, encodeScenario, payloadOf, presetScenario } from "../lib/links.mjs";
import { fault } from "../lib/ui.mjs";

const app = useApp();

const SESSION_KEY = "watermark.session.v1";
const HOSTILE = "<img src=x onerror=alert(1)>";

/**
 * A host page served (by request interception) at the test server's origin, so the iframes
 * are same-origin and share its local storage: each iframe's messages from the embed are kept
 * in `window.received[id]`, its height follows the height messages (`data-height`), and
 * `window.send(id, message)` posts to it.
 */
function hostPage(frames) {
  const iframes = frames
    .map(({ id, src, title = "Watermark" }) => `<iframe id="${id}" title="${title}" src="${src}" style="width:720px;height:150px;border:0"></iframe>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host</title><link rel="icon" href="data:,"></head>
<body>
<h1>Host page</h1>
${iframes}
<script>
  localStorage.clear();
  localStorage.setItem("host.sentinel", "kept");
  window.received = {};
  const frames = [...document.querySelectorAll("iframe")];
  for (const f of frames) window.received[f.id] = [];
  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (!msg || msg.source !== "watermark") return;
    const frame = frames.find((f) => f.contentWindow === event.source);
    if (!frame) return;
    window.received[frame.id].push(msg);
    if (msg.type === "height") {
      frame.style.height = msg.height + "px";
      frame.dataset.height = String(msg.height);
    }
  });
  window.send = (id, message) => document.getElementById(id).contentWindow.postMessage(message, "*");
</script>
</body></html>`;
}

/** Opens a host page at `${url}NAME.html` with `body`; resolves to the watched page. */
async function openHost(name, body) {
  const opened = await app.open("about:blank", { waitForApp: false });
  const { page, problems } = opened;
  page.on("dialog", async (dialog) => {
    problems.push(`dialog opened: ${dialog.message()}`);
    await dialog.dismiss().catch(() => {});
  });
  const url = `${app.url}${name}.html`;
  await page.route(url, (route) => route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body }));
  await page.goto(url, { waitUntil: "load" });
  return { ...opened, url };
}

/** The number of messages `id` has sent so far. */
const mark = (page, id) => page.evaluate((id) => window.received[id].length, id);

/**
 * Waits for a message from iframe `id`, after the first `since`, for which `predicate`
 * (source text of a function of the message) holds; resolves to it.
 */
async function waitForMessage(page, id, since, predicate, timeout = 10_000) {
  const handle = await page.waitForFunction(
    ([id, since, predicate]) => {
      const test = new Function("m", `return (${predicate})(m);`);
      return window.received[id].slice(since).find((m) => test(m)) ?? false;
    },
    [id, since, predicate.toString()],
    { timeout },
  );
  return handle.jsonValue();
}

/** The latest state message from iframe `id`. */
const lastState = (page, id) =>
  page.evaluate((id) => window.received[id].filter((m) => m.type === "state").at(-1) ?? null, id);

const post = (page, id, message) => page.evaluate(([id, message]) => window.send(id, message), [id, message]);

test("a host page drives an embed through postMessage, and the embed leaves the host alone", async () => {
  const { page, url } = await openHost(
    "host",
    hostPage([{ id: "wm", src: "index.html?embed=1&preset=frozen-follower", title: "Watermark: a frozen follower" }]),
  );
  const frame = page.frameLocator("#wm");
  await frame.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  const historyLength = await page.evaluate(() => history.length);

  // Height: the host resizes the iframe to the embed's content.
  await waitForMessage(page, "wm", 0, (m) => m.type === "height" && m.height > 200);
  await page.waitForFunction(() => Number(document.getElementById("wm").dataset.height) > 200);
  await page.waitForTimeout(600);
  const box = await page.locator("#wm").boundingBox();
  const reported = Number(await page.locator("#wm").getAttribute("data-height"));
  assert.equal(Math.round(box.height), reported, "the iframe took the reported height");
  // The embed's whole content fits: no scrolling inside the iframe.
  const inner = await frame.locator("html").evaluate((el) => el.scrollHeight);
  assert.equal(inner, reported, "the reported height is the content's height");

  // State: time and describe line, paused at 0.
  const first = await waitForMessage(page, "wm", 0, (m) => m.type === "state");
  assert.equal(first.time_ms, 0);
  assert.equal(first.clock, "0:00.000");
  assert.equal(first.playing, false);
  assert.equal(first.describe, "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:");
  assert.equal(await frame.locator('span[aria-label="kafka-topics --describe"]').textContent(), first.describe);
  await frame.locator(".cluster").waitFor();

  // Play: time advances and the state says so.
  let since = await mark(page, "wm");
  await post(page, "wm", { target: "watermark", type: "play" });
  const playing = await waitForMessage(page, "wm", since, (m) => m.type === "state" && m.playing && m.time_ms > 0);
  since = await mark(page, "wm");
  await waitForMessage(page, "wm", since, new Function("m", `return m.type === "state" && m.time_ms > ${playing.time_ms};`));

  // Pause: time stops, and the last state reported is the time shown.
  await post(page, "wm", { target: "watermark", type: "pause" });
  await frame.getByRole("button", { name: "Play", exact: true }).waitFor();
  await page.waitForTimeout(600);
  const shown = await frame.locator('[aria-label="Simulated time"]').textContent();
  const paused = await lastState(page, "wm");
  assert.equal(`t = ${paused.clock}`, shown);
  await page.waitForTimeout(800);
  assert.equal((await lastState(page, "wm")).time_ms, paused.time_ms, "paused stays put");
  assert.equal(await frame.locator('[aria-label="Simulated time"]').textContent(), shown);

  // Seek to 20 s: the state follows, and stays there while paused.
  since = await mark(page, "wm");
  await post(page, "wm", { target: "watermark", type: "seek", time_ms: 20_000 });
  const sought = await waitForMessage(page, "wm", since, (m) => m.type === "state" && m.time_ms >= 20_000);
  assert.equal(sought.time_ms, 20_000);
  assert.equal(sought.clock, "0:20.000");
  assert.equal(sought.playing, false);
  await page.waitForTimeout(800);
  assert.equal((await lastState(page, "wm")).time_ms, 20_000, "paused after seeking");
  assert.equal(await frame.locator('[aria-label="Simulated time"]').textContent(), "t = 0:20.000");

  // The same moment in the full page has the same describe line, and so has the embed's link.
  const { page: full } = await app.open("/?preset=frozen-follower&t=20000");
  assert.equal(await full.locator('pre[aria-label="kafka-topics --describe"]').textContent(), sought.describe);
  const open = frame.getByRole("link", { name: "Open in Watermark" });
  assert.equal(await open.getAttribute("target"), "_blank");
  const href = await open.getAttribute("href");
  assert.ok(href.startsWith(`${app.url}index.html?t=20000#s=w1.`), href);
  const linked = decodeLink(payloadOf(href));
  const preset = presetScenario("frozen-follower");
  assert.equal(linked.title, preset.title);
  assert.equal(linked.timeline.length, preset.timeline.length);
  const { page: opened } = await app.open(`/${href.slice(app.url.length)}`);
  assert.equal(await opened.locator('[aria-label="Simulated time"]').textContent(), "t = 0:20.000");
  assert.equal(await opened.locator('pre[aria-label="kafka-topics --describe"]').textContent(), sought.describe);
  assert.equal(await opened.locator("[data-testid=caption]").textContent(), await frame.locator("[data-testid=caption]").textContent());
  await full.close();
  await opened.close();

  // Load a link: a new scenario from 0.
  since = await mark(page, "wm");
  const strict = encodeScenario({ title: "Loaded by link", topic: "loaded", brokers: 4, replication_factor: 4 });
  await post(page, "wm", { target: "watermark", type: "load", link: strict });
  const loaded = await waitForMessage(page, "wm", since, (m) => m.type === "state" && m.describe.startsWith("Topic: loaded "));
  assert.equal(loaded.describe, "Topic: loaded Partition: 0 Leader: 1 Replicas: 1,2,3,4 Isr: 1,2,3,4 Elr: LastKnownElr:");
  assert.equal(loaded.time_ms, 0);
  await frame.locator('span[aria-label="kafka-topics --describe"]', { hasText: "Topic: loaded" }).waitFor();

  // Load a scenario object.
  since = await mark(page, "wm");
  await post(page, "wm", { target: "watermark", type: "load", scenario: { topic: "object", brokers: 2 } });
  // Still at 0 ms, and the load is reported all the same.
  const objectState = await waitForMessage(page, "wm", since, (m) => m.type === "state" && m.describe.startsWith("Topic: object "));
  assert.equal(objectState.time_ms, 0);
  await frame
    .locator('span[aria-label="kafka-topics --describe"]', { hasText: "Topic: object " })
    .waitFor();
  assert.equal(
    await frame.locator('span[aria-label="kafka-topics --describe"]').textContent(),
    "Topic: object Partition: 0 Leader: 1 Replicas: 1,2 Isr: 1,2 Elr: LastKnownElr:",
  );

  // Bad messages come back as errors that name the problem; the scenario stays.
  const errors = [
    [{ type: "load", link: "w9.AAAA" }, /^version: the link's format "w9" is not one this build reads/],
    [{ type: "load", link: "w1.!!!!" }, /^encoding: character 1 of the link is not base64url$/],
    [{ type: "load", scenario: { brokers: 50 } }, /^brokers: brokers must be in 1\.\.=12, got 50$/],
    [{ type: "load" }, /^load needs link \(a w1\. payload\) or scenario/],
    [{ type: "seek", time_ms: "soon" }, /^seek needs time_ms/],
    [{ type: "rewind" }, /^unknown message type: use play, pause, seek or load$/],
  ];
  for (const [message, expected] of errors) {
    since = await mark(page, "wm");
    await post(page, "wm", { target: "watermark", ...message });
    const error = await waitForMessage(page, "wm", since, (m) => m.type === "error");
    assert.match(error.message, expected, JSON.stringify(message));
  }
  // Messages for someone else are ignored.
  since = await mark(page, "wm");
  await post(page, "wm", { target: "another-widget", type: "play" });
  await post(page, "wm", "play");
  await page.waitForTimeout(700);
  assert.deepEqual(await page.evaluate(([id, since]) => window.received[id].slice(since), ["wm", since]), []);
  assert.match(await frame.locator('span[aria-label="kafka-topics --describe"]').textContent(), /^Topic: object /);
  assert.equal(await frame.locator("p.notice").count(), 0, "the embed shows no notice for the host's mistakes");

  // The embed wrote nothing to the (shared, same-origin) local storage and left the URL alone.
  assert.deepEqual(await page.evaluate(() => Object.keys(localStorage)), ["host.sentinel"]);
  assert.equal(page.url(), url);
  assert.equal(await page.evaluate(() => history.length), historyLength);
  assert.equal(await page.locator("img, [onerror]").count(), 0);
  await page.evaluate(() => localStorage.clear());
});

test(
  "a load that keeps the time at 0 is reported to the host",
  async () => {
    const { page } = await openHost("host-load", hostPage([{ id: "wm", src: "index.html?embed=1" }]));
    await page.frameLocator("#wm").locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
    await waitForMessage(page, "wm", 0, (m) => m.type === "state");
    await page.waitForTimeout(600);
    const since = await mark(page, "wm");
    await post(page, "wm", { target: "watermark", type: "load", scenario: { topic: "fresh" } });
    const state = await waitForMessage(page, "wm", since, (m) => m.type === "state" && m.describe.startsWith("Topic: fresh "), 3_000);
    assert.equal(state.time_ms, 0);
    await page.evaluate(() => localStorage.clear());
  },
);

test("an embed without time controls, and one that autoplays from a given time", async () => {
  // A session in storage must not leak into an embed.
  const { page: setup } = await app.open("/");
  await setup.evaluate(([key, v]) => localStorage.setItem(key, v), [SESSION_KEY, encodeScenario({ topic: "stored" })]);
  const { page: full } = await app.open("/");
  assert.match(await full.locator('pre[aria-label="kafka-topics --describe"]').textContent(), /^Topic: stored /);

  const { page: bare } = await app.open("/?embed=1&controls=0&preset=unclean-election");
  assert.equal(await bare.getByRole("button", { name: "Play", exact: true }).count(), 0, "no Play button");
  assert.equal(await bare.getByRole("button", { name: "Step one event", exact: true }).count(), 0);
  assert.equal(await bare.getByRole("slider", { name: "Timeline", exact: true }).count(), 0);
  assert.ok(await bare.locator(".cluster").isVisible());
  assert.match(await bare.locator('span[aria-label="kafka-topics --describe"]').textContent(), /^Topic: risky2 /);
  assert.ok(await bare.locator("[data-testid=caption]").isVisible(), "the caption stays");
  assert.equal(await bare.getByRole("heading", { level: 1 }).count(), 0, "no page chrome");
  // The keyboard does not play it either.
  await bare.locator("body").press("Space");
  await bare.locator("body").press("ArrowRight");
  await bare.waitForTimeout(500);
  const link = await bare.getByRole("link", { name: "Open in Watermark" }).getAttribute("href");
  assert.ok(link.startsWith(`${app.url}?t=0#s=w1.`), link);

  const { page: controlled } = await app.open("/?embed=1&preset=unclean-election");
  assert.equal(await controlled.getByRole("button", { name: "Play", exact: true }).count(), 1, "controls by default");
  assert.equal(await controlled.getByRole("link", { name: "Open in Watermark" }).count(), 1);
  assert.match(await controlled.locator('span[aria-label="kafka-topics --describe"]').textContent(), /^Topic: risky2 /);

  // The default embed (no link, no preset) ignores the stored session.
  const { page: plain } = await app.open("/?embed=1");
  assert.match(await plain.locator('span[aria-label="kafka-topics --describe"]').textContent(), /^Topic: rep /);

  // autoplay=1 and t: starts at t and plays.
  const { page: auto } = await app.open("/?embed=1&autoplay=1&t=5000&preset=frozen-follower");
  await auto.getByRole("button", { name: "Pause", exact: true }).waitFor();
  await auto.waitForFunction(() => {
    const m = /t = 0:(\d\d)\.(\d\d\d)/.exec(document.querySelector('[aria-label="Simulated time"]').textContent);
    return m && Number(m[1]) * 1000 + Number(m[2]) > 5000;
  });
  assert.equal(await auto.evaluate((key) => localStorage.getItem(key), SESSION_KEY), encodeScenario({ topic: "stored" }), "embeds never write the session");
  await setup.evaluate(() => localStorage.clear());
});

test("the Share panel's embed snippet carries its options and embeds the scenario", async () => {
  const { page } = await app.open(`/#s=${encodeScenario({ title: HOSTILE, topic: "snippet", brokers: 3 })}`);
  await page.getByRole("button", { name: "Share", exact: true }).click();
  const snippetBox = page.getByLabel("Embed snippet", { exact: true });
  let snippet = await snippetBox.inputValue();
  assert.match(snippet, /^<iframe id="watermark-[0-9a-f]{8}" src="[^"]+\?embed=1&t=0&autoplay=0&controls=1#s=w1\.[A-Za-z0-9_-]+" /, snippet);
  assert.ok(snippet.includes(' height="480" '), snippet);
  assert.match(snippet, /\n<script>addEventListener\("message",/, "sized to its content by default");

  await page.getByLabel("Start playing", { exact: true }).check();
  await page.getByLabel("Show time controls", { exact: true }).uncheck();
  await page.getByLabel("Start time", { exact: true }).fill("1500");
  await page.getByLabel("Height", { exact: true }).fill("100");
  snippet = await snippetBox.inputValue();
  const src = /src="([^"]+)"/.exec(snippet)[1];
  assert.ok(src.startsWith(`${app.url}?embed=1&t=1500&autoplay=1&controls=0#s=w1.`), src);
  assert.ok(snippet.includes(' height="200" '), `the height is clamped to 200: ${snippet}`);
  assert.ok(snippet.includes('title="Watermark: &lt;img src=x onerror=alert(1)&gt;"'), `the title is escaped: ${snippet}`);
  assert.equal(decodeLink(payloadOf(src)).topic, "snippet");

  // Pasted into a page, the snippet embeds that scenario, playing from 1.5 s, without controls.
  const { page: host } = await openHost("snippet", `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Snippet</title><link rel="icon" href="data:,"></head><body>${snippet}</body></html>`);
  const iframe = host.locator("iframe");
  assert.equal(await iframe.getAttribute("title"), `Watermark: ${HOSTILE}`);
  const frame = host.frameLocator("iframe");
  await frame.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  assert.match(await frame.locator('span[aria-label="kafka-topics --describe"]').textContent(), /^Topic: snippet /);
  assert.equal(await host.locator("img, [onerror]").count(), 0);
  assert.equal(await frame.locator("img, [onerror]").count(), 0);

  // The snippet's own listener sizes the iframe to the embed's content (from 200 px).
  await host.waitForFunction(() => {
    const f = document.querySelector("iframe");
    const inner = f.contentDocument?.documentElement?.scrollHeight ?? 0;
    return inner > 200 && Math.round(f.getBoundingClientRect().height) === inner;
  });

  // A compact legend: one closed line under the picture; opened, it lists every mark, and
  // the iframe grows to show it.
  const legend = frame.locator("details.legend");
  assert.equal(await legend.evaluate((d) => d.open), false, "closed at first");
  const closedHeight = (await iframe.boundingBox()).height;
  await legend.locator("summary").click();
  assert.ok((await legend.locator("li").count()) >= 20, "every mark has its entry");
  await host.waitForFunction((before) => document.querySelector("iframe").getBoundingClientRect().height > before + 100, closedHeight);
  await legend.locator("summary").click();
  await host.waitForFunction((before) => Math.abs(document.querySelector("iframe").getBoundingClientRect().height - before) < 2, closedHeight);

  // No time controls, but the reader can always pause it: Pause (or Space), then Play.
  assert.equal(await frame.getByRole("button", { name: "Step", exact: true }).count(), 0);
  const shownAt = async () => Number(new URL(await frame.getByRole("link", { name: "Open in Watermark" }).getAttribute("href")).searchParams.get("t"));
  await frame.getByRole("button", { name: "Pause", exact: true }).click();
  await frame.getByRole("button", { name: "Play", exact: true }).waitFor();
  const pausedAt = await shownAt();
  assert.ok(pausedAt >= 1500, `paused at ${pausedAt}`);
  await host.waitForTimeout(600);
  assert.equal(await shownAt(), pausedAt, "paused stays put");
  await frame.getByRole("button", { name: "Play", exact: true }).click();
  await host.waitForFunction(
    (at) => Number(new URL(document.querySelector("iframe").contentDocument.querySelector(".embed-foot a").href).searchParams.get("t")) > at,
    pausedAt,
  );
  await frame.locator("body").press("Space");
  await frame.getByRole("button", { name: "Play", exact: true }).waitFor();
});

test("a preset's snippet names the preset, and the copy buttons say that they copied", async () => {
  const { page } = await app.open("/?preset=frozen-follower");
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url.replace(/\/$/, "") });
  await page.getByRole("button", { name: "Share", exact: true }).click();
  const snippetBox = page.getByLabel("Embed snippet", { exact: true });
  let snippet = await snippetBox.inputValue();
  assert.match(snippet, /^<iframe id="watermark-[0-9a-f]{8}" src="[^"]+\?embed=1&t=0&autoplay=0&controls=1&preset=frozen-follower" /, snippet);
  assert.ok(!snippet.includes("#s="), snippet);

  // Copy: the button's status says so, and the clipboard holds the snippet.
  const copied = page.getByTestId("snippet-copied");
  assert.equal(await copied.textContent(), "");
  await page.getByRole("button", { name: "Copy embed snippet", exact: true }).click();
  await page.getByTestId("snippet-copied").getByText("Copied.", { exact: true }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet);
  // The confirmation speaks of that snippet: changing an option takes it away.
  await page.getByLabel("Start playing", { exact: true }).check();
  await page.waitForFunction(() => document.querySelector('[data-testid="snippet-copied"]').textContent === "");
  snippet = await snippetBox.inputValue();
  assert.ok(snippet.includes("&autoplay=1&controls=1&preset=frozen-follower"), snippet);

  await page.getByRole("button", { name: "Copy link", exact: true }).click();
  await page.getByTestId("link-copied").getByText("Copied.", { exact: true }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await page.getByLabel("Share link", { exact: true }).inputValue());

  // Acted on, the session is no longer the preset: the snippet carries it whole.
  await fault(page, "Freeze broker 3");
  snippet = await snippetBox.inputValue();
  assert.match(snippet, /&autoplay=1&controls=1#s=w1\./, snippet);
  assert.ok(!snippet.includes("preset="), snippet);
  // So does the link, though the clock did not move.
  const linked = decodeLink(payloadOf(await page.getByLabel("Share link", { exact: true }).inputValue()));
  assert.equal(linked.timeline.length, presetScenario("frozen-follower").timeline.length + 1);
  assert.ok(linked.timeline.some((a) => a.at === 0 && a.action === "freeze" && a.broker === 3), JSON.stringify(linked.timeline));
  assert.ok(!presetScenario("frozen-follower").timeline.some((a) => a.at === 0 && a.action === "freeze"));
  // A fixed height: no script.
  await page.getByLabel("Size to its content", { exact: true }).uncheck();
  snippet = await snippetBox.inputValue();
  assert.ok(!snippet.includes("<script"), snippet);
  assert.ok(!snippet.includes(' id="'), snippet);
});

test("the example page runs both embeds, resizes them, and drives them together", async () => {
  const { page: setup } = await app.open("/?embed=1");
  await setup.evaluate(() => localStorage.clear());
  const opened = await app.open("/embed-example.html", { waitForApp: false });
  const { page } = opened;
  for (const id of ["left", "right"]) {
    await page.frameLocator(`#${id}`).locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
  }
  const read = () =>
    page.evaluate(() =>
      Object.fromEntries(
        ["left", "right"].map((id) => {
          const frame = document.getElementById(id);
          return [
            id,
            {
              height: Number(frame.dataset.height ?? 0),
              shown: frame.getBoundingClientRect().height,
              time: Number(frame.dataset.time ?? -1),
              state: document.getElementById(`${id}-state`).textContent,
            },
          ];
        }),
      ),
    );
  // Both autoplay: their reported times advance.
  await page.waitForFunction(() => ["left", "right"].every((id) => Number(document.getElementById(id).dataset.time) > 0));
  const early = await read();
  await page.waitForFunction(
    (early) => ["left", "right"].every((id) => Number(document.getElementById(id).dataset.time) > early[id].time + 500),
    early,
  );
  const later = await read();
  for (const [id, topic] of [["left", "rep"], ["right", "risky2"]]) {
    const s = later[id];
    assert.ok(s.height > 200, `${id}: height ${s.height}`);
    // The iframe has a 1px border: its box is the reported height plus 2.
    assert.ok(Math.abs(s.shown - (Math.min(s.height, 2000) + 2)) <= 1, `${id}: resized to ${s.shown} for ${s.height}`);
    assert.match(s.state, new RegExp(`^\\d:\\d\\d\\.\\d{3}  Topic: ${topic} Partition: 0 `), `${id}: ${s.state}`);
  }

  // Pause both: the times stop.
  await page.click("#pause");
  await page.waitForTimeout(700);
  const stopped = await read();
  await page.waitForTimeout(700);
  const still = await read();
  assert.equal(still.left.time, stopped.left.time);
  assert.equal(still.right.time, stopped.right.time);

  // Jump both to 20 s.
  await page.click("#seek");
  await page.waitForFunction(() => ["left", "right"].every((id) => document.getElementById(id).dataset.time === "20000"));
  const at20 = await read();
  assert.match(at20.left.state, /^0:20\.000  Topic: rep /);
  assert.match(at20.right.state, /^0:20\.000  Topic: risky2 /);
  await app.screenshot(page, "embed-example");

  // Play both again.
  await page.click("#play");
  await page.waitForFunction(() => ["left", "right"].every((id) => Number(document.getElementById(id).dataset.time) > 20000));
  assert.deepEqual(await page.evaluate(() => Object.keys(localStorage)), [], "the embeds wrote nothing");
});

test("an embed in a phone-wide frame keeps its walkthrough's buttons in reach; in a documentation column, on one line", async () => {
  for (const [width, oneLine] of [[320, false], [700, true]]) {
    const { page } = await app.open("/?embed=1&preset=frozen-follower&t=20000");
    await page.setViewportSize({ width, height: 600 });
    const bar = page.getByRole("group", { name: "Walkthrough", exact: true });
    await bar.waitFor();
    for (const name of ["Previous step", "Next step"]) {
      const control = page.getByRole("button", { name, exact: true });
      let box;
      const inside = async () => {
        box = await control.boundingBox();
        return box && box.x >= 0 && box.x + box.width <= width;
      };
      for (let i = 0; i < 40 && !(await inside()); i++) await page.waitForTimeout(50);
      assert.ok(await inside(), `${width} px: ${name} at ${JSON.stringify(box)}`);
    }
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= width);
    const height = await bar.evaluate((b) => b.getBoundingClientRect().height);
    assert.equal(height < 50, oneLine, `${width} px: the bar is ${height} px high`);
    await page.close();
  }
});
