import type { AgentClient } from "../../../lib/transport";

/** A row of the agents list. */
export interface AgentRow {
  slug: string;
  announce: string;
  model: string;
  tools: number;
  helpers: string[];
}

/** Loads the agents and the load problems the server reports. */
export async function listAgents(client: AgentClient): Promise<{ rows: AgentRow[]; problems: string[] }> {
  const res = await client.listAgents({});
  return {
    rows: res.agents.map((a) => ({
      slug: a.slug,
      announce: a.announce,
      model: a.model ? `${a.model.flavor} ${a.model.name}` : "",
      tools: a.tools.length,
      helpers: a.helpers,
    })),
    problems: res.errors.map((e) => [e.file, e.field, e.reason].filter(Boolean).join(": ")),
  };
}
