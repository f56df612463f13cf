// Watermark's browser test harness: serves the release build (dist/) on a free loopback port
// with a small static server, drives Debian's headless Chromium through playwright-core, and
// fails a test on any console error, uncaught page error, failed request or HTTP error.
//
// Typical use in a tests/e2e/*.test.mjs file:
//
//   import { test } from "node:test";
//   import { useApp } from "../lib/harness.mjs";
//   const app = useApp();
//   test("…", async () => {
//     const { page } = await app.open("/");          // waits until the wasm app has mounted
//     …assertions…
//     await app.screenshot(page, "my-view");         // tests/output/my-view.png
//   });                                               // problems on the page fail the test

import assert from "node:assert/strict";
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, extname, join, resolve, sep } from "node:path";
import { after, afterEach, before } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The built site to serve: dist/, or WM_DIST (e.g. to compare two builds in turn). */
export const DIST_DIR = process.env.WM_DIST || join(REPO_ROOT, "dist");
export const OUTPUT_DIR = join(REPO_ROOT, "tests", "output");
export const CHROMIUM_PATH = process.env.WM_CHROMIUM || "/usr/bin/chromium";

/**
 * Selector of the attribute that only the mounted wasm app sets (web/src/app.rs), and not
 * while a preset it opens is loading (`data-wasm="loading"` then).
 */
export const APP_READY = '[data-wasm="ready"]';

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * Serves the files under `root` on 127.0.0.1, on a port the OS picks.
 * Resolves to `{ url, close }`; `url` ends with a slash.
 */
export async function serveStatic(root = DIST_DIR) {
  const base = resolve(root);
  if (!existsSync(join(base, "index.html"))) {
    throw new Error(`${base}/index.html not found: run the release build (trunk build --release) first.`);
  }
  const server = createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
    let file = resolve(base, `.${pathname}`);
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(403).end("forbidden");
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, {
      "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": "no-store",
    });
    createReadStream(file).pipe(res);
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", ok);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

/**
 * Starts headless Chromium with a fresh, throw-away profile. Resolves to a Playwright
 * BrowserContext; its `close()` also removes the profile folder.
 */
export async function launchBrowser() {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install Debian's chromium (scripts/test does) or set WM_CHROMIUM.`);
  }
  // Playwright refuses --user-data-dir among the args: a persistent context takes the folder.
  const profile = mkdtempSync(join(tmpdir(), "watermark-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1024, height: 640 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const close = context.close.bind(context);
  context.close = async () => {
    await close();
    rmSync(profile, { recursive: true, force: true });
  };
  return context;
}

/**
 * Opens a new page in `context` that records every problem: console errors, uncaught page
 * errors, failed requests and HTTP responses of 400 or more. Resolves to `{ page, problems }`.
 */
export async function newWatchedPage(context) {
  const page = await context.newPage();
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  return { page, problems };
}

/** Fails with every recorded problem listed. */
export function assertNoProblems(problems) {
  assert.deepEqual(problems, [], `the page reported problems:\n  ${problems.join("\n  ")}`);
}

/** Saves a full-page PNG as tests/output/NAME.png and returns its path. */
export async function screenshot(page, name) {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const path = join(OUTPUT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The version Cargo.lock records for a workspace crate, e.g. watermark-engine. */
export function lockedVersion(crate) {
  const lock = readFileSync(join(REPO_ROOT, "Cargo.lock"), "utf8");
  const match = lock.match(new RegExp(`\\[\\[package\\]\\]\\nname = "${crate}"\\nversion = "([^"]+)"`));
  if (!match) throw new Error(`Cargo.lock has no package ${crate}`);
  return match[1];
}

/**
 * Registers hooks for one test file: one static server and one browser for the whole file,
 * a fresh page per `open`, and a check after each test that none of its pages reported a
 * problem. Returns `{ open, screenshot }`; `open(path, { colorScheme, waitForApp, beforeGoto })`
 * resolves to `{ page, problems }` once the wasm app is ready (unless `waitForApp: false`):
 * mounted, and with a preset it opens (`?preset=NAME`) loaded. `beforeGoto(page)` runs
 * before the page is opened.
 */
export function useApp({ root = DIST_DIR } = {}) {
  let server;
  let browser;
  let opened = [];

  before(async () => {
    server = await serveStatic(root);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  afterEach(async () => {
    const pages = opened;
    opened = [];
    for (const { page } of pages) await page.close();
    assertNoProblems(pages.flatMap(({ problems }) => problems));
  });

  return {
    get url() {
      return server.url;
    },
    async open(path = "/", { colorScheme = "light", waitForApp = true, beforeGoto } = {}) {
      const watched = await newWatchedPage(browser);
      opened.push(watched);
      await watched.page.emulateMedia({ colorScheme });
      // E.g. `page.route(…)`, to hold or replace a request the page makes while it opens.
      if (beforeGoto) await beforeGoto(watched.page);
      await watched.page.goto(new URL(path.replace(/^\//, ""), server.url).href, { waitUntil: "load" });
      if (waitForApp) {
        try {
          await watched.page.locator(APP_READY).waitFor({ state: "attached", timeout: 15_000 });
        } catch (err) {
          const seen = watched.problems.length ? `; the page reported:\n  ${watched.problems.join("\n  ")}` : "";
          throw new Error(`the wasm app did not mount (no ${APP_READY} within 15 s)${seen}`, { cause: err });
        }
      }
      return watched;
    },
    screenshot,
  };
}
