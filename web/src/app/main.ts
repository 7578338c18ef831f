import { listAgents } from "../features/agents/api/list-agents";
import { renderAgentsTable } from "../features/agents/components/agents-table";
import { createAgentClient, createTransport } from "../lib/transport";

async function start(root: HTMLElement) {
  const client = createAgentClient(createTransport());
  const heading = document.createElement("h1");
  heading.textContent = "agents";
  root.replaceChildren(heading);
  try {
    const { rows, problems } = await listAgents(client);
    root.appendChild(renderAgentsTable(document, rows));
    for (const problem of problems) {
      const p = document.createElement("p");
      p.className = "problem";
      p.textContent = problem;
      root.appendChild(p);
    }
  } catch (err) {
    const p = document.createElement("p");
    p.className = "problem";
    p.textContent = `cannot reach the server: ${String(err)}`;
    root.appendChild(p);
  }
}

const root = document.getElementById("app");
if (root) void start(root);
