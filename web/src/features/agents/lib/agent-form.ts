// The agent form edits the fields of a definition people change most
// (model, key, prompt, tools, helpers, MCP servers, client tools,
// approvals, params, limits) in the JSON
// text itself: it reads them from the text, and writes back only the
// fields whose value changed, as jsonc-parser edits of the text. Every
// other field, and the spelling and layout of the text around an edit,
// stays as it was, so the form and the JSON editor hold one definition.

import { applyEdits, findNodeAtLocation, modify, parse, parseTree, type JSONPath, type ParseError } from "jsonc-parser";

// The flavors an agent file names, as agents-exe spells them.
export const flavors = ["OpenAIv1", "MistralV1", "KimiV1", "ClaudeV1"] as const;

// The operating system tools an agent may ask for (`osTools`), in the
// order the server lists them.
export const osToolNames = ["send_mail", "spawn_session", "watch_session", "list_sub_sessions", "read_session"] as const;

// The limits the form sets, each a whole number or left to the server.
export const limitNames = ["maxSteps", "maxOutputTokens", "contextWindow"] as const;
export type LimitName = (typeof limitNames)[number];

export type Policy = "always" | "never" | "when";

export interface Rule {
  arg: string;
  matches: string;
}

// ApprovalRow is one entry of `approvals`. entry is the index of the
// entry it was read from; a row added in the form has none.
export interface ApprovalRow {
  entry?: number;
  tool: string;
  policy: Policy;
  rules: Rule[];
}

// The kinds of MCP server an agent file names (`tag` of an `mcpServers`
// entry): a program speaking MCP on its standard input and output, and a
// server reached over streamable HTTP.
export const mcpKinds = ["McpSimpleBinary", "McpStreamableHttp"] as const;

// McpRow is one entry of `mcpServers`, its lists as lines of text:
// `args` one a line, `env` as NAME=value lines, `headers` as "Name: value"
// lines. locked names those of them whose value lines cannot hold (a
// value spanning lines, a key with "=", a value that is not a string):
// the form shows them read-only, and writes them only if they change.
export interface McpRow {
  entry?: number;
  kind: string;
  name: string;
  executable: string;
  args: string;
  env: string;
  url: string;
  headers: string;
  locked: LineField[];
}

export type LineField = "args" | "env" | "headers";

// DirectoryRow is one `FileSystemDirectory` entry of `bashToolboxes`:
// every executable in the folder is a tool, or, with a filter, those
// whose file name holds it. entry is the entry's index in the whole list
// (single tools share it). locked: contents the row cannot hold (not an
// object, a path that is not a string), shown read-only as json.
export interface DirectoryRow {
  entry?: number;
  path: string;
  filter: string;
  locked: boolean;
  json: string;
}

// The types an argument of a client tool may have in the form; "" is an
// argument of any type (no `type`).
export const argTypes = ["string", "number", "integer", "boolean", "array", "object", ""] as const;

// ArgRow is one argument of a client tool: a property of its parameters'
// JSON Schema. key is the property's name in the text (none for one
// added in the form); extra names the property's keys the form does not
// show (`enum`, `items`), which stay.
export interface ArgRow {
  key?: string;
  name: string;
  type: string;
  description: string;
  required: boolean;
  extra: string[];
}

// ClientToolRow is one entry of `clientTools`, a tool a client answers.
// Its arguments are the properties of `parameters`; a schema those rows
// cannot hold exactly (a property that is not an object, a type that is
// a list, `required` naming what is not a property) is locked: shown
// read-only as schema, and left as it is.
export interface ClientToolRow {
  entry?: number;
  name: string;
  description: string;
  args: ArgRow[];
  locked: boolean;
  schema: string;
}

// ParamRow is one entry of `params` (or of agents-exe's `parameters`).
export interface ParamRow {
  entry?: number;
  name: string;
  description: string;
  secret: boolean;
  required: boolean;
}

// AgentForm is what the form shows. Texts are as typed: a limit that is
// not a whole number is written as it is, for the server to refuse at its
// field.
export interface AgentForm {
  slug: string;
  announce: string;
  flavor: string;
  modelUrl: string;
  modelName: string;
  apiKeyId: string;
  // The prompt's lines, joined with newlines.
  systemPrompt: string;
  // The helpers' slugs (`extraAgents`), each once, in the file's order.
  helpers: string[];
  // The programs of the `SingleTool` bash toolboxes.
  tools: string[];
  // The operating system tools asked for.
  osTools: string[];
  // The `FileSystemDirectory` bash toolboxes.
  directories: DirectoryRow[];
  mcpServers: McpRow[];
  clientTools: ClientToolRow[];
  approvals: ApprovalRow[];
  params: ParamRow[];
  limits: Record<LimitName, string>;
  // The budget a session started with the agent gets when its client
  // sets none (`budget`); empty texts: no such limit.
  budget: BudgetForm;
}

export interface BudgetForm {
  tokens: string;
  costUsd: string;
  autoResume: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === "string" ? v : "");

// contentsOf is the definition's `contents` object; undefined when the
// text is not JSON or has none.
function contentsOf(definition: string): JsonObject | undefined {
  const errors: ParseError[] = [];
  const root: unknown = parse(definition, errors, { disallowComments: true, allowTrailingComma: false });
  if (errors.length || !isObject(root)) return undefined;
  return isObject(root.contents) ? root.contents : undefined;
}

// helperSlug is the slug an `extraAgents` entry names.
const helperSlug = (entry: Json): string => (isObject(entry) ? text(entry.slug) : "");

// singleToolPath is the program of a `SingleTool` toolbox entry (its
// contents a path, or an object with `Path` or `path`); undefined for
// any other entry.
export function singleToolPath(entry: Json): string | undefined {
  if (!isObject(entry) || entry.tag !== "SingleTool") return undefined;
  const c = entry.contents;
  if (typeof c === "string") return c;
  if (isObject(c)) return text(c.Path ?? c.path) || undefined;
  return undefined;
}

function rulesOf(when: Json | undefined): Rule[] {
  const list = Array.isArray(when) ? when : when === undefined || when === null ? [] : [when];
  return list.map((r) => (isObject(r) ? { arg: text(r.arg), matches: text(r.matches) } : { arg: "", matches: "" }));
}

function approvalOf(entry: Json, i: number): ApprovalRow {
  if (!isObject(entry)) return { entry: i, tool: "", policy: "always", rules: [] };
  const when = entry.when ?? undefined;
  const policy: Policy = when !== undefined ? "when" : entry.approval === "never" ? "never" : "always";
  return { entry: i, tool: text(entry.tool), policy, rules: rulesOf(when) };
}

function osToolsOf(v: Json | undefined): string[] {
  if (v === true) return [...osToolNames];
  if (Array.isArray(v)) return v.filter((n): n is string => typeof n === "string");
  return [];
}

function limitOf(v: Json | undefined): string {
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

const unique = (xs: string[]) => [...new Set(xs.filter((x) => x !== ""))];

// readForm reads the form's fields from a definition; undefined when the
// text is not a JSON object with `contents` (the JSON editor then says
// why).
export function readForm(definition: string): AgentForm | undefined {
  const c = contentsOf(definition);
  if (!c) return undefined;
  const prompt = c.systemPrompt;
  const list = (v: Json | undefined) => (Array.isArray(v) ? v : []);
  return {
    slug: text(c.slug),
    announce: text(c.announce),
    flavor: text(c.flavor),
    modelUrl: text(c.modelUrl),
    modelName: text(c.modelName),
    apiKeyId: text(c.apiKeyId),
    systemPrompt: Array.isArray(prompt) ? prompt.map(text).join("\n") : text(prompt),
    helpers: unique(list(c.extraAgents).map(helperSlug)),
    tools: unique(list(c.bashToolboxes).map((e) => singleToolPath(e) ?? "")),
    osTools: osToolsOf(c.osTools),
    directories: list(c.bashToolboxes).flatMap((e, i) => (isDirectory(e) ? [directoryRowOf(e, i)] : [])),
    mcpServers: list(c.mcpServers).map(mcpRowOf),
    clientTools: list(c.clientTools).map(clientToolRowOf),
    approvals: list(c.approvals).map(approvalOf),
    params: list(c[paramsKey(c)]).map(paramRowOf),
    limits: { maxSteps: limitOf(c.maxSteps), maxOutputTokens: limitOf(c.maxOutputTokens), contextWindow: limitOf(c.contextWindow) },
    budget: budgetOf(c.budget),
  };
}

// isDirectory says a bash toolbox entry is a directory toolbox.
const isDirectory = (entry: Json): boolean => isObject(entry) && entry.tag === "FileSystemDirectory";

// The keys of a directory toolbox's contents, in either spelling the
// server reads: the capitalised one agents-exe decodes, or lower case.
const pathKeys = ["Path", "path"];
const filterKeys = ["BasenameFilter", "basenameFilter"];
const firstKey = (o: JsonObject, keys: string[]) => keys.find((k) => o[k] !== undefined && o[k] !== null);

function directoryRowOf(entry: Json, i: number): DirectoryRow {
  const body = isObject(entry) ? entry.contents : undefined;
  const json = JSON.stringify(body ?? null);
  if (!isObject(body)) return { entry: i, path: "", filter: "", locked: body !== undefined && body !== null, json };
  const pathKey = firstKey(body, pathKeys);
  const filterKey = firstKey(body, filterKeys);
  const path = pathKey ? body[pathKey] : "";
  const filter = filterKey ? body[filterKey] : "";
  if (typeof path !== "string" || typeof filter !== "string") return { entry: i, path: "", filter: "", locked: true, json };
  return { entry: i, path, filter, locked: false, json };
}

// The keys of an argument's schema the form shows.
const argKeys = ["type", "description"];

function clientToolRowOf(entry: Json, i: number): ClientToolRow {
  const e = isObject(entry) ? entry : {};
  const parameters = e.parameters ?? undefined;
  const args = parameters === undefined || parameters === null ? [] : argsOf(parameters);
  return {
    entry: i,
    name: text(e.name),
    description: text(e.description),
    args: args ?? [],
    locked: args === undefined,
    schema: args === undefined ? JSON.stringify(parameters, null, 2) : "",
  };
}

// argsOf reads a client tool's parameters as arguments; undefined for a
// schema the rows cannot hold exactly.
function argsOf(parameters: Json): ArgRow[] | undefined {
  if (!isObject(parameters)) return undefined;
  if (parameters.type !== undefined && parameters.type !== "object") return undefined;
  const props = parameters.properties ?? {};
  const required = parameters.required ?? [];
  if (!isObject(props) || !Array.isArray(required) || !required.every((r) => typeof r === "string")) return undefined;
  const names = Object.keys(props);
  if (new Set(required).size !== required.length || !required.every((r) => names.includes(r as string))) return undefined;
  const out: ArgRow[] = [];
  for (const [name, p] of Object.entries(props)) {
    if (!isObject(p)) return undefined;
    const type = p.type ?? "";
    const description = p.description ?? "";
    if (typeof type !== "string" || typeof description !== "string") return undefined;
    out.push({ key: name, name, type, description, required: required.includes(name), extra: Object.keys(p).filter((k) => !argKeys.includes(k)) });
  }
  return out;
}

// Lines of text for the lists of an MCP server. Args are one a line, as
// the program gets them (no quoting); env and headers are a key and a
// value a line, split at the first separator; lines left blank are
// skipped, and a key given twice keeps its last value.
const argsOfLines = (t: string): string[] => (t === "" ? [] : t.split("\n"));
const linesOfArgs = (args: string[]) => args.join("\n");

type Pairs = [string, string][];
const separator: Record<"env" | "headers", string> = { env: "=", headers: ":" };

function pairsOfLines(field: "env" | "headers", t: string): Pairs {
  const out = new Map<string, string>();
  for (const line of t.split("\n")) {
    if (line.trim() === "") continue;
    const at = line.indexOf(separator[field]);
    const key = (at < 0 ? line : line.slice(0, at)).trim();
    const value = at < 0 ? "" : line.slice(at + 1);
    out.set(key, field === "headers" ? value.trim() : value);
  }
  return [...out];
}

const linesOfPairs = (field: "env" | "headers", pairs: Pairs) => pairs.map(([k, v]) => (field === "env" ? `${k}=${v}` : `${k}: ${v}`)).join("\n");

// normalLines is what a text of lines comes back as once written and read:
// the form shows a draft as typed while it means what the text holds.
export function normalLines(field: LineField, t: string): string {
  return field === "args" ? t : linesOfPairs(field, pairsOfLines(field, t));
}

const samePairs = (a: Pairs, b: Pairs) => a.length === b.length && a.every(([k, v], i) => k === b[i][0] && v === b[i][1]);
const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function mcpRowOf(entry: Json, i: number): McpRow {
  const e = isObject(entry) ? entry : {};
  const body = isObject(e.contents) ? e.contents : {};
  const locked: LineField[] = [];
  const lines = (field: LineField, v: Json | undefined): string => {
    if (v === undefined || v === null) return "";
    if (field === "args") {
      const args = Array.isArray(v) && v.every((a) => typeof a === "string") ? (v as string[]) : undefined;
      if (args && sameList(argsOfLines(linesOfArgs(args)), args)) return linesOfArgs(args);
    } else if (isObject(v) && Object.values(v).every((x) => typeof x === "string")) {
      const pairs = Object.entries(v) as Pairs;
      const t = linesOfPairs(field, pairs);
      if (samePairs(pairsOfLines(field, t), pairs)) return t;
    }
    locked.push(field);
    return JSON.stringify(v);
  };
  return {
    entry: i,
    kind: text(e.tag),
    name: text(body.name),
    executable: text(body.executable),
    args: lines("args", body.args),
    env: lines("env", body.env),
    url: text(body.url),
    headers: lines("headers", body.headers),
    locked,
  };
}

// paramsKey is the key a definition's params are under: `params`, or
// agents-exe's `parameters` when only that one is there.
function paramsKey(c: JsonObject): "params" | "parameters" {
  const has = (k: string) => c[k] !== undefined && c[k] !== null;
  return !has("params") && has("parameters") ? "parameters" : "params";
}

// hasBothParamLists says a definition has `parameters` besides `params`:
// the form edits `params`, and the JSON alone the other.
export function hasBothParamLists(definition: string): boolean {
  const c = contentsOf(definition);
  return !!c && c.params != null && c.parameters != null;
}

function paramRowOf(entry: Json, i: number): ParamRow {
  const e = isObject(entry) ? entry : {};
  return { entry: i, name: text(e.name), description: text(e.description), secret: e.secret === true, required: e.required !== false };
}

function budgetOf(v: Json | undefined): BudgetForm {
  const b = isObject(v) ? v : {};
  return { tokens: limitOf(b.tokens), costUsd: limitOf(b.costUsd), autoResume: b.autoResume === true };
}

// numberOf is a typed number as JSON: a number when it is one (whole for
// tokens), else the text as typed, for the server to refuse at its field.
function numberOf(v: string, whole: boolean): Json {
  const ok = whole ? /^\d+$/.test(v) : /^\d+(\.\d+)?$/.test(v);
  return ok && Number.isFinite(Number(v)) && (!whole || Number.isSafeInteger(Number(v))) ? Number(v) : v;
}

// An edit of the text: a value written at a path, or (undefined) the
// field removed.
class Editor {
  constructor(public text: string) {}

  set(path: JSONPath, value: Json | undefined, insert = false) {
    if (value === undefined) return this.remove(path);
    // New text is indented as the text's first indented key is.
    const indent = /\n([ \t]+)"/.exec(this.text)?.[1] ?? "  ";
    const insertSpaces = !indent.startsWith("\t");
    const tabSize = insertSpaces ? indent.length : 1;
    const eol = this.text.includes("\r\n") ? "\r\n" : "\n";
    const edits = modify(this.text, path, value, { formattingOptions: { insertSpaces, tabSize, eol }, isArrayInsertion: insert });
    this.text = applyEdits(this.text, edits);
  }

  // rename gives the field at path another key, in place: the field keeps
  // its place among its neighbours and its value its layout.
  rename(path: JSONPath, key: string) {
    const root = parseTree(this.text);
    const name = root && findNodeAtLocation(root, path)?.parent?.children?.[0];
    if (!name) return;
    this.text = this.text.slice(0, name.offset) + JSON.stringify(key) + this.text.slice(name.offset + name.length);
  }

  // remove cuts a field or an entry out of the text with the separator
  // between it and its neighbour, and nothing else: the rest of its line
  // keeps its layout. (jsonc-parser's own removal reformats the line, and
  // cuts the last entry of a list written on one line wrongly.)
  private remove(path: JSONPath) {
    const root = parseTree(this.text);
    const node = root && findNodeAtLocation(root, path);
    if (!node?.parent) return;
    const item = node.parent.type === "property" ? node.parent : node;
    const list = item.parent;
    if (!list?.children) return;
    const i = list.children.indexOf(item);
    const end = (n: { offset: number; length: number }) => n.offset + n.length;
    const [from, to] =
      i > 0 ? [end(list.children[i - 1]), end(item)] : i + 1 < list.children.length ? [item.offset, list.children[i + 1].offset] : [list.offset + 1, end(list) - 1];
    this.text = this.text.slice(0, from) + this.text.slice(to);
  }
}

const c = (...rest: (string | number)[]): JSONPath => ["contents", ...rest];

// writeForm writes a form's values into a definition: only the fields
// whose value differs from what the text holds change, each by an edit in
// place. Text that readForm cannot read is returned as it is.
export function writeForm(definition: string, form: AgentForm): string {
  const was = readForm(definition);
  const c0 = contentsOf(definition);
  if (!was || !c0) return definition;
  const ed = new Editor(definition);

  // Required texts are written even empty, for the server to name them;
  // optional ones are removed when emptied.
  for (const key of ["slug", "flavor", "modelUrl", "modelName"] as const) if (form[key] !== was[key]) ed.set(c(key), form[key]);
  for (const key of ["announce", "apiKeyId"] as const) if (form[key] !== was[key]) ed.set(c(key), form[key] === "" ? undefined : form[key]);

  if (form.systemPrompt !== was.systemPrompt) ed.set(c("systemPrompt"), form.systemPrompt === "" ? undefined : form.systemPrompt.split("\n"));

  writeSet(ed, "extraAgents", c0.extraAgents, was.helpers, form.helpers, helperSlug, (slug) => ({ slug }));
  // Directory toolboxes and single tools share bashToolboxes: the single
  // tools are written second, from the list as the directories left it.
  writeDirectories(ed, c0.bashToolboxes, was.directories, form.directories);
  const boxes = contentsOf(ed.text)?.bashToolboxes;
  writeSet(ed, "bashToolboxes", boxes, was.tools, form.tools, (e) => singleToolPath(e) ?? "", (path) => ({ tag: "SingleTool", contents: { Path: path } }));

  if (!sameSet(form.osTools, was.osTools)) {
    const chosen = osToolNames.filter((n) => form.osTools.includes(n));
    const others = form.osTools.filter((n) => !(osToolNames as readonly string[]).includes(n));
    const list = [...chosen, ...others];
    ed.set(c("osTools"), list.length ? list : undefined);
  }

  writeMcpServers(ed, c0.mcpServers, was.mcpServers, form.mcpServers);
  writeClientTools(ed, c0.clientTools, was.clientTools, form.clientTools);
  writeApprovals(ed, c0.approvals, was.approvals, form.approvals);
  writeParams(ed, paramsKey(c0), c0[paramsKey(c0)], was.params, form.params);

  for (const key of limitNames) {
    const v = form.limits[key].trim();
    if (v === was.limits[key]) continue;
    ed.set(c(key), v === "" ? undefined : numberOf(v, true));
  }

  writeBudget(ed, c0.budget, was.budget, form.budget);
  return ed.text;
}

// writeBudget brings `budget` to the form's: each key changed in place
// (the object's other keys stay); a budget left with nothing set goes.
function writeBudget(ed: Editor, current: Json | undefined, was: BudgetForm, want: BudgetForm) {
  const tokens = want.tokens.trim();
  const cost = want.costUsd.trim();
  if (tokens === was.tokens && cost === was.costUsd && want.autoResume === was.autoResume) return;
  if (tokens === "" && cost === "" && !want.autoResume) {
    ed.set(c("budget"), undefined);
    return;
  }
  const value = {
    tokens: tokens === "" ? undefined : numberOf(tokens, true),
    costUsd: cost === "" ? undefined : numberOf(cost, false),
    autoResume: want.autoResume || undefined,
  };
  if (!isObject(current)) {
    ed.set(c("budget"), Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as JsonObject);
    return;
  }
  if (tokens !== was.tokens) ed.set(c("budget", "tokens"), value.tokens);
  if (cost !== was.costUsd) ed.set(c("budget", "costUsd"), value.costUsd);
  if (want.autoResume !== was.autoResume) ed.set(c("budget", "autoResume"), value.autoResume);
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

// writeSet makes a list field hold entries for exactly the keys wanted:
// entries whose key is no longer wanted are removed (every entry of that
// key), entries kept stay as they are, new keys are appended; a list left
// empty goes.
function writeSet(ed: Editor, field: string, current: Json | undefined, was: string[], want: string[], keyOf: (e: Json) => string, make: (key: string) => Json) {
  if (sameSet(was, want)) return;
  const entries = Array.isArray(current) ? current : [];
  const drop = entries.map((e, i) => ({ key: keyOf(e), i })).filter(({ key }) => key !== "" && !want.includes(key));
  const added = want.filter((k) => !was.includes(k));
  const left = entries.length - drop.length + added.length;
  if (left === 0) {
    ed.set(c(field), undefined);
    return;
  }
  if (!Array.isArray(current)) {
    ed.set(c(field), added.map(make));
    return;
  }
  for (const { i } of drop.reverse()) ed.set(c(field, i), undefined);
  for (const key of added) ed.set(c(field, -1), make(key), true);
}

const ruleJson = (rules: Rule[]): Json => rules.map((r) => ({ arg: r.arg, matches: r.matches }));
const sameRules = (a: Rule[], b: Rule[]) => a.length === b.length && a.every((r, i) => r.arg === b[i].arg && r.matches === b[i].matches);

// writeRows brings a list field to its rows: entries whose row was
// removed go, rows kept are edited in place (edit gets the entry's index
// once the removed ones are gone), new rows are appended; a list left
// empty goes. Rows keep the order of their entries. The rows may be some
// of the list's entries only (its directory toolboxes): the others stay.
function writeRows<R extends { entry?: number }>(
  ed: Editor,
  path: JSONPath,
  current: Json | undefined,
  was: R[],
  rows: R[],
  same: (a: R, b: R) => boolean,
  edit: (at: JSONPath, row: R, old: R, entry: Json) => void,
  make: (row: R) => Json,
) {
  const kept = new Set(rows.flatMap((r) => (r.entry === undefined ? [] : [r.entry])));
  const removed = was.filter((r) => r.entry !== undefined && !kept.has(r.entry)).map((r) => r.entry!);
  const added = rows.filter((r) => r.entry === undefined);
  const oldOf = (r: R) => was.find((w) => w.entry === r.entry);
  if (removed.length === 0 && added.length === 0 && rows.every((r) => oldOf(r) !== undefined && same(r, oldOf(r)!))) return;
  const others = (Array.isArray(current) ? current.length : 0) - was.filter((r) => r.entry !== undefined).length;
  if (rows.length === 0 && others === 0) {
    ed.set(path, undefined);
    return;
  }
  if (!Array.isArray(current)) {
    ed.set(path, rows.map(make));
    return;
  }
  for (const i of [...removed].sort((a, b) => b - a)) ed.set([...path, i], undefined);
  // An entry kept moves up by the entries removed before it.
  const after = (i: number) => i - removed.filter((r) => r < i).length;
  for (const row of rows) {
    const old = row.entry === undefined ? undefined : oldOf(row);
    if (old && !same(row, old)) edit([...path, after(row.entry!)], row, old, current[row.entry!]);
  }
  for (const row of added) ed.set([...path, -1], make(row), true);
}

// writeApprovals brings `approvals` to the rows; a row kept changes only
// the keys that changed (an entry's other keys stay).
function writeApprovals(ed: Editor, current: Json | undefined, was: ApprovalRow[], rows: ApprovalRow[]) {
  writeRows(ed, c("approvals"), current, was, rows, sameRow, (at, row, old) => {
    if (row.tool !== old.tool) ed.set([...at, "tool"], row.tool);
    if (row.policy !== old.policy) {
      if (row.policy === "when") {
        ed.set([...at, "approval"], undefined);
        ed.set([...at, "when"], ruleJson(row.rules));
      } else {
        ed.set([...at, "when"], undefined);
        ed.set([...at, "approval"], row.policy);
      }
    } else if (row.policy === "when" && !sameRules(row.rules, old.rules)) {
      ed.set([...at, "when"], ruleJson(row.rules));
    }
  }, entryOf);
}

const sameRow = (a: ApprovalRow, b: ApprovalRow) =>
  a.tool === b.tool && a.policy === b.policy && (a.policy !== "when" || sameRules(a.rules, b.rules));

function entryOf(row: ApprovalRow): Json {
  return row.policy === "when" ? { tool: row.tool, when: ruleJson(row.rules) } : { tool: row.tool, approval: row.policy };
}

// The keys of an MCP server's contents that belong to each kind; a
// switch of kind removes the old kind's.
const mcpKeys: Record<(typeof mcpKinds)[number], string[]> = { McpSimpleBinary: ["executable", "args", "env"], McpStreamableHttp: ["url", "headers"] };

const sameMcp = (a: McpRow, b: McpRow) =>
  a.kind === b.kind &&
  a.name === b.name &&
  a.executable === b.executable &&
  a.url === b.url &&
  sameList(argsOfLines(a.args), argsOfLines(b.args)) &&
  samePairs(pairsOfLines("env", a.env), pairsOfLines("env", b.env)) &&
  samePairs(pairsOfLines("headers", a.headers), pairsOfLines("headers", b.headers));

// mcpContents is an MCP server's contents as a new entry holds them:
// the name, the kind's required field even empty (for the server to
// name), its lists when they have something.
function mcpContents(row: McpRow): JsonObject {
  const out: JsonObject = { name: row.name };
  if (row.kind === "McpSimpleBinary") {
    out.executable = row.executable;
    if (row.args !== "") out.args = argsOfLines(row.args);
    if (pairsOfLines("env", row.env).length) out.env = Object.fromEntries(pairsOfLines("env", row.env));
  } else if (row.kind === "McpStreamableHttp") {
    out.url = row.url;
    if (pairsOfLines("headers", row.headers).length) out.headers = Object.fromEntries(pairsOfLines("headers", row.headers));
  }
  return out;
}

const mcpEntry = (row: McpRow): Json => ({ tag: row.kind, contents: mcpContents(row) });

// writeMcpServers brings `mcpServers` to the rows. A row kept is edited
// field by field in its entry's contents, so keys the form does not show
// stay; a switch of kind sets the tag, removes the old kind's fields and
// writes the new kind's.
function writeMcpServers(ed: Editor, current: Json | undefined, was: McpRow[], rows: McpRow[]) {
  writeRows(
    ed,
    c("mcpServers"),
    current,
    was,
    rows,
    sameMcp,
    (at, row, old, entry) => {
      if (!isObject(entry)) return ed.set(at, mcpEntry(row));
      if (row.kind !== old.kind) ed.set([...at, "tag"], row.kind);
      const body = [...at, "contents"];
      if (!isObject(entry.contents)) return ed.set(body, mcpContents(row));
      if (row.name !== old.name) ed.set([...body, "name"], row.name);
      if (row.kind !== old.kind) {
        for (const key of mcpKeys[old.kind as keyof typeof mcpKeys] ?? []) if (key in entry.contents) ed.set([...body, key], undefined);
        for (const [key, value] of Object.entries(mcpContents(row))) if (key !== "name") ed.set([...body, key], value);
        return;
      }
      if (row.executable !== old.executable) ed.set([...body, "executable"], row.executable);
      if (row.url !== old.url) ed.set([...body, "url"], row.url);
      const args = argsOfLines(row.args);
      if (!sameList(args, argsOfLines(old.args))) ed.set([...body, "args"], args.length ? args : undefined);
      for (const field of ["env", "headers"] as const)
        writePairs(ed, [...body, field], entry.contents[field], pairsOfLines(field, old[field]), pairsOfLines(field, row[field]));
    },
    mcpEntry,
  );
}

// writePairs brings an object of strings (env, headers) to the pairs
// wanted: key by key in place while the keys kept stay in their order and
// new ones come after them; else, reordered, the object is written anew.
// An object left empty goes.
function writePairs(ed: Editor, path: JSONPath, current: Json | undefined, was: Pairs, want: Pairs) {
  if (samePairs(was, want)) return;
  if (want.length === 0) return ed.set(path, undefined);
  const keys = want.map(([k]) => k);
  const kept = was.filter(([k]) => keys.includes(k)).map(([k]) => k);
  const inPlace = isObject(current) && samePairs(Object.entries(current) as Pairs, was) && kept.every((k, i) => keys[i] === k);
  if (!inPlace) return ed.set(path, Object.fromEntries(want));
  for (const [k] of was) if (!keys.includes(k)) ed.set([...path, k], undefined);
  for (const [k, v] of want) if (was.find(([x]) => x === k)?.[1] !== v) ed.set([...path, k], v);
}

const sameParam = (a: ParamRow, b: ParamRow) => a.name === b.name && a.description === b.description && a.secret === b.secret && a.required === b.required;

// paramEntry is a new param as a file writes it: the defaults
// (secret false, required true) left out.
function paramEntry(row: ParamRow): Json {
  const out: JsonObject = { name: row.name };
  if (row.description !== "") out.description = row.description;
  if (row.secret) out.secret = true;
  if (!row.required) out.required = false;
  return out;
}

// writeParams brings the params list (under the key the text uses) to the
// rows. A flag is written when it differs from its default, or when the
// entry already spells it out.
function writeParams(ed: Editor, key: string, current: Json | undefined, was: ParamRow[], rows: ParamRow[]) {
  writeRows(
    ed,
    c(key),
    current,
    was,
    rows,
    sameParam,
    (at, row, old, entry) => {
      if (!isObject(entry)) return ed.set(at, paramEntry(row));
      if (row.name !== old.name) ed.set([...at, "name"], row.name);
      if (row.description !== old.description) ed.set([...at, "description"], row.description === "" ? undefined : row.description);
      const flag = (k: "secret" | "required", v: boolean, fallback: boolean) => ed.set([...at, k], k in entry || v !== fallback ? v : undefined);
      if (row.secret !== old.secret) flag("secret", row.secret, false);
      if (row.required !== old.required) flag("required", row.required, true);
    },
    paramEntry,
  );
}

const sameDirectory = (a: DirectoryRow, b: DirectoryRow) => a.path === b.path && a.filter === b.filter;

// directoryContents is a directory toolbox's contents as a new entry
// holds them: the path even empty (for the server to name), the filter
// when there is one.
function directoryContents(row: DirectoryRow): JsonObject {
  return row.filter === "" ? { Path: row.path } : { Path: row.path, BasenameFilter: row.filter };
}

// writeDirectories brings the directory toolboxes of `bashToolboxes` to
// the rows, each kept entry's path and filter edited in place under the
// key it spells them with; the single tools between them stay.
function writeDirectories(ed: Editor, current: Json | undefined, was: DirectoryRow[], rows: DirectoryRow[]) {
  writeRows(
    ed,
    c("bashToolboxes"),
    current,
    was,
    rows,
    sameDirectory,
    (at, row, old, entry) => {
      const body = isObject(entry) ? entry.contents : undefined;
      if (!isObject(body)) return ed.set([...at, "contents"], directoryContents(row));
      if (row.path !== old.path) ed.set([...at, "contents", firstKey(body, pathKeys) ?? "Path"], row.path);
      if (row.filter !== old.filter) ed.set([...at, "contents", firstKey(body, filterKeys) ?? "BasenameFilter"], row.filter === "" ? undefined : row.filter);
    },
    (row) => ({ tag: "FileSystemDirectory", contents: directoryContents(row) }),
  );
}

const sameArg = (a: ArgRow, b: ArgRow) => a.name === b.name && a.type === b.type && a.description === b.description && a.required === b.required;
const sameArgs = (a: ArgRow[], b: ArgRow[]) => a.length === b.length && a.every((x, i) => x.key === b[i].key && sameArg(x, b[i]));

const sameClientTool = (a: ClientToolRow, b: ClientToolRow) => a.name === b.name && a.description === b.description && sameArgs(a.args, b.args);

// argSchema is a new argument's schema: its type and description, those
// given.
function argSchema(arg: ArgRow): JsonObject {
  const out: JsonObject = {};
  if (arg.type !== "") out.type = arg.type;
  if (arg.description !== "") out.description = arg.description;
  return out;
}

const requiredOf = (args: ArgRow[]) => args.filter((a) => a.required).map((a) => a.name);

// parametersOf is the schema of a client tool's arguments, as the server
// wants it: an object schema, its properties and the names required.
function parametersOf(args: ArgRow[]): JsonObject {
  const out: JsonObject = { type: "object", properties: Object.fromEntries(args.map((a) => [a.name, argSchema(a)])) };
  if (requiredOf(args).length) out.required = requiredOf(args);
  return out;
}

function clientToolEntry(row: ClientToolRow): Json {
  const out: JsonObject = { name: row.name };
  if (row.description !== "") out.description = row.description;
  if (row.args.length) out.parameters = parametersOf(row.args);
  return out;
}

// writeClientTools brings `clientTools` to the rows, each kept entry's
// name, description and arguments edited in place (its other keys stay).
function writeClientTools(ed: Editor, current: Json | undefined, was: ClientToolRow[], rows: ClientToolRow[]) {
  writeRows(
    ed,
    c("clientTools"),
    current,
    was,
    rows,
    sameClientTool,
    (at, row, old, entry) => {
      if (!isObject(entry)) return ed.set(at, clientToolEntry(row));
      if (row.name !== old.name) ed.set([...at, "name"], row.name);
      if (row.description !== old.description) ed.set([...at, "description"], row.description === "" ? undefined : row.description);
      if (!row.locked) writeArgs(ed, [...at, "parameters"], entry.parameters ?? undefined, old.args, row.args);
    },
    clientToolEntry,
  );
}

// writeArgs brings a client tool's parameters to its arguments: each
// property renamed, retyped or described in place (its other keys, and
// the schema's, stay), removed ones gone, new ones appended, `required`
// written anew when its names change. A schema left with no argument and
// nothing else goes.
function writeArgs(ed: Editor, path: JSONPath, current: Json | undefined, was: ArgRow[], want: ArgRow[]) {
  if (sameArgs(was, want)) return;
  const bare = !isObject(current) || Object.keys(current).every((k) => ["type", "properties", "required"].includes(k));
  if (want.length === 0 && bare) return ed.set(path, undefined);
  if (!isObject(current) || !isObject(current.properties ?? {})) return ed.set(path, parametersOf(want));
  const props = [...path, "properties"];
  if (!isObject(current.properties)) ed.set(props, {});
  const keys = want.flatMap((a) => (a.key === undefined ? [] : [a.key]));
  for (const a of was) if (a.key !== undefined && !keys.includes(a.key)) ed.set([...props, a.key], undefined);
  for (const a of want) {
    const old = was.find((w) => w.key !== undefined && w.key === a.key);
    if (!old) {
      ed.set([...props, a.name], argSchema(a));
      continue;
    }
    if (a.name !== old.name) ed.rename([...props, old.name], a.name);
    if (a.type !== old.type) ed.set([...props, a.name, "type"], a.type === "" ? undefined : a.type);
    if (a.description !== old.description) ed.set([...props, a.name, "description"], a.description === "" ? undefined : a.description);
  }
  const had = Array.isArray(current.required) ? current.required : [];
  const required = requiredOf(want);
  if (!sameSet(required, had.filter((r): r is string => typeof r === "string"))) ed.set([...path, "required"], required.length ? required : undefined);
}

// The form's places an error of the server can name.
export type FormField =
  | "slug"
  | "announce"
  | "flavor"
  | "modelUrl"
  | "modelName"
  | "apiKeyId"
  | "systemPrompt"
  | "helpers"
  | "tools"
  | "osTools"
  | "directories"
  | "mcpServers"
  | "clientTools"
  | "approvals"
  | "params"
  | "budget"
  | LimitName;

const fieldOfKey: Record<string, FormField> = {
  slug: "slug",
  announce: "announce",
  flavor: "flavor",
  modelUrl: "modelUrl",
  modelName: "modelName",
  apiKeyId: "apiKeyId",
  systemPrompt: "systemPrompt",
  extraAgents: "helpers",
  bashToolboxes: "tools",
  osTools: "osTools",
  mcpServers: "mcpServers",
  clientTools: "clientTools",
  approvals: "approvals",
  params: "params",
  parameters: "params",
  maxSteps: "maxSteps",
  maxOutputTokens: "maxOutputTokens",
  contextWindow: "contextWindow",
  budget: "budget",
};

// FieldAt is where in the form a server's error belongs: the field, and
// for a list, the entry.
export interface FieldAt {
  field: FormField;
  index?: number;
  // The key within an object field (`tokens` of `budget`) or an entry
  // (`url` of an MCP server, `name` of a param).
  key?: string;
}

// The form's fields whose keys an error may name.
const keyed: FormField[] = ["budget", "mcpServers", "clientTools", "params", "directories"];

// The keys of a directory toolbox's contents, as its row names them.
const directoryKeys: Record<string, string> = { Path: "path", path: "path", BasenameFilter: "filter", basenameFilter: "filter" };

// formFieldOf maps the field a server's error names
// (`contents.approvals[1].tool`, `contents.mcpServers[0].contents.url`)
// to the form's field; undefined for a field the form does not show (the
// JSON editor marks it). The definition refused tells an entry of
// `bashToolboxes` that is a directory toolbox, whose index is then its
// row's, from a single tool.
export function formFieldOf(field: string | undefined, definition?: string): FieldAt | undefined {
  const m = field && /^contents\.([A-Za-z]+)(?:\[(\d+)\])?(?:\.contents)?(?:\.([A-Za-z]+))?/.exec(field);
  if (!m) return undefined;
  let f = fieldOfKey[m[1]];
  if (!f) return undefined;
  let index = m[2] === undefined ? undefined : Number(m[2]);
  let key: string | undefined = m[3];
  if (f === "tools" && index !== undefined && definition !== undefined) {
    const boxes = contentsOf(definition)?.bashToolboxes;
    if (Array.isArray(boxes) && isDirectory(boxes[index])) {
      f = "directories";
      index = boxes.slice(0, index).filter(isDirectory).length;
      key = key === undefined ? undefined : (directoryKeys[key] ?? key);
    }
  }
  const at: FieldAt = { field: f };
  if (index !== undefined) at.index = index;
  if (keyed.includes(f) && key !== undefined) at.key = key;
  return at;
}
