import type { Browser } from "playwright-core";
import { expect, test } from "vitest";
import {
  composer,
  conversation,
  liveTurn,
  moreAction,
  patience,
  recordStreamedText,
  send,
  sessionIdOf,
  sidebar,
  sidebarLink,
  startSession,
  streamedTexts,
  turnWith,
  waitForStatus,
  waitForTurn,
} from "./app";
import { type AgentsServer, describeE2E, errorsOf, openPage, withServerAndBrowser } from "./harness";

// The chat against a real server and the offline model: one server and
// one browser for the file, a fresh page (its own storage) per test.
describeE2E("the chat", () => {
  let server: AgentsServer;
  let browser: Browser;
  withServerAndBrowser((s, b) => {
    [server, browser] = [s, b];
  });

  const home = () => openPage(browser, server.url + "/");

  test("a new session: the answer streams in, then stays as a turn rendered as markdown", async () => {
    const page = await home();
    await startSession(page, server.url, "chat");
    await recordStreamedText(page);
    await send(page, "hello there");

    const answer = await waitForTurn(page, "You said: hello there");
    await answer.getByText("echo hello").waitFor({ timeout: patience });
    // Markdown: the message in bold, the code block with a copy button.
    expect(await answer.locator("strong").first().textContent()).toBe("hello there");
    await answer.getByRole("button", { name: /copy/i }).first().waitFor();
    // Thinking is there, folded.
    await answer.getByText("Thinking").waitFor();

    // Before the final text, the page showed the answer in part.
    const seen = await streamedTexts(page);
    const partial = seen.filter((t) => t.startsWith("Hello") && !t.includes("echo hello"));
    expect(partial.length, `texts seen while streaming: ${JSON.stringify(seen)}`).toBeGreaterThan(0);
    await liveTurn(page).waitFor({ state: "detached", timeout: patience });
    await waitForStatus(page, "ready");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("compact by hand: a marker over the turns it covers, opening on the summary the server stored", async () => {
    const page = await home();
    await startSession(page, server.url, "chat");
    for (const text of ["first note", "second note", "third note"]) {
      await send(page, text);
      await waitForTurn(page, `You said: ${text}`);
      await liveTurn(page).waitFor({ state: "detached", timeout: patience });
      await waitForStatus(page, "ready");
    }
    await moreAction(page, "Compact");
    const form = page.getByRole("form", { name: "Compact the session" });
    await form.getByRole("textbox").fill("keep the ordinals");
    await form.getByRole("button", { name: "Compact", exact: true }).click();
    const marker = conversation(page).getByRole("article", { name: /^Context compacted, turn \d+$/ });
    await marker.waitFor({ timeout: patience });
    expect(await marker.locator("summary").textContent()).toMatch(/^\d+ turns summarised · [\d,]+ → [\d,]+ tokens/);
    await marker.locator("summary").click();
    await marker.getByText("Instruction: keep the ordinals").waitFor({ timeout: patience });
    await marker.getByText(/Summary of the conversation so far/).waitFor({ timeout: patience });
    // The turns it covers are all still there.
    await waitForTurn(page, "first note");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("a tool card: the counter's bash tool, with its name, arguments and result", async () => {
    const page = await home();
    await startSession(page, server.url, "counter", "one two three four");
    await waitForTurn(page, "Counted:");
    const card = conversation(page).getByRole("group", { name: "bash_word_count" });
    await card.waitFor({ timeout: patience });
    await card.getByText("words: 4").waitFor({ timeout: patience });
    await card.getByText("Arguments").click();
    await card.getByText('"one two three four"').waitFor();
    expect(await turnWith(page, "Counted:").last().textContent()).toContain("words: 4");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("a helper call opens as its own session, nested under its parent in the sidebar", async () => {
    const page = await home();
    const parent = await startSession(page, server.url, "boss", "What is the answer?");
    await waitForTurn(page, "The researcher says:");
    const card = conversation(page).getByRole("group", { name: "prompt_agent_researcher" });
    await card.getByText("forty-two").waitFor({ timeout: patience });

    await card.getByRole("link", { name: "Open the researcher session" }).click();
    await page.waitForURL((u) => !u.pathname.endsWith(parent), { timeout: patience });
    const child = sessionIdOf(page);
    await waitForTurn(page, '(researcher) The answer to "What is the answer?" is forty-two.');
    await page.getByRole("link", { name: "parent session" }).waitFor();

    // In the sidebar the child is under its parent, and is the open one.
    const nested = sidebar(page).locator(`li:has(> a[href="/sessions/${parent}"]) > ul a[href="/sessions/${child}"]`);
    await nested.waitFor({ timeout: patience });
    expect(await nested.getAttribute("aria-current")).toBe("page");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("a pending call: the asker's question is answered from the page and the run goes on", async () => {
    const page = await home();
    await startSession(page, server.url, "asker", "Ask me something");
    const pending = page.getByRole("region", { name: "Pending calls" });
    const form = pending.getByRole("form", { name: "Answer ask_user" });
    await form.waitFor({ timeout: patience });
    await form.getByText("What is your favourite colour?").waitFor();
    await waitForStatus(page, "waiting");

    await form.getByRole("textbox", { name: "Result" }).fill("ultramarine");
    await form.getByRole("button", { name: "Answer" }).click();
    await waitForTurn(page, "You answered: ultramarine");
    await pending.waitFor({ state: "detached", timeout: patience });
    await waitForStatus(page, "ready");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("a call held for approval: rejected with a reason, then approved, from the page", async () => {
    const page = await home();
    await startSession(page, server.url, "guard", "three little words");
    const pending = page.getByRole("region", { name: "Pending calls" });
    const form = pending.getByRole("form", { name: "Approve bash_word_count" });
    await form.waitFor({ timeout: patience });
    await waitForStatus(page, "waiting");
    await form.getByRole("textbox", { name: "Reason" }).fill("not today");
    await form.getByRole("button", { name: "Reject" }).click();
    await waitForTurn(page, "the call was not approved: not today");
    await waitForStatus(page, "ready");

    await send(page, "four more little words");
    await form.waitFor({ timeout: patience });
    await form.getByRole("button", { name: "Approve" }).click();
    await waitForTurn(page, "Guarded: lines: 1, words: 4");
    await pending.waitFor({ state: "detached", timeout: patience });
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("fork here: a new session opens with the turns up to that one", async () => {
    const page = await home();
    const original = await startSession(page, server.url, "chat", "first message");
    await waitForTurn(page, "You said: first message");
    await waitForStatus(page, "ready");
    await send(page, "second message");
    await waitForTurn(page, "You said: second message");
    await waitForStatus(page, "ready");

    // Fork at the first answer (turn 2 of 4).
    const firstAnswer = conversation(page).getByRole("article", { name: "chat, turn 2" });
    await firstAnswer.getByRole("button", { name: "Fork here" }).click();
    await page.waitForURL((u) => u.pathname.startsWith("/sessions/") && !u.pathname.endsWith(original), { timeout: patience });
    const fork = sessionIdOf(page);
    const source = page.locator(".fork-note").getByRole("link");
    await source.waitFor({ timeout: patience });
    expect(await source.getAttribute("href")).toBe(`/sessions/${original}`);
    await waitForTurn(page, "You said: first message");
    const names = await conversation(page).getByRole("article").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
    expect(names).toEqual(["You, turn 1", "chat, turn 2"]);
    expect(await conversation(page).textContent()).not.toContain("second message");

    // The fork is a session of its own: it answers.
    await send(page, "a message to the fork");
    await waitForTurn(page, "You said: a message to the fork");
    await sidebarLink(page, fork).waitFor({ timeout: patience });
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("fork here on an answer that called a tool: the fork keeps the tool's result", async () => {
    const page = await home();
    const original = await startSession(page, server.url, "counter", "one two three");
    await waitForTurn(page, "Counted:");
    await waitForStatus(page, "ready");

    // Turn 2 is the answer that called the word counter.
    const calling = conversation(page).getByRole("article", { name: "counter, turn 2" });
    await calling.getByRole("group", { name: "bash_word_count" }).getByText("words: 3").waitFor({ timeout: patience });
    await calling.getByRole("button", { name: "Fork here" }).click();
    await page.waitForURL((u) => u.pathname.startsWith("/sessions/") && !u.pathname.endsWith(original), { timeout: patience });
    const card = conversation(page).getByRole("article", { name: "counter, turn 2" }).getByRole("group", { name: "bash_word_count" });
    await card.getByText("words: 3").waitFor({ timeout: patience });
    expect(await conversation(page).textContent()).not.toContain("forked before this call completed");
    expect(await conversation(page).textContent()).not.toContain("Counted:");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("rename: the heading and the sidebar take the new title", async () => {
    const page = await home();
    const id = await startSession(page, server.url, "chat", "name me");
    await waitForTurn(page, "You said: name me");
    await moreAction(page, "Rename");
    const field = page.getByRole("textbox", { name: "Session title" });
    await field.fill("Renamed from the page");
    await field.press("Enter");
    await page.getByRole("heading", { name: "Renamed from the page" }).waitFor({ timeout: patience });
    await sidebarLink(page, id).getByText("Renamed from the page").waitFor({ timeout: patience });
    const res = await server.request("GET", `/v1/sessions/${id}?view=meta`);
    expect(((await res.json()) as { title: string }).title).toBe("Renamed from the page");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("interrupt: the slow answer stops, is marked interrupted, and the message gets its answer", async () => {
    const page = await home();
    await startSession(page, server.url, "slow", "tell me a long story");
    // Some of the answer is there, and more is coming.
    await liveTurn(page).getByText("Once upon a time").waitFor({ timeout: patience });
    await waitForStatus(page, "running");

    await composer(page).fill("stop, and answer quickly");
    await page.getByRole("button", { name: "Interrupt" }).click();

    // The message reaches the agent at once (as urgent mail) and is answered.
    const answer = await waitForTurn(page, "A quick answer to:");
    expect(await answer.textContent()).toContain("stop, and answer quickly");
    const cut = conversation(page).locator("article.turn-interrupted");
    await cut.waitFor({ timeout: patience });
    const cutText = (await cut.textContent()) ?? "";
    expect(cutText).toContain("interrupted");
    expect(cutText).toContain("Once upon a time");
    expect(cutText).not.toContain("until the end.");
    await waitForStatus(page, "ready");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("a draft typed while the run is busy is sent when the run stops", async () => {
    const page = await home();
    await startSession(page, server.url, "slow", "tell me a long story");
    await liveTurn(page).getByText("Once upon a time").waitFor({ timeout: patience });

    // While running, Send adds to the draft.
    await send(page, "and then answer quickly");
    const draft = page.getByRole("region", { name: "Draft" });
    await draft.getByText("and then answer quickly").waitFor({ timeout: patience });
    await send(page, "with one more line");
    await draft.getByRole("button", { name: "Edit" }).click();
    const draftText = await draft.getByRole("textbox", { name: "Draft text" }).inputValue();
    expect(draftText).toContain("and then answer quickly");
    expect(draftText).toContain("with one more line");
    // Nothing was posted yet: one message of the user so far.
    expect(await conversation(page).getByRole("article", { name: /^You, / }).count()).toBe(1);

    // The run ends; the draft goes as one message, and gets its answer.
    await waitForTurn(page, "until the end.", 60_000);
    await waitForTurn(page, "A quick answer to:", 60_000);
    await draft.waitFor({ state: "detached", timeout: patience });
    const posted = conversation(page).getByRole("article", { name: /^You, / });
    expect(await posted.count()).toBe(2);
    const second = (await posted.nth(1).textContent()) ?? "";
    expect(second).toContain("and then answer quickly");
    expect(second).toContain("with one more line");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  }, 90_000);

  test("a session created with curl appears in the sidebar, live", async () => {
    const page = await home();
    await sidebar(page).getByRole("link", { name: "New session" }).waitFor({ timeout: patience });
    // The page is live before the session is made.
    await expect.poll(() => page.getByRole("banner").getByRole("status").textContent(), { timeout: patience }).toBe("Live");

    const res = await server.request("POST", "/v1/sessions", { agent: "chat", title: "made with curl", message: { text: "from a script" } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    const link = sidebarLink(page, id);
    await link.waitFor({ timeout: patience });
    expect(await link.textContent()).toContain("made with curl");
    // And it opens.
    await link.click();
    await waitForTurn(page, "You said: from a script");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });
});
