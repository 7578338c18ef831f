// A session's runs as a waterfall, derived from the session's own events
// (and its helper sessions'), with no trace collector: the same facts the
// server's traces export — a run (invoke_agent), its steps, each step's
// model call (chat) and tool calls (execute_tool), a helper's session
// nested under the call that started it — each with when it started and
// ended, its tokens and its cost.
//
// Where each time comes from:
// - a run: run.started to run.stopped (or session.failed);
// - a model call: it ends when its answer is stored (the LLM turn's
//   create_time, carried by session.updated) and began its duration
//   before; a turn without a duration (stored by an older server) began
//   where the run's previous step ended;
// - a tool call: tool.started to tool.completed (a deferred call:
//   calls.deferred to the user turn that carries its result);
// - a helper's session: subcall.started names it under its call; its own
//   events give its runs;
// - a summary of the conversation: compaction.started to session.compacted.
// What has begun and not ended has no end: it is running, drawn to now.

import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { RunTrigger, type Event } from "../../../gen/agents/v1/event_pb";
import { ToolKind } from "../../../gen/agents/v1/agent_pb";
import { SessionStatus, ToolResultStatus, type Usage } from "../../../gen/agents/v1/session_pb";

export type BarKind = "run" | "step" | "model" | "tool" | "helper" | "deferred" | "compaction";
export type BarStatus = "ok" | "error" | "cancelled" | "waiting" | "paused" | "running";

// Bar is one span of the waterfall. Tokens and cost are its own and its
// children's together (a step's are its model call's and its helpers',
// a run's its steps').
export interface Bar {
  key: string;
  kind: BarKind;
  label: string;
  sessionId: string;
  // Milliseconds since the epoch; end is undefined while it runs.
  start: number;
  end?: number;
  status: BarStatus;
  tokensIn: number;
  tokensOut: number;
  // Dollars; undefined when no call under it had a price.
  cost?: number;
  children: Bar[];
  // The helper's session, for a helper call.
  childSession?: string;
}

const durationMs = (d: Duration) => Number(d.seconds) * 1000 + d.nanos / 1e6;

function bar(kind: BarKind, key: string, sessionId: string, label: string, start: number): Bar {
  return { key, kind, label, sessionId, start, status: "running", tokensIn: 0, tokensOut: 0, children: [] };
}

function spend(b: Bar, u: Usage | undefined) {
  if (!u) return;
  b.tokensIn += Number(u.promptTokens);
  b.tokensOut += Number(u.completionTokens);
  if (u.costUsd !== undefined) b.cost = (b.cost ?? 0) + u.costUsd;
}

const triggerWords: Record<number, string> = {
  [RunTrigger.MESSAGE]: "message",
  [RunTrigger.MAIL]: "mail",
  [RunTrigger.RESUME]: "resume",
  [RunTrigger.RECOVERY]: "recovery",
  [RunTrigger.COMPACT]: "compaction",
};

function stopStatus(status: SessionStatus): BarStatus {
  switch (status) {
    case SessionStatus.FAILED:
      return "error";
    case SessionStatus.WAITING:
      return "waiting";
    case SessionStatus.PAUSED:
      return "paused";
  }
  return "ok";
}

function resultStatus(s: ToolResultStatus): BarStatus {
  switch (s) {
    case ToolResultStatus.ERROR:
      return "error";
    case ToolResultStatus.CANCELLED:
    case ToolResultStatus.ABORTED:
      return "cancelled";
  }
  return "ok";
}

// runsOf derives one session's runs from its events, in the order they
// were logged; helpers' runs are nested by timelineOf.
function runsOf(sessionId: string, events: readonly Event[]): Bar[] {
  const runs: Bar[] = [];
  let run: Bar | undefined;
  let step: Bar | undefined;
  let compaction: Bar | undefined;
  let steps = 0;
  // Where the next model call begins when its duration is unknown.
  let mark = 0;
  const calls = new Map<string, Bar>();
  // A turn counts once, whatever event carried it again.
  const turns = new Set<number>();
  const key = (what: string, ev: Event) => `${sessionId}:${what}:${ev.seq}`;

  const ensureRun = (ev: Event, t: number): Bar => {
    if (!run) {
      // The run began before the events at hand (the log's retention).
      run = bar("run", key("run", ev), sessionId, "run", t);
      runs.push(run);
      mark = t;
    }
    return run;
  };
  const stop = (t: number, status: BarStatus) => {
    if (!run) return;
    run.end = t;
    run.status = status;
    // What the run left running ends with it, but a deferred call waits
    // on past its run for its answer.
    for (const s of run.children) {
      for (const c of s.children) {
        if (c.end === undefined && c.kind !== "deferred" && c.kind !== "helper") {
          c.end = t;
          c.status = "cancelled";
        }
      }
    }
    if (compaction && compaction.end === undefined) {
      compaction.end = t;
      compaction.status = "cancelled";
    }
    run = step = compaction = undefined;
  };

  for (const ev of events) {
    const t = ev.time ? timestampMs(ev.time) : 0;
    const b = ev.body;
    switch (b.case) {
      case "runStarted": {
        if (run) stop(t, "ok");
        steps = 0;
        const trigger = triggerWords[b.value.trigger];
        run = bar("run", key("run", ev), sessionId, trigger ? `run (${trigger})` : "run", t);
        runs.push(run);
        mark = t;
        break;
      }
      case "runStopped":
        stop(t, stopStatus(b.value.status));
        break;
      case "sessionFailed":
        stop(t, "error");
        break;
      case "sessionUpdated": {
        const turn = b.value.headTurn;
        if (!turn || turns.has(turn.index)) break;
        turns.add(turn.index);
        const at = turn.createTime ? timestampMs(turn.createTime) : t;
        if (turn.kind.case === "llm") {
          const r = ensureRun(ev, t);
          const llm = turn.kind.value;
          const start = llm.duration ? at - durationMs(llm.duration) : mark;
          steps++;
          step = bar("step", key("step", ev), sessionId, `step ${steps}`, start);
          const model = bar("model", key("model", ev), sessionId, llm.model || "model call", start);
          model.end = at;
          model.status = llm.interrupted ? "cancelled" : "ok";
          spend(model, llm.usage);
          step.children.push(model);
          r.children.push(step);
          mark = at;
        } else if (turn.kind.case === "user") {
          for (const res of turn.kind.value.toolResults) {
            const c = calls.get(res.callId);
            if (c && c.end === undefined) {
              c.end = t;
              c.status = resultStatus(res.status);
            }
          }
          if (run) mark = Math.max(mark, at);
        }
        break;
      }
      case "toolStarted": {
        const call = b.value.call;
        if (!call) break;
        const r = ensureRun(ev, t);
        if (!step) {
          step = bar("step", key("step", ev), sessionId, `step ${++steps}`, t);
          r.children.push(step);
        }
        const c = bar(call.kind === ToolKind.HELPER ? "helper" : "tool", key(`tool-${call.id}`, ev), sessionId, call.name, t);
        step.children.push(c);
        calls.set(call.id, c);
        break;
      }
      case "toolCompleted": {
        const res = b.value.result;
        if (!res) break;
        let c = calls.get(res.callId);
        if (!c) {
          // Started before the events at hand: its duration says when.
          const r = ensureRun(ev, t);
          const start = res.duration ? t - durationMs(res.duration) : t;
          c = bar("tool", key(`tool-${res.callId}`, ev), sessionId, res.name, start);
          if (!step) {
            step = bar("step", key("step", ev), sessionId, `step ${++steps}`, start);
            r.children.push(step);
          }
          step.children.push(c);
          calls.set(res.callId, c);
        }
        c.end = t;
        c.status = resultStatus(res.status);
        if (res.childSessionId) c.childSession = res.childSessionId;
        break;
      }
      case "callsDeferred": {
        const r = ensureRun(ev, t);
        for (const d of b.value.calls) {
          if (!d.call) continue;
          if (!step) {
            step = bar("step", key("step", ev), sessionId, `step ${++steps}`, t);
            r.children.push(step);
          }
          const c = bar("deferred", key(`deferred-${d.call.id}`, ev), sessionId, `${d.call.name} (${d.reason || "client"})`, t);
          c.status = "waiting";
          step.children.push(c);
          calls.set(d.call.id, c);
        }
        break;
      }
      case "subcallStarted": {
        const c = calls.get(b.value.callId);
        if (c) {
          c.kind = "helper";
          c.childSession = b.value.childSessionId;
          if (b.value.agent && !c.label.includes(b.value.agent)) c.label = `${c.label} → ${b.value.agent}`;
        }
        break;
      }
      case "subcallCompleted":
      case "subcallFailed": {
        const c = calls.get(b.value.callId);
        if (c && c.end === undefined) {
          c.end = t;
          c.status = b.case === "subcallFailed" ? "error" : "ok";
        }
        break;
      }
      case "compactionStarted": {
        const r = ensureRun(ev, t);
        compaction = bar("compaction", key("compaction", ev), sessionId, `summary (${b.value.reason || "compaction"})`, t);
        r.children.push(compaction);
        break;
      }
      case "sessionCompacted": {
        const turn = b.value.turn;
        const c = compaction;
        if (c) {
          c.end = t;
          c.status = "ok";
          if (turn?.kind.case === "compaction") spend(c, turn.kind.value.usage);
          compaction = undefined;
          mark = t;
        }
        break;
      }
    }
  }
  // A run under way with nothing else running is calling its model.
  if (run && run.end === undefined && !compaction) {
    const busy = run.children.some((s) => s.children.some((c) => c.end === undefined));
    if (!busy) {
      const s = bar("step", `${sessionId}:step:live`, sessionId, `step ${steps + 1}`, mark);
      s.children.push(bar("model", `${sessionId}:model:live`, sessionId, "model call", mark));
      run.children.push(s);
    }
  }
  return runs;
}

// settle fills in what comes from the children: a step ends with the
// last of its calls (and runs while any does), and every bar's tokens and
// cost are its own plus its children's.
function settle(b: Bar) {
  for (const c of b.children) settle(c);
  if (b.kind === "step") {
    const ends = b.children.map((c) => c.end);
    b.end = ends.some((e) => e === undefined) ? undefined : Math.max(b.start, ...(ends as number[]));
    b.status = b.end === undefined ? "running" : b.children.some((c) => c.status === "error") ? "error" : "ok";
  }
  for (const c of b.children) {
    b.tokensIn += c.tokensIn;
    b.tokensOut += c.tokensOut;
    if (c.cost !== undefined) b.cost = (b.cost ?? 0) + c.cost;
  }
}

// timelineOf is the waterfall of the session root: its runs, with each
// helper call holding the runs of the helper's session, from the events
// of each session (events by session id, each list in log order).
export function timelineOf(root: string, events: ReadonlyMap<string, readonly Event[]>): Bar[] {
  const seen = new Set<string>();
  const build = (id: string): Bar[] => {
    seen.add(id);
    const runs = runsOf(id, events.get(id) ?? []);
    const nest = (b: Bar) => {
      b.children.forEach(nest);
      if (b.childSession && !seen.has(b.childSession)) b.children.push(...build(b.childSession));
    };
    runs.forEach(nest);
    return runs;
  };
  const runs = build(root);
  runs.forEach(settle);
  return runs;
}

// helperSessions lists the helper sessions a session's events name, so a
// client can fetch their events too.
export function helperSessions(events: readonly Event[]): string[] {
  const out: string[] = [];
  for (const ev of events) {
    if (ev.body.case === "subcallStarted" && !out.includes(ev.body.value.childSessionId)) out.push(ev.body.value.childSessionId);
  }
  return out;
}

// Row is a bar with its depth in the tree, as a list draws it.
export interface Row {
  bar: Bar;
  depth: number;
}

// rowsOf lays the tree out depth first.
export function rowsOf(bars: readonly Bar[], depth = 0, out: Row[] = []): Row[] {
  for (const b of bars) {
    out.push({ bar: b, depth });
    rowsOf(b.children, depth + 1, out);
  }
  return out;
}

// extent is the span the waterfall covers: from the first start to the
// last end, or now while anything runs.
export function extent(rows: readonly Row[], now: number): { start: number; end: number } {
  if (rows.length === 0) return { start: now, end: now };
  let start = Infinity;
  let end = -Infinity;
  for (const { bar } of rows) {
    start = Math.min(start, bar.start);
    end = Math.max(end, bar.end ?? now);
  }
  return { start, end: Math.max(end, start) };
}

// running says whether anything in the tree is still under way.
export function running(bars: readonly Bar[]): boolean {
  return bars.some((b) => b.end === undefined || running(b.children));
}

// formatDuration words a span for the waterfall: 850 ms, 1.2 s, 3 min 4 s.
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
