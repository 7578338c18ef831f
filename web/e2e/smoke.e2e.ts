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
      if (path === "/") {
        expect(errorsOf(page)).toEqual([]);
        await screenshot(page, "smoke");
      } else {
        // No such session: the app routes the link and says so; the
        // browser logs the API's 404, and nothing else goes wrong.
        await page.getByRole("alert").filter({ hasText: "Could not load the session" }).waitFor({ timeout: 30_000 });
        expect(errorsOf(page).filter((e) => !e.includes("status of 404"))).toEqual([]);
      }
      await page.close();
    }
  });
});
