import { useTransport } from "@connectrpc/connect-query";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useReducer, useRef } from "react";
import { useAuthStore } from "../../auth/hooks/use-auth";
import { useEventStream } from "../../../lib/event-stream-context";
import { createSessionClient } from "../../../lib/transport";
import { initialSessionList, reduceSessionList, type SessionListState } from "../api/session-list";
import { VisibleSessions } from "../api/list-sessions";

// The query key of the sidebar's listing; invalidating it lists again.
export const sessionListKey = ["sessions", "all"] as const;

// useSessionList keeps the sessions live: a full listing, then every
// event; a snapshot from the stream lists again. openId is the session
// on screen (read, and kept read).
export function useSessionList(openId: string | undefined): SessionListState & { error?: Error; refetch: () => void } {
  const transport = useTransport();
  const authStore = useAuthStore();
  const lister = useMemo(() => new VisibleSessions(createSessionClient(transport), authStore.token), [transport, authStore]);
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
        return { generation: g, sessions: await lister.list(signal) };
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
