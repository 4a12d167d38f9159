// Live view: the search runs on the server too, so it finds text that only a body or a header
// holds (the list's rows carry neither).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, post, screenshot, startApp, startListener, stripeSignature } from "./harness.mjs";

const SECRET = "whsec_e2e_search";
after(closeBrowser);

test("search finds a delivery by text in its body or headers, across the whole database", async () => {
  const listener = await startListener(["--source", `stripe=stripe:${SECRET}`]);
  const { page, errors, close } = await openBrowser();
  try {
    const send = async (id, note, headers = {}) => {
      const body = JSON.stringify({ id, object: "event", type: "customer.updated", created: Math.floor(Date.now() / 1000), data: { object: { id: "cus_1", note } } });
      assert.equal(await post(`${listener.receiver}/stripe`, body, { "Stripe-Signature": stripeSignature(SECRET, body), ...headers }), 200);
    };
    await send("evt_search_1", "plain");
    await send("evt_search_2", "the Zebra-Needle is here");
    await send("evt_search_3", "plain", { "X-Request-Trace": "trace-Quokka-7" });
    await page.goto(listener.ui);
    await page.locator(".viewport .row", { hasText: "evt_search_3" }).waitFor();

    const search = page.getByRole("searchbox", { name: "Search" });
    await search.fill("zebra-needle");
    await page.getByText("1 in the database").waitFor({ timeout: 5000 });
    const rows = page.locator(".viewport .row");
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().textContent(), /evt_search_2/);
    await screenshot(page, "20-search");

    await search.fill("trace-quokka");
    await page.getByText("1 in the database").waitFor({ timeout: 5000 });
    assert.match(await rows.first().textContent(), /evt_search_3/);

    await search.fill("nothing-matches-this");
    await page.getByText("0 in the database").waitFor({ timeout: 5000 });
    assert.equal(await rows.count(), 0);

    // Escape clears the search, as in a search field: every row is back.
    await search.press("Escape");
    assert.equal(await search.inputValue(), "");
    await page.getByText("3 of 3 loaded", { exact: true }).waitFor({ timeout: 5000 });
    assert.equal(await rows.count(), 3);
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});

test("the key-status filter lists deliveries whose key failed, from the database", async () => {
  const app = await startApp(() => 500);
  const listener = await startListener(["--source", `stripe=stripe:${SECRET}`, "--forward-to", app.url, "--retry-schedule", "0.05s"]);
  const { page, errors, close } = await openBrowser();
  try {
    const send = async (id) => {
      const body = JSON.stringify({ id, object: "event", type: "customer.updated", created: Math.floor(Date.now() / 1000), data: { object: { id: "cus_1" } } });
      assert.equal(await post(`${listener.receiver}/stripe`, body, { "Stripe-Signature": stripeSignature(SECRET, body) }), 200);
    };
    await send("evt_keys_1");
    // The app fails every attempt: the key ends `failed` (dead letter) before the next arrives.
    for (let i = 0; i < 100 && app.hits() < 2; i++) await new Promise((r) => setTimeout(r, 100));
    await page.goto(listener.ui);
    await page.locator(".viewport .row", { hasText: "evt_keys_1" }).waitFor();
    await page.getByLabel("Key status").selectOption("failed");
    await page.getByText("1 in the database").waitFor({ timeout: 5000 });
    const rows = page.locator(".viewport .row");
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().textContent(), /evt_keys_1/);
    await page.getByLabel("Key status").selectOption("completed");
    await page.getByText("0 in the database").waitFor({ timeout: 5000 });
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
    await app.stop();
  }
});
