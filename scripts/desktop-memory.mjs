// The desktop app's memory when idle (docs/benchmarks.md, "The UI"): fills a database with N
// signed Stripe deliveries through a real `hooklab listen`, then starts the desktop app on that
// database on a virtual display (Xvfb) RUNS times, lets it sit idle, and sums the memory of
// its process tree (the app and WebKit's network and web processes): RSS, PSS (shared pages
// split between the processes that map them) and USS (pages no other process maps). PSS
// depends on what else runs: another WebKit app on the machine takes a share of WebKit's
// libraries, and another X server one of Mesa's (Xvfb loads Mesa and its LLVM, as WebKit's web
// process does), so the script says when one runs. Not a test: it prints figures.
//
//   cargo build -p hooklab -p hooklab-desktop && npm --prefix ui ci && npm --prefix ui run build
//   node scripts/desktop-memory.mjs [--events 100000] [--runs 3] [--idle 15] [--db FILE]
//
// --db FILE keeps the filled database there and reuses it when it exists (the desktop app does
// not write to it while idle), so variants can be compared on the same data.
//
// HOOKLAB_BIN and HOOKLAB_DESKTOP choose the binaries (default: target/debug/…); any other
// environment (e.g. MALLOC_ARENA_MAX) is passed to the app.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { descendants, procKb, startListener, stripeEvent, stripeSignature } from "../ui/e2e/harness.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const EVENTS = arg("--events", 100_000);
const RUNS = arg("--runs", 3);
const IDLE_S = arg("--idle", 15);
const SECRET = "whsec_bench";
const desktop = process.env.HOOKLAB_DESKTOP ?? path.join(repo, "target/debug/hooklab-desktop");
if (!existsSync(desktop)) throw new Error(`no desktop binary at ${desktop}: cargo build -p hooklab-desktop`);

const dir = mkdtempSync(path.join(tmpdir(), "hooklab-desktop-memory-"));
const kept = args.includes("--db") ? path.resolve(args[args.indexOf("--db") + 1]) : null;
const db = kept ?? path.join(dir, "hooklab.db");
if (!(kept && existsSync(kept))) await fill();
console.error(`${desktop} on ${db}`);

async function fill() {
  const listener = await startListener(["--source", `stripe=stripe:${SECRET}`], { db });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const send = (url, body) =>
    new Promise((resolve, reject) => {
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
  const now = Math.floor(Date.now() / 1000);
  let next = 0;
  const started = Date.now();
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < EVENTS) {
      const i = next++;
      const status = await send(`${listener.receiver}/stripe`, stripeEvent(`evt_mem_${i}`, "customer.updated", now, `cus_${i}`));
      if (status !== 200) throw new Error(`delivery ${i} answered ${status}`);
    }
  }));
  agent.destroy();
  await listener.stop({ keep: true });
  console.error(`${EVENTS} deliveries in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const mb = (kb) => (kb / 1024).toFixed(1);
const totals = [];
const uss = [];
for (let run = 1; run <= RUNS; run++) {
  const display = freeDisplay();
  const xvfb = spawn("Xvfb", [display, "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1000));
  const app = spawn(desktop, ["--db", db, "--port", "0", "--source", `stripe=stripe:${SECRET}`, "--window-state", path.join(dir, "window.json"), ...(process.env.HOOKLAB_DESKTOP_ARGS ?? "").split(" ").filter(Boolean)], {
    env: { ...process.env, DISPLAY: display },
    stdio: "ignore",
  });
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const tree = [app.pid, ...descendants(app.pid)].map((pid) => ({
    name: readFileSync(`/proc/${pid}/comm`, "utf8").trim(),
    rss: procKb(`/proc/${pid}/status`, /VmRSS:\s+(\d+)/),
    pss: procKb(`/proc/${pid}/smaps_rollup`, /^Pss:\s+(\d+)/m),
    uss: procKb(`/proc/${pid}/smaps_rollup`, /^Private_Clean:\s+(\d+)/m) + procKb(`/proc/${pid}/smaps_rollup`, /^Private_Dirty:\s+(\d+)/m),
  }));
  const ours = new Set([app.pid, ...descendants(app.pid), xvfb.pid]);
  const others = readdirSync("/proc").filter((e) => /^\d+$/.test(e) && !ours.has(Number(e))).filter((e) => {
    try {
      return /^(WebKit|hooklab-desktop|Xvfb|Xorg|Xwayland)/.test(readFileSync(`/proc/${e}/comm`, "utf8"));
    } catch {
      return false;
    }
  });
  if (others.length) console.log(`  warning: ${others.length} other WebKit, desktop or X server processes run on this machine: they share libraries with the app, whose PSS is lower than alone`);
  const sum = (key) => tree.reduce((s, p) => s + p[key], 0);
  totals.push(sum("pss"));
  uss.push(sum("uss"));
  console.log(`run ${run}: PSS ${tree.map((p) => `${p.name} ${mb(p.pss)}`).join(" + ")} = ${mb(sum("pss"))} MB; USS ${tree.map((p) => mb(p.uss)).join(" + ")} = ${mb(sum("uss"))} MB; RSS ${mb(sum("rss"))} MB`);
  app.kill("SIGTERM");
  await new Promise((r) => (app.exitCode !== null ? r() : app.once("exit", r)));
  xvfb.kill();
}
for (const [name, values] of [["PSS", totals], ["USS", uss]]) {
  values.sort((a, b) => a - b);
  console.log(`${name} total, MB (min / median / max of ${RUNS}): ${mb(values[0])} / ${mb(values[Math.floor(RUNS / 2)])} / ${mb(values.at(-1))}`);
}
rmSync(dir, { recursive: true, force: true });

function freeDisplay() {
  for (let n = 150; n < 200; n++) {
    if (!existsSync(`/tmp/.X11-unix/X${n}`) && !existsSync(`/tmp/.X${n}-lock`)) return `:${n}`;
  }
  throw new Error("no free X display");
}

