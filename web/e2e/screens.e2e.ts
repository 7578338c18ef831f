import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { conversation, patience, seriousViolations, sidebarLink, waitForStatus, waitForTurn, type AxeViolation } from "./app";
import { describeE2E, errorsOf, launchBrowser, openPage, screenshot, startServer, type AgentsServer } from "./harness";

// The main screens in light and dark, for the README (output/*.png, copied
// to docs/screenshots/), and axe-core run in the browser on each: no
// violation of serious or critical impact.
describeE2E("the main screens", () => {
  let server: AgentsServer;
  let browser: Browser;
  let counted: string;

  // A session made as a script would, once its first run stopped.
  async function made(agent: string, title: string, text: string): Promise<string> {
    const res = await server.request("POST", "/v1/sessions?wait=true&timeout=60s", { agent, title, message: { text } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    // A sidebar with something in it: a helper's session under its
    // parent, a session waiting for an answer, and a few finished ones.
    await made("chat", "Release notes draft", "Write the release notes");
    await made("boss", "Ask the researcher", "How deep is the ocean?");
    await made("asker", "A question for you", "Ask me first");
    counted = await made("counter", "Count the words", "the quick brown fox jumps over the lazy dog");
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  function describeViolations(vs: AxeViolation[]): string {
    return vs.map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")} — ${n.failureSummary ?? ""}`).join("\n")}`).join("\n");
  }

  async function noSeriousViolations(page: Page) {
    const vs = await seriousViolations(page);
    expect(vs, describeViolations(vs)).toEqual([]);
  }

  const viewport = { width: 1280, height: 900 };

  for (const colorScheme of ["light", "dark"] as const) {
    test(`the chat (${colorScheme}): sidebar, a streamed markdown answer and a tool card`, async () => {
      const page = await openPage(browser, `${server.url}/sessions/${counted}`, { colorScheme, viewport });
      await waitForTurn(page, "Counted:");
      await conversation(page).getByRole("group", { name: "bash_word_count" }).getByText("words: 9").waitFor({ timeout: patience });
      await waitForStatus(page, "ready");
      await sidebarLink(page, counted).waitFor({ timeout: patience });
      await expect.poll(() => page.getByRole("banner").getByRole("status").textContent(), { timeout: patience }).toBe("Live");
      await screenshot(page, `chat-${colorScheme}`);
      await noSeriousViolations(page);
      expect(errorsOf(page)).toEqual([]);
      await page.close();
    });

    test(`the home page (${colorScheme}): the agent picker`, async () => {
      const page = await openPage(browser, `${server.url}/`, { colorScheme, viewport });
      await page.getByRole("radio", { name: "chat", exact: true }).waitFor({ timeout: patience });
      await sidebarLink(page, counted).waitFor({ timeout: patience });
      await expect.poll(() => page.getByRole("banner").getByRole("status").textContent(), { timeout: patience }).toBe("Live");
      await screenshot(page, `home-${colorScheme}`);
      await noSeriousViolations(page);
      expect(errorsOf(page)).toEqual([]);
      await page.close();
    });
  }

  test("the pending-call form and the draft pass axe too", async () => {
    const res = await server.request("GET", "/v1/sessions?agent=asker");
    const asker = ((await res.json()) as { sessions: { id: string }[] }).sessions[0].id;
    const page = await openPage(browser, `${server.url}/sessions/${asker}`);
    await page.getByRole("region", { name: "Pending calls" }).waitFor({ timeout: patience });
    await noSeriousViolations(page);
    await screenshot(page, "pending-light");
    await page.close();
  });
});
