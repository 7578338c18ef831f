import type { Browser, Locator, Page } from "playwright-core";
import { expect, test } from "vitest";
import { patience, sessionIdOf, waitForStatus, waitForTurn } from "./app";
import { type AgentsServer, describeE2E, errorsOf, openPage, screenshot, withServerAndBrowser } from "./harness";

// A session's budget against the real server and the offline model: the
// counter agent makes two model calls (the tool call, then the report),
// so a budget of one token lets the first start and stops the run before
// the second; raising it and resuming goes on to the report.
describeE2E("session budgets", () => {
  let server: AgentsServer;
  let browser: Browser;
  withServerAndBrowser((s, b) => {
    [server, browser] = [s, b];
  });

  // The tree's spend against its budget, in the session header.
  const meter = (page: Page): Locator => page.locator('dl[aria-label="Budget"]');
  const stopNote = (page: Page): Locator => page.getByRole("alert", { name: "Budget spent" });

  test("a session started with a small budget stops at it, says so, and goes on once the budget is raised", async () => {
    const page = await openPage(browser, server.url + "/");
    await page.getByRole("radio", { name: "counter", exact: true }).check({ timeout: patience });
    await page.getByLabel("First message (optional)").fill("one two three");
    await page.getByText("Budget (optional)").click();
    await page.getByRole("textbox", { name: "Most tokens" }).fill("1");
    await page.getByRole("button", { name: "Start a session with counter" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/, { timeout: patience });

    // A one-token budget holds no call (its input alone is more): the
    // run stops before its first model call.
    await stopNote(page).waitFor({ timeout: patience });
    expect(await stopNote(page).textContent()).toContain("the session's budget is spent");
    await waitForStatus(page, "paused");
    await expect.poll(() => meter(page).textContent(), { timeout: patience }).toMatch(/tokens\s*0 \/ 1 \(1 left\)/);
    expect(await page.getByRole("article").filter({ hasText: "Counted:" }).count()).toBe(0);
    await screenshot(page, "budget-spent");

    await stopNote(page).getByRole("button", { name: "Raise the budget" }).click();
    const dialog = page.getByRole("dialog", { name: "Session budget" });
    await dialog.waitFor({ timeout: patience });
    expect(await dialog.getByRole("textbox", { name: "Most tokens" }).inputValue()).toBe("1");
    await dialog.getByRole("textbox", { name: "Most tokens" }).fill("1000000");
    await dialog.getByRole("button", { name: "Save and resume" }).click();

    // The run goes on to its report, and the header follows the spend
    // and the new budget live.
    await waitForTurn(page, "Counted:");
    await waitForStatus(page, "ready");
    await expect.poll(() => meter(page).textContent(), { timeout: patience }).toMatch(/tokens\s*\d[\d.k]* \/ 1\.0M \([\d.kM]+ left\)/);
    expect(await stopNote(page).count()).toBe(0);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("on a phone the mark shows without opening the menu, and the budget is raised from it", async () => {
    const res = await server.request("POST", "/v1/sessions?wait=true&timeout=60s", { agent: "counter", title: "Small budget", message: { text: "four five six seven" }, budget: { tokens: 1 } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    const page = await openPage(browser, `${server.url}/sessions/${id}`, { viewport: { width: 390, height: 844 } });
    await stopNote(page).waitFor({ timeout: patience });
    expect(await stopNote(page).isVisible()).toBe(true);
    expect(sessionIdOf(page)).toBe(id);
    // The spend is in the Actions menu, with the Budget control.
    await page.getByRole("button", { name: "Actions" }).click();
    expect(await meter(page).isVisible()).toBe(true);
    await page.getByRole("button", { name: "Budget", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Session budget" });
    await dialog.waitFor({ timeout: patience });
    const box = await dialog.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await screenshot(page, "phone-budget");
    await dialog.getByRole("textbox", { name: "Most tokens" }).fill("");
    await dialog.getByRole("button", { name: "Save and resume" }).click();
    await waitForTurn(page, "Counted:");
    await waitForStatus(page, "ready");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });
});
