import { SessionStatus } from "../gen/agents/v1/session_pb";
import { statusText } from "../lib/status-text";

const labels: Record<SessionStatus, string> = {
  [SessionStatus.UNSPECIFIED]: "unknown",
  [SessionStatus.READY]: "ready",
  [SessionStatus.RUNNING]: "running",
  [SessionStatus.WAITING]: "waiting",
  [SessionStatus.PAUSED]: "paused",
  [SessionStatus.FAILED]: "failed",
};

export function statusLabel(s: SessionStatus): string {
  return labels[s] ?? "unknown";
}

// StatusBadge shows a session's status as a word with a coloured mark, so
// it never depends on colour alone.
export function StatusBadge({ status, reason }: { status: SessionStatus; reason?: string }) {
  const label = statusLabel(status);
  return (
    <span className={`status-badge status-${label}`} title={statusText(label, reason)}>
      <span className="status-dot" aria-hidden="true" />
      {label}
    </span>
  );
}
