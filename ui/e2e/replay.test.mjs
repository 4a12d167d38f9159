// Replay from the UI: a stale delivery re-signed through the pipeline is recorded valid and
// linked to it; each negative variant gets its reason; an edited body is re-signed; a preset
// misordering is fired at a source; a captured file is imported by dropping it; a delivery is
// exported as HAR.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, post, screenshot, startListener, stripeEvent, stripeSignature } from "./harness.mjs";

const SECRET = "whsec_e2e_replay";
after(closeBrowser);

async function expectText(locator, pattern) {
  const text = (await locator.first().textContent()).replace(/\s+/g, " ").trim();
  assert.ok(pattern.test(text), `${pattern} in: ${text.slice(0, 300)}`);
}

test("replays, variants, an edited replay, a preset sequence, a dropped import and a HAR export", async () => {
  const listener = await startListener(["--source", `stripe=stripe:${SECRET}`]);
  const { page, errors, close } = await openBrowser();
  try {
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    const body = stripeEvent("evt_e2e_replay", "payment_intent.created", hourAgo, "pi_e2e_replay");
    assert.equal(await post(`${listener.receiver}/stripe`, body, { "Stripe-Signature": stripeSignature(SECRET, body, hourAgo) }), 200);
    await page.goto(`${listener.control}/#/events/1&token=${listener.token}`);
    await page.locator(".verdict-card.invalid").waitFor();

    const card = page.locator("section[aria-label=Replay]");
    const sent = card.locator("ul[aria-label='Replays sent'] li");
    await card.getByRole("button", { name: "Replay", exact: true }).click();
    await sent.first().waitFor();
    await expectText(sent.first(), /resigned → recorded as #2: valid/);

    for (const [variant, reason] of [["stale", "timestamp_too_old"], ["tampered", "signature_mismatch"], ["unsigned", "missing_header"]]) {
      await card.getByLabel("Replay variant").selectOption(variant);
      const before = await sent.count();
      await card.getByRole("button", { name: "Replay", exact: true }).click();
      await page.waitForFunction((n) => document.querySelectorAll("ul[aria-label='Replays sent'] li").length > n, before);
      await expectText(sent.first(), new RegExp(`${variant} → recorded as #\\d+: invalid: ${reason}`));
    }

    // Edited: a new amount, re-signed: valid, and the recorded body is the edited one.
    await card.getByLabel("Edit headers and body first").check();
    await card.getByLabel("Replay variant").selectOption("resigned");
    const edited = body.replace('"object":"payment_intent"', '"object":"payment_intent","amount":4242');
    await card.getByLabel("Replay body").fill(edited);
    await card.getByRole("button", { name: "Replay", exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll("ul[aria-label='Replays sent'] li").length === 5);
    await expectText(sent.first(), /resigned \(edited\) → recorded as #6: valid/);
    await screenshot(page, "28-replay");
    await page.goto(`${listener.control}/#/events/6`);
    await page.getByText("A replay of").waitFor();
    assert.ok((await page.locator("pre.body").textContent()).includes('"amount":4242'));

    // Export as HAR (a download fetched with the token).
    const download = page.waitForEvent("download");
    await page.locator("section[aria-label=Replay]").getByRole("button", { name: "HAR" }).click();
    const har = JSON.parse(await (await (await download).createReadStream()).toArray().then((c) => Buffer.concat(c).toString()));
    assert.equal(har.log.entries.length, 1);
    assert.ok(har.log.entries[0].request.postData.text.includes('"amount":4242'));

    // A preset misordering through the source: the object ends succeeded.
    await page.goto(`${listener.control}/#/lab`);
    const reorder = page.locator("section[aria-label=Reorder]");
    await reorder.getByLabel("Preset").selectOption("success-before-creation");
    await reorder.getByRole("button", { name: "Fire the sequence" }).click();
    const results = reorder.locator("[aria-label='Sequence results']");
    await results.waitFor();
    await expectText(results, /Sent 2 events about pi_\S+ in the wrong order; its machine should end succeeded/);
    const rows = await results.locator("tbody tr").allTextContents();
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => r.includes("200")), rows.join(" | "));

    // Import by dropping a raw HTTP request on the drop zone.
    const captured = `POST /stripe HTTP/1.1\r\nHost: example\r\nContent-Type: application/json\r\nContent-Length: 21\r\n\r\n{"id":"evt_dropped"}\n`;
    const zone = page.locator("section[aria-label=Import] .dropzone");
    const transfer = await page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], "captured.http", { type: "text/plain" }));
      return dt;
    }, captured);
    await zone.dispatchEvent("drop", { dataTransfer: transfer });
    const imported = page.locator("table[aria-label='Imported from captured.http'] tbody tr");
    await imported.first().waitFor();
    const cells = (await imported.first().locator("td").allTextContents()).map((c) => c.trim());
    assert.match(cells[0], /^#\d+$/);
    assert.deepEqual(cells.slice(1, 4), ["POST /stripe", "stripe", "invalid: missing_header"]);
    await screenshot(page, "29-lab-sequence-import");
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});
