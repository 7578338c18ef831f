import { memo } from "react";
import { Link } from "react-router";
import { MailPriority, type MailEnvelope } from "../../../gen/agents/v1/mail_pb";
import type { Attachment, Compaction, LlmTurn, Turn, UserTurn } from "../../../gen/agents/v1/session_pb";
import { compactionReason, compactionText, formatBytes, formatUsage, mailText, resultLabel, senderOf } from "../lib/format";
import type { CallInfo, LiveTurn } from "../lib/session-state";
import { MarkdownView } from "./markdown-view";
import { ToolCallCard } from "./tool-call-card";

interface TurnProps {
  turn: Turn;
  agent: string;
  calls: CallInfo[];
  onFork?: (index: number) => void;
}

// TurnView is one stored turn, as an article of the conversation.
export const TurnView = memo(function TurnView({ turn, agent, calls, onFork }: TurnProps) {
  const k = turn.kind;
  const who = k.case === "llm" ? agent || "agent" : "You";
  const fork = onFork && (
    <button type="button" className="fork-here" onClick={() => onFork(turn.index)} aria-label="Fork here" title={`Fork a new session at turn ${turn.index + 1}`}>
      Fork here
    </button>
  );
  if (k.case === "llm") {
    return (
      <article className={`turn turn-llm${k.value.interrupted ? " turn-interrupted" : ""}`} aria-label={`${who}, turn ${turn.index + 1}`}>
        <header className="turn-head">
          <span className="turn-who">{who}</span>
          {k.value.interrupted && <span className="badge badge-interrupted">interrupted</span>}
          {k.value.model && <span className="muted">{k.value.model}</span>}
          {fork}
        </header>
        <LlmBody llm={k.value} calls={calls} />
      </article>
    );
  }
  if (k.case === "user") {
    const u = k.value;
    const onlyResults = !u.text && u.attachments.length === 0 && u.mail.length === 0;
    return (
      <article className={`turn turn-user${onlyResults ? " turn-results" : ""}`} aria-label={onlyResults ? `Tool results, turn ${turn.index + 1}` : `${who}, turn ${turn.index + 1}`}>
        <header className="turn-head">
          <span className="turn-who">{onlyResults ? "Tool results" : who}</span>
          {fork}
        </header>
        <UserBody user={u} />
      </article>
    );
  }
  if (k.case === "compaction") return <CompactionMarker index={turn.index} c={k.value} />;
  return null;
});

// CompactionMarker is a compaction turn: one line across the
// conversation that says what it did, opening on the instruction it was
// given and the summary the model is sent from then on. The turns it
// covers stay above it as they were.
function CompactionMarker({ index, c }: { index: number; c: Compaction }) {
  const reason = compactionReason(c.reason);
  const cost = formatUsage(c.usage).filter((u) => u.label === "in" || u.label === "out");
  return (
    <article className="turn-compaction" aria-label={`Context compacted, turn ${index + 1}`}>
      <details className="compaction">
        <summary title="Show the summary">
          <span>
            <span className="compaction-text">{compactionText(c)}</span>
            {reason && <span className="compaction-reason"> · {reason}</span>}
          </span>
        </summary>
        <div className="compaction-body">
          {c.instruction && (
            <p>
              <span className="muted">Instruction:</span> {c.instruction}
            </p>
          )}
          {c.summaryEnd > 0 && c.summary && (
            <>
              <p className="muted">
                Turns 1–{c.summaryEnd} above are sent to the model as this summary{c.model ? `, written by ${c.model}` : ""}:
              </p>
              <MarkdownView text={c.summary} />
            </>
          )}
          {c.pruneEnd > 0 && c.prunedResults > 0 && (
            <p className="muted">
              {c.prunedResults} long tool result{c.prunedResults === 1 ? "" : "s"} of turns 1–{c.pruneEnd} sent shortened to the model.
            </p>
          )}
          {c.usage && (c.usage.promptTokens > 0n || c.usage.completionTokens > 0n) && (
            <p className="muted">Summary call: {cost.map((u) => `${u.label} ${u.value}`).join(" · ")}</p>
          )}
        </div>
      </details>
    </article>
  );
}

function LlmBody({ llm, calls }: { llm: Pick<LlmTurn, "text" | "thinking">; calls: CallInfo[] }) {
  return (
    <>
      {llm.thinking && (
        <details className="thinking">
          <summary>Thinking</summary>
          <p className="thinking-text">{llm.thinking}</p>
        </details>
      )}
      {llm.text && <MarkdownView text={llm.text} />}
      {calls.map((c, i) => (
        <ToolCallCard key={c.call?.id ?? i} info={c} />
      ))}
    </>
  );
}

function UserBody({ user }: { user: UserTurn }) {
  return (
    <>
      {user.text && <p className="user-text">{user.text}</p>}
      {user.attachments.length > 0 && (
        <ul className="attachments" aria-label="Attachments">
          {user.attachments.map((a, i) => (
            <AttachmentView key={i} a={a} />
          ))}
        </ul>
      )}
      {user.mail.map((m) => (
        <MailView key={m.id} m={m} />
      ))}
      {user.toolResults.length > 0 && (
        <details className="results">
          <summary>
            {user.toolResults.length} tool result{user.toolResults.length === 1 ? "" : "s"} sent back
          </summary>
          <ul>
            {user.toolResults.map((r) => (
              <li key={r.callId}>
                <span className="tool-name">{r.name}</span> <span className={`badge badge-${resultLabel(r.status)}`}>{resultLabel(r.status)}</span>
                <pre>{r.text}</pre>
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

function AttachmentView({ a }: { a: Attachment }) {
  const size = a.size ? Number(a.size) : a.data.length;
  if (a.mediaType.startsWith("image/") && a.data.length > 0) {
    const url = `data:${a.mediaType};base64,${toBase64(a.data)}`;
    return (
      <li className="attachment">
        <img src={url} alt={a.name} className="attachment-image" />
      </li>
    );
  }
  return (
    <li className="attachment chip">
      {a.name} <span className="muted">({formatBytes(size)})</span>
    </li>
  );
}

function toBase64(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

// MailView is mail folded into a turn, with its sender. The user's own
// message sent during a run (an interrupt, or one that waited for the
// next step) is the user's message, said as such.
export function MailView({ m }: { m: MailEnvelope }) {
  if (m.sender?.kind.case === "user" && m.body?.kind.case === "userMessage") {
    const urgent = m.priority === MailPriority.URGENT;
    return (
      <div className="user-mail" role="note" aria-label={urgent ? "Your message, interrupting the run" : "Your message, sent during the run"}>
        <span className="mail-from">{urgent ? "Interrupted the run" : "Sent during the run"}</span>
        <p className="user-text">{mailText(m)}</p>
      </div>
    );
  }
  const from = senderOf(m);
  return (
    <div className="mail" role="note" aria-label={`Mail from ${from.label}`}>
      <span className="mail-from">
        Mail from {from.session ? <Link to={`/sessions/${from.session}`}>{from.label}</Link> : from.label}
      </span>
      <p className="mail-text">{mailText(m)}</p>
    </div>
  );
}

// LiveTurnView is the answer being streamed.
export function LiveTurnView({ live, agent, calls }: { live: LiveTurn; agent: string; calls: CallInfo[] }) {
  return (
    <article className="turn turn-llm turn-live" aria-label={`${agent || "agent"}, answering`} aria-busy="true">
      <header className="turn-head">
        <span className="turn-who">{agent || "agent"}</span>
        <span className="badge badge-running">answering…</span>
      </header>
      <LlmBody llm={live} calls={calls} />
    </article>
  );
}
