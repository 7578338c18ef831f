import { Code, ConnectError } from "@connectrpc/connect";
import { useTransport } from "@connectrpc/connect-query";
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { GetSessionRequestSchema } from "../../../gen/agents/v1/session_service_pb";
import { useEventStream } from "../../../lib/event-stream-context";
import { createSessionClient } from "../../../lib/transport";
import { hasHoles, initialState, sessionReducer, type SessionState } from "../lib/session-state";

// The turns fetched at once: the last ones on opening, then a page before
// the oldest held when scrolling up.
export const pageSize = 100;

export interface SessionView {
  state: SessionState;
  // The caller may read the session but not change it (an admin reading
  // another owner's session), as the server says.
  readOnly: boolean;
  error?: string;
  // The server has no such session (or none the caller may read).
  missing: boolean;
  olderLoading: boolean;
  loadOlder: () => void;
  reload: () => void;
}

// useSession follows one session: the last page of its turns with the
// turn in progress, the stream's events on top, older pages on request,
// and a refetch of what may have been missed after a snapshot, a hole in
// the turns or a change in the number of pending calls.
export function useSession(id: string): SessionView {
  const transport = useTransport();
  const client = useMemo(() => createSessionClient(transport), [transport]);
  const stream = useEventStream();
  const [state, dispatch] = useReducer(sessionReducer, id, initialState);
  const [error, setError] = useState<string>();
  const [missing, setMissing] = useState(false);
  const [readOnly, setReadOnly] = useState(false);
  const [olderLoading, setOlderLoading] = useState(false);
  const ref = useRef(state);
  ref.current = state;
  const alive = useRef(true);

  const fetchView = useCallback(
    async (req: MessageInitShape<typeof GetSessionRequestSchema>) => {
      dispatch({ type: "fetch" });
      try {
        const res = await client.getSession({ ...req, sessionId: id });
        if (!alive.current) return;
        if (!res.session) throw new Error("the server sent no session");
        dispatch({ type: "loaded", session: res.session });
        setReadOnly(res.readOnly);
        setError(undefined);
        setMissing(false);
      } catch (err) {
        if (!alive.current) return;
        dispatch({ type: "fetchFailed" });
        setError(err instanceof Error ? err.message : String(err));
        setMissing(ConnectError.from(err).code === Code.NotFound);
      }
    },
    [client, id],
  );

  // refetch asks for what came after the turns held without a gap.
  const refetch = useCallback(() => {
    const s = ref.current;
    if (!s.loaded) return void fetchView({ lastTurns: pageSize });
    const gap = s.turns.findIndex((t) => t === undefined);
    const held = gap < 0 ? s.turns.length : gap;
    const after = s.first + held - 1;
    const req: MessageInitShape<typeof GetSessionRequestSchema> = after >= 0 ? { afterTurn: after } : { lastTurns: pageSize };
    void fetchView(req);
  }, [fetchView]);

  useEffect(() => {
    alive.current = true;
    const off = stream.on((u) => {
      if (u.event) dispatch({ type: "event", event: u.event });
      else if (u.snapshot) refetch();
    });
    void fetchView({ lastTurns: pageSize });
    return () => {
      alive.current = false;
      off();
    };
  }, [stream, fetchView, refetch]);

  // A turn arrived past a missed one: fetch the ones between.
  const holes = state.loaded && hasHoles(state);
  useEffect(() => {
    if (holes && ref.current.fetching === 0) refetch();
  }, [holes, refetch]);

  // The number of pending calls changed without the events listing them
  // (answered elsewhere, a round deferred new ones): ask the server.
  const wanted = state.meta?.pendingCalls;
  const asked = useRef<number | undefined>(undefined);
  useEffect(() => {
    const s = ref.current;
    if (!s.loaded || wanted === undefined) return;
    if (wanted === s.pending.length) {
      asked.current = undefined;
      return;
    }
    if (asked.current === wanted) return;
    asked.current = wanted;
    void fetchView({ metaOnly: true });
  }, [wanted, state.pending.length, state.loaded, fetchView]);

  const loadOlder = useCallback(() => {
    const s = ref.current;
    if (!s.loaded || s.first <= 0 || olderLoading) return;
    setOlderLoading(true);
    client
      .getSession({ sessionId: id, beforeTurn: s.first, lastTurns: pageSize })
      .then((res) => {
        if (alive.current && res.session) dispatch({ type: "older", session: res.session });
      })
      .catch((err: unknown) => {
        if (alive.current) setError(err instanceof Error ? err.message : String(err));
      })
      .finally(() => {
        if (alive.current) setOlderLoading(false);
      });
  }, [client, id, olderLoading]);

  return { state, readOnly, error, missing, olderLoading, loadOlder, reload: refetch };
}
