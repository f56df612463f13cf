// Sharing and sessions in the full page: a share link reopens the same state at the same
// time, preset links and the step-through captions, damaged or hostile links, the session
// kept in local storage across reloads, and scenario files (export, import, transcript).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { APP_READY, useApp } from "../lib/harness.mjs";
import {
  MAX_LINK_CHARS,
  PRESET_TOPICS,
  decodeLink,
  encodeScenario,
  linkPath,
  packBytes,
  payloadOf,
  presetScenario,
} from "../lib/links.mjs";
import { choosePreset, fault, laneState } from "../lib/ui.mjs";

const app = useApp();

/** Local storage key of the saved session (web/src/session.rs). */
const SESSION_KEY = "watermark.session.v1";
/** Local storage key of how far the saved session had run (web/src/session.rs). */
const TIME_KEY = "watermark.session.time.v1";
const DEFAULT_DESCRIBE = "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:";
const RESTORED = "Restored your last session. Reset starts over.";
const HOSTILE = "<img src=x onerror=alert(1)>";

const button = (page, name) => page.getByRole("button", { name, exact: true });
const slider = (page, name) => page.getByRole("slider", { name, exact: true });
const describe = (page) => page.locator('pre[aria-label="kafka-topics --describe"]');
const clock = (page) => page.locator('[aria-label="Simulated time"]');
const caption = (page) => page.locator("[data-testid=caption]");
const notice = (page) => page.locator("p.notice[role=status]");

/** The notice's text without its dismiss button's "×". */
async function noticeText(page) {
  return (await notice(page).textContent()).replace(/×$/, "");
}

/** `t = 1:02.345` → 62345. */
function parseClock(text) {
  const m = /t = (\d+):(\d\d)\.(\d\d\d)/.exec(text ?? "");
  assert.ok(m, `not a clock: ${JSON.stringify(text)}`);
  return Number(m[1]) * 60_000 + Number(m[2]) * 1000 + Number(m[3]);
}

const clockMs = async (page) => parseClock(await clock(page).textContent());

/** Opens `path` with nothing in local storage (the profile is shared by this file's pages). */
async function openFresh(path = "/") {
  const opened = await app.open(path);
  const { page } = opened;
  const had = await page.evaluate((key) => {
    const had = localStorage.length > 0 && localStorage.getItem(key) !== null;
    localStorage.clear();
    return had;
  }, SESSION_KEY);
  if (had) await reload(page);
  return opened;
}

async function reload(page) {
  await page.reload({ waitUntil: "load" });
  await page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
}

/** A failing test for any dialog (a hostile `onerror=alert(1)` that ran). */
function failOnDialogs({ page, problems }) {
  page.on("dialog", async (dialog) => {
    problems.push(`dialog opened: ${dialog.type()} ${dialog.message()}`);
    await dialog.dismiss().catch(() => {});
  });
}

/** Plays at 100× until the clock reaches `ms`, then pauses. */
async function playUntil(page, ms) {
  await slider(page, "Speed").fill("1000");
  await button(page, "Play").click();
  await page.waitForFunction(
    (min) => {
      const m = /t = (\d+):(\d\d)\.(\d\d\d)/.exec(document.querySelector('[aria-label="Simulated time"]')?.textContent ?? "");
      return m && Number(m[1]) * 60_000 + Number(m[2]) * 1000 + Number(m[3]) >= min;
    },
    ms,
    { timeout: 20_000 },
  );
  await button(page, "Pause").click();
  await button(page, "Play").waitFor();
}

/** Clicks Step until `done()` holds (at most `max` times). */
async function stepUntil(page, done, max = 200) {
  for (let i = 0; i < max; i++) {
    if (await done()) return i;
    await button(page, "Step one event").click();
  }
  assert.fail(`still not there after ${max} steps`);
}

/** Clicks `trigger` and resolves to the download's suggested name and text. */
async function download(page, name) {
  const [file] = await Promise.all([page.waitForEvent("download"), button(page, name).click()]);
  return { name: file.suggestedFilename(), text: readFileSync(await file.path(), "utf8") };
}

/** Everything the page shows of the simulation's state, to compare two pages. */
async function readState(page) {
  const text = async (locator) => (await locator.textContent()) ?? "";
  return {
    clock: await text(clock(page)),
    describe: await text(describe(page)),
    offsets: await text(page.locator('pre[aria-label="kafka-get-offsets"]')),
    epochs: await text(page.locator('pre[aria-label="leader-epoch-checkpoint"]')),
    eventLog: await page.locator('ol[aria-label="Event log"] > li').allTextContents(),
    produceResults: await page.locator('ul[aria-label="Produce results"] > li').allTextContents(),
    metrics: await text(page.locator("dl.metrics")),
    brokers: await page.locator(".cluster text.lane-state").allTextContents(),
    // The picture as drawn: message slots are pooled (web/src/cluster.rs, `Flight`), so free
    // slots are left out and the drawn ones are put in message order. A trail stays on the
    // path its message flew, which the page that played drew from the log ends of an earlier
    // frame; where it is drawn is left out, what it says is kept.
    cluster: await page.locator(".cluster").evaluate((c) => {
      const copy = c.cloneNode(true);
      for (const g of copy.querySelectorAll("g.flights > g.free")) g.remove();
      for (const g of copy.querySelectorAll("g.flights > g.trail")) {
        g.removeAttribute("transform");
        for (const el of g.querySelectorAll("line, text")) for (const a of ["x", "x1", "y1", "text-anchor"]) el.removeAttribute(a);
      }
      for (const flights of copy.querySelectorAll("g.flights")) {
        const drawn = [...flights.children].sort((a, b) => Number(a.dataset.id) - Number(b.dataset.id));
        flights.replaceChildren(...drawn);
      }
      return copy.innerHTML;
    }),
    transcript: (await download(page, "Download transcript")).text,
  };
}

function assertSameState(actual, expected, what) {
  for (const key of Object.keys(expected)) {
    assert.deepEqual(actual[key], expected[key], `${what}: ${key} differs`);
  }
}

/** Opens the Share panel (if closed) and reads the link. */
async function shareLink(page) {
  const share = button(page, "Share");
  if ((await share.getAttribute("aria-expanded")) !== "true") await share.click();
  assert.equal(await share.getAttribute("aria-expanded"), "true");
  const link = await page.getByLabel("Share link", { exact: true }).inputValue();
  const counted = await page.locator(".share-panel label[for=share-link] small").textContent();
  assert.equal(counted, `(${link.length} characters)`, "the panel shows the link's length");
  return link;
}

/** A path on the test server for an absolute link the page made. */
function pathOf(link) {
  assert.ok(link.startsWith(app.url), `${link} is on the page's own address ${app.url}`);
  return `/${link.slice(app.url.length)}`;
}

test("a share link opens the same state at the same time in a fresh page", async () => {
  const { page } = await openFresh("/");

  // Act: a config change, a produce, a frozen follower, time played and stepped, a thaw.
  await slider(page, "replica.lag.time.max.ms").fill("5000");
  await page.getByLabel("Value", { exact: true }).fill("shared");
  await page.getByLabel("Records", { exact: true }).fill("3");
  await button(page, "Produce").click();
  await fault(page, "Freeze broker 3");
  await playUntil(page, 12_000);
  assert.match(await describe(page).textContent(), /Isr: 1,2 /, "broker 3 left the ISR");
  await button(page, "Produce").click();
  for (let i = 0; i < 15; i++) await button(page, "Step one event").click();
  await fault(page, "Thaw broker 3");
  await playUntil(page, (await clockMs(page)) + 4_000);

  const here = await readState(page);
  const link = await shareLink(page);
  const now = parseClock(here.clock);
  assert.ok(link.startsWith(`${app.url}?t=${now}#s=w1.`), link);

  // The payload is the session as a scenario: the default cluster and every input.
  const scenario = decodeLink(payloadOf(link));
  const actions = scenario.timeline.map((a) => a.action);
  assert.deepEqual(actions, ["set_config", "produce", "freeze", "produce", "thaw"]);
  assert.equal(scenario.timeline[0].name, "replica.lag.time.max.ms");
  assert.equal(scenario.timeline[1].prefix, "shared-");
  assert.equal(scenario.timeline[1].count, 3);
  assert.ok(scenario.timeline[3].at >= 12_000, "the second produce happened after playing");
  assert.equal(scenario.brokers, 3);

  // A new page: same clock, describe line, offsets, epochs, event log, cluster, transcript.
  const { page: other } = await app.open(pathOf(link));
  const there = await readState(other);
  assertSameState(there, here, "the shared link");
  assert.equal(await notice(other).count(), 0, "a good link opens without a notice");
  // It opens paused at that time.
  await button(other, "Play").waitFor();
  await other.waitForTimeout(400);
  assert.equal(await clock(other).textContent(), here.clock, "paused: the clock stays");

  // A moment in the past (scrubbed back on the timeline) is shared as that moment.
  const past = Math.floor(now / 2);
  await slider(page, "Timeline").fill(String(past));
  assert.equal(await clockMs(page), past);
  await button(page, "Back to the live run").waitFor();
  const then = await readState(page);
  const pastLink = await shareLink(page);
  assert.ok(pastLink.startsWith(`${app.url}?t=${past}#s=w1.`), pastLink);
  assert.equal(payloadOf(pastLink), payloadOf(link), "the same session, another time");
  const { page: third } = await app.open(pathOf(pastLink));
  assertSameState(await readState(third), then, "the link to a past moment");

  // Copy link puts the same link on the clipboard.
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url.replace(/\/$/, "") });
  await button(page, "Copy link").click();
  await page.waitForFunction((expected) => navigator.clipboard.readText().then((t) => t === expected), pastLink);
});

test(
  "a link shared after stepping into the middle of a millisecond reopens the same state",
  async () => {
    // Deterministic: the default scenario, one produce at 0, five steps stop at t = 0:00.080
    // with broker 3's leader-epoch-checkpoint not yet written; the link's page writes it.
    const { page } = await openFresh("/");
    await button(page, "Produce").click();
    for (let i = 0; i < 5; i++) await button(page, "Step one event").click();
    const here = await readState(page);
    const { page: other } = await app.open(pathOf(await shareLink(page)));
    assertSameState(await readState(other), here, "the link shared mid-millisecond");
  },
);

test("every preset link opens that preset, and Next step walks through its captions", async () => {
  const { page: first } = await openFresh("/");
  const options = await first.locator("select[aria-label=Preset] option").evaluateAll((os) => os.map((o) => o.value));
  // First the placeholder the default scenario shows (it is no preset), then every preset.
  assert.deepEqual(options, ["", ...Object.keys(PRESET_TOPICS)], "the page lists every preset");

  for (const [name, topic] of Object.entries(PRESET_TOPICS)) {
    const preset = presetScenario(name);
    const notes = preset.timeline.filter((a) => a.action === "note");
    const { page } = await app.open(`/?preset=${name}`);
    assert.equal(await notice(page).count(), 0, `${name}: no notice`);
    assert.ok((await describe(page).textContent()).startsWith(`Topic: ${topic} Partition: 0 `), `${name}: topic ${topic}`);
    // The scenario behind the page is the preset's (its title, its timeline).
    const shared = decodeLink(payloadOf(await shareLink(page)));
    assert.equal(shared.title, preset.title, `${name}: title`);
    assert.equal(shared.timeline.length, preset.timeline.length, `${name}: timeline`);
    // Its caption bar, then a caption of its own after Next step, at that note's time.
    assert.ok(notes.length > 0, `${name} has captions`);
    assert.equal(await caption(page).textContent(), "Press Next step to walk through this scenario.");
    await button(page, "Next step").click();
    const shown = await caption(page).textContent();
    const note = notes.find((n) => n.text === shown);
    assert.ok(note, `${name}: the caption ${JSON.stringify(shown)} is one of the preset's notes`);
    assert.equal(await clockMs(page), note.at, `${name}: Next step stops at the note's time`);
    await page.close();
  }

  // Step through one preset: each Next step shows the next note, at its time.
  const { page } = await app.open("/?preset=frozen-follower");
  const preset = presetScenario("frozen-follower");
  const notes = preset.timeline.filter((a) => a.action === "note");
  const seen = [];
  for (const note of notes) {
    await button(page, "Next step").click();
    const text = await caption(page).textContent();
    seen.push(text);
    assert.equal(text, note.text, `the caption after ${seen.length} Next step(s)`);
    assert.equal(await clockMs(page), note.at);
  }
  assert.equal(new Set(seen).size, notes.length, "the caption changed at every step");
  await button(page, "Next step").click();
  assert.equal(await clockMs(page), preset.end_ms, "after the last caption, Next step runs to the end");
  assert.equal(await caption(page).textContent(), notes.at(-1).text);
  assert.match(await describe(page).textContent(), /^Topic: rep .*Isr: 1,2,3 /);

  // Choosing a preset opens it at once (there is no separate Open button), with its own link.
  assert.equal(await button(page, "Open preset").count(), 0);
  await choosePreset(page, "min-isr-3");
  const minIsr = presetScenario("min-isr-3");
  assert.equal(await noticeText(page), `Opened the preset “${minIsr.title}”. Play it (it pauses at each step), or step through it with Next step.`);
  const href = await page.getByRole("link", { name: "Link to this preset" }).getAttribute("href");
  assert.equal(href, `${app.url}?preset=min-isr-3`);
  assert.match(await describe(page).textContent(), /^Topic: strict /);
  assert.equal(await clockMs(page), 0);
});

test(
  "a preset link shows that preset in the Preset list",
  async () => {
    const { page } = await app.open("/?preset=unclean-election");
    assert.equal(await page.getByLabel("Preset", { exact: true }).inputValue(), "unclean-election");
  },
);

test(
  "Next step shows a caption written at time 0",
  async () => {
    const { page } = await app.open("/?preset=min-isr-3");
    const first = presetScenario("min-isr-3").timeline.find((a) => a.action === "note");
    assert.equal(first.at, 0);
    await button(page, "Next step").click();
    assert.equal(await caption(page).textContent(), first.text);
  },
);

test("a damaged, oversized, hostile or out-of-range link opens the default scenario and says what was wrong", async () => {
  // A stored session that a bad link must not fall back to.
  const { page: setup } = await openFresh("/");
  const stored = encodeScenario({ title: "stored", topic: "stored", brokers: 2 });
  await setup.evaluate(([key, value]) => localStorage.setItem(key, value), [SESSION_KEY, stored]);

  const good = encodeScenario({
    title: "A good link",
    topic: "good",
    brokers: 4,
    timeline: [{ at: 0, action: "produce", acks: "all", values: ["a", "b"] }],
  });
  // Cut to a valid base64url length (the bytes decode, the DEFLATE stream ends early), and to
  // an invalid one.
  const cutKeepLength = good.slice(0, 3 + Math.floor((good.length - 3) / 2 / 4) * 4);
  const cutBadLength = good.slice(0, 3 + Math.floor((good.length - 3) / 4) * 4 - 3);
  const altered = `${good.slice(0, 12)}!${good.slice(13)}`;
  const bomb = packBytes(Buffer.alloc(2 << 20, " "));
  assert.ok(bomb.length < 10_000, "the bomb is small");
  const cases = [
    ["cut short", cutKeepLength, /\(compression: the link is damaged: its compressed data does not inflate \(was it cut short or altered\?\)\)/],
    ["cut to a bad length", cutBadLength, /\(encoding: the link's length is not a valid base64url length \(was it cut short\?\)\)/],
    ["altered", altered, /\(encoding: character 10 of the link is not base64url\)/],
    ["an unknown version", "w9.AAAA", /\(version: the link's format "w9" is not one this build reads \(it reads w1\)\)/],
    [
      "oversized",
      `w1.${"A".repeat(MAX_LINK_CHARS + 1)}`,
      new RegExp(`\\(link: the scenario in the link is \\d+ characters long; the limit is ${MAX_LINK_CHARS}\\)`),
    ],
    ["a zip bomb", bomb, /\(compression: the scenario inflates to more than 1048576 bytes\)/],
    ["50 brokers", encodeScenario({ brokers: 50 }), /\(brokers: brokers must be in 1\.\.=12, got 50\)/],
    ["not JSON", packBytes("not json"), /\(scenario: not a valid scenario: /],
  ];
  for (const [what, payload, reason] of cases) {
    const opened = await app.open(linkPath(payload, { t: 3000 }));
    failOnDialogs(opened);
    const { page } = opened;
    const text = await noticeText(page);
    assert.match(text, /^This link could not be opened \(/, `${what}: ${text}`);
    assert.match(text, reason, `${what}: the notice names what was wrong`);
    assert.ok(text.endsWith(" Showing the default scenario instead."), `${what}: ${text}`);
    assert.equal(await describe(page).textContent(), DEFAULT_DESCRIBE, `${what}: the default scenario`);
    assert.equal(await page.locator(".lane-menu-button").count(), 3, `${what}: three brokers`);
    assert.equal(await page.evaluate((key) => localStorage.getItem(key), SESSION_KEY), stored, `${what}: storage untouched`);
    if (what === "altered") await app.screenshot(page, "share-bad-link-notice");
    await page.close();
  }

  // Right at the length limit the link is read (and fails later, on its content).
  const { page: atLimit } = await app.open(`/#s=w1.${"A".repeat(MAX_LINK_CHARS)}`);
  assert.match(await noticeText(atLimit), /\(compression: /);

  // A hostile title and note open as a scenario; the note shows as text in the caption.
  const hostile = encodeScenario({ title: HOSTILE, timeline: [{ at: 100, action: "note", text: HOSTILE }] });
  const opened = await app.open(`/#s=${hostile}`);
  failOnDialogs(opened);
  const { page } = opened;
  assert.equal(await notice(page).count(), 0);
  await button(page, "Next step").click();
  assert.equal(await caption(page).textContent(), HOSTILE);
  assert.ok(await caption(page).isVisible());
  await button(page, "Share").click();
  const snippet = await page.getByLabel("Embed snippet", { exact: true }).inputValue();
  assert.ok(snippet.includes('title="Watermark: &lt;img src=x onerror=alert(1)&gt;"'), snippet);
  assert.equal(await page.locator("img, [onerror]").count(), 0, "no element was injected");

  // Hostile text inside a bad link's error shows verbatim in the notice.
  const badHostile = encodeScenario({ timeline: [{ at: 0, action: HOSTILE }] });
  const bad = await app.open(`/#s=${badHostile}`);
  failOnDialogs(bad);
  const badText = await noticeText(bad.page);
  assert.ok(badText.includes(`unknown variant \`${HOSTILE}\``), badText);
  assert.ok(await bad.page.getByText(HOSTILE, { exact: false }).isVisible());
  assert.equal(await bad.page.locator("img, [onerror]").count(), 0, "no element was injected");
  assert.equal(await describe(bad.page).textContent(), DEFAULT_DESCRIBE);

  // A bad preset name too.
  const { page: nope } = await app.open("/?preset=nope");
  assert.match(await noticeText(nope), /^no preset named "nope"; the presets are: acks-walkthrough, .*\. Showing the default scenario instead\.$/);
  assert.equal(await describe(nope).textContent(), DEFAULT_DESCRIBE);
});

test("a session is restored on reload, and Reset starts over with the default scenario", async () => {
  const { page } = await openFresh("/");
  await page.getByLabel("Value", { exact: true }).fill("kept");
  await button(page, "Produce").click();
  await fault(page, "Freeze broker 3");
  const stored = await page.evaluate((key) => localStorage.getItem(key), SESSION_KEY);
  assert.ok(stored?.startsWith("w1."), "the session is saved after each action");
  assert.deepEqual(
    decodeLink(stored).timeline.map((a) => a.action),
    ["produce", "freeze"],
  );
  await playUntil(page, 2_000);
  const before = await readState(page);

  await reload(page);
  assert.equal(await noticeText(page), RESTORED);
  // The same scenario and inputs (the stored copy also keeps the time it was left at).
  assert.deepEqual(decodeLink(payloadOf(await shareLink(page))).timeline, decodeLink(stored).timeline, "the same inputs");
  // Replaying it shows the same: broker 3 frozen, the same describe line and log.
  await playUntil(page, parseClock(before.clock));
  assert.match(await laneState(page, 3), /\bfrozen\b/);
  await slider(page, "Timeline").fill(String(parseClock(before.clock)));
  const after = await readState(page);
  for (const key of ["clock", "describe", "offsets", "epochs", "eventLog", "cluster"]) {
    assert.deepEqual(after[key], before[key], `restored: ${key}`);
  }

  await button(page, "Reset").click();
  assert.equal(await noticeText(page), "Started over with the default scenario.");
  assert.equal(await describe(page).textContent(), DEFAULT_DESCRIBE);
  assert.equal(await clockMs(page), 0);
  assert.doesNotMatch(await laneState(page, 3), /\bfrozen\b/);
  assert.deepEqual(decodeLink(payloadOf(await shareLink(page))).timeline, [], "no inputs");

  await reload(page);
  assert.equal(await describe(page).textContent(), DEFAULT_DESCRIBE);
  await playUntil(page, 1_000);
  assert.doesNotMatch(await laneState(page, 3), /\bfrozen\b/);
  assert.deepEqual(decodeLink(payloadOf(await shareLink(page))).timeline, [], "still the default");
});

test(
  "a reloaded session opens at the moment it was left",
  async () => {
    const { page } = await openFresh("/");
    await button(page, "Produce").click();
    await fault(page, "Freeze broker 3");
    const saved = await page.evaluate((key) => localStorage.getItem(key), SESSION_KEY);
    await playUntil(page, 2_000);
    const before = await readState(page);
    await reload(page);
    // Playing on saves only how far the session ran (TIME_KEY); the payload is encoded again
    // only by an action, which keeps a long session's autosave from stalling frames.
    assert.equal(await page.evaluate((key) => localStorage.getItem(key), SESSION_KEY), saved, "the payload as the last action left it");
    assert.ok(Number(await page.evaluate((key) => localStorage.getItem(key), TIME_KEY)) >= parseClock(before.clock), "the time it was left at");
    assert.equal(await noticeText(page), RESTORED);
    assert.equal(await clock(page).textContent(), before.clock);
    assert.match(await laneState(page, 3), /\bfrozen\b/, "broker 3 is still frozen");
    assert.equal(await describe(page).textContent(), before.describe);
  },
);

test(
  "Reset clears the stored session",
  async () => {
    const { page } = await openFresh("/");
    await button(page, "Produce").click();
    await button(page, "Reset").click();
    assert.equal(await page.evaluate((key) => localStorage.getItem(key), SESSION_KEY), null);
    await reload(page);
    assert.equal(await notice(page).count(), 0, "nothing restored");
  },
);

test(
  "a new cluster (brokers changed) is kept across a reload",
  async () => {
    const { page } = await openFresh("/");
    await slider(page, "Brokers").fill("5");
    assert.equal(await page.locator(".lane-menu-button").count(), 5);
    await reload(page);
    assert.equal(await page.locator(".lane-menu-button").count(), 5);
  },
);

test("a scenario exported as JSON imports into a fresh page; a bad file is refused with the reason", async () => {
  const { page } = await openFresh("/");
  await page.getByLabel("Value", { exact: true }).fill("exported");
  await page.getByLabel("Records", { exact: true }).fill("2");
  await button(page, "Produce").click();
  await slider(page, "min.insync.replicas").fill("3");
  await fault(page, "Freeze broker 2");

  const exported = await download(page, "Export scenario");
  assert.equal(exported.name, "watermark-scenario.json");
  const scenario = JSON.parse(exported.text);
  assert.equal(scenario.version, 1);
  assert.equal(scenario.title, "Playground");
  assert.deepEqual(
    scenario.timeline.map(({ at, action }) => [at, action]),
    [[0, "produce"], [0, "set_config"], [0, "freeze"]],
  );
  assert.equal(scenario.timeline[0].prefix, "exported-");
  assert.deepEqual([scenario.timeline[1].name, scenario.timeline[1].value], ["min.insync.replicas", 3]);
  assert.equal(scenario.timeline[2].broker, 2);

  const transcript = await download(page, "Download transcript");
  assert.equal(transcript.name, "watermark-transcript.txt");
  assert.match(transcript.text, /^\[ {3}0\.000s\] .*Created topic rep with replicas 1,2,3/m);
  assert.ok(transcript.text.endsWith("\n"));

  // Import into a page with no session.
  const importer = await openFresh("/");
  failOnDialogs(importer);
  const { page: other } = importer;
  const input = other.getByLabel("Import scenario", { exact: true });
  await input.setInputFiles({ name: "watermark-scenario.json", mimeType: "application/json", buffer: Buffer.from(exported.text) });
  await other.getByText("Imported “Playground”.").waitFor();
  assert.equal((await download(other, "Export scenario")).text, exported.text, "the same scenario");
  const saved = await other.evaluate((key) => localStorage.getItem(key), SESSION_KEY);
  assert.deepEqual(decodeLink(saved), scenario, "the import is the session now");
  // Its inputs replay: broker 2 freezes and min.insync.replicas becomes 3.
  await stepUntil(other, async () => /\bfrozen\b/.test(await laneState(other, 2)));
  assert.equal(await slider(other, "min.insync.replicas").inputValue(), "3");

  // Bad files: the notice says why, and the scenario stays.
  const bad = [
    ["brokers.json", '{"brokers": 50}', "Not imported: brokers: brokers must be in 1..=12, got 50"],
    ["text.json", "hello", "Not imported: scenario: not a valid scenario: expected value at line 1 column 1"],
    ["version.json", '{"version": 7}', /^Not imported: version: /],
  ];
  for (const [name, body, expected] of bad) {
    await input.setInputFiles({ name, mimeType: "application/json", buffer: Buffer.from(body) });
    await other.waitForFunction(
      (name) => document.querySelector("p.notice")?.textContent.startsWith("Not imported"),
      name,
    );
    const text = await noticeText(other);
    if (typeof expected === "string") assert.equal(text, expected, name);
    else assert.match(text, expected, name);
    await button(other, "Dismiss").click();
  }
  await input.setInputFiles({ name: "huge.json", mimeType: "application/json", buffer: Buffer.alloc(4 * 1024 * 1024 + 1, " ") });
  await other.getByText("Not imported: a scenario file may be at most 4 MiB.").waitFor();
  assert.equal((await download(other, "Export scenario")).text, exported.text, "still the imported scenario");

  // A hostile title is named in the notice as text.
  await input.setInputFiles({ name: "hostile.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify({ title: HOSTILE })) });
  await other.waitForFunction(() => document.querySelector("p.notice")?.textContent.startsWith("Imported"));
  assert.equal(await noticeText(other), `Imported “${HOSTILE}”.`);
  assert.ok(await other.getByText(HOSTILE).isVisible(), "shown verbatim");
  assert.equal(await other.locator("img, [onerror]").count(), 0, "no element was injected");
});
