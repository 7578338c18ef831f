import type { ModelDescriptor } from "../../../gen/agents/v1/agent_pb";

const grouped = (n: bigint) => Number(n).toLocaleString("en-US");

// limitsText says how much one request to the model may hold and when the
// agent's sessions are compacted: "context window 128,000 · max output
// 16,384 · compacts above 113,000 (builtin)"; undefined while the server
// does not know.
export function limitsText(m: ModelDescriptor | undefined): string | undefined {
  if (!m || m.contextWindow <= 0n) return undefined;
  const parts = [`context window ${grouped(m.contextWindow)}`];
  if (m.maxOutputTokens > 0n) parts.push(`max output ${grouped(m.maxOutputTokens)}`);
  if (m.compactThreshold > 0n) parts.push(`compacts above ${grouped(m.compactThreshold)}`);
  const text = parts.join(" · ");
  return m.limitsSource ? `${text} (${m.limitsSource})` : text;
}
