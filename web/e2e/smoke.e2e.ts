import type { Browser } from "playwright-core";
import { expect, test } from "vitest";
import { type AgentsServer, describeE2E, errorsOf, openPage, screenshot, withServerAndBrowser } from "./harness";

describeE2E("the served app", () => {
  let server: AgentsServer;
  let browser: Browser;
  withServerAndBrowser((s, b) => {
    [server, browser] = [s, b];
  });

  test("serves the app's icon, and the page names it", async () => {
    const res = await server.request("GET", "/favicon.svg");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("image/svg+xml");
    const page = await openPage(browser, server.url + "/");
    expect(await page.locator('link[rel="icon"]').getAttribute("href")).toBe("/favicon.svg");
    await page.close();
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
        // No such session: the app routes the link and says so, with the
        // way back and nothing else; the browser logs the API's 404, and
        // nothing else goes wrong.
        await page.getByRole("heading", { name: "No such session" }).waitFor({ timeout: 30_000 });
        await page.getByRole("link", { name: "Back to the start page" }).waitFor();
        expect(await page.getByText("Loading…").count()).toBe(0);
        expect(await page.getByRole("textbox", { name: "Message" }).count()).toBe(0);
        expect(await page.getByRole("log", { name: "Conversation" }).count()).toBe(0);
        await screenshot(page, "no-such-session");
        expect(errorsOf(page).filter((e) => !e.includes("status of 404"))).toEqual([]);
      }
      await page.close();
    }
  });
});
