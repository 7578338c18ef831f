import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createConnectQueryKey, TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from "react";
import { AuthStore } from "../features/auth/api/auth-store";
import { AgentService } from "../gen/agents/v1/agent_pb";
import { ScheduleService } from "../gen/agents/v1/schedule_pb";
import { AuthContext } from "../features/auth/hooks/use-auth";
import { EventStream } from "../lib/event-stream";
import { EventStreamContext } from "../lib/event-stream-context";
import { createEventClient, createTransport, type TransportOptions } from "../lib/transport";

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A refused token is not retried: the sign-in form shows at once.
        retry: (n, err) => ConnectError.from(err).code !== Code.Unauthenticated && n < 1,
        staleTime: 5_000,
      },
    },
  });
}

// Providers wires the auth store, the one transport, the query cache and
// the one event stream for the whole app. Tests pass their own transport
// maker (handlers in memory) and auth store.
export function Providers({
  children,
  makeTransport = createTransport,
  authStore: givenAuth,
}: {
  children: ReactNode;
  makeTransport?: (opts: TransportOptions) => Transport;
  authStore?: AuthStore;
}) {
  const [authStore] = useState(() => givenAuth ?? new AuthStore());
  const transport = useMemo(
    () => makeTransport({ token: authStore.token, onUnauthenticated: authStore.refused }),
    [makeTransport, authStore],
  );
  const [queryClient] = useState(createQueryClient);
  const stream = useMemo(
    () => new EventStream(createEventClient(transport), { onUnauthenticated: authStore.refused }),
    [transport, authStore],
  );
  const auth = useSyncExternalStore(authStore.subscribe, authStore.getState);
  const blocked = auth.required && !auth.token;

  // The stream runs while the app may call the server, and starts again
  // (from its position) when the token changes.
  useEffect(() => {
    if (blocked) return;
    stream.start();
    return () => stream.stop();
  }, [stream, blocked, auth.token]);

  // Signed out: nothing of the last identity stays in the cache. Signed
  // in with another token: everything is fetched again.
  const lastToken = useRef(auth.token);
  useEffect(() => {
    if (blocked) queryClient.clear();
    else if (lastToken.current !== auth.token) void queryClient.resetQueries();
    lastToken.current = auth.token;
  }, [queryClient, blocked, auth.token]);

  // Reloaded agents: every agent query is asked again. A schedule
  // fired, or was created, changed or deleted (here or elsewhere): every
  // schedule query (the list, its next times, its last firing, its
  // history).
  useEffect(
    () =>
      stream.on((u) => {
        const body = u.event?.body.case;
        if (body === "agentsChanged") {
          void queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema: AgentService, cardinality: undefined }) });
        }
        if (body === "scheduleFired" || body === "scheduleChanged") {
          void queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema: ScheduleService, cardinality: undefined }) });
        }
      }),
    [stream, queryClient],
  );

  return (
    <AuthContext.Provider value={authStore}>
      <TransportProvider transport={transport}>
        <QueryClientProvider client={queryClient}>
          <EventStreamContext.Provider value={stream}>{children}</EventStreamContext.Provider>
        </QueryClientProvider>
      </TransportProvider>
    </AuthContext.Provider>
  );
}
