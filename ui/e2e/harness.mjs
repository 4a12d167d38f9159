// What the browser end-to-end tests share: a real `hooklab listen --ui` child process, signed
// deliveries over real HTTP (signed here with node:crypto, independently of Hooklab), small
// developer apps, and Debian's Chromium driven by playwright-core. Screenshots of every view
// go to e2e/screenshots/.
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
export const SCREENSHOTS = path.join(here, "screenshots");

export function hooklabBin() {
  const bin = process.env.HOOKLAB_BIN ?? path.join(repo, "target/debug/hooklab");
  if (!existsSync(bin)) {
    throw new Error(`no hooklab binary at ${bin}: run \`cargo build\` first (scripts/test.sh does), or set HOOKLAB_BIN`);
  }
  return bin;
}

export function chromiumPath() {
  const candidates = [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean);
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error("Chromium is not installed: `apt-get install chromium` (scripts/setup-deps.sh does it)");
  return found;
}

/// A running `hooklab listen --json --ui` on free ports with a fresh database.
export async function startListener(args, { db: existing } = {}) {
  const dir = existing ? path.dirname(existing) : mkdtempSync(path.join(tmpdir(), "hooklab-e2e-"));
  const db = existing ?? path.join(dir, "hooklab.db");
  const child = spawn(hooklabBin(), ["listen", "--json", "--ui", "--port", "0", "--db", db, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines = createInterface({ input: child.stdout });
  const stderr = [];
  child.stderr.on("data", (chunk) => stderr.push(chunk));
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hooklab listen did not start: ${Buffer.concat(stderr)}`)), 20_000);
    lines.once("line", (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line).ready);
    });
    child.once("exit", (code) => reject(new Error(`hooklab listen exited (${code}): ${Buffer.concat(stderr)}`)));
  });
  lines.on("line", () => {});
  return {
    receiver: ready.receiver,
    control: ready.control,
    ui: ready.ui,
    token: new URL(ready.ui.replace("#token=", "?token=")).searchParams.get("token"),
    db,
    /// Stops it; `keep`: leave its database (and the files beside it) for a restart.
    async stop({ keep = false } = {}) {
      child.kill("SIGTERM");
      await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/// `t=…,v1=…` over `t.body` with HMAC-SHA256, as Stripe signs.
export function stripeSignature(secret, body, t = Math.floor(Date.now() / 1000)) {
  const v1 = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
  return `t=${t},v1=${v1}`;
}

/// POSTs `body` to `url` with `headers`; resolves with the status.
export function post(url, body, headers = {}) {
  return request(url, { method: "POST", body, headers }).then((r) => r.status);
}

export function request(url, { method = "GET", body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { "Content-Length": Buffer.byteLength(body ?? ""), ...headers } }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body ?? "");
  });
}

export function postStripe(listener, secret, body, source = "stripe") {
  return post(`${listener.receiver}/${source}`, body, {
    "Content-Type": "application/json",
    "Stripe-Signature": stripeSignature(secret, body),
  });
}

export function stripeEvent(id, type, created, object) {
  return JSON.stringify({ id, object: "event", type, created, data: { object: { id: object, object: "payment_intent" } } });
}

/// A developer app: answers `status()` to every request and counts them.
export async function startApp(status) {
  let hits = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      hits += 1;
      res.writeHead(status());
      res.end("app says hi");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks`,
    hits: () => hits,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

let browser;
export async function openBrowser() {
  browser ??= await chromium.launch({
    executablePath: chromiumPath(),
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, dialogs, errors, close: () => context.close() };
}

export async function closeBrowser() {
  await browser?.close();
  browser = undefined;
}

export async function screenshot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The process ids below `pid` (children, their children…), read from /proc. */
export function descendants(pid) {
  const children = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry), ...descendants(Number(entry)));
    } catch {
      // gone
    }
  }
  return children;
}

/** The number `re`'s first group finds in a /proc file (kB), 0 when the file or the field is missing. */
export function procKb(file, re) {
  try {
    return Number(re.exec(readFileSync(file, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
