// The paths of the agent pages, which the agents pages and the start
// page link to; app/app.tsx routes them.

// The page that creates an agent: "+" is in no slug, so no agent's page
// is hidden behind it.
export const newAgentPath = "/agents/+new";

export function agentPath(slug: string, page?: "edit" | "versions"): string {
  return `/agents/${encodeURIComponent(slug)}${page ? `/${page}` : ""}`;
}
