// Sources & settings: the tunnel is started and stopped from the UI. (A real bore server and
// the public URL are covered by the Rust test tunnel/control.rs; here the UI drives the
// supervisor against a bore server that is not there, and an ssh host that is refused.)
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { closeBrowser, openBrowser, screenshot, startListener } from "./harness.mjs";

after(closeBrowser);

test("the tunnel panel starts a tunnel, shows its state, refuses a bad host and stops it", async () => {
  const listener = await startListener([]);
  const { page, errors, close } = await openBrowser();
  try {
    await page.goto(listener.ui);
    await page.getByRole("link", { name: "Sources" }).click();
    const header = page.locator("header [aria-label=Tunnel]");
    await header.getByText("No tunnel").waitFor();

    const form = page.locator("form[aria-label='Start or stop the tunnel']");
    await form.getByLabel("Provider").selectOption("ssh");
    await form.getByLabel("Host", { exact: true }).fill("-oProxyCommand=sh");
    await form.getByRole("button", { name: "Start tunnel" }).click();
    await form.getByRole("alert").waitFor();
    assert.match(await form.getByRole("alert").textContent(), /USER@HOST/);

    // No bore server on 127.0.0.9: the tunnel goes down and retries.
    await form.getByLabel("Provider").selectOption("bore");
    await form.getByLabel("Server", { exact: true }).fill("127.0.0.9");
    await form.getByRole("button", { name: "Start tunnel" }).click();
    await form.getByText(/Starting bore/).waitFor();
    await header.getByText(/Tunnel (down|reconnecting|starting)/).waitFor({ timeout: 10_000 });
    await screenshot(page, "23-tunnel-panel");

    await form.getByRole("button", { name: "Stop tunnel" }).click();
    await form.getByText("Tunnel stopped.").waitFor();
    await header.getByText("No tunnel").waitFor({ timeout: 10_000 });
    assert.deepEqual(errors, []);
  } finally {
    await close();
    await listener.stop();
  }
});
