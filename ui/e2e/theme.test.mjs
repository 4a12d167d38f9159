// The theme chosen in the UI survives a restart, though the control API comes back on another
// port: the browser keeps its storage per origin, port included, so the UI keeps its settings
// through the control API, beside the database (`<db>.ui.json`).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, request, screenshot, startListener } from "./harness.mjs";

after(closeBrowser);

const theme = (page) => page.evaluate(() => document.documentElement.dataset.theme);

test("the chosen theme is kept beside the database and survives a restart", async () => {
  let listener = await startListener([]);
  const { page, errors, close } = await openBrowser();
  try {
    await page.goto(listener.ui);
    await page.getByRole("heading", { name: "Waiting for the first webhook" }).waitFor();
    assert.equal(await theme(page), "auto");

    await page.getByLabel("Theme").selectOption("dark");
    assert.equal(await theme(page), "dark");
    const settings = async () =>
      JSON.parse((await request(`${listener.control}/api/ui-settings`, { headers: { Authorization: `Bearer ${listener.token}` } })).body);
    for (let i = 0; i < 50 && (await settings()).theme !== "dark"; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await settings(), { theme: "dark" });
    assert.deepEqual(JSON.parse(readFileSync(`${listener.db}.ui.json`, "utf8")), { theme: "dark" });

    const { db } = listener;
    await listener.stop({ keep: true });
    listener = await startListener([], { db });
    await page.goto(listener.ui);
    await page.getByRole("heading", { name: "Waiting for the first webhook" }).waitFor();
    await page.waitForFunction(() => document.documentElement.dataset.theme === "dark", null, { timeout: 5000 });
    assert.equal(await page.getByLabel("Theme").inputValue(), "dark");
    await screenshot(page, "31-dark-theme");

    // Back to the system's choice.
    await page.getByLabel("Theme").selectOption("auto");
    for (let i = 0; i < 50 && (await settings()).theme !== "auto"; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await settings(), { theme: "auto" });
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});
