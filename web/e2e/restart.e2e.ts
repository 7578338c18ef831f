import type { Browser } from "playwright-core";
import { expect, test } from "vitest";
import { connectionState, liveTurn, patience, sidebarLink, startSession, storedTurns, waitForStatus, waitForTurn } from "./app";
import { type AgentsServer, describeE2E, errorsOf, openPage, withServerAndBrowser } from "./harness";

// The server stops and starts again under an open page: the page says it
// lost the server, reconnects with its last position, and nothing is
// missing — the run that was cut resumes and its answer shows, what
// happens after the restart shows live.
describeE2E("a restart of the server", () => {
  let server: AgentsServer;
  let browser: Browser;
  withServerAndBrowser((s, b) => {
    [server, browser] = [s, b];
  });

  test("the page catches up: the run in flight resumes, a new session shows, the connection is live again", async () => {
    const page = await openPage(browser, server.url + "/");
    const id = await startSession(page, server.url, "slow", "answer through a restart");
    // The answer is streaming when the server goes.
    await liveTurn(page).getByText("This answer").waitFor({ timeout: patience });
    await expect.poll(() => connectionState(page).textContent(), { timeout: patience }).toBe("Live");

    // The page notices the server went away (recorded in the page, as it
    // may last only a moment).
    await page.evaluate(() => {
      const w = window as unknown as { __states: string[] };
      w.__states = [];
      const el = document.querySelector('header [role="status"]')!;
      new MutationObserver(() => w.__states.push(el.textContent ?? "")).observe(el, { subtree: true, childList: true, characterData: true });
    });
    await server.restart();

    // Right after the restart, a session made by a script shows live.
    const res = await server.request("POST", "/v1/sessions", { agent: "chat", title: "made after the restart" });
    expect(res.status).toBe(201);
    const after = ((await res.json()) as { id: string }).id;
    await sidebarLink(page, after).getByText("made after the restart").waitFor({ timeout: 60_000 });
    await expect.poll(() => connectionState(page).textContent(), { timeout: patience }).toBe("Live");
    const states = await page.evaluate(() => (window as unknown as { __states: string[] }).__states);
    expect(states.some((s) => s.startsWith("Reconnecting")), `connection states: ${JSON.stringify(states)}`).toBe(true);

    // The run cut by the restart resumed, and its whole answer is here, once.
    await waitForTurn(page, "to its very last word after the restart.", 60_000);
    await waitForStatus(page, "ready");
    const names = await storedTurns(page).evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
    expect(names).toEqual(["You, turn 1", "slow, turn 2"]);
    expect(await sidebarLink(page, id).count()).toBe(1);

    // A new message after the restart is answered live.
    await page.getByRole("textbox", { name: "Message" }).fill("and now quickly");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await waitForTurn(page, "A quick answer to: and now quickly");
    // The page's own errors: only the failed calls while the server was down, if any.
    expect(errorsOf(page).filter((e) => !/Failed to load resource|ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|network/i.test(e))).toEqual([]);
    await page.close();
  }, 120_000);
});
