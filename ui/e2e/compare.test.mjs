// Event view: a replay links to its original and compares with it byte by byte; the first
// delivery of a key lists its duplicates.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, test } from "node:test";
import { closeBrowser, hooklabBin, openBrowser, postStripe, screenshot, startListener, stripeEvent } from "./harness.mjs";

const SECRET = "whsec_e2e_compare";
after(closeBrowser);

test("a replay links to its original and shows what changed, byte by byte; duplicates are listed", async () => {
  const listener = await startListener(["--source", `stripe=stripe:${SECRET}`]);
  const { page, errors, close } = await openBrowser();
  try {
    const body = stripeEvent("evt_e2e_cmp", "payment_intent.created", Math.floor(Date.now() / 1000), "pi_e2e_cmp");
    for (let i = 0; i < 3; i++) assert.equal(await postStripe(listener, SECRET, body), 200);
    // #4: #1 re-signed; #5: #1 with its body tampered.
    for (const variant of ["resigned", "tampered"]) {
      execFileSync(hooklabBin(), ["replay", "1", "--to", `${listener.receiver}/stripe`, "--variant", variant, "--secret", SECRET, "--db", listener.db]);
    }

    await page.goto(`${listener.control}/#/events/1&token=${listener.token}`);
    const card = page.locator("section[aria-label=Idempotency]");
    await card.getByText("collapsed onto it").waitFor();
    const dups = card.locator("ul[aria-label=Duplicates] a");
    assert.deepEqual(await dups.allTextContents(), ["#4", "#3", "#2"], "the copies, and the re-signed replay (same key)");

    await page.goto(`${listener.control}/#/events/4`);
    await page.getByText("A replay of").waitFor();
    await page.getByRole("button", { name: "Compare" }).click();
    const diff = page.locator(".diff");
    await diff.locator("table.headers-diff").waitFor();
    assert.match(await diff.locator("tr.added", { hasText: "X-Hooklab-Replay-Of" }).textContent(), /1/);
    assert.match(await diff.textContent(), /Body\s*Identical/);
    await screenshot(page, "21-compare-resigned");

    await page.goto(`${listener.control}/#/events/5`);
    await page.getByText("A replay of").waitFor();
    await page.getByRole("button", { name: "Compare" }).click();
    await diff.locator("pre.bytes-diff").waitFor();
    assert.match(await diff.textContent(), /first difference at byte \d+/);
    assert.ok((await diff.locator("pre.bytes-diff ins").count()) > 0, "the tampered bytes are marked");
    await screenshot(page, "22-compare-tampered");
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});
