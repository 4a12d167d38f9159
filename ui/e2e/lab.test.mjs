// The Lab view: signed test events of any template, with overrides that put two events on one
// payment (out of order), recorded valid and applied by the state machine.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, screenshot, startListener } from "./harness.mjs";

const SECRET = "whsec_e2e_lab";
after(closeBrowser);

test("the lab sends signed test events of a chosen type, overridden onto one payment", async () => {
  const listener = await startListener(["--source", `pay=stripe:${SECRET}`]);
  const { page, errors, close } = await openBrowser();
  try {
    await page.goto(listener.ui);
    await page.getByRole("link", { name: "Lab" }).click();
    const form = page.locator("section[aria-label='Signed test event'] form");
    await form.getByLabel("Event type").selectOption("payment_intent.succeeded");
    await form.getByLabel(/Overrides/).fill("data.object.id=pi_lab_e2e");
    await form.getByRole("button", { name: "Send signed event" }).click();
    const sent = page.locator("table[aria-label='Test events sent'] tbody tr");
    await sent.first().waitFor();
    assert.match(await sent.first().textContent(), /payment_intent\.succeeded.*pi_lab_e2e.*yes.*200/s);

    // The creation arrives after the success: the machine parks, then applies both.
    await form.getByLabel("Event type").selectOption("payment_intent.created");
    await form.getByRole("button", { name: "Send signed event" }).click();
    await page.waitForFunction(() => document.querySelectorAll("table[aria-label='Test events sent'] tbody tr").length === 2);
    await screenshot(page, "25-lab-trigger");

    await page.goto(`${listener.control}/#/objects/pi_lab_e2e`);
    const timeline = page.locator("section[aria-label='Objects and timelines']");
    await timeline.getByText("succeeded").first().waitFor();
    assert.match(await timeline.textContent(), /parked/);
    await page.goto(`${listener.control}/#/`);
    await page.locator(".viewport .row", { hasText: "payment_intent.created" }).waitFor();
    const verdicts = await page.locator(".viewport .row .verdict").allTextContents();
    assert.deepEqual(verdicts.map((v) => v.trim()), ["valid", "valid"]);
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});
