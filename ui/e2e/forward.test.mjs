// Sources & settings: a source's forward target is set and cleared in the UI, and the worker
// follows at once (no restart): forwarded while set, not forwarded once cleared, kept across a
// restart.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, postStripe, screenshot, startApp, startListener, stripeEvent } from "./harness.mjs";

const SECRET = "whsec_e2e_forward";
after(closeBrowser);

async function eventually(what, check) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test("a forward target set in the UI forwards at once; cleared, it stops", async () => {
  const app = await startApp(() => 200);
  const listener = await startListener([]);
  const { page, errors, close } = await openBrowser();
  try {
    await page.goto(`${listener.control}/#/sources&token=${listener.token}`);
    const form = page.locator("form.source-form");
    await form.locator("input").first().fill("pay");
    await form.locator("select").first().selectOption("stripe");
    await form.locator("textarea").fill(SECRET);
    await form.getByLabel("Forward to").fill(app.url);
    await form.getByRole("button", { name: "Add source" }).click();
    await page.getByText("Saved pay").waitFor();
    const row = page.locator("tr", { hasText: "pay" }).first();
    assert.match(await row.textContent(), new RegExp(app.url.replace(/[.]/g, "\\.")));
    await screenshot(page, "24-forward-target");

    const now = Math.floor(Date.now() / 1000);
    assert.equal(await postStripe(listener, SECRET, stripeEvent("evt_fwd_1", "customer.created", now, "cus_1"), "pay"), 200);
    await eventually("the first forward", () => app.hits() === 1);
    assert.match(readFileSync(`${listener.db}.sources.toml`, "utf8"), /forward_to = "http:\/\/127\.0\.0\.1:\d+\/webhooks"/, "kept for the next start");

    // Cleared: the next delivery is recorded and completed, not forwarded.
    await row.getByRole("button", { name: "Edit" }).click();
    await form.getByLabel("Forward to").fill("");
    await form.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved pay").waitFor();
    assert.equal(await postStripe(listener, SECRET, stripeEvent("evt_fwd_2", "customer.created", now, "cus_2"), "pay"), 200);
    await page.goto(`${listener.control}/#/keys`);
    await page.locator("tr", { hasText: "evt_fwd_2" }).getByText("completed").waitFor();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(app.hits(), 1, "not forwarded once the target is cleared");

    // A bad target is refused with a clear message.
    await page.goto(`${listener.control}/#/sources`);
    await page.locator("tr", { hasText: "pay" }).first().getByRole("button", { name: "Edit" }).click();
    await form.getByLabel("Forward to").fill("https://example.com/hook");
    await form.getByRole("button", { name: "Save changes" }).click();
    await page.getByText(/TLS forwarding is not supported/).waitFor();
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
    await app.stop();
  }
});
