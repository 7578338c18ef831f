import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import type { DeferredCall } from "../../../gen/agents/v1/session_pb";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { errorText } from "../../../lib/error-text";
import { prettyJson } from "../lib/format";

interface Props {
  calls: DeferredCall[];
  params: Record<string, string>;
  // Only list the calls: the session is not the caller's to answer.
  readOnly?: boolean;
}

// PendingCalls lists the session's deferred calls, each with a form to
// answer it or fail it. The run resumes with the answer to the last one.
// A call answered elsewhere goes when the server says so.
export function PendingCalls({ calls, params, readOnly }: Props) {
  const [answered, setAnswered] = useState<Set<string>>(new Set());
  const open = calls.filter((c) => !answered.has(c.token));
  if (calls.length === 0) return null;
  if (readOnly) {
    return (
      <section className="pending" role="region" aria-label="Pending calls">
        <h2 className="pending-title">
          {calls.length} call{calls.length === 1 ? "" : "s"} waiting for the owner's answer
        </h2>
        <ul>
          {calls.map((c) => (
            <li key={c.token} className="pending-call">
              <p>
                <span className="tool-name">{c.call?.name ?? "call"}</span> <span className="muted">{c.reason.replaceAll("_", " ")}</span>
              </p>
              {c.call?.arguments && <pre className="pending-args">{prettyJson(c.call.arguments)}</pre>}
            </li>
          ))}
        </ul>
      </section>
    );
  }
  return (
    <section className="pending" role="region" aria-label="Pending calls">
      <h2 className="pending-title">
        {open.length} call{open.length === 1 ? "" : "s"} waiting for an answer
      </h2>
      <ul>
        {calls.map((c) => (
          <PendingCall
            key={c.token}
            call={c}
            params={params}
            hidden={answered.has(c.token)}
            isLast={open.length === 1 && open[0].token === c.token}
            onAnswered={() => setAnswered((s) => new Set(s).add(c.token))}
          />
        ))}
      </ul>
    </section>
  );
}

function PendingCall({ call, params, hidden, isLast, onAnswered }: { call: DeferredCall; params: Record<string, string>; hidden: boolean; isLast: boolean; onAnswered: () => void }) {
  const [text, setText] = useState("");
  const complete = useMutation(SessionService.method.completeCall);
  const name = call.call?.name ?? "call";
  if (hidden) return null;
  if (call.reason === "approval") return <ApprovalCall call={call} params={params} onAnswered={onAnswered} />;
  const answer = (fail: boolean) => {
    const result = fail
      ? ({ case: "error", value: text.trim() || "the user declined this call" } as const)
      : ({ case: "text", value: text } as const);
    complete.mutate({ token: call.token, result, resume: isLast, params }, { onSuccess: onAnswered });
  };
  return (
    <li className="pending-call">
      <form
        aria-label={`Answer ${name}`}
        onSubmit={(e) => {
          e.preventDefault();
          answer(false);
        }}
      >
        <p>
          <span className="tool-name">{name}</span> <span className="muted">{call.reason.replaceAll("_", " ")}</span>
        </p>
        {call.call?.arguments && <pre className="pending-args">{prettyJson(call.call.arguments)}</pre>}
        <textarea aria-label="Result" rows={2} value={text} onChange={(e) => setText(e.target.value)} placeholder={call.reason === "approval" ? "Why (for a refusal)" : "The answer the model receives"} />
        <div className="row">
          <button type="submit" className="primary" disabled={complete.isPending}>
            Answer
          </button>
          <button type="button" onClick={() => answer(true)} disabled={complete.isPending}>
            Fail
          </button>
          {isLast && <span className="muted">the run resumes with this answer</span>}
        </div>
        {complete.error && (
          <p role="alert" className="error-text">
            {errorText(complete.error)}
          </p>
        )}
      </form>
    </li>
  );
}

// ApprovalCall asks whether the server may run a call the agent's policy
// holds back: approving runs it, refusing tells the model why, and
// "Always allow" approves this tool for the rest of the session.
function ApprovalCall({ call, params, onAnswered }: { call: DeferredCall; params: Record<string, string>; onAnswered: () => void }) {
  const [reason, setReason] = useState("");
  const complete = useMutation(SessionService.method.completeCall);
  const name = call.call?.name ?? "call";
  const answer = (approve: boolean, always = false) =>
    complete.mutate(
      { token: call.token, result: { case: "approval", value: { approve, always, reason: reason.trim() } }, params },
      { onSuccess: onAnswered },
    );
  return (
    <li className="pending-call">
      <form
        aria-label={`Approve ${name}`}
        onSubmit={(e) => {
          e.preventDefault();
          answer(true);
        }}
      >
        <p>
          <span className="tool-name">{name}</span> <span className="muted">wants to run: approve it?</span>
        </p>
        {call.call?.arguments && <pre className="pending-args">{prettyJson(call.call.arguments)}</pre>}
        <textarea aria-label="Reason" rows={1} value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Why not (the model reads it when you reject)" />
        <div className="row">
          <button type="submit" className="primary" disabled={complete.isPending}>
            Approve
          </button>
          <button type="button" onClick={() => answer(true, true)} disabled={complete.isPending}>
            Always allow
          </button>
          <button type="button" onClick={() => answer(false)} disabled={complete.isPending}>
            Reject
          </button>
        </div>
        {complete.error && (
          <p role="alert" className="error-text">
            {errorText(complete.error)}
          </p>
        )}
      </form>
    </li>
  );
}
