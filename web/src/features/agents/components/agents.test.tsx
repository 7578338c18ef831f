import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router";
import { afterEach, describe, expect, it } from "vitest";
import {
  AgentDescriptorSchema,
  AgentService,
  AgentSource,
  AgentVersionSchema,
  ToolKind,
  type AgentDescriptor,
  type AgentVersion,
  type CreateAgentRequest,
  type DeleteAgentRequest,
  type UpdateAgentRequest,
} from "../../../gen/agents/v1/agent_pb";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";
import { EditAgentPage, NewAgentPage } from "./agent-editor";
import { AgentPage } from "./agent-page";
import { AgentVersionsPage } from "./agent-versions";
import { AgentsPage } from "./agents-page";
import { seriousViolations } from "../../../testing/a11y";
import { Where, where } from "../../../testing/where";

afterEach(cleanup);

const definition = (slug: string, announce: string) =>
  JSON.stringify(
    { tag: "OpenAIAgentDescription", contents: { slug, flavor: "OpenAIv1", modelUrl: "https://models.invalid/v1", apiKeyId: "k", modelName: "m", announce } },
    null,
    2,
  );

// fakeServer keeps stored agents as the server does: versions that grow,
// definitions checked (a missing modelUrl is refused, naming the field),
// a file agent read-only.
function fakeServer() {
  const created: CreateAgentRequest[] = [];
  const updated: UpdateAgentRequest[] = [];
  const deleted: DeleteAgentRequest[] = [];
  const file = create(AgentDescriptorSchema, {
    slug: "filed",
    announce: "From a file",
    source: AgentSource.FILE,
    file: "/etc/agents/filed.json",
    model: { name: "gpt-4o", contextWindow: 128000n, maxOutputTokens: 16384n, compactThreshold: 113000n, limitsSource: "builtin", apiKeyId: "openai", apiKeyPresent: true },
    tools: [
      { name: "bash_clock", description: "Tells the time.", kind: ToolKind.BASH, source: "/opt/tools/clock" },
      // As the server describes them: a client or a system tool's source is its kind.
      { name: "ask_user", description: "Asks the user.", kind: ToolKind.CLIENT, source: "client" },
      { name: "os_send_mail", description: "Sends mail.", kind: ToolKind.SYSTEM, source: "system" },
    ],
    budget: { tokens: 50000n, costUsd: 1.5 },
  });
  const stored = new Map<string, AgentVersion[]>([
    [
      "writer",
      [
        create(AgentVersionSchema, { slug: "writer", version: 2n, definition: definition("writer", "Writes, v2"), current: true, author: "root", createTime: timestampFromMs(2000) }),
        create(AgentVersionSchema, { slug: "writer", version: 1n, definition: definition("writer", "Writes, v1"), author: "root", createTime: timestampFromMs(1000) }),
      ],
    ],
  ]);
  const descriptor = (slug: string): AgentDescriptor | undefined => {
    if (slug === file.slug) return file;
    const v = stored.get(slug)?.find((x) => x.current);
    if (!v) return undefined;
    return create(AgentDescriptorSchema, {
      slug,
      announce: JSON.parse(v.definition).contents.announce,
      source: AgentSource.STORED,
      version: v.version,
      definition: v.definition,
      updateTime: v.createTime,
    });
  };
  const check = (text: string) => {
    const c = JSON.parse(text).contents;
    if (!c.modelUrl)
      throw new ConnectError("contents.modelUrl: required", Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: "contents.modelUrl" } }) },
      ]);
    const ghost = (c.extraAgents ?? []).findIndex((h: { slug: string }) => h.slug !== "filed" && !stored.has(h.slug));
    if (ghost >= 0)
      throw new ConnectError(`contents.extraAgents[${ghost}].slug: unknown agent "${c.extraAgents[ghost].slug}"`, Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: `contents.extraAgents[${ghost}].slug` } }) },
      ]);
    const tools = ["bash_clock", ...(c.extraAgents ?? []).map((h: { slug: string }) => `prompt_agent_${h.slug}`)];
    const bad = (c.approvals ?? []).findIndex((a: { tool: string }) => !tools.includes(a.tool));
    if (bad >= 0)
      throw new ConnectError(`contents.approvals[${bad}].tool: the agent has no tool "${c.approvals[bad].tool}"`, Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: `contents.approvals[${bad}].tool` } }) },
      ]);
    const badServer = (c.mcpServers ?? []).findIndex((m: { contents: { name: string } }) => !/^[A-Za-z0-9_-]+$/.test(m.contents.name));
    if (badServer >= 0)
      throw new ConnectError(`contents.mcpServers[${badServer}].contents.name: "${c.mcpServers[badServer].contents.name}" must be letters, digits, - and _ only`, Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: `contents.mcpServers[${badServer}].contents.name` } }) },
      ]);
    const badParam = (c.params ?? []).findIndex((p: { name: string }) => /\s/.test(p.name));
    if (badParam >= 0)
      throw new ConnectError(`contents.params[${badParam}].name: "${c.params[badParam].name}" must not contain spaces`, Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: `contents.params[${badParam}].name` } }) },
      ]);
    const badClient = (c.clientTools ?? []).findIndex((t: { name: string }) => !/^[A-Za-z0-9_-]{1,64}$/.test(t.name));
    if (badClient >= 0)
      throw new ConnectError(`contents.clientTools[${badClient}].name: "${c.clientTools[badClient].name}": use 1 to 64 letters, digits, "-" or "_"`, Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: `contents.clientTools[${badClient}].name` } }) },
      ]);
    const badSchema = (c.clientTools ?? []).findIndex((t: { parameters?: { type?: string } }) => t.parameters?.type !== undefined && t.parameters.type !== "object");
    if (badSchema >= 0)
      throw new ConnectError(`contents.clientTools[${badSchema}].parameters.type: must be "object" (tool arguments are an object)`, Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: `contents.clientTools[${badSchema}].parameters.type` } }) },
      ]);
    // As a server that allows /opt for stored agents' programs.
    const outside = (c.bashToolboxes ?? []).findIndex((b: { contents: { Path: string } | string }) => !(typeof b.contents === "string" ? b.contents : b.contents.Path).startsWith("/opt/"));
    if (outside >= 0)
      throw new ConnectError(`contents.bashToolboxes[${outside}]: not under a directory this server allows for the programs of stored agents (/opt)`, Code.InvalidArgument, undefined, [
        { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: `contents.bashToolboxes[${outside}]` } }) },
      ]);
    return c.slug as string;
  };
  const write = (slug: string, text: string) => {
    const old = (stored.get(slug) ?? []).map((v) => ({ ...v, current: false }));
    stored.set(slug, [create(AgentVersionSchema, { slug, version: BigInt(old.length + 1), definition: text, current: true }), ...old]);
    return { agent: descriptor(slug) };
  };
  const transport = createRouterTransport(({ service }) => {
    service(AgentService, {
      listAgents: () => ({ agents: [file, ...[...stored.keys()].map(descriptor).filter((a) => !!a)].sort((a, b) => a.slug.localeCompare(b.slug)) }),
      getAgent: (req) => {
        const a = descriptor(req.slug);
        if (!a) throw new ConnectError(`no agent ${req.slug}`, Code.NotFound);
        return { agent: a };
      },
      createAgent: (req) => {
        created.push(req);
        return write(check(req.definition), req.definition);
      },
      updateAgent: (req) => {
        updated.push(req);
        if (req.slug === file.slug) throw new ConnectError("filed comes from an agent file: read-only", Code.AlreadyExists);
        check(req.definition);
        return write(req.slug, req.definition);
      },
      deleteAgent: (req) => {
        deleted.push(req);
        const vs = stored.get(req.slug) ?? [];
        stored.set(req.slug, vs.map((v) => ({ ...v, current: false })));
        return { slug: req.slug, version: vs[0]?.version ?? 0n };
      },
      listAgentVersions: (req) => ({ versions: stored.get(req.slug) ?? [] }),
    });
  });
  return { transport, created, updated, deleted };
}

function mount(path: string, server = fakeServer()) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const view = render(
    <TransportProvider transport={server.transport}>
      <QueryClientProvider client={qc}>
        <MemoryRouter initialEntries={[path]}>
          <Where />
          <Routes>
            <Route path="/agents" element={<AgentsPage />} />
            <Route path="/agents/+new" element={<NewAgentPage />} />
            <Route path="/agents/:slug" element={<AgentPage />} />
            <Route path="/agents/:slug/edit" element={<EditAgentPage />} />
            <Route path="/agents/:slug/versions" element={<AgentVersionsPage />} />
          </Routes>
        </MemoryRouter>
      </QueryClientProvider>
    </TransportProvider>,
  );
  return { ...server, view };
}

const editor = () => screen.getByRole("textbox", { name: "Agent definition (JSON)" }) as HTMLTextAreaElement;

describe("the agents page", () => {
  it("lists every agent with its source and, stored, its version", async () => {
    const { view } = mount("/agents");
    const list = await screen.findByRole("list", { name: "Agents" });
    const [filed, writer] = within(list).getAllByRole("listitem");
    expect(filed.textContent).toContain("filed");
    expect(filed.textContent).toContain("file");
    expect(filed.textContent).not.toMatch(/v\d/);
    expect(writer.textContent).toContain("stored");
    expect(writer.textContent).toContain("v2");
    expect(within(writer).getByRole("link", { name: "writer" }).getAttribute("href")).toBe("/agents/writer");
    expect(screen.getByRole("link", { name: "New agent" }).getAttribute("href")).toBe("/agents/+new");
    expect(await seriousViolations(view.container)).toEqual([]);
  });

  it("creates an agent, marking the field the server refused where it belongs", async () => {
    const { created, view } = mount("/agents/+new");
    const text = definition("poet", "Rhymes").replace(/\n\s*"modelUrl": "[^"]*",/, "");
    fireEvent.change(editor(), { target: { value: text } });
    fireEvent.click(screen.getByRole("button", { name: "Create the agent" }));
    const alert = await screen.findByRole("alert", { name: "The server refused the definition" });
    expect(alert.textContent).toContain("contents.modelUrl: required");
    // Missing, the field is marked at the object it belongs in.
    expect(alert.textContent).toContain("marked at the object it belongs in, line 3");
    expect(editor().getAttribute("aria-invalid")).toBe("true");
    expect(view.container.querySelector(".json-backdrop mark")?.textContent).toBe('"contents"');
    expect(view.container.querySelector(".json-gutter .marked")?.textContent).toBe("3");
    // The form's field says it too, and has the focus.
    const endpoint = screen.getByRole("textbox", { name: "Endpoint" });
    expect(endpoint.getAttribute("aria-invalid")).toBe("true");
    expect(document.getElementById(endpoint.getAttribute("aria-describedby")!)?.textContent).toBe("required");
    expect(document.activeElement).toBe(endpoint);
    expect(await seriousViolations(view.container)).toEqual([]);

    fireEvent.change(editor(), { target: { value: definition("poet", "Rhymes") } });
    fireEvent.click(screen.getByRole("button", { name: "Create the agent" }));
    await waitFor(() => expect(where()).toBe("/agents/poet"));
    expect(created).toHaveLength(2);
  });

  it("says where text that is not JSON goes wrong, and sends nothing", async () => {
    const { created, view } = mount("/agents/+new");
    fireEvent.change(editor(), { target: { value: '{\n  "tag": "x"\n  "contents": {}\n}' } });
    expect((await screen.findByRole("alert")).textContent).toBe("Not JSON: line 3, column 3: comma expected");
    fireEvent.click(screen.getByRole("button", { name: "Create the agent" }));
    expect(view.container.querySelector(".json-gutter .marked")?.textContent).toBe("3");
    expect(created).toEqual([]);
  });

  it("edits a stored agent from its definition, as a new version of the one read", async () => {
    const { updated } = mount("/agents/writer");
    await screen.findByText("Writes, v2");
    fireEvent.click(within(screen.getByRole("toolbar", { name: "Agent actions" })).getByRole("link", { name: "Edit" }));
    await waitFor(() => expect(editor().value).toContain('"announce": "Writes, v2"'));
    fireEvent.change(editor(), { target: { value: editor().value.replace("Writes, v2", "Writes, v3") } });
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await waitFor(() => expect(where()).toBe("/agents/writer"));
    expect(updated[0]).toMatchObject({ slug: "writer", expectedVersion: 2n });
    await screen.findByText("Writes, v3");
  });

  it("edits through the form: each change is written into the definition, every other field kept", async () => {
    const { updated, view } = mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    const before = JSON.parse(editor().value);
    // The form and the JSON hold one definition: a change in the JSON
    // shows in the form.
    fireEvent.change(editor(), { target: { value: editor().value.replace('"modelName": "m"', '"modelName": "m2"') } });
    expect((within(form).getByRole("textbox", { name: "Model name" }) as HTMLInputElement).value).toBe("m2");

    fireEvent.change(within(form).getByRole("textbox", { name: "System prompt" }), { target: { value: "You write.\nBriefly." } });
    // Helpers and tools are picked from what the server has.
    fireEvent.click(within(form).getByRole("checkbox", { name: "filed" }));
    fireEvent.click(within(form).getByRole("checkbox", { name: "bash_clock" }));
    fireEvent.click(within(form).getByRole("checkbox", { name: "os_send_mail" }));
    fireEvent.click(within(form).getByRole("button", { name: "Add an approval" }));
    fireEvent.change(within(form).getByRole("combobox", { name: "Tool of approval 1" }), { target: { value: "bash_clock" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "Most steps a run" }), { target: { value: "8" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "Most US dollars" }), { target: { value: "2.5" } });
    // The key is named, never its value; the server says whether it has it.
    fireEvent.change(within(form).getByRole("combobox", { name: "API key" }), { target: { value: "openai" } });
    expect(within(form).getByText(/The server has this key\./)).toBeTruthy();

    const after = JSON.parse(editor().value);
    expect(after.contents).toEqual({
      ...before.contents,
      modelName: "m2",
      apiKeyId: "openai",
      systemPrompt: ["You write.", "Briefly."],
      extraAgents: [{ slug: "filed" }],
      bashToolboxes: [{ tag: "SingleTool", contents: { Path: "/opt/tools/clock" } }],
      osTools: ["send_mail"],
      approvals: [{ tool: "bash_clock", approval: "always" }],
      maxSteps: 8,
      budget: { costUsd: 2.5 },
    });
    expect(await seriousViolations(view.container)).toEqual([]);
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await waitFor(() => expect(where()).toBe("/agents/writer"));
    expect(JSON.parse(updated[0].definition)).toEqual(after);
  });

  it("shows a refusal next to the form's field it names", async () => {
    const { view } = mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    fireEvent.click(within(form).getByRole("button", { name: "Add an approval" }));
    fireEvent.click(within(form).getByRole("button", { name: "Add an approval" }));
    fireEvent.change(within(form).getByRole("combobox", { name: "Tool of approval 1" }), { target: { value: "bash_clock" } });
    fireEvent.change(within(form).getByRole("combobox", { name: "Tool of approval 2" }), { target: { value: "bash_deploy" } });
    fireEvent.change(within(form).getByRole("combobox", { name: "Policy of approval 2" }), { target: { value: "when" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "Argument" }), { target: { value: "env" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "Matches (regular expression)" }), { target: { value: "^prod$" } });
    expect(JSON.parse(editor().value).contents.approvals[1]).toEqual({ tool: "bash_deploy", when: [{ arg: "env", matches: "^prod$" }] });
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await screen.findByRole("alert", { name: "The server refused the definition" });
    const tool = within(form).getByRole("combobox", { name: "Tool of approval 2" });
    expect(tool.getAttribute("aria-invalid")).toBe("true");
    expect(document.getElementById(tool.getAttribute("aria-describedby")!)?.textContent).toBe('the agent has no tool "bash_deploy"');
    expect(within(form).getByRole("combobox", { name: "Tool of approval 1" }).getAttribute("aria-invalid")).toBeNull();
    expect(document.activeElement).toBe(tool);
    expect(await seriousViolations(view.container)).toEqual([]);
    // Removing the row removes its entry, and the save goes through.
    fireEvent.click(within(form).getByRole("button", { name: "Remove approval 2" }));
    expect(JSON.parse(editor().value).contents.approvals).toEqual([{ tool: "bash_clock", approval: "always" }]);
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await waitFor(() => expect(where()).toBe("/agents/writer"));
  });

  it("adds an MCP server and a param through the form, and shows a refused server name at its row", async () => {
    const { updated, view } = mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    const before = JSON.parse(editor().value).contents;
    fireEvent.click(within(form).getByRole("button", { name: "Add an MCP server" }));
    fireEvent.change(within(form).getByRole("textbox", { name: "Name of MCP server 1" }), { target: { value: "tickets desk" } });
    expect(within(form).getByText(/^Letters, digits, - and _ only/)).toBeTruthy();
    fireEvent.change(within(form).getByRole("combobox", { name: "Kind of MCP server 1" }), { target: { value: "McpStreamableHttp" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "URL of MCP server 1" }), { target: { value: "https://tickets.example/mcp" } });
    // A line typed stays as typed until it means something.
    const headers = within(form).getByRole("textbox", { name: "Headers of MCP server 1" }) as HTMLTextAreaElement;
    fireEvent.change(headers, { target: { value: "Authorization: Bearer {{param:token}}\n" } });
    expect(headers.value).toBe("Authorization: Bearer {{param:token}}\n");
    fireEvent.click(within(form).getByRole("button", { name: "Add a param" }));
    fireEvent.change(within(form).getByRole("textbox", { name: "Name of param 1" }), { target: { value: "token" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "Description of param 1" }), { target: { value: "Your ticket token." } });
    fireEvent.click(within(form).getByRole("checkbox", { name: "Secret: never stored, logged or shown (param 1)" }));
    expect(JSON.parse(editor().value).contents).toEqual({
      ...before,
      mcpServers: [{ tag: "McpStreamableHttp", contents: { name: "tickets desk", url: "https://tickets.example/mcp", headers: { Authorization: "Bearer {{param:token}}" } } }],
      params: [{ name: "token", description: "Your ticket token.", secret: true }],
    });
    expect(await seriousViolations(view.container)).toEqual([]);

    // The server has the last word on the name: its refusal shows at it.
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await screen.findByRole("alert", { name: "The server refused the definition" });
    const name = within(form).getByRole("textbox", { name: "Name of MCP server 1" });
    expect(name.getAttribute("aria-invalid")).toBe("true");
    expect(name.getAttribute("aria-describedby")!.split(" ").map((id) => document.getElementById(id)?.textContent)).toContain(
      '"tickets desk" must be letters, digits, - and _ only',
    );
    expect(document.activeElement).toBe(name);
    expect(await seriousViolations(view.container)).toEqual([]);

    fireEvent.change(name, { target: { value: "tickets" } });
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await waitFor(() => expect(where()).toBe("/agents/writer"));
    expect(JSON.parse(updated[1].definition).contents.mcpServers[0].contents.name).toBe("tickets");
  });

  it("adds a client tool and its arguments through the form, and shows a refused name at its row", async () => {
    const { updated, view } = mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    const before = JSON.parse(editor().value).contents;
    fireEvent.click(within(form).getByRole("button", { name: "Add a client tool" }));
    fireEvent.change(within(form).getByRole("textbox", { name: "Name of client tool 1" }), { target: { value: "ask user" } });
    expect(within(form).getByText(/^1 to 64 letters, digits, - and _/)).toBeTruthy();
    fireEvent.change(within(form).getByRole("textbox", { name: "Description of client tool 1" }), { target: { value: "Ask the user." } });
    const args = within(form).getByRole("group", { name: "Arguments of client tool 1" });
    expect(within(args).getByText("None: the tool takes no arguments.")).toBeTruthy();
    fireEvent.click(within(args).getByRole("button", { name: "Add an argument" }));
    fireEvent.change(within(args).getByRole("textbox", { name: "Name of argument 1 of client tool 1" }), { target: { value: "question" } });
    fireEvent.click(within(args).getByRole("checkbox", { name: "Required (argument 1 of client tool 1)" }));
    fireEvent.click(within(args).getByRole("button", { name: "Add an argument" }));
    fireEvent.change(within(args).getByRole("combobox", { name: "Type of argument 2 of client tool 1" }), { target: { value: "boolean" } });
    // A name the schema cannot hold twice stays in its field, unwritten.
    const second = within(args).getByRole("textbox", { name: "Name of argument 2 of client tool 1" }) as HTMLInputElement;
    fireEvent.change(second, { target: { value: "question" } });
    expect(second.value).toBe("question");
    expect(within(args).getByText("Not written: another argument has this name.")).toBeTruthy();
    fireEvent.change(second, { target: { value: "urgent" } });
    fireEvent.change(within(args).getByRole("textbox", { name: "Description of argument 2 of client tool 1" }), { target: { value: "Say so first." } });
    expect(JSON.parse(editor().value).contents).toEqual({
      ...before,
      clientTools: [
        {
          name: "ask user",
          description: "Ask the user.",
          parameters: { type: "object", properties: { question: { type: "string" }, urgent: { type: "boolean", description: "Say so first." } }, required: ["question"] },
        },
      ],
    });
    // An approval may name it.
    expect([...document.querySelectorAll("datalist option")].map((o) => o.getAttribute("value"))).toContain("ask user");
    expect(await seriousViolations(view.container)).toEqual([]);

    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await screen.findByRole("alert", { name: "The server refused the definition" });
    const name = within(form).getByRole("textbox", { name: "Name of client tool 1" });
    expect(name.getAttribute("aria-invalid")).toBe("true");
    expect(name.getAttribute("aria-describedby")!.split(" ").map((id) => document.getElementById(id)?.textContent)).toContain('"ask user": use 1 to 64 letters, digits, "-" or "_"');
    expect(document.activeElement).toBe(name);
    expect(await seriousViolations(view.container)).toEqual([]);

    fireEvent.change(name, { target: { value: "ask_user" } });
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await waitFor(() => expect(where()).toBe("/agents/writer"));
    expect(JSON.parse(updated[1].definition).contents.clientTools[0].name).toBe("ask_user");
  });

  it("marks a refused param name at its field", async () => {
    const { view } = mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    fireEvent.click(within(form).getByRole("button", { name: "Add a param" }));
    fireEvent.change(within(form).getByRole("textbox", { name: "Name of param 1" }), { target: { value: "api token" } });
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await screen.findByRole("alert", { name: "The server refused the definition" });
    const name = within(form).getByRole("textbox", { name: "Name of param 1" });
    expect(name.getAttribute("aria-invalid")).toBe("true");
    expect(name.getAttribute("aria-describedby")!.split(" ").map((id) => document.getElementById(id)?.textContent)).toContain('"api token" must not contain spaces');
    expect(document.activeElement).toBe(name);
    expect(await seriousViolations(view.container)).toEqual([]);
  });

  it("shows a client tool's schema the form cannot hold read-only", async () => {
    mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    const tool = '"clientTools": [{ "name": "pick", "parameters": { "type": "object", "properties": { "n": { "type": ["integer", "null"] } } } }],\n    "announce"';
    fireEvent.change(editor(), { target: { value: editor().value.replace('"announce"', tool) } });
    const schema = within(form).getByRole("textbox", { name: "Arguments of client tool 1 (JSON Schema)" }) as HTMLTextAreaElement;
    expect(schema.readOnly).toBe(true);
    expect(JSON.parse(schema.value).properties.n.type).toEqual(["integer", "null"]);
    expect(within(form).getByText(/^Edit these in the JSON below/)).toBeTruthy();
    // The rest of the row is still the form's.
    fireEvent.change(within(form).getByRole("textbox", { name: "Name of client tool 1" }), { target: { value: "choose" } });
    expect(JSON.parse(editor().value).contents.clientTools).toEqual([{ name: "choose", parameters: { type: "object", properties: { n: { type: ["integer", "null"] } } } }]);
  });

  it("shows a refused schema at its client tool's arguments", async () => {
    const { view } = mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    const tools = '"clientTools": [{ "name": "pick" }, { "name": "ask", "parameters": { "type": "string" } }],\n    "announce"';
    fireEvent.change(editor(), { target: { value: editor().value.replace('"announce"', tools) } });
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await screen.findByRole("alert", { name: "The server refused the definition" });
    const schema = within(form).getByRole("textbox", { name: "Arguments of client tool 2 (JSON Schema)" });
    expect(schema.getAttribute("aria-invalid")).toBe("true");
    expect(schema.getAttribute("aria-describedby")!.split(" ").map((id) => document.getElementById(id)?.textContent)).toContain('must be "object" (tool arguments are an object)');
    expect(document.activeElement).toBe(schema);
    expect(within(form).getByRole("group", { name: "Arguments of client tool 1" }).getAttribute("aria-describedby")).toBeNull();
    expect(await seriousViolations(view.container)).toEqual([]);
  });

  it("adds a directory toolbox beside a single tool, and shows a folder the server refuses at its row", async () => {
    const { updated, view } = mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    fireEvent.click(await within(form).findByRole("checkbox", { name: "bash_clock" }));
    fireEvent.click(within(form).getByRole("button", { name: "Add a directory toolbox" }));
    fireEvent.change(within(form).getByRole("textbox", { name: "Folder of directory toolbox 1" }), { target: { value: "/srv/tools" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "File name filter of directory toolbox 1" }), { target: { value: ".sh" } });
    expect(JSON.parse(editor().value).contents.bashToolboxes).toEqual([
      { tag: "SingleTool", contents: { Path: "/opt/tools/clock" } },
      { tag: "FileSystemDirectory", contents: { Path: "/srv/tools", BasenameFilter: ".sh" } },
    ]);
    expect(await seriousViolations(view.container)).toEqual([]);

    // The server names the second entry of bashToolboxes: the directory's
    // row, not the single tools.
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await screen.findByRole("alert", { name: "The server refused the definition" });
    const folder = within(form).getByRole("textbox", { name: "Folder of directory toolbox 1" });
    expect(folder.getAttribute("aria-invalid")).toBe("true");
    expect(document.getElementById(folder.getAttribute("aria-describedby")!)?.textContent).toMatch(/^not under a directory this server allows/);
    expect(document.activeElement).toBe(folder);
    expect(within(form).getByRole("group", { name: "Tools" }).getAttribute("aria-describedby")).toBeNull();
    expect(await seriousViolations(view.container)).toEqual([]);

    fireEvent.change(folder, { target: { value: "/opt/tools" } });
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await waitFor(() => expect(where()).toBe("/agents/writer"));
    expect(JSON.parse(updated[1].definition).contents.bashToolboxes[1]).toEqual({ tag: "FileSystemDirectory", contents: { Path: "/opt/tools", BasenameFilter: ".sh" } });
  });

  it("shows a directory toolbox the form cannot hold read-only, and removes it", async () => {
    mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    const boxes = '"bashToolboxes": [{ "tag": "FileSystemDirectory", "contents": { "Path": 7 } }],\n    "announce"';
    fireEvent.change(editor(), { target: { value: editor().value.replace('"announce"', boxes) } });
    const entry = within(form).getByRole("textbox", { name: "Directory toolbox 1" }) as HTMLTextAreaElement;
    expect(entry.readOnly).toBe(true);
    expect(entry.value).toBe('{"Path":7}');
    expect(within(form).getByText(/^Edit this one in the JSON below/)).toBeTruthy();
    fireEvent.click(within(form).getByRole("button", { name: "Remove directory toolbox 1" }));
    expect(JSON.parse(editor().value).contents.bashToolboxes).toBeUndefined();
  });

  it("shows a refused helper at the helpers, which take the focus", async () => {
    mount("/agents/writer/edit");
    const form = await screen.findByRole("group", { name: "Agent form" });
    fireEvent.change(editor(), { target: { value: editor().value.replace('"announce"', '"extraAgents": [{ "slug": "ghost" }],\n    "announce"') } });
    expect(within(form).getByRole("checkbox", { name: "ghost" }).getAttribute("aria-describedby")).toBeTruthy();
    expect((within(form).getByRole("checkbox", { name: "ghost" }) as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Save as a new version" }));
    await screen.findByRole("alert", { name: "The server refused the definition" });
    const helpers = within(form).getByRole("group", { name: "Helpers" });
    expect(document.activeElement).toBe(helpers);
    expect(document.getElementById(helpers.getAttribute("aria-describedby")!)?.textContent).toBe('unknown agent "ghost"');
  });

  it("compares two versions as a line diff", async () => {
    const { view } = mount("/agents/writer/versions");
    const compare = await screen.findByRole("region", { name: "Changes from version 1 to version 2" });
    const rows = [...compare.querySelectorAll("tr.added, tr.removed")].map((r) => r.textContent);
    expect(rows).toEqual(['3−removed    "announce": "Writes, v1",', '3+added    "announce": "Writes, v2",']);
    const section = screen.getByRole("region", { name: "Compare versions of writer" });
    expect(within(section).getByRole("status").textContent).toContain("1 line added, 1 line removed from version 1 to version 2");
    expect(await seriousViolations(view.container)).toEqual([]);
    // The same version on both sides: nothing differs.
    fireEvent.change(screen.getByRole("combobox", { name: "From" }), { target: { value: "2" } });
    expect(within(section).getByRole("status").textContent).toBe("Versions 2 and 2 mean the same: no line differs.");
  });

  it("keeps a file agent read-only, saying it comes from a file", async () => {
    mount("/agents/filed");
    await screen.findByText(/From an agent file: read-only here/);
    expect(screen.queryByRole("link", { name: "Edit" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Delete" })).toBeNull();
    cleanup();
    mount("/agents/filed/edit");
    const note = await screen.findByRole("note");
    expect(note.textContent).toContain("/etc/agents/filed.json");
    expect(note.textContent).toContain("read-only");
    expect(screen.queryByRole("textbox")).toBeNull();
  });

  it("names each tool's kind once: a source that only repeats the kind is not shown again", async () => {
    mount("/agents/filed");
    const heads = () => screen.getAllByRole("listitem").map((li) => li.querySelector(".tool-head")?.textContent).filter(Boolean);
    await screen.findByText("ask_user");
    expect(heads()).toEqual(["bash_clockbash/opt/tools/clock", "ask_userclient", "os_send_mailsystem"]);
  });

  it("names the model's window once the server knows it, and nothing of it before", async () => {
    mount("/agents/filed");
    const window = await screen.findByText("context window 128,000 · max output 16,384 · compacts above 113,000 (builtin)");
    expect(window.previousElementSibling?.textContent).toBe("Window");
    expect(screen.getByText("Budget").nextElementSibling?.textContent).toMatch(/^50,000 tokens · \$1\.50 for a session started with it/);
    cleanup();
    mount("/agents/writer");
    await screen.findByText("Writes, v2");
    expect(screen.queryByText(/context window/)).toBeNull();
    expect(screen.getByText("Budget").nextElementSibling?.textContent).toBe("none of its own (the owner's budget applies)");
  });

  it("lists the versions, opens an old one read-only and edits from it", async () => {
    const { view } = mount("/agents/writer/versions");
    const list = await screen.findByRole("list", { name: "Versions" });
    expect(within(list).getAllByRole("listitem").map((li) => li.querySelector("strong")?.textContent)).toEqual(["Version 2", "Version 1"]);
    expect(within(list).getAllByRole("listitem")[0].textContent).toContain("current");
    fireEvent.click(screen.getByRole("button", { name: "View version 1" }));
    const old = screen.getByRole("textbox", { name: "Definition of version 1" }) as HTMLTextAreaElement;
    expect(old.readOnly).toBe(true);
    expect(old.value).toContain("Writes, v1");
    expect(await seriousViolations(view.container)).toEqual([]);
    fireEvent.click(screen.getByRole("link", { name: "Edit from this version" }));
    await waitFor(() => expect(editor().value).toContain("Writes, v1"));
    expect(screen.getByText(/starting from the text of version 1/)).toBeTruthy();
  });

  it("deletes a stored agent after confirming", async () => {
    const { deleted } = mount("/agents/writer");
    await screen.findByText("Writes, v2");
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete the agent writer?" });
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    fireEvent.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Delete the agent" }));
    await waitFor(() => expect(where()).toBe("/agents"));
    expect(deleted).toEqual([expect.objectContaining({ slug: "writer", expectedVersion: 2n })]);
    const list = await screen.findByRole("list", { name: "Agents" });
    expect(within(list).queryByRole("link", { name: "writer" })).toBeNull();
  });
});
