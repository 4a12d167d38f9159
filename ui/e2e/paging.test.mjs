// Live view: the newest page of deliveries first, older pages as the list is scrolled to its
// end (an idle window holds a few hundred rows, whatever the database holds).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, postStripe, startListener, stripeEvent } from "./harness.mjs";

const SECRET = "whsec_e2e_paging";
after(closeBrowser);

test("the live list loads 200 rows, then older pages as it is scrolled to the end", async () => {
  const listener = await startListener(["--source", `stripe=stripe:${SECRET}`]);
  const { page, errors, close } = await openBrowser();
  try {
    const created = Math.floor(Date.now() / 1000);
    for (let i = 1; i <= 450; i++) {
      const body = stripeEvent(`evt_page_${i}`, "customer.updated", created, `cus_${i}`);
      assert.equal(await postStripe(listener, SECRET, body), 200);
    }
    await page.goto(listener.ui);
    const count = page.locator(".filters .count");
    await page.locator(".viewport .row", { hasText: "evt_page_450" }).waitFor();
    await page.getByText("200 of 200 loaded").waitFor();
    assert.equal(await page.getByRole("button", { name: "Load older deliveries" }).count(), 1);

    const toEnd = () => page.locator(".viewport").evaluate((v) => v.scrollTo(0, v.scrollHeight));
    await toEnd();
    await page.getByText("400 of 400 loaded").waitFor({ timeout: 5000 });
    await toEnd();
    await page.getByText("450 of 450 loaded").waitFor({ timeout: 5000 });
    // The oldest delivery is in the list, once, and nothing is left to load.
    await page.locator(".viewport").evaluate((v) => v.scrollTo(0, v.scrollHeight));
    await page.locator(".viewport .row", { hasText: /evt_page_1\b/ }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Load older deliveries" }).count(), 0);
    assert.match(await count.textContent(), /^450 of 450 loaded/);
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});
