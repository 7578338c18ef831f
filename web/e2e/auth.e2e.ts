import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { patience, sidebar, sidebarLink, waitForTurn } from "./app";
import { describeE2E, errorsOf, launchBrowser, openPage, startServer, tokens, type AgentsServer } from "./harness";

// A server with auth: the app asks for a token, refuses a wrong one, and
// with the right one shows that owner's sessions only.
describeE2E("sign-in under auth", () => {
  let server: AgentsServer;
  let browser: Browser;
  let aliceSession: string;
  let bobSession: string;

  async function create(token: typeof tokens.alice, title: string): Promise<string> {
    const res = await server.request("POST", "/v1/sessions", { agent: "chat", title, message: { text: `hello from ${title}` } }, token);
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ tokens: [tokens.alice, tokens.bob, tokens.admin] }), launchBrowser()]);
    [aliceSession, bobSession] = await Promise.all([create(tokens.alice, "alice's session"), create(tokens.bob, "bob's session")]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const form = (page: Page) => page.getByRole("main", { name: "Sign in to agents" });

  async function signIn(page: Page, token: string) {
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  test("the sign-in form; a wrong token is refused; the right one shows that owner's sessions only", async () => {
    const page = await openPage(browser, server.url + "/");
    await form(page).waitFor({ timeout: patience });

    await signIn(page, "not-a-token-of-this-server");
    await form(page).getByRole("alert").getByText("The server did not accept the token.").waitFor({ timeout: patience });

    await signIn(page, tokens.alice.token);
    await form(page).waitFor({ state: "detached", timeout: patience });
    await sidebarLink(page, aliceSession).getByText("alice's session").waitFor({ timeout: patience });
    await expect.poll(() => page.getByRole("banner").getByRole("status").textContent(), { timeout: patience }).toBe("Live");
    expect(await sidebarLink(page, bobSession).count()).toBe(0);
    expect(await sidebar(page).textContent()).not.toContain("bob's session");

    // Bob's session is not alice's to open.
    await page.goto(`${server.url}/sessions/${bobSession}`);
    await page.getByRole("heading", { name: "No such session" }).waitFor({ timeout: patience });
    // Her own opens, with its answer.
    await page.goto(`${server.url}/sessions/${aliceSession}`);
    await waitForTurn(page, "You said: hello from alice's session");
    await sidebarLink(page, aliceSession).waitFor({ timeout: patience });
    // None of these loads asked for what the server refuses her (every
    // owner's sessions): the app knows she is no admin.
    expect(errorsOf(page).filter((e) => /403|Forbidden/.test(e))).toEqual([]);

    // The token is kept for the tab only: signing out asks again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await form(page).waitFor({ timeout: patience });
    // The refused calls of a wrong token are expected; nothing else.
    expect(errorsOf(page).filter((e) => !/401|Unauthorized|Failed to load resource|404|403|not found|permission/i.test(e))).toEqual([]);
    await page.close();
  });

  test("an admin sees every owner's sessions and opens them read-only, and the server logs the read", async () => {
    const page = await openPage(browser, server.url + "/");
    await signIn(page, tokens.admin.token);
    await sidebarLink(page, aliceSession).waitFor({ timeout: patience });
    await sidebarLink(page, bobSession).waitFor({ timeout: patience });

    await sidebarLink(page, aliceSession).click();
    await waitForTurn(page, "You said: hello from alice's session");
    const note = page.getByRole("note", { name: "Read only" });
    await note.waitFor({ timeout: patience });
    expect(await note.textContent()).toContain("alice's");
    expect(await page.getByRole("textbox", { name: "Message" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Delete" }).count()).toBe(0);
    await page.getByRole("button", { name: "Export" }).waitFor();

    // New turns of alice's session reach the admin's page as they come.
    const res = await server.request("POST", `/v1/sessions/${aliceSession}/messages`, { text: "more from alice" }, tokens.alice);
    expect(res.status).toBe(200);
    await waitForTurn(page, "You said: more from alice");

    const audits = server
      .log()
      .split("\n")
      .filter((l) => l.includes("admin read of another owner's sessions"))
      .map((l) => JSON.parse(l) as { level: string; admin: string; owner: string; session?: string });
    expect(audits.some((a) => a.level === "INFO" && a.admin === "root" && a.owner === "alice" && a.session === aliceSession)).toBe(true);
    // The calls before the sign-in are refused; nothing else is.
    expect(errorsOf(page).filter((e) => !/401/.test(e))).toEqual([]);
    await page.close();
  });
});
