import type { AgentRow } from "../api/list-agents";

/** Renders the agents list as a table element. */
export function renderAgentsTable(doc: Document, rows: AgentRow[]): HTMLTableElement {
  const table = doc.createElement("table");
  const head = table.createTHead().insertRow();
  for (const title of ["Agent", "Model", "Tools", "Helpers", "About"]) {
    const th = doc.createElement("th");
    th.textContent = title;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const cell of [row.slug, row.model, String(row.tools), row.helpers.join(", "), row.announce]) {
      tr.insertCell().textContent = cell;
    }
  }
  return table;
}
