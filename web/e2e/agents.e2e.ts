import type { Browser, Locator, Page } from "playwright-core";
import { expect, test } from "vitest";
import { patience, send, waitForTurn } from "./app";
import { type AgentsServer, describeE2E, errorsOf, openPage, screenshot, withServerAndBrowser } from "./harness";

// Stored agents through the web app against the real server: the agents
// page lists file and stored agents, a definition the server refuses is
// marked at the field it names, and an agent goes through create, a
// session with it, edit, its versions and delete. File agents stay
// read-only.
describeE2E("the agents page", () => {
  let server: AgentsServer;
  let browser: Browser;
  withServerAndBrowser((s, b) => {
    [server, browser] = [s, b];
  });

  // A definition the offline model answers as it answers the chat agent.
  const definition = (announce: string, modelUrl = '\n    "modelUrl": "https://models.invalid/v1",') => `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "poet",
    "flavor": "OpenAIv1",${modelUrl}
    "apiKeyId": "e2e-key",
    "modelName": "e2e-model",
    "announce": "${announce}",
    "systemPrompt": ["You are the chat agent of the end-to-end tests."]
  }
}
`;

  const editor = (page: Page): Locator => page.getByRole("textbox", { name: "Agent definition (JSON)" });
  // The server's refusal of a definition is a 400 the browser logs; the
  // page shows it itself.
  const unexpected = (page: Page) => errorsOf(page).filter((e) => !/status of 400/.test(e));

  test("file agents are listed with their source, and read-only", async () => {
    const page = await openPage(browser, server.url + "/");
    await page.getByRole("banner").getByRole("link", { name: "Agents", exact: true }).click();
    const list = page.getByRole("list", { name: "Agents" });
    await list.waitFor({ timeout: patience });
    const chat = list.getByRole("listitem").filter({ has: page.getByRole("link", { name: "chat", exact: true }) });
    expect(await chat.textContent()).toContain("file");
    await chat.getByRole("link", { name: "chat", exact: true }).click();
    await page.getByText("From an agent file: read-only here").waitFor({ timeout: patience });
    expect(await page.getByRole("toolbar", { name: "Agent actions" }).getByRole("link", { name: "Edit" }).count()).toBe(0);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("create (a refused field marked), a session with it, edit, versions, delete", async () => {
    const page = await openPage(browser, server.url + "/agents");
    await page.getByRole("link", { name: "New agent" }).click();
    await editor(page).waitFor({ timeout: patience });

    // Without its model's address the server refuses it, naming the field;
    // the page marks where the field belongs.
    await editor(page).fill(definition("Writes short poems.", ""));
    await page.getByRole("button", { name: "Create the agent" }).click();
    const refusal = page.getByRole("alert", { name: "The server refused the definition" });
    await refusal.waitFor({ timeout: patience });
    expect(await refusal.textContent()).toContain("contents.modelUrl: required");
    expect(await editor(page).getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator(".json-backdrop mark").textContent()).toBe('"contents"');
    expect(await page.locator(".json-gutter .marked").textContent()).toBe("3");
    await screenshot(page, "agent-refused");

    await editor(page).fill(definition("Writes short poems."));
    await page.getByRole("button", { name: "Create the agent" }).click();
    await page.waitForURL(/\/agents\/poet$/, { timeout: patience });
    await page.getByText("stored in the server's database").waitFor({ timeout: patience });

    // It is an agent like any other: a session with it is answered.
    await page.getByRole("link", { name: "Start a session" }).click();
    await page.getByRole("button", { name: "Start a session with poet" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/, { timeout: patience });
    await expect.poll(() => page.getByRole("textbox", { name: "Message" }).isEditable(), { timeout: patience }).toBe(true);
    await send(page, "a poem please");
    await waitForTurn(page, "You said: a poem please");

    // Edit: the stored definition, saved as version 2.
    await page.goto(server.url + "/agents/poet");
    await page.getByRole("toolbar", { name: "Agent actions" }).getByRole("link", { name: "Edit" }).click();
    await expect.poll(() => editor(page).inputValue(), { timeout: patience }).toContain("Writes short poems.");
    await editor(page).fill((await editor(page).inputValue()).replace("Writes short poems.", "Writes long poems."));
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.waitForURL(/\/agents\/poet$/, { timeout: patience });
    // The router changes the URL first; the editor, which holds the text
    // too, may stay on the screen a moment longer.
    await editor(page).waitFor({ state: "detached", timeout: patience });
    await page.getByText("Writes long poems.").waitFor({ timeout: patience });

    // Versions: both, newest first; the first reads as it was.
    await page.getByRole("toolbar", { name: "Agent actions" }).getByRole("link", { name: "Versions" }).click();
    const versions = page.getByRole("list", { name: "Versions" });
    await versions.waitFor({ timeout: patience });
    expect(await versions.getByRole("listitem").locator("strong").allTextContents()).toEqual(["Version 2", "Version 1"]);
    await page.getByRole("button", { name: "View version 1" }).click();
    const old = page.getByRole("textbox", { name: "Definition of version 1" });
    expect(await old.inputValue()).toContain("Writes short poems.");
    expect(await old.getAttribute("readonly")).not.toBeNull();

    // Delete, after confirming: gone from the list.
    await page.getByRole("link", { name: "Back to poet" }).click();
    await page.getByRole("toolbar", { name: "Agent actions" }).getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Delete the agent poet?" });
    await confirm.getByRole("button", { name: "Delete the agent" }).click();
    await page.waitForURL(/\/agents$/, { timeout: patience });
    await page.getByRole("list", { name: "Agents" }).waitFor({ timeout: patience });
    await expect.poll(() => page.getByRole("list", { name: "Agents" }).getByRole("link", { name: "poet" }).count(), { timeout: patience }).toBe(0);
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });

  test("on a phone the editor fits the screen", async () => {
    const page = await openPage(browser, server.url + "/agents/+new", { viewport: { width: 390, height: 844 } });
    await editor(page).waitFor({ timeout: patience });
    const box = await page.locator(".json-editor").boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await screenshot(page, "phone-agent-editor");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });
});
