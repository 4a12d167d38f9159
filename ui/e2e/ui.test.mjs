// Browser end-to-end tests: Debian's Chromium, driven by playwright-core, against a real
// `hooklab listen --ui` receiving real HTTP deliveries. Run with `npm --prefix ui run e2e`
// after `cargo build` (scripts/test.sh does both). Each view's screenshot is saved in
// e2e/screenshots/.
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { after, test } from "node:test";
import {
  closeBrowser,
  openBrowser,
  post,
  postStripe,
  request,
  screenshot,
  startApp,
  startListener,
  stripeEvent,
  stripeSignature,
} from "./harness.mjs";

const SECRET = "whsec_e2e_secret";
const now = () => Math.floor(Date.now() / 1000);

after(closeBrowser);

async function withListener(args, body) {
  const listener = await startListener(args);
  const browser = await openBrowser();
  try {
    await body(listener, browser);
  } finally {
    await browser.close();
    await listener.stop();
  }
}

test("a signed event appears live as valid; a forged one as invalid with its diagnosis", async () => {
  await withListener(["--source", `stripe=stripe:${SECRET}`], async (listener, { page, errors }) => {
    await page.goto(listener.ui);
    await page.getByText("Waiting for the first webhook").waitFor();
    assert.ok(!page.url().includes("token="), "the token leaves the address bar");
    await screenshot(page, "01-empty-state");

    assert.equal(await postStripe(listener, SECRET, stripeEvent("evt_e2e_live", "payment_intent.created", now(), "pi_e2e_live")), 200);
    const row = page.locator(".viewport .row", { hasText: "evt_e2e_live" });
    await row.waitFor({ timeout: 5000 });
    assert.equal((await row.locator(".verdict").textContent()).trim(), "valid");

    const forged = stripeEvent("evt_e2e_forged", "charge.refunded", now(), "ch_1");
    assert.equal(await post(`${listener.receiver}/stripe`, forged, { "Stripe-Signature": stripeSignature("whsec_not_the_secret", forged) }), 200);
    const forgedRow = page.locator(".viewport .row", { hasText: "evt_e2e_forged" });
    await forgedRow.waitFor({ timeout: 5000 });
    assert.match(await forgedRow.locator(".verdict").textContent(), /invalid: signature_mismatch/);
    await screenshot(page, "02-live");

    await forgedRow.click();
    await page.locator(".verdict-card.invalid").waitFor();
    assert.match(await page.locator(".verdict-card h3").textContent(), /Signature: invalid/);
    assert.match(await page.locator(".diagnosis").textContent(), /secret/i, "the diagnosis says what to fix");
    assert.match(await page.locator("section[aria-label=Idempotency]").textContent(), /Not claimed/);
    await screenshot(page, "03-event-forged");
    assert.deepEqual(errors, []);
  });
});

test("an empty database teaches: the sources' URLs and a one-click signed test event", async () => {
  await withListener(["--source", `stripe=stripe:${SECRET}`, "--source", "gh=github:gh_secret"], async (listener, { page }) => {
    await page.goto(listener.ui);
    const empty = page.locator("section[aria-label='No deliveries yet']");
    await empty.getByText(`${listener.receiver}/stripe`).waitFor();
    await empty.getByText(`${listener.receiver}/gh`).waitFor();
    await screenshot(page, "01b-empty-state-sources");
    await empty.locator("tr", { hasText: "stripe" }).getByRole("button", { name: "Send a test event" }).click();
    const row = page.locator(".viewport .row", { hasText: "payment_intent.succeeded" });
    await row.waitFor({ timeout: 5000 });
    assert.equal((await row.locator(".verdict").textContent()).trim(), "valid", "signed with the source's secret");
  });
});

test("a source added in the UI verifies at once, keeps its secret private, and survives a restart", async () => {
  let listener = await startListener([]);
  let browser = await openBrowser();
  try {
    const { page } = browser;
    await page.goto(`${listener.control}/#/sources&token=${listener.token}`);
    const form = page.locator("form.source-form");
    await form.locator("input").first().fill("shop");
    await form.locator("select").selectOption("stripe");
    await page.locator(".provider-card").getByText("Stripe-Signature").waitFor();
    await form.locator("textarea").fill("whsec_added_in_the_ui");
    await screenshot(page, "11-sources-form");
    await form.getByRole("button", { name: "Add source" }).click();
    await page.getByText("Saved shop").waitFor();
    const row = page.locator("tr", { hasText: "shop" }).first();
    assert.match(await row.textContent(), /1 \(hidden\)/, "secrets are write-only");
    await screenshot(page, "12-sources");

    const body = stripeEvent("evt_e2e_ui_source", "payment_intent.created", now(), "pi_ui_source");
    assert.equal(await postStripe(listener, "whsec_added_in_the_ui", body, "shop"), 200);
    await page.goto(`${listener.control}/#/`);
    const live = page.locator(".viewport .row", { hasText: "evt_e2e_ui_source" });
    await live.waitFor();
    assert.equal((await live.locator(".verdict").textContent()).trim(), "valid");

    const file = `${listener.db}.sources.toml`;
    assert.equal(statSync(file).mode & 0o777, 0o600, "the sources file is private");
    const secretsShown = await (await request(`${listener.control}/api/sources`, { headers: { Authorization: `Bearer ${listener.token}` } })).body;
    assert.ok(!secretsShown.includes("whsec_added_in_the_ui"), "the API never returns a secret");

    // Restarted on the same database, the source is still there.
    const db = listener.db;
    await browser.close();
    await listener.stop({ keep: true });
    listener = await startListener([], { db });
    browser = await openBrowser();
    const again = stripeEvent("evt_e2e_ui_source_2", "payment_intent.created", now(), "pi_ui_source_2");
    assert.equal(await postStripe(listener, "whsec_added_in_the_ui", again, "shop"), 200);
    await browser.page.goto(listener.ui);
    const row2 = browser.page.locator(".viewport .row", { hasText: "evt_e2e_ui_source_2" });
    await row2.waitFor();
    assert.equal((await row2.locator(".verdict").textContent()).trim(), "valid");
  } finally {
    await browser.close();
    await listener.stop();
  }
});

test("duplicates collapse onto the first delivery, on the idempotency card and view", async () => {
  await withListener(["--source", `stripe=stripe:${SECRET}`], async (listener, { page }) => {
    const body = stripeEvent("evt_e2e_dup", "payment_intent.succeeded", now(), "pi_e2e_dup");
    for (let i = 0; i < 3; i++) assert.equal(await postStripe(listener, SECRET, body), 200);
    await page.goto(`${listener.control}/#/events/3&token=${listener.token}`);
    const card = page.locator("section[aria-label=Idempotency]");
    await card.getByText("Duplicate of").waitFor();
    assert.match(await card.textContent(), /Duplicate of #1: not processed again/);
    await screenshot(page, "04-event-duplicate");

    await page.goto(`${listener.control}/#/keys`);
    const key = page.locator("tr", { hasText: "evt_e2e_dup" });
    await key.waitFor();
    assert.match(await key.textContent(), /3 \(2 duplicates\)/);
    assert.match(await key.textContent(), /completed/);
    await screenshot(page, "05-idempotency");
  });
});

test("a failing app fills the DLQ and redrive empties it once the app recovers", async () => {
  let status = 500;
  const app = await startApp(() => status);
  try {
    await withListener(
      ["--source", `stripe=stripe:${SECRET}`, "--forward-to", app.url, "--retry-schedule", "0.05s,0.05s"],
      async (listener, { page }) => {
        for (const id of ["evt_e2e_dlq_1", "evt_e2e_dlq_2"]) {
          assert.equal(await postStripe(listener, SECRET, stripeEvent(id, "charge.succeeded", now(), "ch_x")), 200);
        }
        await page.goto(`${listener.control}/#/dlq&token=${listener.token}`);
        // Three attempts each (the first and two retries), then the DLQ.
        for (let i = 0; ; i++) {
          const rows = await page.locator("section[aria-label='Dead-letter queue'] tbody tr").count();
          if (rows === 2) break;
          assert.ok(i < 100, "both jobs reach the DLQ");
          await new Promise((r) => setTimeout(r, 100));
          await page.reload();
          await page.locator("section[aria-label='Dead-letter queue']").waitFor();
        }
        assert.equal(app.hits(), 6, "three attempts per event");
        await screenshot(page, "06-dlq");

        status = 200;
        await page.getByRole("button", { name: "Redrive all" }).click();
        await page.getByText("2 job(s) queued again.").waitFor();
        await page.getByText("Empty.").waitFor();
        for (let i = 0; app.hits() < 8; i++) {
          assert.ok(i < 100, "the redriven jobs reach the app");
          await new Promise((r) => setTimeout(r, 100));
        }
        await screenshot(page, "07-dlq-redriven");

        await page.goto(`${listener.control}/#/keys`);
        for (let i = 0; ; i++) {
          const completed = await page.locator("tr", { hasText: "evt_e2e_dlq_1" }).locator(".key-status.completed").count();
          if (completed === 1) break;
          assert.ok(i < 50, "the key's status follows the redrive");
          await new Promise((r) => setTimeout(r, 100));
          await page.reload();
        }
      },
    );
  } finally {
    await app.stop();
  }
});

test("the timeline of a reordered Stripe payment shows its parked and applied decisions", async () => {
  await withListener(["--source", `stripe=stripe:${SECRET}`], async (listener, { page }) => {
    const t = now() - 60;
    // Success before creation: the success waits (parked) until the creation arrives.
    assert.equal(await postStripe(listener, SECRET, stripeEvent("evt_e2e_t2", "payment_intent.succeeded", t + 10, "pi_e2e_order")), 200);
    assert.equal(await postStripe(listener, SECRET, stripeEvent("evt_e2e_t1", "payment_intent.created", t, "pi_e2e_order")), 200);
    await page.goto(`${listener.control}/#/objects/pi_e2e_order&token=${listener.token}`);
    for (let i = 0; ; i++) {
      const applied = await page.locator(".badge.applied, .badge.applied_from_park").count();
      if (applied >= 2) break;
      assert.ok(i < 50, "both events end up applied");
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    assert.equal(await page.locator(".badge.parked").count(), 1, "the early success was parked first");
    assert.equal(await page.locator(".badge.applied_from_park").count(), 1, "then applied once its object existed");
    await screenshot(page, "08-timeline");

    await page.goto(`${listener.control}/#/objects`);
    const object = page.locator("tr", { hasText: "pi_e2e_order" });
    await object.waitFor();
    assert.match(await object.textContent(), /succeeded/);
    await screenshot(page, "09-objects");
  });
});

test("security: the control API refuses a missing token, a foreign Origin and a foreign Host; hostile bodies stay text", async () => {
  await withListener(["--source", `stripe=stripe:${SECRET}`], async (listener, { page, dialogs }) => {
    const api = `${listener.control}/api/events`;
    const port = new URL(listener.control).port;
    const auth = { Authorization: `Bearer ${listener.token}` };
    assert.equal((await request(api)).status, 401, "no token");
    assert.equal((await request(api, { headers: { Authorization: "Bearer 00" } })).status, 401, "wrong token");
    assert.equal((await request(api, { headers: { ...auth, Origin: "http://evil.example" } })).status, 403, "foreign Origin");
    assert.equal((await request(api, { headers: { ...auth, Host: `evil.example:${port}` } })).status, 403, "foreign Host (DNS rebinding)");
    assert.equal((await request(api, { headers: auth })).status, 200);

    const hostile = JSON.stringify({
      id: "evt_e2e_xss",
      type: "charge.succeeded",
      created: now(),
      description: "<img src=x onerror=alert(1)><script>alert(2)</script>",
    });
    assert.equal(await postStripe(listener, SECRET, hostile), 200);
    await page.goto(`${listener.control}/#/events/1&token=${listener.token}`);
    const body = page.locator("pre.body");
    await body.waitFor();
    assert.match(await body.textContent(), /<img src=x onerror=alert\(1\)><script>alert\(2\)<\/script>/);
    await page.getByRole("tab", { name: "JSON" }).click();
    await page.getByRole("tab", { name: "Hex" }).click();
    assert.equal(await page.locator("article img, article script").count(), 0, "no element made from event data");
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(dialogs, [], "nothing ran");
    await screenshot(page, "10-event-hostile-body");
  });
});
