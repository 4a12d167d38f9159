// The Lab's race panel: 1,000 copies of a delivery raced through Hooklab's pipeline from the
// UI. The developer's app (a real HTTP server) is hit exactly once, the database records 999
// duplicates, and the panel's numbers agree with it. Then the same race straight at a naive
// app, with its side-effect probe: the oracle says it is not idempotent.
import assert from "node:assert/strict";
import http from "node:http";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, post, request, screenshot, startApp, startListener, stripeEvent, stripeSignature } from "./harness.mjs";

const SECRET = "whsec_e2e_race";

/// A locator's text with whitespace collapsed; a failed match prints at most 300 characters.
async function expectText(locator, pattern) {
  const text = (await locator.first().textContent()).replace(/\s+/g, " ").trim();
  assert.ok(pattern.test(text), `${pattern} in: ${text.slice(0, 300)}`);
}
after(closeBrowser);

/// An app that performs its side effect for every request (no dedupe); GET /count is the probe.
async function naiveApp() {
  let effects = 0;
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/count") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ count: effects }));
      return;
    }
    req.resume();
    req.on("end", () => {
      effects += 1;
      res.writeHead(200);
      res.end(`charged ${effects}`);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { url: `${base}/webhooks`, probe: `${base}/count`, stop: () => new Promise((r) => server.close(r)) };
}

test("a 1,000-copy race from the UI: one forward, 999 duplicates, the panel agrees with the database", async () => {
  const app = await startApp(() => 200);
  const naive = await naiveApp();
  const listener = await startListener(["--source", `stripe=stripe:${SECRET}`, "--forward-to", app.url]);
  const { page, errors, close } = await openBrowser();
  try {
    // Captured an hour ago: stale, so it claims no key; the re-signed copies race for it.
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    const body = stripeEvent("evt_e2e_race", "payment_intent.succeeded", hourAgo, "pi_e2e_race");
    assert.equal(await post(`${listener.receiver}/stripe`, body, { "Stripe-Signature": stripeSignature(SECRET, body, hourAgo) }), 200);

    await page.goto(`${listener.control}/#/lab?delivery=1&token=${listener.token}`);
    const panel = page.locator("section[aria-label='Duplicates and races']");
    await panel.getByText(`${listener.receiver}/stripe`).waitFor();
    await panel.getByLabel("Copies", { exact: true }).fill("1000");
    await panel.getByRole("button", { name: "Run the race" }).click();
    const result = panel.locator("[aria-label='Race results']");
    await result.waitFor({ timeout: 120_000 });
    await expectText(result.locator("p").nth(1), /1000 copies of #1 \(a true race\): 1000 × 200;/);
    const recorded = result.locator("[aria-label='Recorded by Hooklab']");
    await recorded.waitFor();
    await expectText(recorded, /1000 deliveries, 999 duplicates/);
    assert.equal(await result.locator("svg rect").count(), 1000, "one bar per copy");
    await screenshot(page, "26-race-pipeline");

    // The database agrees: the key's record, and the app's count of forwards.
    const keys = JSON.parse((await request(`${listener.control}/api/keys?key=evt_e2e_race&scope=stripe`, { headers: { Authorization: `Bearer ${listener.token}` } })).body);
    assert.equal(keys.length, 1);
    assert.equal(keys[0].deliveries, 1000);
    for (let i = 0; i < 100 && keys[0].status !== "completed"; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(app.hits(), 1, "the developer's app was hit exactly once");

    // Straight at a naive app with its probe: the oracle counts the extra side effects.
    await panel.getByLabel("Send to").selectOption("app");
    await panel.getByLabel("App URL").fill(naive.url);
    await panel.getByLabel(/Probe URL/).fill(naive.probe);
    await panel.getByLabel("Copies", { exact: true }).fill("20");
    await panel.getByRole("button", { name: "Run the race" }).click();
    await result.locator(".verdict-line.invalid").waitFor({ timeout: 60_000 });
    await expectText(result.locator(".verdict-line"), /NOT idempotent: 20 side effects for 20 copies/);
    await screenshot(page, "27-race-oracle");
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
    await app.stop();
    await naive.stop();
  }
});
