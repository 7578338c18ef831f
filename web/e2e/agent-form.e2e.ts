import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { patience, seriousViolations, send, waitForTurn, type AxeViolation } from "./app";
import { agentFiles, type AgentsServer, describeE2E, errorsOf, launchBrowser, openPage, screenshot, startServer } from "./harness";

// The agent form against the real server: an agent made with the form
// alone (its tool and helper picked from what the server has), a refusal
// shown at the form's field, an edit that keeps what only the JSON shows
// and adds an MCP server, and the diff between its two versions; on a
// desktop and on a phone, with axe on the form and the diff; then a
// client tool added, and a directory toolbox refused at its row. A text field with suggestions is
// found by its label: Chromium names its role combobox or textbox by
// whether its suggestions were there when it was drawn.
describeE2E("the agent form and the diff of versions", () => {
  let server: AgentsServer;
  let browser: Browser;
  // The test agents, copied to a folder of their own so that the paths
  // the pages show are that folder's. The word counter is a program of
  // the server's own agents; a stored agent may run it since its folder
  // is allowed.
  let copy: string;
  let toolsDir: string;
  beforeAll(async () => {
    copy = await mkdtemp(join(tmpdir(), "agents-e2e-form-"));
    for (const dir of ["agents", "helpers"]) await cp(fileURLToPath(new URL(`./${dir}`, import.meta.url)), join(copy, dir), { recursive: true });
    toolsDir = join(copy, "agents", "tools");
    const files = agentFiles.map((f) => join(copy, "agents", basename(f)));
    [server, browser] = await Promise.all([startServer({ agentFiles: files, args: ["--stored-agent-tool-dirs", toolsDir] }), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  const form = (page: Page): Locator => page.getByRole("group", { name: "Agent form" });
  const json = (page: Page): Locator => page.getByRole("textbox", { name: "Agent definition (JSON)" });
  // The server's refusal of a definition is a 400 the browser logs; the
  // page shows it itself.
  const unexpected = (page: Page) => errorsOf(page).filter((e) => !/status of 400/.test(e));

  function describeViolations(vs: AxeViolation[]): string {
    return vs.map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")} — ${n.failureSummary ?? ""}`).join("\n")}`).join("\n");
  }
  async function noSeriousViolations(page: Page) {
    const vs = await seriousViolations(page);
    expect(vs, describeViolations(vs)).toEqual([]);
  }

  async function definitionOf(slug: string): Promise<{ contents: Record<string, unknown> }> {
    const res = await server.request("GET", `/v1/agents/${slug}`);
    expect(res.status).toBe(200);
    return JSON.parse(((await res.json()) as { definition: string }).definition);
  }

  test("an agent made with the form alone: a refused approval shown at its row, then a session that runs the tool picked", async () => {
    const page = await openPage(browser, server.url + "/agents/+new", { viewport: { width: 1280, height: 900 } });
    const f = form(page);
    await f.waitFor({ timeout: patience });
    await f.getByRole("textbox", { name: "Slug" }).fill("clerk");
    await f.getByRole("textbox", { name: "Announce" }).fill("Counts words for the desk.");
    await f.getByRole("textbox", { name: "Model name" }).fill("e2e-model");
    await f.getByRole("textbox", { name: "Endpoint" }).fill("https://models.invalid/v1");
    await f.getByLabel("API key", { exact: true }).fill("e2e-key");
    await f.getByText("The server has no value for this key.").waitFor({ timeout: patience });
    await f.getByRole("textbox", { name: "System prompt" }).fill("You are the counting agent of the end-to-end tests.");
    // Picked from what the server has: the program its counter agent
    // runs, and its chat agent as a helper.
    await f.getByRole("checkbox", { name: "bash_word_count", exact: true }).check();
    await f.getByRole("checkbox", { name: "chat", exact: true }).check();
    await f.getByRole("button", { name: "Add an approval" }).click();
    await f.getByLabel("Tool of approval 1", { exact: true }).fill("bash_wordcount");

    // The JSON below holds what the form wrote.
    const written = JSON.parse(await json(page).inputValue()).contents;
    expect(written).toMatchObject({
      slug: "clerk",
      apiKeyId: "e2e-key",
      systemPrompt: ["You are the counting agent of the end-to-end tests."],
      bashToolboxes: [{ tag: "SingleTool", contents: { Path: join(toolsDir, "word_count") } }],
      extraAgents: [{ slug: "chat" }],
      approvals: [{ tool: "bash_wordcount", approval: "always" }],
    });

    // A misspelt tool: the server refuses it, and the row says so.
    await page.getByRole("button", { name: "Create the agent" }).click();
    await page.getByRole("alert", { name: "The server refused the definition" }).waitFor({ timeout: patience });
    const tool = f.getByLabel("Tool of approval 1", { exact: true });
    await expect.poll(() => tool.getAttribute("aria-invalid"), { timeout: patience }).toBe("true");
    const why = page.locator(`#${(await tool.getAttribute("aria-describedby"))!.replace(/:/g, "\\:")}`);
    expect(await why.textContent()).toContain('the agent has no tool "bash_wordcount"');
    expect(await tool.evaluate((el) => el === document.activeElement)).toBe(true);
    await tool.scrollIntoViewIfNeeded();
    await screenshot(page, "agent-form-refused");
    await noSeriousViolations(page);

    await tool.fill("bash_word_count");
    await f.getByRole("combobox", { name: "Policy of approval 1" }).selectOption({ label: "never ask" });
    await page.getByRole("button", { name: "Create the agent" }).click();
    await page.waitForURL(/\/agents\/clerk$/, { timeout: patience });
    await page.getByRole("heading", { name: "Tools (2)" }).waitFor({ timeout: patience });
    expect(await page.getByRole("region", { name: "Helpers" }).getByRole("link", { name: "chat" }).count()).toBe(1);

    // A session with it runs the tool picked.
    await page.getByRole("link", { name: "Start a session" }).click();
    await page.getByRole("button", { name: "Start a session with clerk" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/, { timeout: patience });
    await expect.poll(() => page.getByRole("textbox", { name: "Message" }).isEditable(), { timeout: patience }).toBe(true);
    await send(page, "one two three");
    await waitForTurn(page, "Counted: lines: 1, words: 3");
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });

  test("an edit through the form keeps what only the JSON shows; the two versions compare as a diff", async () => {
    const page = await openPage(browser, server.url + "/agents/clerk/edit", { viewport: { width: 1280, height: 900 } });
    const f = form(page);
    await f.waitFor({ timeout: patience });
    // A field the form does not show, written in the JSON…
    const text = await json(page).inputValue();
    await json(page).fill(text.replace('"modelName"', '"params": [{ "name": "tenant", "required": false }],\n    "modelName"'));
    // …stays through the form's edits.
    await f.getByRole("textbox", { name: "Announce" }).fill("Counts words, briefly.");
    await f.getByRole("textbox", { name: "Most steps a run" }).fill("6");
    await f.getByRole("checkbox", { name: "os_read_session" }).check();
    await f.getByRole("textbox", { name: "Most tokens" }).fill("50000");
    // The param written in the JSON shows in the form; an MCP server added
    // with the form sends it as a header (reached only once a session
    // gives the param).
    expect(await f.getByRole("textbox", { name: "Name of param 1" }).inputValue()).toBe("tenant");
    await f.getByRole("button", { name: "Add an MCP server" }).click();
    await f.getByRole("textbox", { name: "Name of MCP server 1" }).fill("tickets");
    await f.getByRole("combobox", { name: "Kind of MCP server 1" }).selectOption("McpStreamableHttp");
    await f.getByRole("textbox", { name: "URL of MCP server 1" }).fill("https://tickets.invalid/mcp");
    await f.getByRole("textbox", { name: "Headers of MCP server 1" }).fill("X-Tenant: {{param:tenant}}");
    await screenshot(page, "agent-form");
    await noSeriousViolations(page);
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.waitForURL(/\/agents\/clerk$/, { timeout: patience });
    await page.getByText("50,000 tokens for a session started with it").waitFor({ timeout: patience });
    const saved = await definitionOf("clerk");
    expect(saved.contents).toMatchObject({
      announce: "Counts words, briefly.",
      maxSteps: 6,
      osTools: ["read_session"],
      params: [{ name: "tenant", required: false }],
      mcpServers: [{ tag: "McpStreamableHttp", contents: { name: "tickets", url: "https://tickets.invalid/mcp", headers: { "X-Tenant": "{{param:tenant}}" } } }],
      extraAgents: [{ slug: "chat" }],
      budget: { tokens: 50000 },
    });
    // A session started with none gets the agent's budget.
    const res = await server.request("POST", "/v1/sessions", { agent: "clerk" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { budget: { budget: { tokens: number } | null } }).budget.budget?.tokens).toBe(50000);

    await page.goto(server.url + "/agents/clerk/versions");
    const diff = page.getByRole("region", { name: "Changes from version 1 to version 2" });
    await diff.waitFor({ timeout: patience });
    const added = await diff.locator("tr.added td:last-child").allTextContents();
    const removed = await diff.locator("tr.removed td:last-child").allTextContents();
    expect(removed.map((l) => l.trim())).toEqual(['"announce": "Counts words for the desk.",']);
    expect(added.map((l) => l.trim())).toEqual(
      expect.arrayContaining(['"announce": "Counts words, briefly.",', '"maxSteps": 6,', '"osTools": [', '"read_session"', '"name": "tenant",', '"budget": {', '"tokens": 50000']),
    );
    await page.getByRole("region", { name: "Compare versions of clerk" }).scrollIntoViewIfNeeded();
    await screenshot(page, "agent-diff");
    await noSeriousViolations(page);

    // The other way round, picked in the address.
    await page.goto(server.url + "/agents/clerk/versions?from=2&to=1");
    await page.getByRole("region", { name: "Changes from version 2 to version 1" }).waitFor({ timeout: patience });
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });

  for (const [name, path] of [
    ["form", "/agents/clerk/edit"],
    ["diff", "/agents/clerk/versions"],
  ] as const) {
    test(`on a phone the ${name} fits the screen`, async () => {
      const page = await openPage(browser, server.url + path, { viewport: { width: 390, height: 844 } });
      if (name === "form") await form(page).waitFor({ timeout: patience });
      else await page.getByRole("region", { name: "Changes from version 1 to version 2" }).waitFor({ timeout: patience });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
      if (name === "diff") await page.getByRole("region", { name: "Compare versions of clerk" }).scrollIntoViewIfNeeded();
      await screenshot(page, `phone-agent-${name}`);
      await noSeriousViolations(page);
      expect(unexpected(page)).toEqual([]);
      await page.close();
    });
  }

  test("a client tool added with the form is saved; a folder the server does not allow is refused at its row", async () => {
    const page = await openPage(browser, server.url + "/agents/clerk/edit", { viewport: { width: 1280, height: 900 } });
    const f = form(page);
    await f.waitFor({ timeout: patience });
    // A directory toolbox outside the folder the server allows programs in.
    await f.getByRole("button", { name: "Add a directory toolbox" }).click();
    await f.getByRole("textbox", { name: "Folder of directory toolbox 1" }).fill(join(copy, "helpers"));
    await f.getByRole("textbox", { name: "File name filter of directory toolbox 1" }).fill(".sh");
    // A client tool and its argument.
    await f.getByRole("button", { name: "Add a client tool" }).click();
    await f.getByRole("textbox", { name: "Name of client tool 1" }).fill("ask_user");
    await f.getByRole("textbox", { name: "Description of client tool 1" }).fill("Ask the user a question.");
    const args = f.getByRole("group", { name: "Arguments of client tool 1" });
    await args.getByRole("button", { name: "Add an argument" }).click();
    await args.getByRole("textbox", { name: "Name of argument 1 of client tool 1" }).fill("question");
    await args.getByRole("textbox", { name: "Description of argument 1 of client tool 1" }).fill("What to ask.");
    await args.getByRole("checkbox", { name: "Required (argument 1 of client tool 1)" }).check();
    const clientTool = {
      name: "ask_user",
      description: "Ask the user a question.",
      parameters: { type: "object", properties: { question: { type: "string", description: "What to ask." } }, required: ["question"] },
    };
    expect(JSON.parse(await json(page).inputValue()).contents).toMatchObject({
      bashToolboxes: [{ tag: "SingleTool" }, { tag: "FileSystemDirectory", contents: { Path: join(copy, "helpers"), BasenameFilter: ".sh" } }],
      clientTools: [clientTool],
    });
    await noSeriousViolations(page);

    // The server names the list's second entry: the directory's row, not
    // the single tool before it.
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.getByRole("alert", { name: "The server refused the definition" }).waitFor({ timeout: patience });
    const folder = f.getByRole("textbox", { name: "Folder of directory toolbox 1" });
    await expect.poll(() => folder.getAttribute("aria-invalid"), { timeout: patience }).toBe("true");
    const why = page.locator(`#${(await folder.getAttribute("aria-describedby"))!.replace(/:/g, "\\:")}`);
    expect(await why.textContent()).toContain("is not under a directory this server allows for the programs of stored agents");
    expect(await folder.evaluate((el) => el === document.activeElement)).toBe(true);
    await f.getByRole("group", { name: "Client tools" }).scrollIntoViewIfNeeded();
    await screenshot(page, "agent-form-toolboxes");
    await noSeriousViolations(page);

    await f.getByRole("button", { name: "Remove directory toolbox 1" }).click();
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.waitForURL(/\/agents\/clerk$/, { timeout: patience });
    const saved = await definitionOf("clerk");
    expect(saved.contents.clientTools).toEqual([clientTool]);
    expect(saved.contents.bashToolboxes).toEqual([{ tag: "SingleTool", contents: { Path: join(toolsDir, "word_count") } }]);
    expect(saved.contents.mcpServers).toHaveLength(1);
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });
});
