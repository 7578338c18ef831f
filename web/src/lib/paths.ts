// The paths of the pages other pages link to (the agents, a session,
// the schedules, the webhooks); app/app.tsx routes them.

// The page that creates an agent: "+" is in no slug, so no agent's page
// is hidden behind it.
export const newAgentPath = "/agents/+new";

export function agentPath(slug: string, page?: "edit" | "versions"): string {
  return `/agents/${encodeURIComponent(slug)}${page ? `/${page}` : ""}`;
}

// The page of a session, which the schedules pages link their firings to.
export function sessionPath(id: string): string {
  return `/sessions/${encodeURIComponent(id)}`;
}

// The schedules, the page that creates one, and a schedule's page with
// its firings, or its edit page.
export const schedulesPath = "/schedules";
export const newSchedulePath = "/schedules/+new";

export function schedulePath(id: string, page?: "edit"): string {
  return `/schedules/${encodeURIComponent(id)}${page ? `/${page}` : ""}`;
}

// The webhooks, the page that registers one, and a webhook's page with
// its deliveries.
export const webhooksPath = "/webhooks";
export const newWebhookPath = "/webhooks/+new";

export function webhookPath(id: string): string {
  return `/webhooks/${encodeURIComponent(id)}`;
}
