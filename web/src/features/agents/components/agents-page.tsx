import { useQuery } from "@connectrpc/connect-query";
import { useId } from "react";
import { Link } from "react-router";
import { AgentService } from "../../../gen/agents/v1/agent_pb";
import { errorText } from "../../../lib/error-text";
import { agentPath, newAgentPath } from "../../../lib/paths";
import { isStored, sourceLabel, versionLabel } from "../lib/source";

// AgentsPage lists every agent the server offers, file and stored, each
// with where it comes from and, stored, its version; New agent stores
// another.
export function AgentsPage() {
  const q = useQuery(AgentService.method.listAgents, {});
  const heading = useId();
  const agents = q.data?.agents ?? [];
  return (
    <section className="page-content agents-page" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>Agents</h1>
        <Link to={newAgentPath} className="button primary">
          New agent
        </Link>
      </header>
      {q.isPending ? (
        <p>Loading agents…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the agents: {errorText(q.error)}
        </p>
      ) : agents.length === 0 ? (
        <p>The server has no agents yet: add an agent file to its configuration, or create one here.</p>
      ) : (
        <ul className="agent-list" aria-label="Agents">
          {agents.map((a) => (
            <li key={a.slug}>
              <div className="agent-row-head">
                <Link to={agentPath(a.slug)} className="agent-slug">
                  {a.slug}
                </Link>
                <span className={`kind source-${sourceLabel(a)}`}>{sourceLabel(a)}</span>
                {isStored(a) && <span className="muted">{versionLabel(a)}</span>}
                {a.parent && <span className="muted">helper of {a.parent}</span>}
              </div>
              {a.announce && <p className="agent-announce">{a.announce}</p>}
            </li>
          ))}
        </ul>
      )}
      {(q.data?.errors.length ?? 0) > 0 && (
        <section aria-label="Agents that did not load" className="load-errors">
          <h2>Agents that did not load</h2>
          <ul>
            {q.data!.errors.map((e, i) => (
              <li key={i}>
                <code>{e.agent || e.file}</code>
                {e.field && (
                  <>
                    {" "}
                    at <code>{e.field}</code>
                  </>
                )}
                : {e.reason}
              </li>
            ))}
          </ul>
        </section>
      )}
    </section>
  );
}
