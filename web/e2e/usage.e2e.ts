import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { patience, waitForStatus } from "./app";
import { describeE2E, errorsOf, launchBrowser, openPage, screenshot, startServer, tokens, type AgentsServer, type Token } from "./harness";

// The usage page under auth: an owner reads her own spend and cannot set
// budgets; an admin looks up an owner and sets hers, and her next
// session stops at it.
describeE2E("owner usage and budgets", () => {
  let server: AgentsServer;
  let browser: Browser;

  async function run(token: Token, title: string): Promise<string> {
    const res = await server.request("POST", "/v1/sessions?wait=true&timeout=60s", { agent: "chat", title, message: { text: `hello from ${title}` } }, token);
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ tokens: [tokens.alice, tokens.bob, tokens.admin] }), launchBrowser()]);
    await run(tokens.alice, "alice spends");
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function signedIn(token: Token, path = "/", viewport?: { width: number; height: number }): Promise<Page> {
    const page = await openPage(browser, server.url + path, { viewport });
    await page.getByLabel("Token").fill(token.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("main", { name: "Sign in to agents" }).waitFor({ state: "detached", timeout: patience });
    return page;
  }

  // What the server refuses, the browser logs: the calls before sign-in
  // (401, which bring the sign-in form) and the budget refused to a
  // non-admin (403), which the page shows itself.
  const unexpected = (page: Page) => errorsOf(page).filter((e) => !/status of 40[13]/.test(e));

  test("an owner reads her spend in the period and in total; setting a budget is refused to her, and the page says so", async () => {
    const page = await signedIn(tokens.alice);
    await page.getByRole("banner").getByRole("link", { name: "Usage" }).click();
    const yours = page.getByRole("region", { name: "Yours (alice)" });
    await yours.waitFor({ timeout: patience });
    expect(await yours.textContent()).toContain("none: no limit");
    const total = yours.locator('dl[aria-label="Spent in total"]');
    await expect.poll(() => total.textContent(), { timeout: patience }).toMatch(/tokens\s*[1-9]/);
    await page.getByText("are an admin's to read and set").waitFor({ timeout: patience });

    await page.getByRole("textbox", { name: "Owner" }).fill("alice");
    await page.getByRole("button", { name: "Look up" }).click();
    const form = page.getByRole("form", { name: "Set the budget of alice" });
    await form.getByRole("textbox", { name: "Most tokens" }).fill("100");
    await form.getByRole("button", { name: "Save the budget" }).click();
    await expect.poll(() => form.getByRole("alert").textContent(), { timeout: patience }).toMatch(/Could not set the budget: .*admin/);
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });

  test("an admin looks up an owner and sets her budget; her next session stops at it, and says whose budget it is", async () => {
    const admin = await signedIn(tokens.admin, "/usage");
    await admin.getByRole("region", { name: /^Yours/ }).waitFor({ timeout: patience });
    await admin.getByRole("textbox", { name: "Owner" }).fill("alice");
    await admin.getByRole("button", { name: "Look up" }).click();
    const hers = admin.getByRole("region", { name: "Usage of alice" });
    await hers.waitFor({ timeout: patience });
    const form = admin.getByRole("form", { name: "Set the budget of alice" });
    await form.getByRole("textbox", { name: "Most tokens" }).fill("1");
    await form.getByRole("combobox", { name: "Period" }).selectOption({ label: "per day (UTC)" });
    await form.getByRole("button", { name: "Save the budget" }).click();
    await form.getByRole("status").getByText("Saved.").waitFor({ timeout: patience });
    await expect.poll(() => hers.textContent(), { timeout: patience }).toContain("set for this owner, per day (UTC)");
    await expect.poll(() => hers.locator('dl[aria-label="Spent: Today (UTC)"]').textContent(), { timeout: patience }).toMatch(/\/ 1 \(spent\)/);
    expect(await hers.getByRole("alert").textContent()).toContain("The budget is spent");
    await screenshot(admin, "usage-admin");
    expect(unexpected(admin)).toEqual([]);
    await admin.close();

    // Alice's next session makes no model call.
    const id = await run(tokens.alice, "alice is over");
    const page = await signedIn(tokens.alice, `/sessions/${id}`);
    const note = page.getByRole("alert", { name: "Budget spent" });
    await note.waitFor({ timeout: patience });
    expect(await note.textContent()).toContain("the owner's budget is spent");
    await waitForStatus(page, "paused");
    await note.getByRole("link", { name: "usage" }).click();
    await page.getByRole("region", { name: "Yours (alice)" }).getByText("set for this owner, per day (UTC)").waitFor({ timeout: patience });
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });

  test("on a phone the bar keeps its links and the usage page fits the screen", async () => {
    const page = await signedIn(tokens.bob, "/usage", { width: 390, height: 844 });
    await page.getByRole("region", { name: "Yours (bob)" }).waitFor({ timeout: patience });
    for (const name of ["Agents", "Usage", "Sign out"]) expect(await page.getByRole("banner").getByRole(name === "Sign out" ? "button" : "link", { name, exact: true }).isVisible()).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    // Signed in, every page's link and Sign out outgrow one line of a
    // phone: the bar takes a second line rather than widen the page
    // (signed out, it stays one line: schedules.e2e.ts).
    const bar = await page.getByRole("banner").boundingBox();
    expect(bar && bar.width <= 390 && bar.height < 100).toBe(true);
    await screenshot(page, "phone-usage");
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });
});
