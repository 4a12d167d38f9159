// The UI benchmark (docs/benchmarks.md, "The UI"): with 100 000 deliveries in the database,
// (1) the time from navigation to the first rendered row of the Live list, (2) the latency from
// a delivery's arrival (the moment its request is sent) to its row being in the DOM, and
// (3) the desktop app's resident memory when idle. Not a test: it prints figures.
//
//   cargo build --release -p hooklab -p hooklab-desktop
//   HOOKLAB_BIN=target/release/hooklab HOOKLAB_DESKTOP=target/release/hooklab-desktop \
//     node ui/e2e/bench.mjs [--events 100000]
import { spawn } from "node:child_process";
import { readFileSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { closeBrowser, descendants, openBrowser, procKb, startListener, stripeEvent, stripeSignature } from "./harness.mjs";

const pssKb = (pid) => procKb(`/proc/${pid}/smaps_rollup`, /^Pss:\s+(\d+)/m);
const rssKb = (pid) => procKb(`/proc/${pid}/status`, /VmRSS:\s+(\d+)/);

const SECRET = "whsec_bench";
const args = process.argv.slice(2);
const EVENTS = Number(args[args.indexOf("--events") + 1] || 100_000) || 100_000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function send(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      agent,
      headers: { "Content-Type": "application/json", "Stripe-Signature": stripeSignature(SECRET, body), "Content-Length": Buffer.byteLength(body) },
    }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const listener = await startListener(["--source", `stripe=stripe:${SECRET}`]);
const url = `${listener.receiver}/stripe`;
const now = Math.floor(Date.now() / 1000);
console.error(`filling the database with ${EVENTS} deliveries…`);
const fillStarted = Date.now();
let next = 0;
async function worker() {
  while (next < EVENTS) {
    const i = next++;
    const status = await send(url, stripeEvent(`evt_bench_${i}`, "customer.updated", now, `cus_${i}`));
    if (status !== 200) throw new Error(`delivery ${i} answered ${status}`);
  }
}
await Promise.all(Array.from({ length: 64 }, worker));
console.error(`  ${EVENTS} deliveries in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s`);

// (1) First rendered list, five fresh page loads.
const firstRender = [];
for (let run = 0; run < 5; run++) {
  const { page, close } = await openBrowser();
  const started = Date.now();
  await page.goto(listener.ui);
  await page.locator(".viewport .row").first().waitFor({ timeout: 30_000 });
  firstRender.push(Date.now() - started);
  await close();
}
firstRender.sort((a, b) => a - b);

// (2) Arrival to visible row, 200 deliveries one after another on an open page.
const { page, close } = await openBrowser();
await page.goto(listener.ui);
await page.locator(".viewport .row").first().waitFor();
await page.evaluate(() => {
  window.__seen = {};
  new MutationObserver(() => {
    for (const cell of document.querySelectorAll(".viewport .row span:last-child")) {
      const id = cell.textContent.trim().split(" ")[0];
      if (id.startsWith("evt_live_") && !(id in window.__seen)) window.__seen[id] = performance.timeOrigin + performance.now();
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
});
const latencies = [];
for (let i = 0; i < 200; i++) {
  const id = `evt_live_${i}`;
  const sent = Date.now();
  await send(url, stripeEvent(id, "customer.updated", now, `cus_live_${i}`));
  await page.waitForFunction((id) => id in window.__seen, id, { timeout: 10_000 });
  const seen = await page.evaluate((id) => window.__seen[id], id);
  latencies.push(seen - sent);
  await new Promise((r) => setTimeout(r, 20));
}
latencies.sort((a, b) => a - b);
await close();
await closeBrowser();
await listener.stop();

console.log(`| deliveries in the database | ${EVENTS} |`);
console.log(`| first rendered list, ms (5 loads: min / median / max) | ${firstRender[0]} / ${percentile(firstRender, 50)} / ${firstRender.at(-1)} |`);
console.log(`| arrival → visible row, ms (200 deliveries: p50 / p95 / max) | ${percentile(latencies, 50).toFixed(0)} / ${percentile(latencies, 95).toFixed(0)} / ${latencies.at(-1).toFixed(0)} |`);

// (3) The desktop app's resident memory when idle, on Xvfb.
const desktop = process.env.HOOKLAB_DESKTOP;
if (desktop && existsSync(desktop)) {
  const dir = mkdtempSync(path.join(tmpdir(), "hooklab-desktop-bench-"));
  const display = ":97";
  const xvfb = spawn("Xvfb", [display, "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1000));
  const app = spawn(desktop, ["--db", path.join(dir, "h.db"), "--port", "0", "--source", `stripe=stripe:${SECRET}`], {
    env: { ...process.env, DISPLAY: display },
    stdio: "ignore",
  });
  await new Promise((r) => setTimeout(r, 15_000));
  const tree = [app.pid, ...descendants(app.pid)];
  const rss = tree.map((pid) => ({ pid, name: readFileSync(`/proc/${pid}/comm`, "utf8").trim(), kb: rssKb(pid), pss: pssKb(pid) }));
  const total = rss.reduce((sum, p) => sum + p.kb, 0);
  const totalPss = rss.reduce((sum, p) => sum + p.pss, 0);
  const mb = (kb) => (kb / 1024).toFixed(0);
  console.log(`| desktop resident memory when idle, MB RSS (the app + its WebKit processes) | ${mb(rss[0].kb)} + ${mb(total - rss[0].kb)} = ${mb(total)} |`);
  console.log(`| the same, MB PSS (shared libraries counted once across the processes) | ${mb(rss[0].pss)} + ${mb(totalPss - rss[0].pss)} = ${mb(totalPss)} |`);
  console.error(rss.map((p) => `  ${p.name} RSS ${(p.kb / 1024).toFixed(1)} MB, PSS ${(p.pss / 1024).toFixed(1)} MB`).join("\n"));
  app.kill("SIGTERM");
  await new Promise((r) => app.once("exit", r));
  xvfb.kill();
  rmSync(dir, { recursive: true, force: true });
}

