import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useEffect, useMemo, type ReactNode } from "react";
import { useAuth } from "../features/auth/hooks/use-auth";
import { EventStream } from "../lib/event-stream";
import { EventStreamContext } from "../lib/event-stream-context";
import { createEventClient, createTransport } from "../lib/transport";

// Providers wires the one transport, the query cache and the one event
// stream for the whole app.
export function Providers({ children }: { children: ReactNode }) {
  const auth = useAuth();
  const transport = useMemo(
    () => createTransport({ token: () => auth.token(), onUnauthenticated: () => auth.signOut() }),
    [auth],
  );
  const queryClient = useMemo(() => new QueryClient({ defaultOptions: { queries: { retry: 1, staleTime: 5_000 } } }), []);
  const stream = useMemo(() => new EventStream(createEventClient(transport)), [transport]);
  useEffect(() => {
    stream.start();
    return () => stream.stop();
  }, [stream]);
  return (
    <TransportProvider transport={transport}>
      <QueryClientProvider client={queryClient}>
        <EventStreamContext.Provider value={stream}>{children}</EventStreamContext.Provider>
      </QueryClientProvider>
    </TransportProvider>
  );
}
