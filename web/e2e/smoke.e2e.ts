import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { describeE2E, errorsOf, launchBrowser, openPage, screenshot, startServer, type AgentsServer } from "./harness";

describeE2E("the served app", () => {
  let server: AgentsServer;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("loads at / and at a deep link, and shows its root element", async () => {
    for (const path of ["/", "/sessions/0b7c9b2e-52a4-4c7e-9d35-8f3c1c2d4e5f"]) {
      const page = await openPage(browser, server.url + path);
      await page.locator("#root").waitFor({ state: "attached" });
      expect(await page.title()).toBe("agents");
      expect(errorsOf(page)).toEqual([]);
      if (path === "/") await screenshot(page, "smoke");
      await page.close();
    }
  });
});
