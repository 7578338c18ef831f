import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { AgentService, ToolKind, type AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import { budgetText } from "../../../lib/budget";
import { agentPath } from "../../../lib/paths";
import { limitsText } from "../lib/limits";
import { isStored } from "../lib/source";
import { DeleteAgentDialog } from "./delete-agent-dialog";

const kindLabels: Record<ToolKind, string> = {
  [ToolKind.UNSPECIFIED]: "tool",
  [ToolKind.BASH]: "bash",
  [ToolKind.HELPER]: "helper",
  [ToolKind.CLIENT]: "client",
  [ToolKind.MCP]: "MCP",
  [ToolKind.SYSTEM]: "system",
  [ToolKind.HTTP]: "HTTP",
};

// AgentPage shows an agent's descriptor: where it comes from, its model,
// prompt, tools, helpers, params and MCP servers, and starts a session
// with it. A stored agent is edited, its versions listed and it is
// deleted from here; a file agent only reads.
export function AgentPage() {
  const { slug = "" } = useParams();
  const [deleting, setDeleting] = useState(false);
  // While the agent is deleted, it is not read again (agents.changed asks
  // every page to): it would be gone.
  const [sending, setSending] = useState(false);
  const q = useQuery(AgentService.method.getAgent, { slug }, { enabled: !sending });
  const heading = useId();
  const navigate = useNavigate();
  const agent = q.data?.agent;
  const stored = isStored(agent);
  return (
    <article className="agent-page" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>{slug}</h1>
        <div className="page-actions" role="toolbar" aria-label="Agent actions">
          <Link to={`/?agent=${encodeURIComponent(slug)}`} state={{ focusPicker: true }} className="button primary">
            Start a session
          </Link>
          {stored && (
            <>
              <Link to={agentPath(slug, "edit")} className="button">
                Edit
              </Link>
              <Link to={agentPath(slug, "versions")} className="button">
                Versions
              </Link>
              <button type="button" className="button danger" onClick={() => setDeleting(true)}>
                Delete
              </button>
            </>
          )}
        </div>
      </header>
      {agent && !stored && (
        <p role="note" className="muted">
          From an agent file: read-only here. Change the file on the server and reload the agents to change it.
        </p>
      )}
      {deleting && agent && <DeleteAgentDialog agent={agent} onClose={() => setDeleting(false)} onSending={setSending} onDeleted={() => navigate("/agents")} />}
      {q.isPending ? (
        <p>Loading…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the agent: {q.error.rawMessage}
        </p>
      ) : agent ? (
        <Descriptor agent={agent} />
      ) : null}
    </article>
  );
}

function Descriptor({ agent }: { agent: AgentDescriptor }) {
  const m = agent.model;
  return (
    <>
      {agent.announce && <p className="agent-announce">{agent.announce}</p>}
      <section aria-labelledby="agent-model">
        <h2 id="agent-model">Model</h2>
        <dl className="facts">
          <dt>Flavor</dt>
          <dd>{m?.flavor || "—"}</dd>
          <dt>Name</dt>
          <dd>{m?.name || "—"}</dd>
          <dt>Endpoint</dt>
          <dd>
            <code>{m?.url || "—"}</code>
            {m?.offline && <> (the server's offline model)</>}
          </dd>
          {limitsText(m) && (
            <>
              <dt>Window</dt>
              <dd>{limitsText(m)}</dd>
            </>
          )}
          <dt>API key</dt>
          <dd>
            {!m?.apiKeyId ? (
              "none needed"
            ) : m.apiKeyPresent ? (
              <>
                <code>{m.apiKeyId}</code> (present)
              </>
            ) : m.offline ? (
              <>
                <code>{m.apiKeyId}</code> is not on the server, so the agent talks to the offline model: scripted answers, no real model. Give
                the server the key to use {m.name || "its model"}.
              </>
            ) : (
              <>
                <code>{m.apiKeyId}</code> <span className="error">(missing on the server: the agent cannot reach its model)</span>
              </>
            )}
          </dd>
          {agent.parent && (
            <>
              <dt>Helper of</dt>
              <dd>
                <Link to={`/agents/${encodeURIComponent(agent.parent)}`}>{agent.parent}</Link>
              </dd>
            </>
          )}
          <dt>Step limit</dt>
          <dd>{agent.maxSteps || "server default"}</dd>
          <dt>Budget</dt>
          <dd>
            {budgetText(agent.budget) ? (
              <>
                {budgetText(agent.budget)} for a session started with it and its helpers' sessions, unless whoever starts it sets one
                {agent.budget?.autoResume && "; resumes by itself when raised"}
              </>
            ) : (
              "none of its own (the owner's budget applies)"
            )}
          </dd>
          <dt>Mail</dt>
          <dd>{agent.mailInToolResult ? "folded into the last tool result" : "folded into a new user turn"}</dd>
          {isStored(agent) ? (
            <>
              <dt>Source</dt>
              <dd>stored in the server's database</dd>
              <dt>Version</dt>
              <dd>
                {String(agent.version)}
                {agent.updateTime && <>, written {timestampDate(agent.updateTime).toLocaleString()}</>}
              </dd>
            </>
          ) : (
            <>
              <dt>Source</dt>
              <dd>agent file</dd>
              <dt>File</dt>
              <dd>
                <code>{agent.file}</code>
              </dd>
            </>
          )}
        </dl>
      </section>

      <section aria-labelledby="agent-prompt">
        <h2 id="agent-prompt">System prompt</h2>
        {agent.systemPrompt.length ? <pre className="prompt">{agent.systemPrompt.join("\n")}</pre> : <p className="muted">None.</p>}
      </section>

      <section aria-labelledby="agent-tools">
        <h2 id="agent-tools">Tools ({agent.tools.length})</h2>
        {agent.tools.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <ul className="tool-list">
            {agent.tools.map((t) => (
              <li key={t.name}>
                <div className="tool-head">
                  <code className="tool-name">{t.name}</code>
                  <span className={`kind kind-${kindLabels[t.kind]}`}>{kindLabels[t.kind]}</span>
                  {/* A client or a system tool's source is its kind again: said once. */}
                  {t.source && t.source !== kindLabels[t.kind] && <span className="muted">{t.source}</span>}
                </div>
                {t.description && <p>{t.description}</p>}
                {t.parameters && (
                  <details>
                    <summary>Arguments schema</summary>
                    <pre>{JSON.stringify(t.parameters, null, 2)}</pre>
                  </details>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="agent-helpers">
        <h2 id="agent-helpers">Helpers</h2>
        {agent.helpers.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <ul>
            {agent.helpers.map((h) => (
              <li key={h}>
                <Link to={`/agents/${encodeURIComponent(h)}`}>{h}</Link>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="agent-params">
        <h2 id="agent-params">Params</h2>
        {agent.params.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <table className="params-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Required</th>
                <th scope="col">Secret</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {agent.params.map((p) => (
                <tr key={p.name}>
                  <td>
                    <code>{p.name}</code>
                  </td>
                  <td>{p.required ? "yes" : "no"}</td>
                  <td>{p.secret ? "yes" : "no"}</td>
                  <td>{p.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section aria-labelledby="agent-mcp">
        <h2 id="agent-mcp">MCP servers</h2>
        {agent.mcpServers.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <ul>
            {agent.mcpServers.map((s) => (
              <li key={s.name}>
                <strong>{s.name}</strong> ({s.transport}) <code>{s.target}</code>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
