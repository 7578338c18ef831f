import { useTransport } from "@connectrpc/connect-query";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useReducer, useRef } from "react";
import { useEventStream } from "../../../lib/event-stream-context";
import { createSessionClient } from "../../../lib/transport";
import { initialSessionList, reduceSessionList, type SessionListState } from "../api/session-list";
import { listVisibleSessions } from "../api/list-sessions";

// The query key of the sidebar's listing; invalidating it lists again.
export const sessionListKey = ["sessions", "all"] as const;

// useSessionList keeps the sessions live: a full listing, then every
// event; a snapshot from the stream lists again. openId is the session
// on screen (read, and kept read).
export function useSessionList(openId: string | undefined): SessionListState & { error?: Error; refetch: () => void } {
  const transport = useTransport();
  const client = useMemo(() => createSessionClient(transport), [transport]);
  const stream = useEventStream();
  const queryClient = useQueryClient();
  const [state, dispatch] = useReducer(reduceSessionList, initialSessionList);
  const generation = useRef(0);

  const query = useQuery({
    queryKey: sessionListKey,
    queryFn: async ({ signal }) => {
      const g = ++generation.current;
      dispatch({ type: "refresh", generation: g });
      try {
        // Whether every owner's sessions are the caller's to see, as the
        // event stream learnt it from the server.
        const admin = await stream.whenAdminKnown(signal);
        return { generation: g, sessions: await listVisibleSessions(client, admin, signal) };
      } catch (err) {
        dispatch({ type: "failed", generation: g });
        throw err;
      }
    },
    staleTime: Infinity,
    structuralSharing: false,
  });

  useEffect(() => {
    if (query.data) dispatch({ type: "loaded", ...query.data });
  }, [query.data]);

  useEffect(
    () =>
      stream.on((u) => {
        if (u.event) dispatch({ type: "event", event: u.event });
        else if (u.snapshot) void queryClient.invalidateQueries({ queryKey: sessionListKey });
      }),
    [stream, queryClient],
  );

  useEffect(() => {
    dispatch({ type: "open", id: openId });
  }, [openId]);

  return { ...state, error: query.error ?? undefined, refetch: () => void query.refetch() };
}
