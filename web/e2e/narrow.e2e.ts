import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { conversation, patience, sidebar, sidebarLink, waitForStatus, waitForTurn } from "./app";
import { describeE2E, errorsOf, launchBrowser, openPage, screenshot, startServer, type AgentsServer } from "./harness";

// The app on a phone and on a tablet held upright: the conversation has
// the screen, the sessions are a drawer, the session's actions one menu,
// and nothing is wider than the screen.
describeE2E("phone and tablet", () => {
  let server: AgentsServer;
  let browser: Browser;
  let counted: string;
  let longTitled: string;
  const longTitle = `A-title-without-a-single-space-${"x".repeat(160)}`;

  async function made(agent: string, title: string, text: string): Promise<string> {
    const res = await server.request("POST", "/v1/sessions?wait=true&timeout=60s", { agent, title, message: { text } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    await made("chat", "Release notes draft", "Write the release notes");
    longTitled = await made("chat", longTitle, "hello");
    counted = await made("counter", "Count the words", "the quick brown fox jumps over the lazy dog");
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  // The share of the screen's height the conversation has.
  async function conversationShare(page: Page): Promise<number> {
    const box = await conversation(page).boundingBox();
    const height = page.viewportSize()?.height ?? 1;
    return (box?.height ?? 0) / height;
  }

  // Nothing makes the page scroll sideways.
  async function overflow(page: Page): Promise<number> {
    return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  }

  const sizes = [
    { name: "phone", viewport: { width: 390, height: 844 } },
    { name: "tablet", viewport: { width: 768, height: 1024 } },
  ];

  for (const { name, viewport } of sizes) {
    test(`${name} (${viewport.width}×${viewport.height}): the conversation has most of the screen`, async () => {
      const page = await openPage(browser, `${server.url}/sessions/${counted}`, { viewport });
      await waitForTurn(page, "Counted:");
      await waitForStatus(page, "ready");
      await conversation(page).getByRole("group", { name: "bash_word_count" }).getByText("words: 9").waitFor({ timeout: patience });

      // The session list and the controls are folded away.
      expect(await sidebar(page).isVisible()).toBe(false);
      expect(await page.getByRole("button", { name: "Cancel run" }).isVisible()).toBe(false);
      expect(await conversationShare(page)).toBeGreaterThan(0.6);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `${name}-chat`);

      // The drawer: opened from the bar, over the page, closed by a link.
      const toggle = page.getByRole("banner").getByRole("button", { name: "Sessions" });
      expect(await toggle.getAttribute("aria-expanded")).toBe("false");
      await toggle.click();
      await sidebarLink(page, counted).waitFor({ state: "visible", timeout: patience });
      expect(await toggle.getAttribute("aria-expanded")).toBe("true");
      // Slid in all the way, over the page.
      await expect.poll(async () => (await page.locator("#sessions").boundingBox())?.x, { timeout: patience }).toBe(0);
      await screenshot(page, `${name}-sessions`);
      await sidebar(page).getByText("Release notes draft").click();
      await page.waitForURL((u) => !u.pathname.endsWith(counted), { timeout: patience });
      await sidebar(page).waitFor({ state: "hidden", timeout: patience });
      await waitForTurn(page, "Write the release notes");

      // Escape closes it too, and gives the focus back to its button.
      await toggle.click();
      await sidebarLink(page, counted).waitFor({ state: "visible", timeout: patience });
      await page.keyboard.press("Escape");
      await sidebar(page).waitFor({ state: "hidden", timeout: patience });
      expect(await toggle.evaluate((el) => el === document.activeElement)).toBe(true);

      // A keyboard's ways into the list (a tablet's) open the drawer
      // first: g s to the open session's row, / to the search.
      const focused = () =>
        page.evaluate(() => {
          const el = document.activeElement;
          return el?.closest("#sessions") ? (el.getAttribute("aria-current") ?? el.id) : "outside the list";
        });
      await page.keyboard.press("g");
      await page.keyboard.press("s");
      await sidebar(page).waitFor({ state: "visible", timeout: patience });
      await expect.poll(focused, { timeout: patience }).toBe("page");
      await page.keyboard.press("Escape");
      await sidebar(page).waitFor({ state: "hidden", timeout: patience });
      await page.keyboard.press("/");
      await sidebar(page).waitFor({ state: "visible", timeout: patience });
      await expect.poll(focused, { timeout: patience }).toBe("session-search");
      await page.keyboard.press("Escape");
      await sidebar(page).waitFor({ state: "hidden", timeout: patience });

      // The actions: one menu, each stop control saying what it does.
      const actions = page.getByRole("button", { name: "Actions" });
      await actions.click();
      const menu = page.getByRole("toolbar", { name: "Session controls" });
      await menu.waitFor({ state: "visible", timeout: patience });
      for (const control of ["Pause", "Cancel run", "Hard cancel", "Fork", "Rename", "Export", "Delete"]) {
        await menu.getByRole("button", { name: control, exact: true }).waitFor({ state: "visible" });
      }
      expect(await menu.textContent()).toContain("running tools finish first");
      expect(await menu.textContent()).toContain("the run goes on");
      const box = await menu.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= viewport.width).toBe(true);
      await screenshot(page, `${name}-actions`);
      await page.keyboard.press("Escape");
      await menu.waitFor({ state: "hidden", timeout: patience });

      expect(errorsOf(page)).toEqual([]);
      await page.close();
    });
  }

  test("phone: a long unbroken title wraps instead of widening the page", async () => {
    const viewport = { width: 390, height: 844 };
    const page = await openPage(browser, `${server.url}/sessions/${longTitled}`, { viewport });
    const heading = page.getByRole("heading", { level: 1 });
    await expect.poll(() => heading.textContent(), { timeout: patience }).toBe(longTitle);
    await waitForTurn(page, "You said: hello");
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    const box = await heading.boundingBox();
    expect(box && box.x + box.width <= viewport.width).toBe(true);
    // It takes several lines, and the conversation still has the screen.
    expect(box && box.height > 40).toBe(true);
    expect(await conversationShare(page)).toBeGreaterThan(0.5);

    // In the drawer too, the row stays within it.
    await page.getByRole("banner").getByRole("button", { name: "Sessions" }).click();
    const row = sidebarLink(page, longTitled);
    await row.waitFor({ state: "visible", timeout: patience });
    const rowBox = await row.boundingBox();
    expect(rowBox && rowBox.x + rowBox.width <= viewport.width).toBe(true);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("phone: the home page and an agent's page fit the screen", async () => {
    const viewport = { width: 390, height: 844 };
    const page = await openPage(browser, `${server.url}/`, { viewport });
    await page.getByRole("radio", { name: "chat", exact: true }).waitFor({ timeout: patience });
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, "phone-home");
    await page.goto(`${server.url}/agents/counter`);
    await page.getByRole("heading", { name: "Tools (1)" }).waitFor({ timeout: patience });
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    // The test server has no key for it: it talks to the offline model,
    // which is no error.
    const agent = page.getByRole("article", { name: "counter" });
    expect(await agent.textContent()).toContain("talks to the offline model");
    expect(await agent.locator(".error").count()).toBe(0);
    // Every tool's card holds its text.
    const card = await agent.locator(".tool-list > li").first().boundingBox();
    const source = await agent.locator(".tool-list > li .tool-head .muted").first().boundingBox();
    expect(card && source && source.x + source.width <= card.x + card.width).toBe(true);
    await screenshot(page, "phone-agent");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("desktop keeps the sidebar and the toolbar in view", async () => {
    const page = await openPage(browser, `${server.url}/sessions/${counted}`, { viewport: { width: 1280, height: 800 } });
    await waitForTurn(page, "Counted:");
    await sidebarLink(page, counted).waitFor({ state: "visible", timeout: patience });
    await page.getByRole("toolbar", { name: "Session controls" }).getByRole("button", { name: "Cancel run" }).waitFor({ state: "visible" });
    expect(await page.getByRole("button", { name: "Actions" }).count()).toBe(0);
    expect(await page.getByRole("banner").getByRole("button", { name: "Sessions" }).count()).toBe(0);
    await page.close();
  });
});
