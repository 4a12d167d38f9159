// The Lab view: signed test events of any template, with overrides that put two events on one
// payment (out of order), recorded valid and applied by the state machine.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { closeBrowser, hooklabBin, openBrowser, request, screenshot, startListener } from "./harness.mjs";

const SECRET = "whsec_e2e_lab";
after(closeBrowser);

test("the lab sends signed test events of a chosen type, overridden onto one payment", async () => {
  const listener = await startListener([]);
  // Added the way the Sources view adds it, so `hooklab run` finds its secret in the database's sources file.
  const added = await request(`${listener.control}/api/sources`, {
    method: "POST",
    body: JSON.stringify({ name: "pay", provider: "stripe", secrets: [SECRET] }),
    headers: { Authorization: `Bearer ${listener.token}`, "Content-Type": "application/json" },
  });
  assert.equal(added.status, 200, added.body);
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

    // The session as a scenario file, run headless by `hooklab run` against the receiver.
    await page.goto(`${listener.control}/#/lab`);
    const session = page.locator("section[aria-label='Session as a scenario']");
    assert.equal(await session.locator("ol[aria-label='Session steps'] li").count(), 2);
    await session.getByLabel("Scenario name").fill("two-events");
    const download = page.waitForEvent("download");
    await session.getByRole("button", { name: "Save as scenario" }).click();
    const toml = await session.locator("pre[aria-label='Scenario file']").textContent();
    assert.match(toml, /action = "generate"/);
    assert.match(toml, /event_type = "payment_intent.created"/);
    assert.ok(!toml.includes(SECRET), "a scenario file never holds a secret");
    assert.equal((await download).suggestedFilename(), "two-events.toml");
    await screenshot(page, "30-lab-session");
    const dir = mkdtempSync(path.join(tmpdir(), "hooklab-scenario-"));
    const file = path.join(dir, "two-events.toml");
    writeFileSync(file, toml);
    const run = spawnSync(hooklabBin(), ["run", file, "--target", `${listener.receiver}/pay`, "--db", listener.db], { encoding: "utf8" });
    assert.equal(run.status, 0, `hooklab run: ${run.stdout}\n${run.stderr}`);
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});
