// Historical protocol modes in the playground (issue 15): a run under an older Kafka's
// replication rules says so above the picture, with the KIP that fixed its anomaly; the
// Advanced settings run the same session again under another era's rules; share links
// carry the mode.

import assert from "node:assert/strict";
import { test } from "node:test";
import { useApp } from "../lib/harness.mjs";
import { decodeLink, payloadOf } from "../lib/links.mjs";
import {
  button,
  describe,
  eventLog,
  fault,
  laneState,
  notice,
  openFresh,
  pause,
  play,
  poll,
  setRange,
  shareLink,
  SPEED_MAX,
  waitForClock,
  waitForText,
} from "../lib/ui.mjs";

const app = useApp();

const banner = (page) => page.locator("aside.protocol");
const protocolChoice = (page) => page.getByRole("combobox", { name: "Replication protocol", exact: true });
const elrBox = (page) => page.getByRole("checkbox", { name: "Eligible leader replicas (KIP-966)", exact: true });
const KIP_101 =
  "https://cwiki.apache.org/confluence/display/KAFKA/KIP-101+-+Alter+Replication+Protocol+to+use+Leader+Epoch+rather+than+High+Watermark+for+Truncation";

test("a run before KIP-101 says so with the KIP; the same session under Kafka 4.x loses nothing", async () => {
  // KIP-101's first scenario: at 16 s the acknowledged m2 is gone.
  const { page } = await openFresh(app, "/?preset=pre-kip-101-hw-truncation&t=16000");
  await waitForText(banner(page), /^Protocol pre-kip-101, not Kafka 4\.x: Kafka 0\.10\.2 replication.*KIP-101 replaced it with leader-epoch truncation in Kafka 0\.11\.0 \(KIP-101\)\.$/);
  assert.equal(await banner(page).getByRole("link", { name: "KIP-101" }).getAttribute("href"), KIP_101);
  await waitForText(page.locator("div.loss"), /Cause: broker \d became leader through a clean election without them: protocol pre-kip-101/);
  await page.locator("details.advanced > summary").click();
  assert.equal(await protocolChoice(page).inputValue(), "pre-kip-101");
  assert.equal(await elrBox(page).isDisabled(), true, "no ELR before KIP-966, whatever the config says");
  assert.equal(await elrBox(page).isChecked(), false);

  // The same session under Kafka 4.x's rules, from 0 s.
  await protocolChoice(page).selectOption("kafka-4");
  await waitForText(notice(page), /^Started again from 0 s under protocol kafka-4: Kafka 4\.x replication\./);
  assert.equal(await banner(page).isHidden(), true, "Kafka 4.x needs no banner");
  assert.equal(await elrBox(page).isDisabled(), false);
  assert.equal(await elrBox(page).isChecked(), true);
  assert.equal(decodeLink(payloadOf(await shareLink(page))).protocol, undefined, "kafka-4 is left out of the link");
  await page.getByRole("checkbox", { name: "Pause at each step", exact: true }).uncheck();
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForClock(page, 16000, { timeout: 60_000 });
  assert.equal(await page.locator("div.loss").count(), 0, "Kafka 4.x keeps m2: nothing committed is lost");
});

test("choosing an older protocol on the default page puts it in the share link and on the page", async () => {
  const { page } = await openFresh(app, "/");
  assert.equal(await banner(page).isHidden(), true);
  await page.locator("details.advanced > summary").click();
  const options = await protocolChoice(page).locator("option").evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(options.slice(0, 2), ["kafka-4", "no-elr"], "Kafka 4.x first, then the eras back in time");
  assert.ok(options.includes("pre-kip-101"));
  await protocolChoice(page).selectOption("no-elr");
  await waitForText(banner(page), /^Protocol no-elr, not Kafka 4\.x: .*KIP-966 added them in Kafka 4\.0 \(KIP-966\)\.$/);
  assert.equal(decodeLink(payloadOf(await shareLink(page))).protocol, "no-elr");
  // A fresh page from the link runs the same mode.
  const link = await shareLink(page);
  const { page: again } = await openFresh(app, link.slice(link.indexOf("/", 8)));
  await waitForText(banner(again), /^Protocol no-elr, not Kafka 4\.x:/);
});

test("cutting a broker's power loses what its OS had not written back; a started broker copies it again", async () => {
  const { page } = await openFresh(app, "/");
  await button(page, "Produce").click();
  await setRange(page, "Speed", SPEED_MAX);
  await play(page);
  await waitForClock(page, 2000);
  await pause(page);
  await fault(page, "Cut the power to broker 2");
  await waitForText(eventLog(page), /broker 2 lost power: the process is down, and what the OS had not written back \(appended in the last 30000 ms\) is gone/);
  await waitForText(eventLog(page), /broker 2: rep-0 offsets 0\.\.0 were only in the page cache and are gone; the log ends at 0/);
  await poll(async () => /\bkilled\b/.test(await laneState(page, 2)));
  await fault(page, "Start broker 2");
  await play(page);
  await waitForText(describe(page), /Isr: 1,3,2 |Isr: 1,2,3 /, { timeout: 60_000 });
  await pause(page);
});
