import { createContext, useContext, useSyncExternalStore } from "react";
import type { ConnState, EventStream } from "./event-stream";

// The app's one event stream, for every feature to listen to.
export const EventStreamContext = createContext<EventStream | null>(null);

export function useEventStream(): EventStream {
  const s = useContext(EventStreamContext);
  if (!s) throw new Error("useEventStream outside the app's providers");
  return s;
}

export function useConnectionState(): ConnState {
  const s = useEventStream();
  return useSyncExternalStore(
    (cb) => s.onState(cb),
    () => s.state,
  );
}

// useAdmin is whether the caller is an admin, as the stream learnt it
// from the server; undefined until the server answered.
export function useAdmin(): boolean | undefined {
  const s = useEventStream();
  return useSyncExternalStore(
    (cb) => s.onAdmin(cb),
    () => s.admin,
  );
}
