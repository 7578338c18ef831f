import { useQuery } from "@connectrpc/connect-query";
import { useEffect, useId, useMemo, type ReactNode } from "react";
import { AgentService, ToolKind, type AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import {
  flavors,
  limitNames,
  osToolNames,
  readForm,
  singleToolPath,
  writeForm,
  type AgentForm as Form,
  type ApprovalRow,
  type BudgetForm,
  type FieldAt,
  type FormField,
  type LimitName,
  type Policy,
} from "../lib/agent-form";

// FieldError is the server's refusal, placed at a field of the form.
export interface FieldError {
  at: FieldAt;
  message: string;
}

interface Props {
  // The definition's text, which the form edits in place.
  text: string;
  onChange: (text: string) => void;
  // The stored agent edited; none for a new one.
  agent?: AgentDescriptor;
  error?: FieldError;
}

// formFieldId is the id of a field's control, for focusing the field an
// error names.
export const formFieldId = (base: string, at: FieldAt) => `${base}-${at.field}${at.index === undefined ? "" : `-${at.index}`}${at.key === undefined ? "" : `-${at.key}`}`;

const limitLabels: Record<LimitName, { label: string; hint: string }> = {
  maxSteps: { label: "Most steps a run", hint: "model calls one run may make" },
  maxOutputTokens: { label: "Most output tokens a call", hint: "over the model's own limit" },
  contextWindow: { label: "Context window (tokens)", hint: "for a model the server does not know" },
};

const policyLabels: Record<Policy, string> = { always: "always ask", never: "never ask", when: "ask when an argument matches" };

// AgentForm edits the fields people change most, picked where it can
// be from what the server has: its agents as helpers, the programs its
// agents run as tools, the key ids its agents use. The text stays the
// definition: each change is written into it, and the JSON editor below
// shows it and keeps everything else.
export function AgentForm({ text, onChange, agent, error }: Props) {
  const base = useId();
  const list = useQuery(AgentService.method.listAgents, {});
  const form = useMemo(() => readForm(text), [text]);
  // The field the server named takes the focus, so it is where one
  // looks: the entry's own control, else its list's.
  useEffect(() => {
    if (!error) return;
    const el = document.getElementById(formFieldId(base, error.at)) ?? document.getElementById(formFieldId(base, { field: error.at.field }));
    el?.focus();
  }, [error, base]);
  const agents = list.data?.agents ?? [];
  const server = useMemo(() => serverToolbox(agents), [agents]);
  const extra = useMemo(() => otherToolboxes(text), [text]);
  if (!form)
    return (
      <p role="note" className="banner-note">
        The form reads a definition that is a JSON object with <code>contents</code>: mend the JSON below to use it again.
      </p>
    );
  const set = (patch: Partial<Form>) => onChange(writeForm(text, { ...form, ...patch }));
  const id = (field: FormField, index?: number) => formFieldId(base, { field, index });
  // An error of a list's entry shows at the list, but at an approval's
  // own row: errorAt(field) for the former, errorAt(field, i) the latter.
  const errorAt = (field: FormField, index?: number) => (error && error.at.field === field && (index === undefined || error.at.index === index) ? error.message : undefined);
  const invalid = (field: FormField, index?: number) => (errorAt(field, index) ? { "aria-invalid": true, ...describedBy(field, index) } : {});
  // A group (a fieldset) is described by its error, not marked invalid:
  // aria-invalid belongs to the controls that take a value.
  const describedBy = (field: FormField, index?: number) => (errorAt(field, index) ? { "aria-describedby": `${id(field, index)}-error` } : {});
  const errorNote = (field: FormField, index?: number) => {
    const m = errorAt(field, index);
    return (
      m && (
        <p id={`${id(field, index)}-error`} className="error field-error">
          {m}
        </p>
      )
    );
  };
  const textField = (field: "slug" | "announce" | "modelUrl" | "modelName", label: string, extraProps: object = {}, hint?: ReactNode) => (
    <div className="field">
      <label htmlFor={id(field)}>{label}</label>
      <input id={id(field)} type="text" autoComplete="off" spellCheck={false} value={form[field]} onChange={(e) => set({ [field]: e.target.value })} {...invalid(field)} {...extraProps} />
      {hint && <p className="muted">{hint}</p>}
      {errorNote(field)}
    </div>
  );

  const others = agents.filter((a) => a.slug !== form.slug);
  const helperChoices = unionInOrder(
    others.map((a) => a.slug),
    form.helpers,
  );
  const toolChoices = unionInOrder(
    server.map((t) => t.path),
    form.tools,
  );
  const keyIds = [...new Set(agents.map((a) => a.model?.apiKeyId ?? "").filter(Boolean))].sort();
  const toolNames = approvalTools(form, agent, server, text);

  return (
    <div className="agent-form" role="group" aria-label="Agent form">
      <fieldset>
        <legend>Agent</legend>
        <div className="form-row">
          {textField("slug", "Slug", agent ? { readOnly: true } : {}, agent ? "A stored agent keeps its slug." : "Letters, digits, - and _.")}
          {textField("announce", "Announce", {}, "One line saying what it does; parents see it.")}
        </div>
      </fieldset>

      <fieldset>
        <legend>Model</legend>
        <div className="form-row">
          <div className="field">
            <label htmlFor={id("flavor")}>Flavor</label>
            <select id={id("flavor")} value={form.flavor} onChange={(e) => set({ flavor: e.target.value })} {...invalid("flavor")}>
              {!(flavors as readonly string[]).includes(form.flavor) && <option value={form.flavor}>{form.flavor || "(none)"}</option>}
              {flavors.map((f) => (
                <option key={f} value={f}>
                  {f}
                </option>
              ))}
            </select>
            {errorNote("flavor")}
          </div>
          {textField("modelName", "Model name")}
        </div>
        {textField("modelUrl", "Endpoint", { inputMode: "url" }, "Base URL of the OpenAI-compatible API.")}
        <div className="field">
          <label htmlFor={id("apiKeyId")}>API key</label>
          <input
            id={id("apiKeyId")}
            type="text"
            autoComplete="off"
            spellCheck={false}
            list={`${base}-keys`}
            placeholder="none needed"
            value={form.apiKeyId}
            onChange={(e) => set({ apiKeyId: e.target.value })}
            {...invalid("apiKeyId")}
            aria-describedby={errorAt("apiKeyId") ? `${id("apiKeyId")}-error` : `${id("apiKeyId")}-hint`}
          />
          <datalist id={`${base}-keys`}>
            {keyIds.map((k) => (
              <option key={k} value={k} />
            ))}
          </datalist>
          <p id={`${id("apiKeyId")}-hint`} className="muted">
            {keyHint(form.apiKeyId, agents, agent)}
          </p>
          {errorNote("apiKeyId")}
        </div>
      </fieldset>

      <div className="field">
        <label htmlFor={id("systemPrompt")}>System prompt</label>
        <textarea id={id("systemPrompt")} rows={6} value={form.systemPrompt} onChange={(e) => set({ systemPrompt: e.target.value })} {...invalid("systemPrompt")} />
        {errorNote("systemPrompt")}
      </div>

      <fieldset id={id("helpers")} tabIndex={-1} {...describedBy("helpers")}>
        <legend>Helpers</legend>
        <p className="muted hint">Agents of the server this one may call, each as the tool prompt_agent_SLUG.</p>
        {helperChoices.length === 0 ? (
          <p className="muted">The server has no other agent.</p>
        ) : (
          <div className="choices">
            {helperChoices.map((slug) => {
              const a = agents.find((x) => x.slug === slug);
              return (
                <Check key={slug} checked={form.helpers.includes(slug)} onChange={(on) => set({ helpers: toggle(form.helpers, slug, on) })} label={slug} note={a ? a.announce : "not on the server"} />
              );
            })}
          </div>
        )}
        {errorNote("helpers")}
      </fieldset>

      <fieldset id={id("tools")} tabIndex={-1} {...describedBy("tools")}>
        <legend>Tools</legend>
        <p className="muted hint">Programs the server's agents run as bash tools, each added as a single tool.</p>
        {toolChoices.length === 0 ? (
          <p className="muted">None of the server's agents runs a bash tool.</p>
        ) : (
          <div className="choices">
            {toolChoices.map((path) => {
              const t = server.find((x) => x.path === path);
              return (
                <Check
                  key={path}
                  checked={form.tools.includes(path)}
                  onChange={(on) => set({ tools: toggle(form.tools, path, on) })}
                  label={t ? t.name : path}
                  note={
                    <>
                      <code>{path}</code>
                      {t?.description && <> · {t.description}</>}
                    </>
                  }
                />
              );
            })}
          </div>
        )}
        {errorNote("tools")}
        <fieldset id={id("osTools")} tabIndex={-1} className="nested" {...describedBy("osTools")}>
          <legend>Operating system tools</legend>
          <div className="choices inline">
            {osToolNames.map((n) => (
              <Check key={n} checked={form.osTools.includes(n)} onChange={(on) => set({ osTools: toggle(form.osTools, n, on) })} label={`os_${n}`} />
            ))}
          </div>
          {errorNote("osTools")}
        </fieldset>
        {extra.length > 0 && <p className="muted hint">Also in the JSON below: {extra.join(", ")}.</p>}
      </fieldset>

      <fieldset id={id("approvals")} tabIndex={-1} {...(error?.at.field === "approvals" && error.at.index === undefined ? describedBy("approvals") : {})}>
        <legend>Approvals</legend>
        <p className="muted hint">Calls of these tools wait for a person to approve them; every other tool never asks.</p>
        <datalist id={`${base}-tools`}>
          {toolNames.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
        {form.approvals.length > 0 && (
          <ol className="approval-list">
            {form.approvals.map((row, i) => (
              <ApprovalEditor
                key={i}
                row={row}
                index={i}
                idBase={id("approvals", i)}
                toolsList={`${base}-tools`}
                error={errorAt("approvals", i)}
                onChange={(r) => set({ approvals: form.approvals.map((x, j) => (j === i ? r : x)) })}
                onRemove={() => set({ approvals: form.approvals.filter((_, j) => j !== i) })}
              />
            ))}
          </ol>
        )}
        {error?.at.field === "approvals" && error.at.index === undefined && errorNote("approvals")}
        <button type="button" className="button" onClick={() => set({ approvals: [...form.approvals, { tool: "", policy: "always", rules: [] }] })}>
          Add an approval
        </button>
      </fieldset>

      <BudgetFields idBase={id("budget")} value={form.budget} onChange={(budget) => set({ budget })} error={error?.at.field === "budget" ? error : undefined} />

      <fieldset>
        <legend>Limits</legend>
        <p className="muted hint">Left empty, the server's defaults hold.</p>
        <div className="form-row">
          {limitNames.map((n) => (
            <div className="field" key={n}>
              <label htmlFor={id(n)}>{limitLabels[n].label}</label>
              <input
                id={id(n)}
                type="text"
                inputMode="numeric"
                autoComplete="off"
                placeholder="server default"
                value={form.limits[n]}
                onChange={(e) => set({ limits: { ...form.limits, [n]: e.target.value } })}
                {...invalid(n)}
              />
              <p className="muted">{limitLabels[n].hint}</p>
              {errorNote(n)}
            </div>
          ))}
        </div>
      </fieldset>
    </div>
  );
}

// BudgetFields are the agent's budget: the limits a session started with
// it gets when its client sets none.
function BudgetFields({ idBase, value, onChange, error }: { idBase: string; value: BudgetForm; onChange: (b: BudgetForm) => void; error?: FieldError }) {
  const field = (key: "tokens" | "costUsd", label: string, mode: "numeric" | "decimal") => {
    const id = `${idBase}-${key}`;
    const bad = error?.at.key === key;
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input
          id={id}
          type="text"
          inputMode={mode}
          autoComplete="off"
          placeholder="no limit"
          value={value[key]}
          onChange={(e) => onChange({ ...value, [key]: e.target.value })}
          aria-invalid={bad || undefined}
          aria-describedby={bad ? `${id}-error` : undefined}
        />
        {bad && (
          <p id={`${id}-error`} className="error field-error">
            {error.message}
          </p>
        )}
      </div>
    );
  };
  const whole = error && error.at.key !== "tokens" && error.at.key !== "costUsd";
  return (
    <fieldset id={idBase} tabIndex={-1} aria-describedby={whole ? `${idBase}-error` : undefined}>
      <legend>Budget</legend>
      <p className="muted hint">
        What a session started with this agent may spend, its helpers' sessions included, when whoever starts it sets no budget. The owner's budget
        applies besides.
      </p>
      <div className="form-row">
        {field("tokens", "Most tokens", "numeric")}
        {field("costUsd", "Most US dollars", "decimal")}
      </div>
      <Check checked={value.autoResume} onChange={(autoResume) => onChange({ ...value, autoResume })} label="Resume by itself when the budget is raised" />
      {whole && (
        <p id={`${idBase}-error`} className="error field-error">
          {error.message}
        </p>
      )}
    </fieldset>
  );
}

function Check({ checked, onChange, label, note }: { checked: boolean; onChange: (on: boolean) => void; label: string; note?: ReactNode }) {
  const id = useId();
  return (
    <div className="field check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} aria-describedby={note ? `${id}-note` : undefined} />
      <label htmlFor={id} className="choice-name">
        {label}
      </label>
      {note && (
        <span id={`${id}-note`} className="muted choice-note">
          {note}
        </span>
      )}
    </div>
  );
}

function ApprovalEditor(props: {
  row: ApprovalRow;
  index: number;
  idBase: string;
  toolsList: string;
  error?: string;
  onChange: (r: ApprovalRow) => void;
  onRemove: () => void;
}) {
  const { row, index, idBase, toolsList, error, onChange, onRemove } = props;
  const n = index + 1;
  const described = error ? { "aria-invalid": true, "aria-describedby": `${idBase}-error` } : {};
  const setRule = (i: number, patch: Partial<{ arg: string; matches: string }>) => onChange({ ...row, rules: row.rules.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
  return (
    <li className="approval-row">
      <div className="form-row">
        <div className="field">
          <label htmlFor={idBase}>Tool of approval {n}</label>
          <input id={idBase} type="text" autoComplete="off" spellCheck={false} list={toolsList} value={row.tool} onChange={(e) => onChange({ ...row, tool: e.target.value })} {...described} />
        </div>
        <div className="field">
          <label htmlFor={`${idBase}-policy`}>Policy of approval {n}</label>
          <select
            id={`${idBase}-policy`}
            value={row.policy}
            onChange={(e) => {
              const policy = e.target.value as Policy;
              onChange({ ...row, policy, rules: policy === "when" && row.rules.length === 0 ? [{ arg: "", matches: "" }] : row.rules });
            }}
          >
            {(Object.keys(policyLabels) as Policy[]).map((p) => (
              <option key={p} value={p}>
                {policyLabels[p]}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className="button remove" onClick={onRemove} aria-label={`Remove approval ${n}`}>
          Remove
        </button>
      </div>
      {row.policy === "when" && (
        <ul className="rule-list" aria-label={`Rules of approval ${n}`}>
          {row.rules.map((r, i) => (
            <li key={i} className="form-row">
              <div className="field">
                <label htmlFor={`${idBase}-arg-${i}`}>Argument</label>
                <input id={`${idBase}-arg-${i}`} type="text" autoComplete="off" spellCheck={false} value={r.arg} onChange={(e) => setRule(i, { arg: e.target.value })} />
              </div>
              <div className="field">
                <label htmlFor={`${idBase}-matches-${i}`}>Matches (regular expression)</label>
                <input id={`${idBase}-matches-${i}`} type="text" autoComplete="off" spellCheck={false} value={r.matches} onChange={(e) => setRule(i, { matches: e.target.value })} />
              </div>
              {row.rules.length > 1 && (
                <button type="button" className="button remove" onClick={() => onChange({ ...row, rules: row.rules.filter((_, j) => j !== i) })} aria-label={`Remove rule ${i + 1} of approval ${n}`}>
                  Remove
                </button>
              )}
            </li>
          ))}
          <li>
            <button type="button" className="button link" onClick={() => onChange({ ...row, rules: [...row.rules, { arg: "", matches: "" }] })}>
              Add a rule
            </button>
          </li>
        </ul>
      )}
      {error && (
        <p id={`${idBase}-error`} className="error field-error">
          {error}
        </p>
      )}
    </li>
  );
}

// A program the server's agents run as a bash tool.
interface ServerTool {
  path: string;
  name: string;
  description: string;
}

// serverToolbox lists the programs the server's agents run, once each:
// what a new agent may be given as a single tool.
function serverToolbox(agents: AgentDescriptor[]): ServerTool[] {
  const out = new Map<string, ServerTool>();
  for (const a of agents)
    for (const t of a.tools)
      if (t.kind === ToolKind.BASH && t.source && !out.has(t.source)) out.set(t.source, { path: t.source, name: t.name, description: t.description });
  return [...out.values()].sort((x, y) => x.name.localeCompare(y.name));
}

// otherToolboxes names what the definition has besides the form's tools,
// which only the JSON shows.
function otherToolboxes(text: string): string[] {
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(text).contents ?? {};
  } catch {
    return [];
  }
  const count = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  const dirs = Array.isArray(c.bashToolboxes) ? c.bashToolboxes.filter((e) => singleToolPath(e) === undefined).length : 0;
  const parts: [number, string, string][] = [
    [c.toolDirectory ? 1 : 0, "a tool directory", "tool directories"],
    [dirs, "a directory toolbox", "directory toolboxes"],
    [count(c.mcpServers), "an MCP server", "MCP servers"],
    [count(c.clientTools), "a client tool", "client tools"],
    [count(c.builtinToolboxes), "a builtin toolbox", "builtin toolboxes"],
    [count(c.openApiToolboxes), "an OpenAPI toolbox", "OpenAPI toolboxes"],
    [count(c.postgrestToolboxes), "a PostgREST toolbox", "PostgREST toolboxes"],
    [count(c.skillSources), "a skill source", "skill sources"],
  ];
  return parts.filter(([n]) => n > 0).map(([n, one, many]) => (n === 1 ? one : `${n} ${many}`));
}

// approvalTools suggests the tool names an approval may name: the
// agent's tools as the server described them, and those the form gives
// it now.
function approvalTools(form: Form, agent: AgentDescriptor | undefined, server: ServerTool[], text: string): string[] {
  const names = new Set<string>(agent?.tools.map((t) => t.name) ?? []);
  for (const p of form.tools) {
    const t = server.find((x) => x.path === p);
    if (t) names.add(t.name);
  }
  for (const h of form.helpers) names.add(`prompt_agent_${h}`);
  for (const n of form.osTools) names.add(`os_${n}`);
  try {
    const tools = JSON.parse(text).contents?.clientTools;
    if (Array.isArray(tools)) for (const t of tools) if (typeof t?.name === "string") names.add(t.name);
  } catch {
    // The form is not shown for text that is not JSON.
  }
  return [...names].sort();
}

// keyHint says what the server knows of a key id, never its value: the
// form names a key the server holds (its keys file or environment), it
// does not carry one.
function keyHint(id: string, agents: AgentDescriptor[], agent?: AgentDescriptor): string {
  if (!id) return "No key is sent. The form names a key the server holds (keys file or environment); a key's value is never sent or shown here.";
  const model = agent?.model?.apiKeyId === id ? agent.model : agents.find((a) => a.model?.apiKeyId === id)?.model;
  const known = model ? (model.apiKeyPresent ? "The server has this key." : "The server has no value for this key.") : "No agent of the server uses this key yet.";
  return `${known} The value stays on the server (keys file or environment) and is never shown here.`;
}

function toggle(list: string[], item: string, on: boolean): string[] {
  return on ? (list.includes(item) ? list : [...list, item]) : list.filter((x) => x !== item);
}

function unionInOrder(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}
