import type { SessionClient } from "../../../lib/transport";
import { ExportFormat } from "../../../gen/agents/v1/session_service_pb";

// exportMarkdown fetches the session as markdown and hands it to the
// browser as a downloaded .md file.
export async function exportMarkdown(client: SessionClient, id: string, title: string): Promise<void> {
  const res = await client.exportSession({ sessionId: id, format: ExportFormat.MARKDOWN });
  const blob = new Blob([res.content], { type: res.contentType || "text/markdown" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `${fileName(title || id)}.md`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function fileName(s: string): string {
  return (
    s
      .trim()
      .replace(/[^\p{L}\p{N}._-]+/gu, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 80) || "session"
  );
}
