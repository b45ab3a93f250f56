// Drives headless Chromium over the DevTools protocol to check, time and photograph report.html.
//
// Chromium's --remote-debugging-pipe speaks the protocol as NUL-separated JSON on file
// descriptors 3 (to the browser) and 4 (from it), so this needs nothing but Node itself.
//
//   node drive.mjs eval  PAGE SCRIPT.js [WIDTH HEIGHT]  -> prints JSON: the value SCRIPT's body returns
//   node drive.mjs shot  PAGE OUT.png WIDTH HEIGHT light|dark [full]   (full: the whole page)
//
// PAGE is a file path or URL (a #fragment is kept). SCRIPT is the body of an async function run
// in the page after `window.fcorrReady` resolves; it may use `await`. Exit 1 with a message on
// any failure, including a page script exception.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [mode, page, ...rest] = process.argv.slice(2);
if (!mode || !page) {
  console.error("usage: drive.mjs eval PAGE SCRIPT.js | shot PAGE OUT.png WIDTH HEIGHT light|dark [full]");
  process.exit(2);
}
const chromium = process.env.CHROMIUM || "chromium";
const url = /^[a-z]+:/.test(page) ? page : (() => {
  const hash = page.indexOf("#");
  const file = hash < 0 ? page : page.slice(0, hash);
  return pathToFileURL(resolve(file)).href + (hash < 0 ? "" : page.slice(hash));
})();

const profile = mkdtempSync(join(tmpdir(), "fcorr-chromium-"));
const browser = spawn(chromium, [
  "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
  "--disable-extensions", "--remote-debugging-pipe", `--user-data-dir=${profile}`, "about:blank",
  // Its own process group: the renderer and helper processes it starts end with it, not after
  // its profile is removed (they wrote into it after the browser was killed: profiles were left
  // behind in the temporary directory, ~2 MB each).
], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], detached: true });
const exited = new Promise((ok) => browser.once("exit", ok));
let stderr = "";
browser.stderr.on("data", (d) => { stderr += d; });
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];

let nextId = 1;
const pending = new Map();
const listeners = [];
let buffer = "";
fromBrowser.on("data", (chunk) => {
  buffer += chunk.toString("utf8");
  let end;
  while ((end = buffer.indexOf("\0")) >= 0) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if (message.id && pending.has(message.id)) {
      const { ok, fail } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) fail(new Error(JSON.stringify(message.error))); else ok(message.result);
    } else if (message.method) {
      for (const l of listeners) l(message);
    }
  }
});

function send(method, params = {}, sessionId) {
  const id = nextId++;
  const message = { id, method, params };
  if (sessionId) message.sessionId = sessionId;
  toBrowser.write(JSON.stringify(message) + "\0");
  return new Promise((ok, fail) => pending.set(id, { ok, fail }));
}

function once(method, sessionId) {
  return new Promise((ok) => {
    const l = (m) => { if (m.method === method && m.sessionId === sessionId) { listeners.splice(listeners.indexOf(l), 1); ok(m.params); } };
    listeners.push(l);
  });
}

async function evaluate(session, expression) {
  const r = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, session);
  if (r.exceptionDetails) throw new Error("page script failed: " + (r.exceptionDetails.exception?.description || r.exceptionDetails.text));
  return r.result.value;
}

async function main() {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  await send("Page.enable", {}, sessionId);
  await send("Runtime.enable", {}, sessionId);
  const consoleErrors = [];
  listeners.push((m) => {
    if (m.sessionId === sessionId && m.method === "Runtime.exceptionThrown") consoleErrors.push(m.params.exceptionDetails.text);
  });
  if (mode === "eval" && rest[1]) {
    // A phone-sized viewport (touch and all) when a size is given.
    const [, width, height] = rest;
    await send("Emulation.setDeviceMetricsOverride", { width: +width, height: +height, deviceScaleFactor: 1, mobile: +width < 600 }, sessionId);
  }
  if (mode === "shot") {
    const [, width, height, theme] = rest;
    await send("Emulation.setDeviceMetricsOverride", { width: +width, height: +height, deviceScaleFactor: 1, mobile: +width < 600 }, sessionId);
    await send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: theme === "dark" ? "dark" : "light" }] }, sessionId);
  }
  const loaded = once("Page.loadEventFired", sessionId);
  const started = Date.now();
  await send("Page.navigate", { url }, sessionId);
  await loaded;
  await evaluate(sessionId, "window.fcorrReady || Promise.resolve()");
  const wall = Date.now() - started;
  if (mode === "eval") {
    const body = readFileSync(rest[0], "utf8");
    const value = await evaluate(sessionId, `(async () => {\n${body}\n})()`);
    process.stdout.write(JSON.stringify({ value, wall_ms: wall, exceptions: consoleErrors }) + "\n");
  } else if (mode === "shot") {
    // Full page: the viewport grows to the content's height, so nothing is cut off.
    if (rest[4] === "full") {
      const { cssContentSize } = await send("Page.getLayoutMetrics", {}, sessionId);
      const [, width] = rest;
      await send("Emulation.setDeviceMetricsOverride", { width: +width, height: Math.ceil(cssContentSize.height), deviceScaleFactor: 1, mobile: +width < 600 }, sessionId);
      await new Promise((r) => setTimeout(r, 200));
    }
    const { data } = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: false }, sessionId);
    writeFileSync(rest[0], Buffer.from(data, "base64"));
    process.stdout.write(JSON.stringify({ file: rest[0], wall_ms: wall, exceptions: consoleErrors }) + "\n");
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  await send("Browser.close").catch(() => {});
}

const timeout = setTimeout(() => { console.error("drive.mjs: timed out after 120 s"); finish(1); }, 120_000);
async function finish(code) {
  clearTimeout(timeout);
  try { process.kill(-browser.pid, "SIGKILL"); } catch {}
  try { browser.kill("SIGKILL"); } catch {}
  // The profile goes once nothing writes into it any more (at most 5 s of waiting).
  if (browser.pid) await Promise.race([exited, new Promise((ok) => setTimeout(ok, 5_000))]);
  try { rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }); } catch {}
  process.exit(code);
}
browser.on("error", (e) => { console.error(`drive.mjs: cannot start ${chromium}: ${e.message}`); finish(1); });
main().then(() => finish(0), (e) => { console.error("drive.mjs: " + e.message + (stderr ? "\nchromium said:\n" + stderr.slice(-2000) : "")); finish(1); });
