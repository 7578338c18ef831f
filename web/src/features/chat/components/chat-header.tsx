import { useState } from "react";
import { Link } from "react-router";
import type { AgentDescriptor } from "../../../gen/agents/v1/agent_pb";
import { SessionStatus, type SessionMeta } from "../../../gen/agents/v1/session_pb";
import { formatUsage, statusLabel } from "../lib/format";

export interface Controls {
  pauseOrResume: () => void;
  cancelRun: () => void;
  hardCancel: () => void;
  forkHead: () => void;
  continueWith: (agent: string) => void;
  remove: () => void;
  exportMarkdown: () => void;
}

interface Props {
  meta?: SessionMeta;
  agents: AgentDescriptor[];
  busy: boolean;
  working: boolean;
  // Only what reads: the session is another owner's.
  readOnly?: boolean;
  controls: Controls;
}

// ChatHeader is the session's title, status, usage and controls. Pause or
// Resume follows the server's status.
export function ChatHeader({ meta, agents, busy, working, readOnly, controls }: Props) {
  const status = meta?.status;
  const resumable = status === SessionStatus.PAUSED || status === SessionStatus.FAILED || status === SessionStatus.WAITING;
  const usage = formatUsage(meta?.usage);
  return (
    <header className="chat-header">
      <div className="chat-title">
        <h1>{meta?.title || "Session"}</h1>
        <div className="chat-sub">
          {meta?.agent && <Link to={`/agents/${meta.agent}`}>{meta.agent}</Link>}
          <span className={`badge badge-${statusLabel(status)}`} role="status" aria-label={`Status: ${statusLabel(status)}`}>
            {statusLabel(status)}
          </span>
          {status === SessionStatus.FAILED && meta?.statusReason && <span className="error-text">{meta.statusReason}</span>}
          {meta?.parentId && <Link to={`/sessions/${meta.parentId}`}>parent session</Link>}
          {meta?.forkedFrom && <Link to={`/sessions/${meta.forkedFrom}`}>forked from</Link>}
        </div>
        <dl className="usage" aria-label="Token usage">
          {usage.map((u) => (
            <div key={u.label}>
              <dt>{u.label}</dt>
              <dd>{u.value}</dd>
            </div>
          ))}
        </dl>
      </div>
      <div className="chat-controls" role="toolbar" aria-label="Session controls">
        {readOnly ? (
          <button type="button" onClick={controls.exportMarkdown} disabled={!meta}>
            Export
          </button>
        ) : (
          <WriteControls meta={meta} agents={agents} busy={busy} working={working} resumable={resumable} controls={controls} />
        )}
      </div>
    </header>
  );
}

// WriteControls are the controls that change the session.
function WriteControls({ meta, agents, busy, working, resumable, controls }: Omit<Props, "readOnly"> & { resumable: boolean }) {
  const [other, setOther] = useState("");
  const status = meta?.status;
  return (
    <>
      {resumable ? (
        <button type="button" data-shortcut="pause" onClick={controls.pauseOrResume} disabled={working} title="Continue the run (Alt+P)">
          Resume
        </button>
      ) : (
        <button type="button" data-shortcut="pause" onClick={controls.pauseOrResume} disabled={working || status !== SessionStatus.RUNNING} title="Pause at the next step (Alt+P)">
          Pause
        </button>
      )}
      <button type="button" onClick={controls.cancelRun} disabled={working || !(busy || status === SessionStatus.PAUSED)}>
        Cancel run
      </button>
      <button type="button" onClick={controls.hardCancel} disabled={working || status !== SessionStatus.RUNNING} title="Cancel the tool calls in flight; the run goes on">
        Hard cancel
      </button>
      <button type="button" onClick={controls.forkHead} disabled={working || !meta} title="Fork a new session from the newest turn">
        Fork
      </button>
      <form
        className="continue"
        aria-label="Continue with another agent"
        onSubmit={(e) => {
          e.preventDefault();
          if (other) controls.continueWith(other);
        }}
      >
        <select aria-label="Agent to continue with" value={other} onChange={(e) => setOther(e.target.value)}>
          <option value="">Continue with…</option>
          {agents
            .filter((a) => a.slug !== meta?.agent)
            .map((a) => (
              <option key={a.slug} value={a.slug}>
                {a.slug}
              </option>
            ))}
        </select>
        <button type="submit" disabled={working || !other}>
          Continue
        </button>
      </form>
      <button type="button" onClick={controls.exportMarkdown} disabled={!meta}>
        Export
      </button>
      <button type="button" className="danger" onClick={controls.remove} disabled={!meta}>
        Delete
      </button>
    </>
  );
}
