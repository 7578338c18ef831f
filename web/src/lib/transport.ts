import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AgentService } from "../gen/agents/v1/agent_pb";
import { EventService } from "../gen/agents/v1/event_pb";
import { SessionService } from "../gen/agents/v1/session_service_pb";

// The one place that builds the Connect transport. The app is served by
// `agents serve` itself, so the API lives at the page's origin.
export interface TransportOptions {
  baseUrl?: string;
  // token returns the bearer token to send, read at each call so a
  // sign-in takes effect at once.
  token?: () => string | undefined;
  // onUnauthenticated is told when the server refuses the token.
  onUnauthenticated?: () => void;
}

export function createTransport(opts: TransportOptions = {}): Transport {
  const auth: Interceptor = (next) => async (req) => {
    const token = opts.token?.();
    if (token) req.header.set("Authorization", `Bearer ${token}`);
    try {
      return await next(req);
    } catch (err) {
      if (ConnectError.from(err).code === Code.Unauthenticated) opts.onUnauthenticated?.();
      throw err;
    }
  };
  return createConnectTransport({
    baseUrl: opts.baseUrl ?? window.location.origin,
    interceptors: [auth],
  });
}

export function createAgentClient(transport: Transport) {
  return createClient(AgentService, transport);
}

export function createSessionClient(transport: Transport) {
  return createClient(SessionService, transport);
}

export function createEventClient(transport: Transport) {
  return createClient(EventService, transport);
}

export type AgentClient = ReturnType<typeof createAgentClient>;
export type SessionClient = ReturnType<typeof createSessionClient>;
export type EventClient = ReturnType<typeof createEventClient>;
