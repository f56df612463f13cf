// Share links built in Node, the way the page builds them (engine/src/share.rs): `w1.` then
// the scenario's JSON, compressed with raw DEFLATE at level 9, in unpadded base64url. Tests
// use these to open the page on a scenario of their choosing, or on a damaged link.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { REPO_ROOT } from "./harness.mjs";

/** The prefix (format tag and version) of the links this build writes. */
export const PREFIX = "w1.";
/** Longest payload the page accepts (characters after the prefix). */
export const MAX_LINK_CHARS = 200_000;
/** Largest JSON a link may inflate to. */
export const MAX_INFLATED_BYTES = 1 << 20;

/** Every preset's name and its topic, in the order the page lists them. */
export const PRESET_TOPICS = {
  "acks-walkthrough": "rep",
  "fetcher-threads": "rep",
  "frozen-follower": "rep",
  "min-isr-3": "strict",
  "diverged-truncation": "div",
  "leader-failover": "ha2",
  "unclean-election": "risky2",
  "last-replica-standing": "elr",
  "last-replica-standing-no-elr": "elr",
  "pre-kip-903-stale-isr-join": "kip903",
  "pre-kip-320-unfenced-fetch": "kip320",
  "pre-kip-101-hw-truncation": "kip101",
  "pre-kip-101-divergence": "kip101",
  "kip-279-divergence": "kip279",
  "acks-steps": "rep",
  "min-isr-side-by-side": "orders",
  "elr-side-by-side": "elr",
  "kip-101-side-by-side": "kip101",
  "unclean-by-replica-order": "elr",
  "topic-min-isr-side-by-side": "payments",
  "move-replica": "move",
  "throttled-move": "move",
  "slow-follower": "rep",
  "slow-broker": "orders",
  "rolling-restart": "orders",
  "zone-outage": "orders",
};

/** Packs raw bytes (or text) into a link payload: `w1.` + base64url(deflateRaw(bytes)). */
export function packBytes(bytes) {
  const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : Buffer.from(bytes);
  return PREFIX + deflateRawSync(buffer, { level: 9 }).toString("base64url");
}

/** The link payload (`w1.…`) of a scenario object. */
export function encodeScenario(scenario) {
  return packBytes(JSON.stringify(scenario));
}

/** The scenario object in a link payload (`w1.…`); throws on anything else. */
export function decodeLink(payload) {
  if (!payload.startsWith(PREFIX)) throw new Error(`not a ${PREFIX} link: ${payload.slice(0, 12)}`);
  const packed = Buffer.from(payload.slice(PREFIX.length), "base64url");
  return JSON.parse(inflateRawSync(packed).toString("utf8"));
}

/** The payload after `#s=` in a full share URL (or an iframe src). */
export function payloadOf(url) {
  const hash = new URL(url, "http://localhost/").hash;
  const match = hash.match(/(?:^#|&)s=([^&]+)/);
  if (!match) throw new Error(`no #s= payload in ${url}`);
  return match[1];
}

/** A page path that opens `payload`, optionally at time `t` and with more query options. */
export function linkPath(payload, { t, ...options } = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(options)) params.set(k, String(v));
  if (t !== undefined) params.set("t", String(t));
  const query = params.toString();
  return `/${query ? `?${query}` : ""}#s=${payload}`;
}

/** A preset's scenario, read from engine/presets/NAME.json. */
export function presetScenario(name) {
  return JSON.parse(readFileSync(join(REPO_ROOT, "engine", "presets", `${name}.json`), "utf8"));
}
