import { Code } from "@connectrpc/connect";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useId, useMemo, useRef, useState } from "react";
import { Link, useLocation, useNavigate, useParams } from "react-router";
import { AgentService, type AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import { errorText } from "../../../lib/error-text";
import { agentPath } from "../../../lib/paths";
import { definitionError, newDefinition, placeAt, placeOf, pretty, syntaxError, type DefinitionError, type Place } from "../lib/definition";
import { formFieldOf } from "../lib/agent-form";
import { isStored } from "../lib/source";
import { AgentForm, type FieldError } from "./agent-form";
import { JsonEditor, type JsonEditorHandle } from "./json-editor";

// NewAgentPage stores a new agent from its definition.
export function NewAgentPage() {
  return <AgentEditor />;
}

// EditAgentPage changes a stored agent: its definition, prefilled, saved
// as a new version. A file agent is not the API's to change: the page
// says so and where it comes from. A page opened from an old version
// starts from that version's text.
export function EditAgentPage() {
  const { slug = "" } = useParams();
  const q = useQuery(AgentService.method.getAgent, { slug });
  const from = (useLocation().state as { definition?: string; version?: string } | null) ?? undefined;
  const heading = useId();
  const agent = q.data?.agent;
  if (q.isPending) return <p className="page-content">Loading…</p>;
  if (q.error || !agent)
    return (
      <section className="page-content" aria-labelledby={heading}>
        <h1 id={heading}>Edit {slug}</h1>
        <p role="alert" className="error">
          Could not load the agent: {q.error ? errorText(q.error) : "the server sent none"}
        </p>
      </section>
    );
  if (!isStored(agent))
    return (
      <section className="page-content" aria-labelledby={heading}>
        <h1 id={heading}>Edit {slug}</h1>
        <p role="note" className="banner-note">
          {slug} comes from an agent file{agent.file && <> (<code>{agent.file}</code>)</>}: file agents are read-only here. Change the file on the
          server and reload the agents.
        </p>
        <p>
          <Link to={agentPath(slug)}>Back to {slug}</Link>
        </p>
      </section>
    );
  // Keyed by slug: an update made elsewhere meanwhile does not replace the
  // text being edited; saving it then meets the version check.
  return <AgentEditor key={slug} agent={agent} initial={from?.definition} fromVersion={from?.version} />;
}

interface EditorProps {
  // The stored agent edited; none for a new one.
  agent?: AgentDescriptor;
  // The text to start from (an old version's); the agent's definition
  // otherwise.
  initial?: string;
  fromVersion?: string;
}

function AgentEditor({ agent, initial, fromVersion }: EditorProps) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const heading = useId();
  const errorId = useId();
  const jsonHeading = useId();
  const editor = useRef<JsonEditorHandle>(null);
  const start = initial ?? (agent ? (agent.definition.includes("\n") ? agent.definition : pretty(agent.definition)) : newDefinition);
  const [text, setText] = useState(start);
  // The server's last word on the text, kept until the next save.
  const [failure, setFailure] = useState<DefinitionError>();
  // The text the server refused: its entries are what the refusal's field
  // counts (a directory toolbox among the single tools).
  const [refused, setRefused] = useState(text);
  const done = async (slug: string) => {
    await queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema: AgentService, cardinality: undefined }) });
    navigate(agentPath(slug));
  };
  const create = useMutation(AgentService.method.createAgent, { onSuccess: (res) => done(res.agent?.slug ?? "") });
  const update = useMutation(AgentService.method.updateAgent, { onSuccess: (res) => done(res.agent?.slug ?? agent?.slug ?? "") });
  const pending = create.isPending || update.isPending;

  // What to mark: a syntax error while the text is not JSON; else the
  // field the server named, found again in the text as it is now.
  const syntax = useMemo(() => syntaxError(text), [text]);
  const mark: Place | undefined = useMemo(() => {
    if (syntax) return syntax.place;
    if (failure?.field) return placeOf(text, failure.field);
    if (failure?.line) return placeAt(text, failure.line, failure.column ?? 1);
    return undefined;
  }, [syntax, failure, text]);

  // The server's refusal, next to the form's field it names.
  const fieldError: FieldError | undefined = useMemo(() => {
    const at = failure?.code === Code.InvalidArgument ? formFieldOf(failure.field, refused) : undefined;
    return at && failure ? { at, message: failure.message.replace(/^[^\s:]+: /, "") } : undefined;
  }, [failure, refused]);

  const save = () => {
    if (syntax) {
      editor.current?.reveal(syntax.place);
      return;
    }
    setFailure(undefined);
    const onError = (err: unknown) => {
      const e = definitionError(err);
      setRefused(text);
      setFailure(e);
      // A field the form shows takes the focus there; another is
      // selected in the JSON.
      if (formFieldOf(e.field, text)) return;
      const p = e.field ? placeOf(text, e.field) : e.line ? placeAt(text, e.line, e.column ?? 1) : undefined;
      if (p) editor.current?.reveal(p);
    };
    if (agent) update.mutate({ slug: agent.slug, definition: text, expectedVersion: agent.version }, { onError });
    else create.mutate({ definition: text }, { onError });
  };

  const title = agent ? `Edit ${agent.slug}` : "New agent";
  return (
    <section className="page-content agent-editor" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>{title}</h1>
      </header>
      <p className="muted">
        {agent ? (
          <>
            Version {String(agent.version)}
            {fromVersion && <>, starting from the text of version {fromVersion}</>}. Saving stores version {String(agent.version + 1n)}: a step in
            flight finishes on its version, the next uses the new one.
          </>
        ) : (
          <>The definition is an agent file's JSON, as the server's agent files hold it; the server checks it as it checks a file.</>
        )}
      </p>
      <div id={errorId} className="editor-errors">
        {syntax ? (
          <p role="alert" className="error">
            Not JSON: {syntax.message}
          </p>
        ) : failure ? (
          <div role="alert" aria-label="The server refused the definition" className="error-box">
            <p>
              {failure.code === Code.Aborted
                ? "The agent changed since this page opened; open it again to edit its newest version."
                : failure.field
                  ? mark && !mark.exact
                    ? `${failure.message} (missing: marked at the object it belongs in, line ${mark.line})`
                    : `${failure.message}${mark ? ` (line ${mark.line})` : ""}`
                  : failure.message}
            </p>
            {failure.field && <code className="field-path">{failure.field}</code>}
            {mark && (
              <button type="button" className="button" onClick={() => editor.current?.reveal(mark)}>
                Show in the definition
              </button>
            )}
          </div>
        ) : null}
      </div>
      <AgentForm text={text} onChange={setText} agent={agent} error={fieldError} />
      <section className="json-section" aria-labelledby={jsonHeading}>
        <h2 id={jsonHeading}>Definition (JSON)</h2>
        <p className="muted">
          The whole definition, which the form edits too: everything the form does not show (a tool directory, builtin, OpenAPI and PostgREST
          toolboxes, skills, the sandbox, compaction, …) is written here, and what either changes is in both.
        </p>
        <JsonEditor ref={editor} label="Agent definition (JSON)" value={text} onChange={setText} mark={mark} describedBy={mark ? errorId : undefined} />
      </section>
      <div className="actions">
        <button type="button" className="button primary" onClick={save} disabled={pending}>
          {pending ? "Saving…" : agent ? "Save as a new version" : "Create the agent"}
        </button>
        <Link to={agent ? agentPath(agent.slug) : "/agents"} className="button">
          Cancel
        </Link>
      </div>
    </section>
  );
}
