/* Watermark embed loader (docs/embedding.md). One tag on a documentation page:
 *   <script src="https://HOST/PATH/embed.js" defer></script>
 * turns each <pre class="watermark">SCENARIO JSON</pre>, <code class="language-watermark">
 * (a fenced ```watermark block as Markdown renderers write it), <div data-watermark="LINK">
 * and <div data-watermark-preset="NAME"> into a lazily loaded Watermark iframe from the folder embed.js was loaded from. Options are
 * data attributes on the block, or on the script tag for every block: data-t (start time,
 * ms), data-autoplay, data-controls, data-height (px; without it the frame follows its
 * content), data-title. A block that cannot be shown says why in its place; the page is
 * never broken. window.watermarkEmbed.run(root) renders blocks added later. */
(() => {
  "use strict";
  const me = document.currentScript;
  const defaults = (me && me.dataset) || {};
  const base = new URL(defaults.base || "./", (me && me.src) || location.href);
  const MAX_JSON = 1 << 20; // engine/src/share.rs MAX_INFLATED_BYTES
  const MAX_LINK = 200000; // MAX_LINK_CHARS
  const frames = new Map(); // iframe window -> { box, frame, fixed }

  // An option from the block (the <code>, then its <pre> or wrapper), else the script tag.
  const opt = (el, target, name) => el.dataset[name] ?? target.dataset[name] ?? defaults[name];
  const flag = (v, dflt) => (v === undefined ? dflt : !/^(0|false|no|off)$/i.test(v));

  async function pack(text) {
    if (typeof CompressionStream !== "function") throw new Error("this browser cannot compress the scenario (no CompressionStream)");
    const packed = new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw")));
    const bytes = new Uint8Array(await packed.arrayBuffer());
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return "w1." + btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // A built-in preset's name, as `watermark presets` lists them (engine/presets/NAME.json).
  const presetName = (name, where) => {
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(name)) throw new Error(`${where} is not a preset name (lower-case letters, digits and -, as \`watermark presets\` lists them)`);
    return name;
  };

  // What a block opens: { preset } from data-watermark-preset or a preset's link
  // (?preset=NAME), else { payload } (w1....) packed from its JSON or read from data-watermark.
  async function sourceOf(el) {
    const preset = el.getAttribute("data-watermark-preset");
    if (preset !== null) return { preset: presetName(preset.trim(), "data-watermark-preset") };
    const link = el.getAttribute("data-watermark");
    const named = link !== null && !link.includes("#") && /[?&]preset=([^&]*)/.exec(link);
    if (named) return { preset: presetName(decodeURIComponent(named[1]), "the link's preset") };
    return { payload: await payloadOf(el, link) };
  }

  async function payloadOf(el, link) {
    if (link !== null && link.trim() !== "") {
      const l = link.trim();
      const p = ((l.split("#")[1] || l).split("&").find((x) => x.startsWith("s=")) || "s=" + (l.split("#")[1] || l)).slice(2);
      if (!/^w\d+\.[A-Za-z0-9_-]+$/.test(p)) throw new Error("data-watermark is not a Watermark link (#s=w1.…)");
      if (p.length > MAX_LINK) throw new Error(`the link is ${p.length} characters long; the limit is ${MAX_LINK}`);
      return p;
    }
    const text = el.textContent || "";
    if (text.length > MAX_JSON) throw new Error(`the scenario is ${text.length} characters of JSON; the limit is ${MAX_JSON}`);
    let scenario;
    try {
      scenario = JSON.parse(text);
    } catch (e) {
      throw new Error(`the scenario is not valid JSON (${e.message})`);
    }
    if (!scenario || typeof scenario !== "object" || Array.isArray(scenario)) throw new Error("the scenario must be a JSON object ({ \"version\": 1, … })");
    return pack(JSON.stringify(scenario));
  }

  function fail(box, message, original) {
    box.textContent = "";
    box.className = "watermark-embed watermark-error";
    box.setAttribute("role", "alert");
    const p = document.createElement("p");
    p.style.cssText = "margin:0 0 .5em;padding:.5em .75em;border-left:4px solid #c0392b;background:rgba(192,57,43,.08);font:14px/1.4 system-ui,sans-serif";
    p.textContent = "Watermark cannot show this scenario: " + message;
    box.appendChild(p);
    if (original) box.appendChild(original);
  }

  async function render(el) {
    const up = el.parentElement;
    const target = el.tagName === "CODE" && up && up.tagName === "PRE" ? up : el;
    if (target.hasAttribute("data-watermark-done")) return;
    target.setAttribute("data-watermark-done", "");
    const box = document.createElement("div");
    box.className = "watermark-embed";
    target.replaceWith(box);
    box.appendChild(target); // shown until the frame is ready or in place of an error
    try {
      const source = await sourceOf(el);
      const o = (name) => opt(el, target, name);
      const height = parseInt(o("height"), 10);
      const t = parseInt(o("t") ?? o("start"), 10);
      const q = new URLSearchParams({ embed: "1" });
      if (t >= 0) q.set("t", String(t));
      q.set("autoplay", flag(o("autoplay"), false) ? "1" : "0");
      q.set("controls", flag(o("controls"), true) ? "1" : "0");
      const frame = document.createElement("iframe");
      if (source.preset) q.set("preset", source.preset);
      frame.src = new URL("?" + q + (source.payload ? "#s=" + source.payload : ""), base).href;
      frame.title = o("title") || "Watermark: Kafka replication, simulated";
      frame.loading = "lazy";
      frame.setAttribute("allow", "clipboard-write");
      frame.style.cssText = `display:block;width:100%;border:0;height:${height > 0 ? height : 420}px`;
      box.replaceChildren(frame);
      frames.set(frame.contentWindow, { box, frame, fixed: height > 0, original: target });
    } catch (e) {
      fail(box, e.message, target);
    }
  }

  addEventListener("message", (event) => {
    const m = event.data;
    const f = frames.get(event.source);
    if (!f || !m || m.source !== "watermark") return;
    if (m.type === "height" && !f.fixed && m.height > 0) f.frame.style.height = Math.min(m.height, 2000) + "px";
    if (m.type === "error" && m.opening) {
      frames.delete(event.source);
      fail(f.box, String(m.message).replace(/ Showing the default scenario instead\.$/, ""), f.original);
    }
  });

  // <pre><code class="language-watermark">: Python-Markdown, Hugo, markdown-it, marked;
  // <pre class="language-watermark">: Docusaurus; <div class="language-watermark">: MkDocs
  // with pymdownx.superfences.
  const SELECTOR =
    "pre.watermark, pre.language-watermark, code.language-watermark, div.language-watermark, [data-watermark], [data-watermark-preset]";
  function run(root) {
    const found = [...(root || document).querySelectorAll(SELECTOR)];
    // A block found inside another (a <code> in its <pre>) is rendered once, as the outer.
    return Promise.all(
      found
        .filter((el) => !found.some((outer) => outer !== el && outer.contains(el)))
        .map((el) => render(el).catch((e) => console.warn("watermark embed:", e))),
    );
  }
  window.watermarkEmbed = { run };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => run());
  else run();
})();
