import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AgentService } from "../gen/agents/v1/agent_pb";

// The one place that builds the Connect transport. The app is served by
// `agents serve` itself, so the API lives at the page's origin.
export function createTransport(baseUrl: string = window.location.origin): Transport {
  return createConnectTransport({ baseUrl });
}

export function createAgentClient(transport: Transport) {
  return createClient(AgentService, transport);
}

export type AgentClient = ReturnType<typeof createAgentClient>;
