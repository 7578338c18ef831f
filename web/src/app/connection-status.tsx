import { useEffect, useState } from "react";
import type { ConnState } from "../lib/event-stream";
import { useConnectionState } from "../lib/event-stream-context";

// ConnectionStatus shows the event stream's state: live, or when it tries
// again and why. Screen readers hear the changes of state, not the
// countdown.
export function ConnectionStatus() {
  const state = useConnectionState();
  const seconds = useCountdown(state);
  const { label, detail } = describe(state);
  return (
    <div className={`connection connection-${state.status}`}>
      <span className="connection-dot" aria-hidden="true" />
      <span role="status" aria-live="polite">
        {label}
        {detail && <span className="connection-detail">{detail}</span>}
      </span>
      {state.status === "reconnecting" && seconds > 0 && (
        <span className="connection-retry" aria-hidden="true">
          {" "}
          in {seconds} s
        </span>
      )}
    </div>
  );
}

function describe(s: ConnState): { label: string; detail?: string } {
  switch (s.status) {
    case "connecting":
      return { label: "Connecting…" };
    case "connected":
      return { label: "Live" };
    case "reconnecting":
      return { label: "Reconnecting", detail: s.error ? ` (${s.error})` : undefined };
    case "unauthenticated":
      return { label: "Signed out" };
    case "stopped":
      return { label: "Offline" };
  }
}

function useCountdown(s: ConnState): number {
  const retryAt = s.status === "reconnecting" ? s.retryAt : 0;
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!retryAt) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [retryAt]);
  return retryAt ? Math.max(0, Math.ceil((retryAt - now) / 1000)) : 0;
}
