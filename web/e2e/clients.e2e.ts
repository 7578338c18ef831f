import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { conversation, patience, seriousViolations, sidebar, sidebarLink, waitForStatus, waitForTurn, type AxeViolation } from "./app";
import { describeE2E, errorsOf, launchBrowser, openPage, screenshot, startServer, type AgentsServer } from "./harness";

// The session header, forks and the times of the session list, on a
// desktop and on a phone: a fork cut at a question offers to run it, a
// fork is named for where it was cut, the header keeps to a few lines
// with the rare controls in a menu the keyboard works, and the list
// tells sessions made seconds apart apart. Screenshots go to output/
// (and docs/screenshots/); axe finds nothing serious on any of it.
describeE2E("forks, the header and the session list", () => {
  let server: AgentsServer;
  let browser: Browser;
  let asked: string;

  async function made(agent: string, title: string, text: string): Promise<string> {
    const res = await server.request("POST", "/v1/sessions?wait=true&timeout=60s", { agent, title, message: { text } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    asked = await made("chat", "Clock question", "What time is it?");
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function noSeriousViolations(page: Page) {
    const vs: AxeViolation[] = await seriousViolations(page);
    expect(vs, vs.map((v) => `${v.impact} ${v.id}: ${v.help} ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`).join("\n")).toEqual([]);
  }

  const sizes = [
    { name: "desktop", viewport: { width: 1280, height: 800 } },
    { name: "phone", viewport: { width: 390, height: 844 } },
  ];

  for (const { name, viewport } of sizes) {
    test(`${name}: a fork at the question is named for it and runs it with the source's agent`, async () => {
      const page = await openPage(browser, `${server.url}/sessions/${asked}`, { viewport });
      await waitForTurn(page, "You said: What time is it?");
      await waitForStatus(page, "ready");
      await conversation(page).getByRole("article", { name: "You, turn 1" }).getByRole("button", { name: "Fork here" }).click();
      await page.waitForURL((u) => u.pathname.startsWith("/sessions/") && !u.pathname.endsWith(asked), { timeout: patience });
      await page.getByRole("heading", { name: "Clock question (fork at turn 1)" }).waitFor({ timeout: patience });

      // The fork holds the question, ready, and says how to go on.
      const note = page.getByRole("region", { name: "Not answered yet" });
      await note.waitFor({ timeout: patience });
      expect(await note.textContent()).toContain("This fork ends with a question");
      expect(await note.textContent()).toContain("chat");
      await waitForStatus(page, "ready");
      const run = note.getByRole("button", { name: "Run" });
      expect(await run.isEnabled()).toBe(true);
      await noSeriousViolations(page);
      await screenshot(page, `${name}-fork-run`);

      await run.click();
      await waitForTurn(page, "You said: What time is it?");
      await note.waitFor({ state: "detached", timeout: patience });
      await waitForStatus(page, "ready");
      const names = await conversation(page).getByRole("article").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
      expect(names).toEqual(["You, turn 1", "chat, turn 2"]);
      expect(errorsOf(page)).toEqual([]);
      await page.close();
    });
  }

  test("desktop: the header keeps to a few lines, the rare controls in a menu the keyboard works", async () => {
    const page = await openPage(browser, `${server.url}/sessions/${asked}`, { viewport: { width: 1280, height: 800 } });
    await waitForTurn(page, "You said: What time is it?");
    await waitForStatus(page, "ready");
    const header = page.locator("header.chat-header");
    const box = await header.boundingBox();
    expect(box!.height).toBeLessThanOrEqual(110);
    // One line of metrics.
    const metrics = await page.locator(".chat-metrics").boundingBox();
    expect(metrics!.height).toBeLessThan(24);

    const bar = page.getByRole("toolbar", { name: "Session controls" });
    for (const control of ["Pause", "Cancel run", "Fork", "More"]) await bar.getByRole("button", { name: control, exact: true }).waitFor({ state: "visible" });
    for (const moved of ["Hard cancel", "Compact", "Rename", "Export", "Delete"]) expect(await bar.getByRole("button", { name: moved, exact: true }).count(), moved).toBe(0);

    // The keyboard opens the menu on its first item, moves, and Escape
    // gives the focus back to the button.
    const more = bar.getByRole("button", { name: "More" });
    await more.focus();
    await page.keyboard.press("Enter");
    const menu = page.getByRole("menu", { name: "More" });
    await menu.waitFor({ timeout: patience });
    expect(await more.getAttribute("aria-expanded")).toBe("true");
    const focusedItem = () => page.evaluate(() => document.activeElement?.textContent ?? "");
    await expect.poll(focusedItem, { timeout: patience }).toBe("Hard cancel");
    await page.keyboard.press("End");
    expect(await focusedItem()).toBe("Delete");
    await page.keyboard.press("ArrowDown");
    expect(await focusedItem()).toBe("Hard cancel");
    await page.keyboard.press("ArrowDown");
    expect(await focusedItem()).toBe("Compact");
    await noSeriousViolations(page);
    await screenshot(page, "desktop-header-menu");
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "detached", timeout: patience });
    expect(await more.evaluate((el) => el === document.activeElement)).toBe(true);

    // Enter on an item picks it: Rename opens the title's field.
    await page.keyboard.press("ArrowDown");
    await menu.waitFor({ timeout: patience });
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowDown");
    expect(await focusedItem()).toBe("Rename");
    await page.keyboard.press("Enter");
    const field = page.getByRole("textbox", { name: "Session title" });
    await field.waitFor({ timeout: patience });
    await field.press("Escape");
    await page.getByRole("heading", { name: "Clock question" }).waitFor({ timeout: patience });

    // Continue with another agent: a dialog picks it.
    await more.click();
    await menu.getByRole("menuitem", { name: "Continue with…" }).click();
    const dialog = page.getByRole("dialog", { name: "Continue with another agent" });
    await dialog.getByRole("combobox", { name: "Agent to continue with" }).selectOption("counter");
    await noSeriousViolations(page);
    await dialog.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL((u) => !u.pathname.endsWith(asked), { timeout: patience });
    await page.getByRole("heading", { name: "Clock question (fork at turn 2)" }).waitFor({ timeout: patience });
    await page.getByRole("link", { name: "counter" }).first().waitFor({ timeout: patience });
    await screenshot(page, "desktop-header");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("phone: the header is the title and one Actions button", async () => {
    const page = await openPage(browser, `${server.url}/sessions/${asked}`, { viewport: { width: 390, height: 844 } });
    await waitForTurn(page, "You said: What time is it?");
    const box = await page.locator("header.chat-header").boundingBox();
    expect(box!.height).toBeLessThanOrEqual(110);
    await page.getByRole("button", { name: "Actions" }).click();
    await page.getByRole("toolbar", { name: "Session controls" }).getByRole("button", { name: "Rename" }).waitFor({ state: "visible", timeout: patience });
    await noSeriousViolations(page);
    await screenshot(page, "phone-header-actions");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("the session list tells when, in seconds at first, not 'now' for everything", async () => {
    const page = await openPage(browser, `${server.url}/sessions/${asked}`, { viewport: { width: 1280, height: 800 } });
    const when = sidebarLink(page, asked).locator("time");
    await when.waitFor({ timeout: patience });
    // The session was made in beforeAll, seconds ago by now.
    await expect.poll(() => when.textContent(), { timeout: patience }).toMatch(/\d+\s*(s|sec|m|min)/);
    expect(await when.getAttribute("datetime")).toMatch(/^\d{4}-\d\d-\d\dT/);
    // The forks the other tests made are told apart by their titles.
    await sidebar(page).getByText("Clock question (fork at turn 1)").first().waitFor({ timeout: patience });
    await page.close();
  });
});
