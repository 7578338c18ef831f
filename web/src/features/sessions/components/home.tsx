import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { Link, useLocation, useNavigate, useSearchParams } from "react-router";
import { LimitsFields } from "../../../components/limits-fields";
import { AgentService, type AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { budgetOf, budgetText, hasLimit, isFieldError, parseLimits, type FieldError, type LimitFields } from "../../../lib/budget";
import { useBudgetsSupported } from "../../../lib/budgets-supported";
import { newAgentPath } from "../../../lib/paths";

// Home starts a new session: an agent picker, the agent's params, an
// optional first message and title, and, on a server that keeps budgets,
// an optional budget for the session's tree.
export function Home() {
  const [search] = useSearchParams();
  const location = useLocation();
  const navigate = useNavigate();
  const agents = useQuery(AgentService.method.listAgents, {});
  const [picked, setPicked] = useState(search.get("agent") ?? "");
  const [message, setMessage] = useState("");
  const [title, setTitle] = useState("");
  // Param values live in this form only: secrets are never stored.
  const [params, setParams] = useState<Record<string, string>>({});
  const [limits, setLimits] = useState<LimitFields>({ tokens: "", costUsd: "" });
  const [limitError, setLimitError] = useState<FieldError>();
  const budgets = useBudgetsSupported();
  const picker = useRef<HTMLFieldSetElement>(null);
  const ids = { heading: useId(), message: useId(), title: useId() };

  const list = [...(agents.data?.agents ?? [])].sort((a, b) => Number(!!a.parent) - Number(!!b.parent) || a.slug.localeCompare(b.slug));
  const agent: AgentDescriptor | undefined = list.find((a) => a.slug === picked) ?? list.find((a) => !a.parent) ?? list[0];

  const create = useMutation(SessionService.method.createSession, {
    onSuccess: (res) => {
      const id = res.session?.meta?.id;
      if (id) navigate(`/sessions/${id}`);
    },
  });

  useEffect(() => {
    if ((location.state as { focusPicker?: boolean } | null)?.focusPicker) {
      picker.current?.querySelector<HTMLInputElement>("input:checked, input")?.focus();
    }
  }, [location.key, location.state, agents.isSuccess]);

  function submit(e?: FormEvent) {
    e?.preventDefault();
    if (!agent || create.isPending) return;
    const given = Object.fromEntries(Object.entries(params).filter(([k, v]) => v !== "" && agent.params.some((p) => p.name === k)));
    const parsed = budgets ? parseLimits(limits) : {};
    if (isFieldError(parsed)) return setLimitError(parsed);
    setLimitError(undefined);
    const budget = budgetOf(parsed);
    create.mutate({
      agent: agent.slug,
      title: title.trim(),
      message: message.trim() ? { text: message } : undefined,
      params: given,
      budget: hasLimit(budget) ? budget : undefined,
      idempotencyKey: crypto.randomUUID(),
    });
  }

  return (
    <section className="home" aria-labelledby={ids.heading}>
      <h1 id={ids.heading}>New session</h1>
      {agents.isPending ? (
        <p>Loading agents…</p>
      ) : agents.error ? (
        <p role="alert" className="error">
          Could not load the agents: {agents.error.rawMessage}
        </p>
      ) : list.length === 0 ? (
        <p>
          The server has no agents. Add an agent file to its configuration and reload, or <Link to={newAgentPath}>create one</Link>.
        </p>
      ) : (
        <form onSubmit={submit} className="new-session">
          <fieldset ref={picker} className="agent-picker">
            <legend>Agent</legend>
            {list.map((a) => (
              <div key={a.slug} className={`agent-choice${a.slug === agent?.slug ? " picked" : ""}`}>
                <input
                  type="radio"
                  id={`agent-${a.slug}`}
                  name="agent"
                  value={a.slug}
                  checked={a.slug === agent?.slug}
                  onChange={() => setPicked(a.slug)}
                  aria-describedby={`agent-${a.slug}-about`}
                />
                <div className="agent-choice-text">
                  <label htmlFor={`agent-${a.slug}`} className="agent-slug">
                    {a.slug}
                  </label>
                  <span id={`agent-${a.slug}-about`} className="agent-announce">
                    {a.parent && <span className="muted">helper of {a.parent}. </span>}
                    {a.announce}
                  </span>
                </div>
                <Link to={`/agents/${encodeURIComponent(a.slug)}`} className="agent-details" aria-label={`About ${a.slug}`}>
                  About
                </Link>
              </div>
            ))}
          </fieldset>

          {agent && agent.params.length > 0 && (
            <fieldset className="params">
              <legend>Params of {agent.slug}</legend>
              {agent.params.map((p) => (
                <div key={p.name} className="field">
                  <label htmlFor={`param-${p.name}`}>
                    {p.name}
                    {p.required && <span aria-hidden="true"> *</span>}
                    {p.secret && <span className="muted"> (secret, kept in the server's memory only)</span>}
                  </label>
                  <input
                    id={`param-${p.name}`}
                    type={p.secret ? "password" : "text"}
                    autoComplete="off"
                    required={p.required}
                    aria-describedby={p.description ? `param-${p.name}-desc` : undefined}
                    value={params[p.name] ?? ""}
                    onChange={(e) => setParams({ ...params, [p.name]: e.target.value })}
                  />
                  {p.description && (
                    <p id={`param-${p.name}-desc`} className="muted">
                      {p.description}
                    </p>
                  )}
                </div>
              ))}
            </fieldset>
          )}

          <div className="field">
            <label htmlFor={ids.message}>First message (optional)</label>
            <textarea
              id={ids.message}
              rows={5}
              value={message}
              onChange={(e) => setMessage(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit();
              }}
              placeholder="Without a message the session waits for one."
            />
          </div>
          <div className="field">
            <label htmlFor={ids.title}>Title (optional)</label>
            <input id={ids.title} type="text" value={title} onChange={(e) => setTitle(e.target.value)} />
          </div>
          {budgets && (
            <details className="budget-options" open={!!limitError || undefined}>
              <summary>Budget (optional)</summary>
              <LimitsFields
                legend="Budget of the session"
                hint={`The session and its helper sessions spend it together; at a limit the run stops before its next model call. Empty: ${
                  budgetText(agent?.budget) ? `the agent's budget, ${budgetText(agent?.budget)}` : "no limit"
                }.`}
                values={limits}
                onChange={setLimits}
                error={limitError}
              />
            </details>
          )}
          {create.error && (
            <p role="alert" className="error">
              Could not start the session: {create.error.rawMessage}
            </p>
          )}
          <div className="actions">
            <button type="submit" className="button primary" disabled={!agent || create.isPending}>
              {create.isPending ? "Starting…" : `Start a session with ${agent?.slug ?? "…"}`}
            </button>
          </div>
        </form>
      )}
      {(agents.data?.errors.length ?? 0) > 0 && (
        <section aria-label="Agent files that did not load" className="load-errors">
          <h2>Agent files that did not load</h2>
          <ul>
            {agents.data!.errors.map((e, i) => (
              <li key={i}>
                <code>{e.file}</code>
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
