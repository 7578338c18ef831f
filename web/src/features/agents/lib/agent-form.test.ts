import { describe, expect, it } from "vitest";
import { formFieldOf, normalLines, readForm, writeForm, type AgentForm, type ArgRow, type ClientToolRow, type DirectoryRow, type McpRow, type ParamRow } from "./agent-form";

// A definition with every kind of field: those the form edits, spelt as
// agent files spell them (a one-line prompt, a `when` that is one rule, a
// tool path as a bare string), and those it does not (a tool directory,
// narrowed helpers, unknown keys, in entries too).
const full = `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "desk",
    "flavor": "OpenAIv1",
    "modelUrl": "https://api.openai.com/v1",
    "apiKeyId": "openai",
    "modelName": "gpt-4o-mini",
    "announce": "Answers the desk.",
    "systemPrompt": "You answer the desk.",
    "toolDirectory": "tools",
    "bashToolboxes": [
      { "tag": "FileSystemDirectory", "contents": { "Path": "/opt/tools", "BasenameFilter": ".sh" } },
      { "tag": "SingleTool", "contents": "/opt/bin/clock" }
    ],
    "extraAgents": [
      { "slug": "historian", "path": "./history/agent.json" },
      { "slug": "reviewer", "as": "go_reviewer", "with": ["Go only."] }
    ],
    "clientTools": [
      { "name": "ask_user", "description": "Ask the user.", "parameters": { "type": "object", "properties": { "question": { "type": "string", "description": "What to ask." }, "choices": { "type": "array", "items": { "type": "string" } } }, "required": ["question"] } },
      { "name": "pick_file" }
    ],
    "mcpServers": [
      {
        "tag": "McpSimpleBinary",
        "contents": { "name": "browser", "executable": "npx", "args": ["some-mcp-server@latest", "--headless"], "env": { "BROWSER_HEADLESS": "1", "LANG": "C" }, "x-kept": true }
      },
      {
        "tag": "McpStreamableHttp",
        "contents": { "name": "tickets", "url": "https://tickets.example/mcp", "headers": { "Authorization": "Bearer {{param:TICKETS_TOKEN}}" } }
      }
    ],
    "approvals": [
      { "tool": "bash_deploy", "approval": "always", "note": "kept" },
      { "tool": "bash_run", "when": { "arg": "command", "matches": "^rm " } }
    ],
    "params": [{ "name": "tenant", "required": false }, { "name": "TICKETS_TOKEN", "description": "Your token.", "secret": true, "scope": "kept" }],
    "osTools": true,
    "maxSteps": 12,
    "compaction": { "threshold": 60000 },
    "x-unknown": { "kept": [1, 2, 3] }
  }
}
`;

const form = (text = full): AgentForm => {
  const f = readForm(text);
  if (!f) throw new Error("not readable");
  return f;
};

const contents = (text: string) => JSON.parse(text).contents as Record<string, unknown>;

// Every key of contents but those named is the same in both texts.
function othersUnchanged(before: string, after: string, ...changed: string[]) {
  const a = contents(before);
  const b = contents(after);
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (!changed.includes(k)) expect(b[k], k).toEqual(a[k]);
  expect(JSON.parse(after).tag).toBe(JSON.parse(before).tag);
}

describe("readForm", () => {
  it("reads the fields the form shows, in every spelling a file uses", () => {
    expect(form()).toEqual({
      slug: "desk",
      announce: "Answers the desk.",
      flavor: "OpenAIv1",
      modelUrl: "https://api.openai.com/v1",
      modelName: "gpt-4o-mini",
      apiKeyId: "openai",
      systemPrompt: "You answer the desk.",
      helpers: ["historian", "reviewer"],
      tools: ["/opt/bin/clock"],
      osTools: ["send_mail", "spawn_session", "watch_session", "list_sub_sessions", "read_session"],
      directories: [{ entry: 0, path: "/opt/tools", filter: ".sh", locked: false, json: '{"Path":"/opt/tools","BasenameFilter":".sh"}' }],
      mcpServers: [
        { entry: 0, kind: "McpSimpleBinary", name: "browser", executable: "npx", args: "some-mcp-server@latest\n--headless", env: "BROWSER_HEADLESS=1\nLANG=C", url: "", headers: "", locked: [] },
        { entry: 1, kind: "McpStreamableHttp", name: "tickets", executable: "", args: "", env: "", url: "https://tickets.example/mcp", headers: "Authorization: Bearer {{param:TICKETS_TOKEN}}", locked: [] },
      ],
      clientTools: [
        {
          entry: 0,
          name: "ask_user",
          description: "Ask the user.",
          args: [
            { key: "question", name: "question", type: "string", description: "What to ask.", required: true, extra: [] },
            { key: "choices", name: "choices", type: "array", description: "", required: false, extra: ["items"] },
          ],
          locked: false,
          schema: "",
        },
        { entry: 1, name: "pick_file", description: "", args: [], locked: false, schema: "" },
      ],
      approvals: [
        { entry: 0, tool: "bash_deploy", policy: "always", rules: [] },
        { entry: 1, tool: "bash_run", policy: "when", rules: [{ arg: "command", matches: "^rm " }] },
      ],
      params: [
        { entry: 0, name: "tenant", description: "", secret: false, required: false },
        { entry: 1, name: "TICKETS_TOKEN", description: "Your token.", secret: true, required: true },
      ],
      limits: { maxSteps: "12", maxOutputTokens: "", contextWindow: "" },
      budget: { tokens: "", costUsd: "", autoResume: false },
    });
  });

  it("reads nothing from text that is not a definition", () => {
    expect(readForm("{")).toBeUndefined();
    expect(readForm("[]")).toBeUndefined();
    expect(readForm('{"tag": "x"}')).toBeUndefined();
  });
});

describe("writeForm", () => {
  it("leaves the text exactly as it was when nothing changed (round trip)", () => {
    expect(writeForm(full, form())).toBe(full);
    const compact = JSON.stringify(JSON.parse(full));
    expect(writeForm(compact, form(compact))).toBe(compact);
  });

  it("changes one text field in place, and nothing else of the text", () => {
    const out = writeForm(full, { ...form(), modelName: "gpt-4o" });
    expect(out).toBe(full.replace('"modelName": "gpt-4o-mini"', '"modelName": "gpt-4o"'));
    expect(readForm(out)?.modelName).toBe("gpt-4o");
  });

  it("removes an optional text emptied, keeps a required one empty for the server to name", () => {
    const out = writeForm(full, { ...form(), apiKeyId: "", modelUrl: "" });
    expect(contents(out).apiKeyId).toBeUndefined();
    expect(contents(out).modelUrl).toBe("");
    othersUnchanged(full, out, "apiKeyId", "modelUrl");
  });

  it("writes the prompt as lines", () => {
    const out = writeForm(full, { ...form(), systemPrompt: "You answer the desk.\nBriefly." });
    expect(contents(out).systemPrompt).toEqual(["You answer the desk.", "Briefly."]);
    othersUnchanged(full, out, "systemPrompt");
    expect(readForm(out)?.systemPrompt).toBe("You answer the desk.\nBriefly.");
  });

  it("adds and removes helpers, keeping a narrowed helper's entry whole", () => {
    const out = writeForm(full, { ...form(), helpers: ["reviewer", "librarian"] });
    expect(contents(out).extraAgents).toEqual([{ slug: "reviewer", as: "go_reviewer", with: ["Go only."] }, { slug: "librarian" }]);
    othersUnchanged(full, out, "extraAgents");
    const none = writeForm(out, { ...form(out), helpers: [] });
    expect(contents(none).extraAgents).toBeUndefined();
  });

  it("removes the last entry of a list written on one line, and only that entry", () => {
    const line = '{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "extraAgents": [{"slug": "b"}, {"slug": "c"}], "osTools": ["send_mail"]}}';
    expect(writeForm(line, { ...form(line), helpers: ["b"] })).toBe(line.replace(', {"slug": "c"}', ""));
    expect(writeForm(line, { ...form(line), helpers: ["c"] })).toBe(line.replace('{"slug": "b"}, ', ""));
    expect(writeForm(line, { ...form(line), osTools: [] })).toBe(line.replace(', "osTools": ["send_mail"]', ""));
  });

  it("adds a helper to an agent that had none", () => {
    const bare = '{"tag": "OpenAIAgentDescription", "contents": {"slug": "a"}}';
    expect(contents(writeForm(bare, { ...form(bare), helpers: ["b"] })).extraAgents).toEqual([{ slug: "b" }]);
  });

  it("picks single tools, leaving directory toolboxes alone", () => {
    const out = writeForm(full, { ...form(), tools: ["/opt/bin/weather"] });
    expect(contents(out).bashToolboxes).toEqual([
      { tag: "FileSystemDirectory", contents: { Path: "/opt/tools", BasenameFilter: ".sh" } },
      { tag: "SingleTool", contents: { Path: "/opt/bin/weather" } },
    ]);
    othersUnchanged(full, out, "bashToolboxes");
  });

  it("lists the operating system tools chosen, in the server's order", () => {
    const out = writeForm(full, { ...form(), osTools: ["read_session", "send_mail"] });
    expect(contents(out).osTools).toEqual(["send_mail", "read_session"]);
    othersUnchanged(full, out, "osTools");
    expect(contents(writeForm(out, { ...form(out), osTools: [] })).osTools).toBeUndefined();
  });

  it("edits approvals row by row: an entry's other keys stay, removed rows go, new rows are appended", () => {
    const f = form();
    const rows = [
      { ...f.approvals[0], tool: "bash_ship" },
      { tool: "prompt_agent_historian", policy: "never" as const, rules: [] },
    ];
    const out = writeForm(full, { ...f, approvals: rows });
    expect(contents(out).approvals).toEqual([
      { tool: "bash_ship", approval: "always", note: "kept" },
      { tool: "prompt_agent_historian", approval: "never" },
    ]);
    othersUnchanged(full, out, "approvals");

    const when = writeForm(full, { ...f, approvals: [{ ...f.approvals[0], policy: "when", rules: [{ arg: "env", matches: "^prod$" }] }, f.approvals[1]] });
    expect(contents(when).approvals).toEqual([
      { tool: "bash_deploy", note: "kept", when: [{ arg: "env", matches: "^prod$" }] },
      { tool: "bash_run", when: { arg: "command", matches: "^rm " } },
    ]);

    const dropFirst = writeForm(full, { ...f, approvals: [f.approvals[1]] });
    expect(contents(dropFirst).approvals).toEqual([{ tool: "bash_run", when: { arg: "command", matches: "^rm " } }]);
    expect(contents(writeForm(full, { ...f, approvals: [] })).approvals).toBeUndefined();
  });

  it("writes limits as whole numbers, removes them emptied, and leaves a wrong one for the server to name", () => {
    const f = form();
    const out = writeForm(full, { ...f, limits: { maxSteps: "", maxOutputTokens: "4096", contextWindow: "32k" } });
    const c = contents(out);
    expect(c.maxSteps).toBeUndefined();
    expect(c.maxOutputTokens).toBe(4096);
    expect(c.contextWindow).toBe("32k");
    othersUnchanged(full, out, "maxSteps", "maxOutputTokens", "contextWindow");
    expect(readForm(out)?.limits).toEqual({ maxSteps: "", maxOutputTokens: "4096", contextWindow: "32k" });
  });

  it("sets the budget key by key, and removes it when nothing is left set", () => {
    const f = form();
    const out = writeForm(full, { ...f, budget: { tokens: "200000", costUsd: "1.50", autoResume: false } });
    expect(contents(out).budget).toEqual({ tokens: 200000, costUsd: 1.5 });
    othersUnchanged(full, out, "budget");
    const withNote = out.replace('"costUsd": 1.5', '"costUsd": 1.5, "note": "kept"');
    const resumed = writeForm(withNote, { ...form(withNote), budget: { tokens: "", costUsd: "1.50", autoResume: true } });
    expect(contents(resumed).budget).toEqual({ costUsd: 1.5, note: "kept", autoResume: true });
    expect(readForm(resumed)?.budget).toEqual({ tokens: "", costUsd: "1.5", autoResume: true });
    expect(contents(writeForm(out, { ...form(out), budget: { tokens: "", costUsd: "", autoResume: false } })).budget).toBeUndefined();
    expect(contents(writeForm(full, { ...f, budget: { tokens: "lots", costUsd: "", autoResume: false } })).budget).toEqual({ tokens: "lots" });
  });

  it("edits an MCP server field by field, in place, keeping the keys the form does not show", () => {
    const f = form();
    const edit = (i: number, patch: Partial<McpRow>) => writeForm(full, { ...f, mcpServers: f.mcpServers.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
    expect(edit(0, { name: "web" })).toBe(full.replace('"name": "browser"', '"name": "web"'));
    expect(edit(0, { env: "BROWSER_HEADLESS=0\nLANG=C" })).toBe(full.replace('"BROWSER_HEADLESS": "1"', '"BROWSER_HEADLESS": "0"'));
    expect(edit(1, { url: "https://desk.example/mcp" })).toBe(full.replace("https://tickets.example/mcp", "https://desk.example/mcp"));
    const args = edit(0, { args: "other-server\n--port=9\n\"quoted arg\"" });
    expect(contents(args).mcpServers).toEqual([
      { tag: "McpSimpleBinary", contents: { name: "browser", executable: "npx", args: ["other-server", "--port=9", '"quoted arg"'], env: { BROWSER_HEADLESS: "1", LANG: "C" }, "x-kept": true } },
      (contents(full).mcpServers as unknown[])[1],
    ]);
    othersUnchanged(full, args, "mcpServers");
    expect(readForm(args)?.mcpServers[0].args).toBe("other-server\n--port=9\n\"quoted arg\"");

    // A header added and one dropped, key by key; emptied, the object goes.
    const headers = edit(1, { headers: "X-Tenant: {{param:tenant}}\n\n" });
    expect((contents(headers).mcpServers as { contents: unknown }[])[1].contents).toEqual({ name: "tickets", url: "https://tickets.example/mcp", headers: { "X-Tenant": "{{param:tenant}}" } });
    expect((contents(edit(0, { env: "", args: "" })).mcpServers as { contents: unknown }[])[0].contents).toEqual({ name: "browser", executable: "npx", "x-kept": true });
    // Reordered, the env is written anew in the new order.
    const reordered = edit(0, { env: "LANG=C\nBROWSER_HEADLESS=1" });
    expect(Object.keys((contents(reordered).mcpServers as { contents: { env: object } }[])[0].contents.env)).toEqual(["LANG", "BROWSER_HEADLESS"]);
  });

  it("adds and removes MCP servers, and switches a server's kind", () => {
    const f = form();
    const added: McpRow = { kind: "McpStreamableHttp", name: "wiki", executable: "", args: "", env: "", url: "https://wiki.example/mcp", headers: "Authorization: Bearer x", locked: [] };
    const out = writeForm(full, { ...f, mcpServers: [f.mcpServers[1], added] });
    expect(contents(out).mcpServers).toEqual([
      (contents(full).mcpServers as unknown[])[1],
      { tag: "McpStreamableHttp", contents: { name: "wiki", url: "https://wiki.example/mcp", headers: { Authorization: "Bearer x" } } },
    ]);
    othersUnchanged(full, out, "mcpServers");
    expect(contents(writeForm(full, { ...f, mcpServers: [] })).mcpServers).toBeUndefined();
    const bare = '{"tag": "OpenAIAgentDescription", "contents": {"slug": "a"}}';
    const first = writeForm(bare, { ...form(bare), mcpServers: [{ ...added, kind: "McpSimpleBinary", name: "fs", executable: "mcp-fs", args: "--root\n/srv" }] });
    expect(contents(first).mcpServers).toEqual([{ tag: "McpSimpleBinary", contents: { name: "fs", executable: "mcp-fs", args: ["--root", "/srv"] } }]);

    // The program's fields go, the unknown key stays, the URL is written
    // even empty for the server to name.
    const switched = writeForm(full, { ...f, mcpServers: [{ ...f.mcpServers[0], kind: "McpStreamableHttp" }, f.mcpServers[1]] });
    expect((contents(switched).mcpServers as unknown[])[0]).toEqual({ tag: "McpStreamableHttp", contents: { name: "browser", "x-kept": true, url: "" } });
    othersUnchanged(full, switched, "mcpServers");
    expect(readForm(switched)?.mcpServers[0]).toMatchObject({ kind: "McpStreamableHttp", name: "browser", url: "", args: "", env: "" });
  });

  it("leaves lists that lines cannot hold read-only and as they are", () => {
    const odd = full.replace('"args": ["some-mcp-server@latest", "--headless"]', '"args": ["two\\nlines", ""]');
    const row = form(odd).mcpServers[0];
    expect(row.locked).toEqual(["args"]);
    expect(row.args).toBe('["two\\nlines",""]');
    const out = writeForm(odd, { ...form(odd), mcpServers: [{ ...row, name: "web" }, form(odd).mcpServers[1]] });
    expect(out).toBe(odd.replace('"name": "browser"', '"name": "web"'));
  });

  it("edits a directory toolbox in place, under the keys it spells, leaving the single tools alone", () => {
    const f = form();
    const edit = (rows: DirectoryRow[]) => writeForm(full, { ...f, directories: rows });
    expect(edit([{ ...f.directories[0], path: "/srv/tools" }])).toBe(full.replace('"Path": "/opt/tools"', '"Path": "/srv/tools"'));
    expect(edit([{ ...f.directories[0], filter: "" }])).toBe(full.replace(', "BasenameFilter": ".sh"', ""));
    const lower = full.replace('"Path": "/opt/tools", "BasenameFilter": ".sh"', '"path": "/opt/tools", "activation": "always"');
    const lf = form(lower);
    expect(lf.directories[0]).toMatchObject({ path: "/opt/tools", filter: "" });
    const out = writeForm(lower, { ...lf, directories: [{ ...lf.directories[0], path: "/srv/tools", filter: "-tool" }] });
    expect((contents(out).bashToolboxes as unknown[])[0]).toEqual({ tag: "FileSystemDirectory", contents: { path: "/srv/tools", activation: "always", BasenameFilter: "-tool" } });
    othersUnchanged(lower, out, "bashToolboxes");
  });

  it("adds and removes directory toolboxes among single tools, and a change of both lands right", () => {
    const f = form();
    const added: DirectoryRow = { path: "tools/dev", filter: "", locked: false, json: "" };
    const out = writeForm(full, { ...f, directories: [added] });
    expect(contents(out).bashToolboxes).toEqual([
      { tag: "SingleTool", contents: "/opt/bin/clock" },
      { tag: "FileSystemDirectory", contents: { Path: "tools/dev" } },
    ]);
    othersUnchanged(full, out, "bashToolboxes");
    expect(readForm(out)?.directories).toEqual([{ entry: 1, path: "tools/dev", filter: "", locked: false, json: '{"Path":"tools/dev"}' }]);
    // The last directory gone, the single tool stays; the last of both
    // gone, so does the list.
    expect(contents(writeForm(full, { ...f, directories: [] })).bashToolboxes).toEqual([{ tag: "SingleTool", contents: "/opt/bin/clock" }]);
    expect(contents(writeForm(full, { ...f, directories: [], tools: [] })).bashToolboxes).toBeUndefined();
    // A directory edited and a single tool swapped in one write.
    const both = writeForm(full, { ...f, directories: [{ ...f.directories[0], filter: ".py" }], tools: ["/opt/bin/weather"] });
    expect(contents(both).bashToolboxes).toEqual([
      { tag: "FileSystemDirectory", contents: { Path: "/opt/tools", BasenameFilter: ".py" } },
      { tag: "SingleTool", contents: { Path: "/opt/bin/weather" } },
    ]);
    const bare = '{"tag": "OpenAIAgentDescription", "contents": {"slug": "a"}}';
    expect(contents(writeForm(bare, { ...form(bare), directories: [{ ...added, filter: ".sh" }] })).bashToolboxes).toEqual([
      { tag: "FileSystemDirectory", contents: { Path: "tools/dev", BasenameFilter: ".sh" } },
    ]);
  });

  it("leaves a directory toolbox it cannot hold read-only", () => {
    const odd = full.replace('"Path": "/opt/tools", "BasenameFilter": ".sh"', '"Path": ["/opt/tools"]');
    const row = form(odd).directories[0];
    expect(row).toMatchObject({ locked: true, json: '{"Path":["/opt/tools"]}' });
    expect(writeForm(odd, form(odd))).toBe(odd);
    expect(contents(writeForm(odd, { ...form(odd), directories: [] })).bashToolboxes).toEqual([{ tag: "SingleTool", contents: "/opt/bin/clock" }]);
  });

  it("edits a client tool and its arguments in place, keeping what the form does not show", () => {
    const f = form();
    const edit = (patch: Partial<ClientToolRow>) => writeForm(full, { ...f, clientTools: [{ ...f.clientTools[0], ...patch }, f.clientTools[1]] });
    const args = f.clientTools[0].args;
    const withArgs = (...rows: ArgRow[]) => edit({ args: rows });
    const tool = (text: string) => (contents(text).clientTools as { parameters?: unknown }[])[0];
    expect(edit({ name: "ask" })).toBe(full.replace('"name": "ask_user"', '"name": "ask"'));
    expect(edit({ description: "" })).toBe(full.replace(' "description": "Ask the user.",', ""));
    // Renamed in place: the argument keeps its place and its other keys.
    expect(withArgs(args[0], { ...args[1], name: "options" })).toBe(full.replace('"choices": {', '"options": {'));
    expect(withArgs({ ...args[0], description: "" }, args[1])).toBe(full.replace(', "description": "What to ask."', ""));
    expect(withArgs(args[0], { ...args[1], type: "string" })).toBe(full.replace('"type": "array"', '"type": "string"'));
    expect(tool(withArgs({ ...args[0], name: "q" }, { ...args[1], required: true })).parameters).toEqual({
      type: "object",
      properties: { q: { type: "string", description: "What to ask." }, choices: { type: "array", items: { type: "string" } } },
      required: ["q", "choices"],
    });
    expect(tool(withArgs(args[1], { name: "urgent", type: "boolean", description: "", required: false, extra: [] })).parameters).toEqual({
      type: "object",
      properties: { choices: { type: "array", items: { type: "string" } }, urgent: { type: "boolean" } },
    });
    // With no argument left, the schema goes; one that holds more stays.
    expect(tool(withArgs()).parameters).toBeUndefined();
    const more = full.replace('"required": ["question"] }', '"required": ["question"], "additionalProperties": false }');
    const mf = form(more);
    expect((contents(writeForm(more, { ...mf, clientTools: [{ ...mf.clientTools[0], args: [] }, mf.clientTools[1]] })).clientTools as { parameters?: unknown }[])[0].parameters).toEqual({
      type: "object",
      properties: {},
      additionalProperties: false,
    });
    othersUnchanged(full, withArgs(args[0]), "clientTools");
  });

  it("adds and removes client tools", () => {
    const f = form();
    const added: ClientToolRow = {
      name: "confirm",
      description: "Ask for a yes or a no.",
      args: [{ name: "question", type: "string", description: "", required: true, extra: [] }],
      locked: false,
      schema: "",
    };
    const out = writeForm(full, { ...f, clientTools: [f.clientTools[1], added] });
    expect(contents(out).clientTools).toEqual([
      { name: "pick_file" },
      { name: "confirm", description: "Ask for a yes or a no.", parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] } },
    ]);
    othersUnchanged(full, out, "clientTools");
    // A tool that took none is given its first argument.
    const first = writeForm(full, { ...f, clientTools: [f.clientTools[0], { ...f.clientTools[1], args: added.args }] });
    expect((contents(first).clientTools as unknown[])[1]).toEqual({ name: "pick_file", parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] } });
    expect(contents(writeForm(full, { ...f, clientTools: [] })).clientTools).toBeUndefined();
  });

  it("leaves a schema the arguments cannot hold read-only and as it is", () => {
    const odd = full.replace('"question": { "type": "string", "description": "What to ask." }', '"question": { "type": ["string", "null"] }');
    const row = form(odd).clientTools[0];
    expect(row).toMatchObject({ locked: true, args: [] });
    expect(JSON.parse(row.schema).properties.question.type).toEqual(["string", "null"]);
    expect(writeForm(odd, { ...form(odd), clientTools: [{ ...row, name: "ask" }, form(odd).clientTools[1]] })).toBe(odd.replace('"name": "ask_user"', '"name": "ask"'));
    for (const schema of ['"parameters": []', '"parameters": { "type": "string" }', '"parameters": { "required": ["nope"] }', '"parameters": { "properties": { "a": 1 } }'])
      expect(form(full.replace('"name": "pick_file"', `"name": "pick_file", ${schema}`)).clientTools[1].locked, schema).toBe(true);
  });

  it("reads lines of env and headers as the text will hold them", () => {
    expect(normalLines("env", "A=1\n\nB\nA=2\nC=x=y")).toBe("A=2\nB=\nC=x=y");
    expect(normalLines("headers", "Authorization:Bearer x  \nX-A")).toBe("Authorization: Bearer x\nX-A: ");
    expect(normalLines("args", "a\n\nb")).toBe("a\n\nb");
  });

  it("edits params row by row: a flag is written when it is not its default or the entry spelt it", () => {
    const f = form();
    const edit = (rows: ParamRow[]) => writeForm(full, { ...f, params: rows });
    expect(edit([{ ...f.params[0], required: true }, f.params[1]])).toBe(full.replace('"required": false', '"required": true'));
    expect(edit([f.params[0], { ...f.params[1], description: "" }])).toBe(full.replace(', "description": "Your token."', ""));
    const out = edit([
      { ...f.params[1], secret: false },
      { name: "region", description: "Where.", secret: false, required: true },
      { name: "debug", description: "", secret: true, required: false },
    ]);
    expect(contents(out).params).toEqual([
      { name: "TICKETS_TOKEN", description: "Your token.", secret: false, scope: "kept" },
      { name: "region", description: "Where." },
      { name: "debug", secret: true, required: false },
    ]);
    othersUnchanged(full, out, "params");
    expect(contents(edit([])).params).toBeUndefined();
  });

  it("reads agents-exe's parameters when params is absent, and writes them back there", () => {
    const exe = full.replace('"params": [', '"parameters": [');
    const f = form(exe);
    expect(f.params.map((p) => p.name)).toEqual(["tenant", "TICKETS_TOKEN"]);
    expect(writeForm(exe, f)).toBe(exe);
    const out = writeForm(exe, { ...f, params: [{ ...f.params[0], name: "org" }] });
    expect(contents(out).params).toBeUndefined();
    expect(contents(out).parameters).toEqual([{ name: "org", required: false }]);
    othersUnchanged(exe, out, "parameters");
    // Both there: the form edits params, parameters stays.
    const both = full.replace('"osTools"', '"parameters": [{ "name": "extra" }],\n    "osTools"');
    const changed = writeForm(both, { ...form(both), params: [] });
    expect(contents(changed).params).toBeUndefined();
    expect(contents(changed).parameters).toEqual([{ name: "extra" }]);
  });

  it("keeps the text's indent and line ends", () => {
    const tabs = full.replace(/^( +)/gm, (s) => " ".repeat(s.length * 2)).replace(/\n/g, "\r\n");
    const out = writeForm(tabs, { ...form(tabs), helpers: [...form(tabs).helpers, "librarian"] });
    expect(out).toContain('\r\n            {\r\n                "slug": "librarian"\r\n            }\r\n');
    expect(out).not.toMatch(/[^\r]\n/);
    expect(JSON.parse(out).contents.extraAgents).toHaveLength(3);
    othersUnchanged(tabs, out, "extraAgents");
  });

  it("indents with tabs a text indented with tabs", () => {
    const tabs = full.replace(/^( +)/gm, (s) => "\t".repeat(s.length / 2));
    const out = writeForm(tabs, { ...form(tabs), osTools: ["send_mail"] });
    expect(out).toContain('\n\t\t"osTools": [\n\t\t\t"send_mail"\n\t\t],\n');
    othersUnchanged(tabs, out, "osTools");
  });

  it("returns text it cannot read unchanged", () => {
    expect(writeForm("{oops", form())).toBe("{oops");
  });
});

describe("formFieldOf", () => {
  it("maps the server's field to the form's", () => {
    expect(formFieldOf("contents.modelUrl")).toEqual({ field: "modelUrl" });
    expect(formFieldOf("contents.approvals[1].tool")).toEqual({ field: "approvals", index: 1 });
    expect(formFieldOf("contents.extraAgents[0].bindings.X")).toEqual({ field: "helpers", index: 0 });
    expect(formFieldOf("contents.bashToolboxes[2]")).toEqual({ field: "tools", index: 2 });
    expect(formFieldOf("contents.maxSteps")).toEqual({ field: "maxSteps" });
    expect(formFieldOf("contents.budget.costUsd")).toEqual({ field: "budget", key: "costUsd" });
    expect(formFieldOf("contents.budget")).toEqual({ field: "budget" });
    expect(formFieldOf("contents.mcpServers[1].contents.name")).toEqual({ field: "mcpServers", index: 1, key: "name" });
    expect(formFieldOf("contents.mcpServers[0].contents.headers.Authorization")).toEqual({ field: "mcpServers", index: 0, key: "headers" });
    expect(formFieldOf("contents.mcpServers[0].tag")).toEqual({ field: "mcpServers", index: 0, key: "tag" });
    expect(formFieldOf("contents.mcpServers[0].contents")).toEqual({ field: "mcpServers", index: 0 });
    expect(formFieldOf("contents.params[2].name")).toEqual({ field: "params", index: 2, key: "name" });
    expect(formFieldOf("contents.parameters[0].name")).toEqual({ field: "params", index: 0, key: "name" });
  });

  it("maps a client tool's field, and tells a directory toolbox from a single tool", () => {
    expect(formFieldOf("contents.clientTools[1].name")).toEqual({ field: "clientTools", index: 1, key: "name" });
    expect(formFieldOf("contents.clientTools[0].parameters.type")).toEqual({ field: "clientTools", index: 0, key: "parameters" });
    const mixed = full.replace('"bashToolboxes": [', '"bashToolboxes": [\n      { "tag": "SingleTool", "contents": "/opt/bin/first" },');
    expect(formFieldOf("contents.bashToolboxes[1].contents.Path", mixed)).toEqual({ field: "directories", index: 0, key: "path" });
    expect(formFieldOf("contents.bashToolboxes[1].contents.basenameFilter", mixed)).toEqual({ field: "directories", index: 0, key: "filter" });
    expect(formFieldOf("contents.bashToolboxes[1]", mixed)).toEqual({ field: "directories", index: 0 });
    expect(formFieldOf("contents.bashToolboxes[2]", mixed)).toEqual({ field: "tools", index: 2 });
    expect(formFieldOf("contents.bashToolboxes[1]")).toEqual({ field: "tools", index: 1 });
  });

  it("leaves fields the form does not show to the JSON editor", () => {
    expect(formFieldOf("contents.toolDirectory")).toBeUndefined();
    expect(formFieldOf("contents")).toBeUndefined();
    expect(formFieldOf(undefined)).toBeUndefined();
  });
});

// Every agent file of the repository (the examples, the test agents, the
// agent file parser's test data) goes through the form and comes back as
// it was, and a change of one field changes that field alone.
describe("the repository's agent files through the form", () => {
  const found = import.meta.glob<string>(["../../../../../examples/**/*.json", "../../../../e2e/agents/*.json", "../../../../../backend/internal/agentfile/testdata/**/*.json"], {
    query: "?raw",
    import: "default",
    eager: true,
  });
  const files = Object.entries(found)
    .map(([f, text]) => ({ f, text }))
    .filter(({ text }) => readForm(text) !== undefined);

  it("finds enough of them to mean something", () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it("round-trips each unchanged, and changes one field alone", () => {
    for (const { f, text } of files) {
      const read = readForm(text)!;
      expect(writeForm(text, read), f).toBe(text);
      const out = writeForm(text, { ...read, modelName: read.modelName + "-x", limits: { ...read.limits, maxSteps: "7" } });
      const [a, b] = [JSON.parse(text).contents, JSON.parse(out).contents];
      expect({ ...b, modelName: a.modelName, maxSteps: a.maxSteps }, f).toEqual(a);
      expect(b.modelName, f).toBe(read.modelName + "-x");
      expect(b.maxSteps, f).toBe(7);
    }
  });
});
