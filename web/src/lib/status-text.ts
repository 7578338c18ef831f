// statusText is a session's status with the reason it is in it, said
// once: a reason that only repeats the status ("waiting" for waiting) is
// left out, and a code (max_steps) is worded.
export function statusText(label: string, reason: string | undefined): string {
  const r = wordReason(reason ?? "");
  if (!r || r.toLowerCase() === label.toLowerCase()) return label;
  return `${label} — ${r}`;
}

const reasons: Record<string, string> = {
  done: "the run finished",
  max_steps: "the run reached its step limit",
  cancelled: "the run was cancelled",
};

function wordReason(reason: string): string {
  const r = reason.trim();
  return reasons[r] ?? r;
}
