import { skipToken, useQuery } from "@connectrpc/connect-query";
import { Link } from "react-router";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { childOf, helperAgent, isHelper, type CallInfo } from "../lib/session-state";
import { formatDuration, helperProgress, prettyJson, resultLabel } from "../lib/format";

// ToolCallCard is one tool call: its name, arguments, live progress,
// result and how it ended; a helper call links to its child session.
export function ToolCallCard({ info }: { info: CallInfo }) {
  const name = info.call?.name ?? info.result?.name ?? "tool";
  const args = prettyJson(info.call?.arguments ?? "");
  const r = info.result;
  const state = r ? resultLabel(r.status) : info.deferred ? "waiting" : info.running ? "running" : "pending";
  const child = childOf(info);
  const helper = isHelper(info);
  return (
    <section role="group" aria-label={name} className={`tool-card tool-${state}`}>
      <header className="tool-head">
        <span className="tool-name">{name}</span>
        <span className={`badge badge-${state}`}>{info.deferred && !r ? `waiting: ${info.deferred.replaceAll("_", " ")}` : state}</span>
        {r?.duration && <span className="muted">{formatDuration(r.duration)}</span>}
      </header>
      {args && (
        <details className="tool-args">
          <summary>Arguments</summary>
          <pre>{args}</pre>
        </details>
      )}
      {helper && child && (
        <p className="tool-child">
          <Link to={`/sessions/${child}`}>Open the {helperAgent(info) ?? "helper"} session</Link>
          {info.childFailed && <span className="error-text"> — failed: {info.childFailed}</span>}
        </p>
      )}
      {!r && info.running && info.progress && (
        <p className="tool-progress" aria-live="polite">
          {helper && child ? <HelperProgress line={info.progress} child={child} agent={helperAgent(info)} /> : info.progress}
        </p>
      )}
      {r && (
        <details className="tool-result" open={r.text.length < 400}>
          <summary>{r.status === 1 ? "Result" : "Error"}</summary>
          <pre>{r.text}</pre>
        </details>
      )}
    </section>
  );
}

// HelperProgress is a helper's progress line ("CHILD-ID: calling bash_x")
// with the helper session's title in place of its id, linked to it.
function HelperProgress({ line, child, agent }: { line: string; child: string; agent?: string }) {
  const q = useQuery(SessionService.method.getSession, line.startsWith(child) ? { sessionId: child, metaOnly: true } : skipToken, {
    staleTime: 60_000,
    retry: false,
  });
  const p = helperProgress(line, child);
  if (!p) return <>{line}</>;
  const name = q.data?.session?.meta?.title.trim() || agent || "helper";
  return (
    <>
      <Link to={`/sessions/${child}`}>{name}</Link>: {p}
    </>
  );
}
