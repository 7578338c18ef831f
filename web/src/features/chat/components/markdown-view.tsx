import { memo, useMemo, type MouseEvent } from "react";
import { renderMarkdown } from "../lib/markdown";

// MarkdownView renders model text as sanitised markdown. A click on a
// code block's copy button copies the block.
export const MarkdownView = memo(function MarkdownView({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div className="markdown" onClick={copyCode} dangerouslySetInnerHTML={{ __html: html }} />;
});

function copyCode(e: MouseEvent<HTMLDivElement>) {
  const button = (e.target as HTMLElement).closest<HTMLButtonElement>("button[data-copy-code]");
  if (!button) return;
  const code = button.parentElement?.querySelector("code")?.textContent ?? "";
  void navigator.clipboard?.writeText(code).then(
    () => {
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = "Copy"), 1500);
    },
    () => {
      button.textContent = "Copy failed";
    },
  );
}
