// How the chat view words things.

import type { Duration } from "@bufbuild/protobuf/wkt";
import type { MailEnvelope } from "../../../gen/agents/v1/mail_pb";
import { SessionStatus, ToolResultStatus, type Compaction, type Usage } from "../../../gen/agents/v1/session_pb";
import { formatCount, formatTokens, formatUsd } from "../../../lib/format";

export function statusLabel(s: SessionStatus | undefined): string {
  switch (s) {
    case SessionStatus.READY:
      return "ready";
    case SessionStatus.RUNNING:
      return "running";
    case SessionStatus.WAITING:
      return "waiting";
    case SessionStatus.PAUSED:
      return "paused";
    case SessionStatus.FAILED:
      return "failed";
  }
  return "loading";
}

export function resultLabel(s: ToolResultStatus): string {
  switch (s) {
    case ToolResultStatus.ERROR:
      return "error";
    case ToolResultStatus.CANCELLED:
      return "cancelled";
    case ToolResultStatus.ABORTED:
      return "aborted";
  }
  return "ok";
}

// compactionText says what a compaction did, on one line: "41 turns
// summarised · 38,204 → 2,310 tokens · $0.0012".
export function compactionText(c: Compaction): string {
  const parts: string[] = [];
  if (c.summarizedTurns > 0) parts.push(`${c.summarizedTurns} turn${c.summarizedTurns === 1 ? "" : "s"} summarised`);
  if (c.prunedResults > 0) parts.push(`${c.prunedResults} tool result${c.prunedResults === 1 ? "" : "s"} shortened`);
  if (parts.length === 0) parts.push("context compacted");
  if (c.tokensBefore > 0n) parts.push(`${formatTokens(c.tokensBefore)} → ${formatTokens(c.tokensAfter)} tokens`);
  const cost = c.usage?.costUsd;
  if (cost !== undefined && cost > 0) parts.push(formatUsd(cost));
  return parts.join(" · ");
}

// compactionReason is the reason a marker names; a compaction at the
// threshold is the usual one and says nothing.
export function compactionReason(reason: string): string | undefined {
  if (reason === "overflow") return "window overflowed";
  if (reason === "manual") return "on request";
  return undefined;
}

export function formatUsage(u: Usage | undefined): { label: string; value: string }[] {
  return [
    { label: "in", value: formatCount(u?.promptTokens ?? 0n) },
    { label: "out", value: formatCount(u?.completionTokens ?? 0n) },
    { label: "cached", value: formatCount(u?.cachedTokens ?? 0n) },
    { label: "reasoning", value: formatCount(u?.reasoningTokens ?? 0n) },
    // A server that knows no price for the model sends no cost.
    ...(u?.costUsd === undefined ? [] : [{ label: "cost", value: formatUsd(u.costUsd) }]),
  ];
}

export function formatDuration(d: Duration | undefined): string {
  if (!d) return "";
  const ms = Number(d.seconds) * 1000 + Math.round(d.nanos / 1e6);
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatBytes(n: number | bigint): string {
  const v = Number(n);
  if (v < 1024) return `${v} B`;
  if (v < 1024 * 1024) return `${(v / 1024).toFixed(1)} KB`;
  return `${(v / 1024 / 1024).toFixed(1)} MB`;
}

// Sender says who sent mail: the user, another session's agent, or the
// server itself; session is the sending session, to link to.
export interface Sender {
  label: string;
  session?: string;
}

export function senderOf(m: MailEnvelope): Sender {
  const k = m.sender?.kind;
  switch (k?.case) {
    case "user":
      return { label: k.value ? `user ${k.value}` : "user" };
    case "sessionId": {
      const agent = m.body?.kind.case === "agentMessage" ? m.body.kind.value.agent : "";
      return { label: agent ? `agent ${agent}` : "agent", session: k.value };
    }
    case "system":
      return { label: k.value ? `system (${k.value})` : "system" };
  }
  return { label: "unknown sender" };
}

// mailText is what a piece of mail says.
export function mailText(m: MailEnvelope): string {
  const b = m.body?.kind;
  switch (b?.case) {
    case "userMessage":
      return [b.value.text, ...b.value.attachmentNames.map((n) => `[attachment ${n}]`)].filter(Boolean).join("\n");
    case "agentMessage":
      return b.value.text;
    case "control": {
      const c = b.value.kind;
      switch (c.case) {
        case "stopRun":
          return `stop the run${c.value.reason ? `: ${c.value.reason}` : ""}`;
        case "cancelCalls":
          return `cancel the tool calls${c.value.reason ? `: ${c.value.reason}` : ""}`;
        case "resume":
          return `resume${c.value.reason ? `: ${c.value.reason}` : ""}`;
      }
      return "control";
    }
  }
  return "";
}

// prettyJson indents JSON text, or gives it back as it is when it does
// not parse (a call's arguments may be incomplete while they stream).
export function prettyJson(s: string): string {
  if (!s.trim()) return "";
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}

export function firstLine(s: string): string {
  const line = s.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

// helperProgress is what a helper's progress line says past the helper
// session's id it starts with ("CHILD-ID: calling bash_x" → "calling
// bash_x"), or undefined when it does not start with it.
export function helperProgress(line: string, child: string): string | undefined {
  const prefix = `${child}: `;
  return line.startsWith(prefix) ? line.slice(prefix.length) : undefined;
}
