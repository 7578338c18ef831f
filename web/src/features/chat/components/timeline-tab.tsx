import { useId } from "react";
import { Link } from "react-router";
import { formatCount, formatUsd } from "../../../lib/format";
import { useTimeline } from "../hooks/use-timeline";
import { extent, formatDuration, rowsOf, type Bar, type BarStatus } from "../lib/timeline";

const kindWords: Record<Bar["kind"], string> = {
  run: "Run",
  step: "Step",
  model: "Model call",
  tool: "Tool call",
  helper: "Helper",
  deferred: "Waits for an answer",
  compaction: "Summary",
};

const statusWords: Record<BarStatus, string> = {
  ok: "done",
  error: "failed",
  cancelled: "cancelled",
  waiting: "waiting",
  paused: "paused",
  running: "running",
};

// facts words a bar's duration, tokens, cost and, unless it is done,
// its status.
function facts(bar: Bar, end: number): { text: string; title?: string; className?: string }[] {
  const out: { text: string; title?: string; className?: string }[] = [
    { text: bar.end === undefined ? `${formatDuration(end - bar.start)}…` : formatDuration(end - bar.start) },
  ];
  const tokens = bar.tokensIn + bar.tokensOut;
  if (tokens > 0) out.push({ text: `${formatCount(tokens)} tok`, title: `${formatCount(bar.tokensIn)} in, ${formatCount(bar.tokensOut)} out` });
  if (bar.cost !== undefined) out.push({ text: formatUsd(bar.cost) });
  if (bar.status !== "ok") out.push({ text: statusWords[bar.status], className: `wf-status wf-status-${bar.status}` });
  return out;
}

// TimelineTab is the session's runs as a waterfall: each run, step,
// model call, tool call and helper session a bar placed on one time axis,
// nested as they ran, with its duration, tokens and cost, and live while
// anything runs. Read as a list, each row says the same in words.
export function TimelineTab({ sessionId }: { sessionId: string }) {
  const { runs, live, now, loading } = useTimeline(sessionId);
  const rows = rowsOf(runs);
  const span = extent(rows, now);
  const total = Math.max(1, span.end - span.start);
  const heading = useId();
  return (
    <section className="timeline-tab" aria-labelledby={heading}>
      <h2 id={heading} className="visually-hidden">
        Timeline
      </h2>
      <p className="muted timeline-summary" role="status">
        {loading
          ? "Loading the session's events…"
          : rows.length === 0
            ? "No runs yet: the timeline shows each run once the session has one."
            : `${runs.length} ${runs.length === 1 ? "run" : "runs"} over ${formatDuration(span.end - span.start)}${live ? ", running" : ""}.`}
      </p>
      {rows.length > 0 && (
        <ol className="waterfall" aria-label="Runs, steps and calls as they ran">
          {rows.map(({ bar, depth }) => {
            const end = bar.end ?? now;
            const left = ((bar.start - span.start) / total) * 100;
            const width = Math.max(0.4, ((end - bar.start) / total) * 100);
            return (
              <li key={bar.key} className={`wf-row wf-${bar.kind} wf-${bar.status}`}>
                <div className="wf-label" style={{ paddingInlineStart: `${depth * 0.9}rem` }}>
                  <span className="visually-hidden">{kindWords[bar.kind]}: </span>
                  <span className="wf-name">{bar.label}</span>
                  {bar.childSession && (
                    <Link className="wf-link" to={`/sessions/${bar.childSession}/timeline`} aria-label={`Open the helper session of ${bar.label}`}>
                      ↗
                    </Link>
                  )}
                </div>
                <div className="wf-track" aria-hidden="true">
                  <div className="wf-bar" style={{ left: `${left}%`, width: `${width}%` }} />
                </div>
                <div className="wf-facts">
                  {facts(bar, end).map((f, i) => (
                    <span key={f.text} className={f.className} title={f.title}>
                      <span className="visually-hidden">{i === 0 ? " — " : ", "}</span>
                      {f.text}
                    </span>
                  ))}
                </div>
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
