import { useQuery } from "@connectrpc/connect-query";
import { useEffect, useId, useMemo, useState, type ReactNode } from "react";
import { AgentService, ToolKind, type AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import {
  argTypes,
  flavors,
  hasBothParamLists,
  limitNames,
  mcpKinds,
  normalLines,
  osToolNames,
  readForm,
  writeForm,
  type AgentForm as Form,
  type ApprovalRow,
  type ArgRow,
  type BudgetForm,
  type ClientToolRow,
  type DirectoryRow,
  type FieldAt,
  type FormField,
  type LimitName,
  type LineField,
  type McpRow,
  type ParamRow,
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
  // looks: the entry's control for the key named, else the entry's own
  // control, else its list's.
  useEffect(() => {
    if (!error) return;
    const { field, index } = error.at;
    const el =
      document.getElementById(formFieldId(base, error.at)) ??
      document.getElementById(formFieldId(base, { field, index })) ??
      document.getElementById(formFieldId(base, { field }));
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
  const toolNames = approvalTools(form, agent, server);
  // A list's error with no entry shows at the list; one of an entry, at
  // its row.
  // A refusal of a list as a whole (no row named) describes the list's
  // fieldset, and its note follows the rows.
  type ListField = "directories" | "mcpServers" | "clientTools" | "approvals" | "params";
  const wholeList = (field: ListField) => error?.at.field === field && error.at.index === undefined;
  const listError = (field: ListField) => (wholeList(field) ? describedBy(field) : {});
  const listNote = (field: ListField) => wholeList(field) && errorNote(field);
  const rowError = (field: ListField, i: number) => (error?.at.field === field && error.at.index === i ? { message: error.message, key: error.at.key } : undefined);
  // What every row editor of a list is given: where it is, its refusal,
  // and how it changes or leaves its list. (The approvals' editor reads
  // its refusal in its own terms, and is given that after these.)
  const rowProps = <T,>(field: ListField, i: number, onChange: (row: T) => void, onRemove: () => void) => ({
    index: i,
    idBase: id(field, i),
    error: rowError(field, i),
    onChange,
    onRemove,
  });
  // listSection is one list of the form: its fieldset, what it is for,
  // its rows and the button that adds one. A refusal of the list as a
  // whole describes the fieldset, and its note follows the rows.
  const listSection = <F extends ListField>(list: {
    field: F;
    legend: string;
    hint: ReactNode;
    before?: ReactNode;
    after?: ReactNode;
    newRow: () => Form[F][number];
    addLabel: string;
    row: (row: Form[F][number], index: number, change: (row: Form[F][number]) => void, remove: () => void) => ReactNode;
  }) => (
    <fieldset id={id(list.field)} tabIndex={-1} {...listError(list.field)}>
      <legend>{list.legend}</legend>
      <p className="muted hint">{list.hint}</p>
      {list.before}
      <Rows
        rows={form[list.field] as Form[F][number][]}
        onChange={(rows) => set({ [list.field]: rows })}
        newRow={list.newRow}
        addLabel={list.addLabel}
        after={
          <>
            {list.after}
            {listNote(list.field)}
          </>
        }
      >
        {list.row}
      </Rows>
    </fieldset>
  );

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

      {listSection({
        field: "directories",
        legend: "Directory toolboxes",
        hint: "Folders of bash tools: every executable in the folder is a tool, bash_SLUG, or only those whose file name holds the filter.",
        newRow: (): DirectoryRow => ({ path: "", filter: "", locked: false, json: "" }),
        addLabel: "Add a directory toolbox",
        row: (row, i, change, remove) => <DirectoryEditor key={i} row={row} {...rowProps("directories", i, change, remove)} />,
      })}

      {listSection({
        field: "clientTools",
        legend: "Client tools",
        hint: "Tools the server does not run: a call waits until a client (this app, the terminal UI, a program of yours) answers it.",
        newRow: (): ClientToolRow => ({ name: "", description: "", args: [], locked: false, schema: "" }),
        addLabel: "Add a client tool",
        row: (row, i, change, remove) => (
          <ClientToolEditor key={i} row={row} taken={nameTaken(form.clientTools, i)} {...rowProps("clientTools", i, change, remove)} />
        ),
      })}

      {listSection({
        field: "mcpServers",
        legend: "MCP servers",
        hint: "Each server's tools are offered as mcp_NAME_TOOL: a program speaking MCP on its standard input and output, or a server reached over HTTP.",
        newRow: (): McpRow => ({ kind: "McpSimpleBinary", name: "", executable: "", args: "", env: "", url: "", headers: "", locked: [] }),
        addLabel: "Add an MCP server",
        row: (row, i, change, remove) => <McpEditor key={i} row={row} taken={nameTaken(form.mcpServers, i)} {...rowProps("mcpServers", i, change, remove)} />,
      })}

      {listSection({
        field: "approvals",
        legend: "Approvals",
        hint: "Calls of these tools wait for a person to approve them; every other tool never asks.",
        before: (
          <datalist id={`${base}-tools`}>
            {toolNames.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
        ),
        newRow: (): ApprovalRow => ({ tool: "", policy: "always", rules: [] }),
        addLabel: "Add an approval",
        row: (row, i, change, remove) => (
          <ApprovalEditor key={i} row={row} toolsList={`${base}-tools`} {...rowProps("approvals", i, change, remove)} error={errorAt("approvals", i)} />
        ),
      })}

      {listSection({
        field: "params",
        legend: "Params",
        hint: <>Values each session of the agent is given by whoever starts it, such as a per-user token; a header of an MCP server names one as {"{{param:NAME}}"}.</>,
        newRow: (): ParamRow => ({ name: "", description: "", secret: false, required: true }),
        addLabel: "Add a param",
        after: hasBothParamLists(text) && <p className="muted hint">Also in the JSON below: agents-exe's parameters, read as more params.</p>,
        row: (row, i, change, remove) => <ParamEditor key={i} row={row} taken={nameTaken(form.params, i)} {...rowProps("params", i, change, remove)} />,
      })}

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

// Rows is a list of the form whose entries are edited in place: each row
// (children draws it, given how to change and remove it), what follows the
// list (after: its hints and errors), and the button that adds a row.
function Rows<T>(props: {
  rows: T[];
  onChange: (rows: T[]) => void;
  newRow: () => T;
  addLabel: string;
  after?: ReactNode;
  children: (row: T, index: number, change: (row: T) => void, remove: () => void) => ReactNode;
}) {
  const { rows, onChange } = props;
  return (
    <>
      {rows.length > 0 && (
        <ol className="approval-list">
          {rows.map((row, i) =>
            props.children(
              row,
              i,
              (r) => onChange(rows.map((x, j) => (j === i ? r : x))),
              () => onChange(rows.filter((_, j) => j !== i)),
            ),
          )}
        </ol>
      )}
      {props.after}
      <button type="button" className="button" onClick={() => onChange([...rows, props.newRow()])}>
        {props.addLabel}
      </button>
    </>
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

// RowError is the server's refusal of a list's entry, and the key of the
// entry it names, if any.
interface RowError {
  message: string;
  key?: string;
}

// rowControl marks a row's control when the error names its key, or, for
// the row's own control (key undefined: the name, a folder), when it
// names none of the keys of the row's other controls (shown), its own
// included.
function rowControl(idBase: string, error: RowError | undefined, key: string | undefined, shown: string[], hint?: string) {
  const mine = error && (error.key === key || (key === undefined && (error.key === undefined || !shown.includes(error.key))));
  const ids = [mine ? `${idBase}-error` : undefined, hint].filter(Boolean).join(" ");
  return { "aria-invalid": mine || undefined, "aria-describedby": ids || undefined };
}

// NameField is a row's name: its input, and the hint that says why the
// name will not do, which describes it.
function NameField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (name: string) => void;
  hint: string | undefined;
  control: (key: string | undefined, hint?: string) => object;
}) {
  const { id, hint } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input id={id} type="text" autoComplete="off" spellCheck={false} value={props.value} onChange={(e) => props.onChange(e.target.value)} {...props.control(undefined, hint && `${id}-hint`)} />
      {hint && (
        <p id={`${id}-hint`} className="muted hint">
          {hint}
        </p>
      )}
    </div>
  );
}

// nameTaken reports whether row i's name, when it has one, is another
// row's too: MCP servers', client tools' and params' names are unique in
// their list.
const nameTaken = (rows: { name: string }[], i: number) => rows[i].name !== "" && rows.some((r, j) => j !== i && r.name === rows[i].name);

const validMcpName = (name: string) => /^[A-Za-z0-9_-]+$/.test(name);

const kindLabels: Record<string, string> = { McpSimpleBinary: "program over stdio (McpSimpleBinary)", McpStreamableHttp: "over HTTP (McpStreamableHttp)" };

// The keys of an MCP server's contents each kind shows.
const shownKeys: Record<string, string[]> = { McpSimpleBinary: ["tag", "executable", "args", "env"], McpStreamableHttp: ["tag", "url", "headers"] };

// McpEditor is one MCP server: its name and kind, then the kind's fields.
// The name's hint says what the server will refuse; the server decides.
function McpEditor(props: { row: McpRow; index: number; idBase: string; taken: boolean; error?: RowError; onChange: (r: McpRow) => void; onRemove: () => void }) {
  const { row, index, idBase, taken, error, onChange, onRemove } = props;
  const n = index + 1;
  const shown = shownKeys[row.kind] ?? ["tag"];
  const nameHint = row.name === "" ? undefined : !validMcpName(row.name) ? "Letters, digits, - and _ only: the name is part of its tools' names." : taken ? "Another MCP server has this name." : undefined;
  const control = (key: string | undefined, hint?: string) => rowControl(idBase, error, key, shown, hint);
  const textInput = (key: "executable" | "url", label: string, mode?: "url") => (
    <div className="field">
      <label htmlFor={`${idBase}-${key}`}>
        {label} of MCP server {n}
      </label>
      <input id={`${idBase}-${key}`} type="text" autoComplete="off" spellCheck={false} inputMode={mode} value={row[key]} onChange={(e) => onChange({ ...row, [key]: e.target.value })} {...control(key)} />
    </div>
  );
  const lines = (key: LineField, label: string, hint: string) => (
    <LinesInput id={`${idBase}-${key}`} field={key} label={`${label} of MCP server ${n}`} hint={hint} value={row[key]} locked={row.locked.includes(key)} onChange={(t) => onChange({ ...row, [key]: t })} control={control} />
  );
  return (
    <li className="approval-row">
      <div className="form-row">
        <NameField id={idBase} label={`Name of MCP server ${n}`} value={row.name} onChange={(name) => onChange({ ...row, name })} hint={nameHint} control={control} />
        <div className="field">
          <label htmlFor={`${idBase}-tag`}>Kind of MCP server {n}</label>
          <select id={`${idBase}-tag`} value={row.kind} onChange={(e) => onChange({ ...row, kind: e.target.value })} {...control("tag")}>
            {!(mcpKinds as readonly string[]).includes(row.kind) && <option value={row.kind}>{row.kind || "(none)"}</option>}
            {mcpKinds.map((k) => (
              <option key={k} value={k}>
                {kindLabels[k]}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className="button remove" onClick={onRemove} aria-label={`Remove MCP server ${n}`}>
          Remove
        </button>
      </div>
      {row.kind === "McpSimpleBinary" && (
        <>
          {textInput("executable", "Program")}
          <div className="form-row">
            {lines("args", "Arguments", "One a line, as the program gets it: no quoting.")}
            {lines("env", "Environment", "NAME=value, one a line.")}
          </div>
        </>
      )}
      {row.kind === "McpStreamableHttp" && (
        <>
          {textInput("url", "URL", "url")}
          {lines("headers", "Headers", "Name: value, one a line; a value may name a param as {{param:NAME}}.")}
        </>
      )}
      {error && (
        <p id={`${idBase}-error`} className="error field-error">
          {error.message}
        </p>
      )}
    </li>
  );
}

// LinesInput edits a list as lines of text. What is typed stays as typed
// (a blank line, a key without its value yet) while it means what the
// definition holds; a change of the definition elsewhere shows anew. A
// list lines cannot hold shows read-only, as JSON.
function LinesInput(props: {
  id: string;
  field: LineField;
  label: string;
  hint: string;
  value: string;
  locked: boolean;
  onChange: (t: string) => void;
  control: (key: string, hint?: string) => object;
}) {
  const { id, field, label, hint, value, locked, onChange, control } = props;
  const [draft, setDraft] = useState<string>();
  const shown = draft !== undefined && normalLines(field, draft) === value ? draft : value;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        rows={Math.min(6, Math.max(2, shown.split("\n").length + 1))}
        spellCheck={false}
        readOnly={locked}
        value={shown}
        onChange={(e) => {
          setDraft(e.target.value);
          onChange(e.target.value);
        }}
        {...control(field, `${id}-hint`)}
      />
      <p id={`${id}-hint`} className="muted hint">
        {locked ? "Edit these in the JSON below: lines cannot hold them." : hint}
      </p>
    </div>
  );
}

// DirectoryEditor is one directory toolbox: its folder and its filter. An
// entry the row cannot hold shows read-only.
function DirectoryEditor(props: { row: DirectoryRow; index: number; idBase: string; error?: RowError; onChange: (r: DirectoryRow) => void; onRemove: () => void }) {
  const { row, index, idBase, error, onChange, onRemove } = props;
  const n = index + 1;
  // The folder is the row's own control: an error of the entry, or of its
  // path, shows there.
  const control = (key: string | undefined, hint?: string) => rowControl(idBase, error, key, ["filter"], hint);
  return (
    <li className="approval-row">
      <div className="form-row">
        {row.locked ? (
          <div className="field">
            <label htmlFor={idBase}>Directory toolbox {n}</label>
            <textarea id={idBase} rows={2} spellCheck={false} readOnly value={row.json} {...control(undefined, `${idBase}-hint`)} />
            <p id={`${idBase}-hint`} className="muted hint">
              Edit this one in the JSON below: the form cannot hold it.
            </p>
          </div>
        ) : (
          <>
            <div className="field">
              <label htmlFor={idBase}>Folder of directory toolbox {n}</label>
              <input id={idBase} type="text" autoComplete="off" spellCheck={false} value={row.path} onChange={(e) => onChange({ ...row, path: e.target.value })} {...control(undefined)} />
            </div>
            <div className="field">
              <label htmlFor={`${idBase}-filter`}>File name filter of directory toolbox {n}</label>
              <input
                id={`${idBase}-filter`}
                type="text"
                autoComplete="off"
                spellCheck={false}
                placeholder="every executable"
                value={row.filter}
                onChange={(e) => onChange({ ...row, filter: e.target.value })}
                {...control("filter")}
              />
            </div>
          </>
        )}
        <button type="button" className="button remove" onClick={onRemove} aria-label={`Remove directory toolbox ${n}`}>
          Remove
        </button>
      </div>
      {error && (
        <p id={`${idBase}-error`} className="error field-error">
          {error.message}
        </p>
      )}
    </li>
  );
}

// ClientToolEditor is one client tool: its name, what it does, and its
// arguments, each a property of its parameters' schema. A schema the
// arguments cannot hold shows read-only.
function ClientToolEditor(props: { row: ClientToolRow; index: number; idBase: string; taken: boolean; error?: RowError; onChange: (r: ClientToolRow) => void; onRemove: () => void }) {
  const { row, index, idBase, taken, error, onChange, onRemove } = props;
  const n = index + 1;
  // The name is the row's own control: an error of the entry, or of its
  // name, shows there.
  const shown = ["description", "parameters"];
  const nameHint = row.name === "" ? undefined : !validToolName(row.name) ? "1 to 64 letters, digits, - and _: the model calls the tool by it." : taken ? "Another client tool has this name." : undefined;
  const control = (key: string | undefined, hint?: string) => rowControl(idBase, error, key, shown, hint);
  const argsError = error?.key === "parameters";
  const setArg = (i: number, arg: ArgRow) => onChange({ ...row, args: row.args.map((a, j) => (j === i ? arg : a)) });
  const addArg = () => {
    const names = row.args.map((a) => a.name);
    let k = row.args.length + 1;
    while (names.includes(`arg${k}`)) k++;
    onChange({ ...row, args: [...row.args, { name: `arg${k}`, type: "string", description: "", required: false, extra: [] }] });
  };
  return (
    <li className="approval-row">
      <div className="form-row">
        <NameField id={idBase} label={`Name of client tool ${n}`} value={row.name} onChange={(name) => onChange({ ...row, name })} hint={nameHint} control={control} />
        <div className="field">
          <label htmlFor={`${idBase}-description`}>Description of client tool {n}</label>
          <input
            id={`${idBase}-description`}
            type="text"
            autoComplete="off"
            value={row.description}
            onChange={(e) => onChange({ ...row, description: e.target.value })}
            {...control("description")}
          />
        </div>
        <button type="button" className="button remove" onClick={onRemove} aria-label={`Remove client tool ${n}`}>
          Remove
        </button>
      </div>
      {row.locked ? (
        <div className="field">
          <label htmlFor={`${idBase}-parameters`}>Arguments of client tool {n} (JSON Schema)</label>
          <textarea
            id={`${idBase}-parameters`}
            rows={Math.min(8, row.schema.split("\n").length)}
            spellCheck={false}
            readOnly
            value={row.schema}
            {...control("parameters", `${idBase}-parameters-hint`)}
          />
          <p id={`${idBase}-parameters-hint`} className="muted hint">
            Edit these in the JSON below: the form's arguments cannot hold this schema.
          </p>
        </div>
      ) : (
        <fieldset id={`${idBase}-parameters`} tabIndex={-1} className="nested" aria-describedby={argsError ? `${idBase}-error` : undefined}>
          <legend>Arguments of client tool {n}</legend>
          {row.args.length === 0 && <p className="muted hint">None: the tool takes no arguments.</p>}
          {row.args.length > 0 && (
            <ul className="rule-list">
              {row.args.map((a, i) => (
                <ArgEditor
                  key={i}
                  arg={a}
                  label={`argument ${i + 1} of client tool ${n}`}
                  idBase={`${idBase}-arg-${i}`}
                  taken={(name) => row.args.some((b, j) => j !== i && b.name === name)}
                  onChange={(arg) => setArg(i, arg)}
                  onRemove={() => onChange({ ...row, args: row.args.filter((_, j) => j !== i) })}
                />
              ))}
            </ul>
          )}
          <button type="button" className="button link" onClick={addArg}>
            Add an argument
          </button>
        </fieldset>
      )}
      {error && (
        <p id={`${idBase}-error`} className="error field-error">
          {error.message}
        </p>
      )}
    </li>
  );
}

const validToolName = (name: string) => /^[A-Za-z0-9_-]{1,64}$/.test(name);

// ArgEditor is one argument of a client tool. Its name is a key of the
// schema's properties, which holds no name twice and none empty: a name
// typed that it cannot hold stays in the field, said so, and is not
// written until it can be.
function ArgEditor(props: { arg: ArgRow; label: string; idBase: string; taken: (name: string) => boolean; onChange: (a: ArgRow) => void; onRemove: () => void }) {
  const { arg, label, idBase, taken, onChange, onRemove } = props;
  const [draft, setDraft] = useState<string>();
  const holds = (name: string) => name !== "" && !taken(name);
  const name = draft !== undefined && (draft === arg.name || !holds(draft)) ? draft : arg.name;
  const nameHint = name === arg.name ? undefined : name === "" ? "Not written until it has a name." : "Not written: another argument has this name.";
  return (
    <li>
      <div className="form-row">
        <div className="field">
          <label htmlFor={idBase}>
            Name<span className="visually-hidden"> of {label}</span>
          </label>
          <input
            id={idBase}
            type="text"
            autoComplete="off"
            spellCheck={false}
            value={name}
            onChange={(e) => {
              setDraft(e.target.value);
              if (holds(e.target.value)) onChange({ ...arg, name: e.target.value });
            }}
            aria-describedby={nameHint ? `${idBase}-hint` : undefined}
          />
          {nameHint && (
            <p id={`${idBase}-hint`} className="muted hint">
              {nameHint}
            </p>
          )}
        </div>
        <div className="field narrow">
          <label htmlFor={`${idBase}-type`}>
            Type<span className="visually-hidden"> of {label}</span>
          </label>
          <select id={`${idBase}-type`} value={arg.type} onChange={(e) => onChange({ ...arg, type: e.target.value })}>
            {!(argTypes as readonly string[]).includes(arg.type) && <option value={arg.type}>{arg.type}</option>}
            {argTypes.map((t) => (
              <option key={t} value={t}>
                {t || "any"}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${idBase}-description`}>
            Description<span className="visually-hidden"> of {label}</span>
          </label>
          <input
            id={`${idBase}-description`}
            type="text"
            autoComplete="off"
            value={arg.description}
            onChange={(e) => onChange({ ...arg, description: e.target.value })}
            aria-describedby={arg.extra.length ? `${idBase}-extra` : undefined}
          />
        </div>
        <div className="field check">
          <input id={`${idBase}-required`} type="checkbox" checked={arg.required} onChange={(e) => onChange({ ...arg, required: e.target.checked })} />
          <label htmlFor={`${idBase}-required`}>
            Required<span className="visually-hidden"> ({label})</span>
          </label>
        </div>
        <button type="button" className="button remove" onClick={onRemove} aria-label={`Remove ${label}`}>
          Remove
        </button>
      </div>
      {arg.extra.length > 0 && (
        <p id={`${idBase}-extra`} className="muted hint">
          Also in the JSON below, kept as they are: {arg.extra.join(", ")}.
        </p>
      )}
    </li>
  );
}

// ParamEditor is one param: its name, what it is for, whether it is
// secret and whether a session needs it.
function ParamEditor(props: { row: ParamRow; index: number; idBase: string; taken: boolean; error?: RowError; onChange: (r: ParamRow) => void; onRemove: () => void }) {
  const { row, index, idBase, taken, error, onChange, onRemove } = props;
  const n = index + 1;
  const shown = ["description", "secret", "required"];
  const nameHint = /\s/.test(row.name) ? "No spaces." : taken ? "Another param has this name." : undefined;
  const control = (key: string | undefined, hint?: string) => rowControl(idBase, error, key, shown, hint);
  const check = (key: "secret" | "required", label: string) => (
    <div className="field check">
      <input id={`${idBase}-${key}`} type="checkbox" checked={row[key]} onChange={(e) => onChange({ ...row, [key]: e.target.checked })} {...control(key)} />
      <label htmlFor={`${idBase}-${key}`}>
        {label}
        <span className="visually-hidden"> (param {n})</span>
      </label>
    </div>
  );
  return (
    <li className="approval-row">
      <div className="form-row">
        <NameField id={idBase} label={`Name of param ${n}`} value={row.name} onChange={(name) => onChange({ ...row, name })} hint={nameHint} control={control} />
        <div className="field">
          <label htmlFor={`${idBase}-description`}>Description of param {n}</label>
          <input
            id={`${idBase}-description`}
            type="text"
            autoComplete="off"
            value={row.description}
            onChange={(e) => onChange({ ...row, description: e.target.value })}
            {...control("description")}
          />
        </div>
        <button type="button" className="button remove" onClick={onRemove} aria-label={`Remove param ${n}`}>
          Remove
        </button>
      </div>
      <div className="choices inline">
        {check("secret", "Secret: never stored, logged or shown")}
        {check("required", "Required to start a run")}
      </div>
      {error && (
        <p id={`${idBase}-error`} className="error field-error">
          {error.message}
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
  const parts: [number, string, string][] = [
    [c.toolDirectory ? 1 : 0, "a tool directory", "tool directories"],
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
function approvalTools(form: Form, agent: AgentDescriptor | undefined, server: ServerTool[]): string[] {
  const names = new Set<string>(agent?.tools.map((t) => t.name) ?? []);
  for (const p of form.tools) {
    const t = server.find((x) => x.path === p);
    if (t) names.add(t.name);
  }
  for (const h of form.helpers) names.add(`prompt_agent_${h}`);
  for (const n of form.osTools) names.add(`os_${n}`);
  for (const t of form.clientTools) if (t.name !== "") names.add(t.name);
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
