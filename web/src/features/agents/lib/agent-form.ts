// The agent form edits the fields of a definition people change most
// (model, key, prompt, tools, helpers, approvals, limits) in the JSON
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
  approvals: ApprovalRow[];
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
    approvals: list(c.approvals).map(approvalOf),
    limits: { maxSteps: limitOf(c.maxSteps), maxOutputTokens: limitOf(c.maxOutputTokens), contextWindow: limitOf(c.contextWindow) },
    budget: budgetOf(c.budget),
  };
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
  writeSet(ed, "bashToolboxes", c0.bashToolboxes, was.tools, form.tools, (e) => singleToolPath(e) ?? "", (path) => ({ tag: "SingleTool", contents: { Path: path } }));

  if (!sameSet(form.osTools, was.osTools)) {
    const chosen = osToolNames.filter((n) => form.osTools.includes(n));
    const others = form.osTools.filter((n) => !(osToolNames as readonly string[]).includes(n));
    const list = [...chosen, ...others];
    ed.set(c("osTools"), list.length ? list : undefined);
  }

  writeApprovals(ed, c0.approvals, was.approvals, form.approvals);

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

// writeApprovals brings `approvals` to the rows: entries whose row was
// removed go, rows kept change only the keys that changed (an entry's
// other keys stay), new rows are appended.
function writeApprovals(ed: Editor, current: Json | undefined, was: ApprovalRow[], rows: ApprovalRow[]) {
  const kept = new Set(rows.flatMap((r) => (r.entry === undefined ? [] : [r.entry])));
  const removed = was.filter((r) => r.entry !== undefined && !kept.has(r.entry)).map((r) => r.entry!);
  const added = rows.filter((r) => r.entry === undefined);
  if (removed.length === 0 && added.length === 0 && rows.every((r) => sameRow(r, was.find((w) => w.entry === r.entry)))) return;
  if (rows.length === 0) {
    ed.set(c("approvals"), undefined);
    return;
  }
  if (!Array.isArray(current)) {
    ed.set(c("approvals"), rows.map(entryOf));
    return;
  }
  for (const i of [...removed].sort((a, b) => b - a)) ed.set(c("approvals", i), undefined);
  // What is left of the entries, in order, is the kept rows.
  const keptRows = rows.filter((r) => r.entry !== undefined).sort((a, b) => a.entry! - b.entry!);
  keptRows.forEach((row, at) => {
    const old = was.find((w) => w.entry === row.entry)!;
    if (row.tool !== old.tool) ed.set(c("approvals", at, "tool"), row.tool);
    if (row.policy !== old.policy) {
      if (row.policy === "when") {
        ed.set(c("approvals", at, "approval"), undefined);
        ed.set(c("approvals", at, "when"), ruleJson(row.rules));
      } else {
        ed.set(c("approvals", at, "when"), undefined);
        ed.set(c("approvals", at, "approval"), row.policy);
      }
    } else if (row.policy === "when" && !sameRules(row.rules, old.rules)) {
      ed.set(c("approvals", at, "when"), ruleJson(row.rules));
    }
  });
  for (const row of added) ed.set(c("approvals", -1), entryOf(row), true);
}

const sameRow = (a: ApprovalRow, b: ApprovalRow | undefined) =>
  b !== undefined && a.tool === b.tool && a.policy === b.policy && (a.policy !== "when" || sameRules(a.rules, b.rules));

function entryOf(row: ApprovalRow): Json {
  return row.policy === "when" ? { tool: row.tool, when: ruleJson(row.rules) } : { tool: row.tool, approval: row.policy };
}

// The form's places an error of the server can name.
export type FormField = "slug" | "announce" | "flavor" | "modelUrl" | "modelName" | "apiKeyId" | "systemPrompt" | "helpers" | "tools" | "osTools" | "approvals" | "budget" | LimitName;

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
  approvals: "approvals",
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
  // The key within an object field (`tokens` of `budget`).
  key?: string;
}

// formFieldOf maps the field a server's error names
// (`contents.approvals[1].tool`) to the form's field; undefined for a
// field the form does not show (the JSON editor marks it).
export function formFieldOf(field: string | undefined): FieldAt | undefined {
  const m = field && /^contents\.([A-Za-z]+)(?:\[(\d+)\])?(?:\.([A-Za-z]+))?/.exec(field);
  if (!m) return undefined;
  const f = fieldOfKey[m[1]];
  if (!f) return undefined;
  const at: FieldAt = { field: f };
  if (m[2] !== undefined) at.index = Number(m[2]);
  if (f === "budget" && m[3] !== undefined) at.key = m[3];
  return at;
}
