import { AgentSource, type AgentDescriptor } from "../../../gen/agents/v1/agent_pb";

// isStored reports whether an agent is the API's to change.
export function isStored(a: AgentDescriptor | undefined): boolean {
  return a?.source === AgentSource.STORED;
}

// sourceLabel words where an agent comes from; a server older than
// stored agents says nothing, and all its agents are files.
export function sourceLabel(a: AgentDescriptor): string {
  return a.source === AgentSource.STORED ? "stored" : "file";
}

// versionLabel is a stored agent's version ("v3"); a file agent has none.
export function versionLabel(a: AgentDescriptor): string {
  return isStored(a) && a.version > 0n ? `v${a.version}` : "—";
}
