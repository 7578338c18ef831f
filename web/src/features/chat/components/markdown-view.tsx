import { memo, useMemo, useState, type MouseEvent } from "react";
import { renderMarkdown } from "../lib/markdown";

// MarkdownView renders model text as sanitised markdown. A click on a
// code block's copy button copies the block; one on an image's "Load
// image" loads that image, for as long as the view lives.
export const MarkdownView = memo(function MarkdownView({ text }: { text: string }) {
  const [loadImages, setLoadImages] = useState<ReadonlySet<string>>(() => new Set());
  const html = useMemo(() => renderMarkdown(text, { loadImages }), [text, loadImages]);
  const onClick = (e: MouseEvent<HTMLDivElement>) => {
    const target = e.target as HTMLElement;
    const load = target.closest<HTMLButtonElement>("button[data-load-image]");
    if (load) {
      const src = load.dataset.loadImage ?? "";
      setLoadImages((s) => new Set(s).add(src));
      return;
    }
    copyCode(target);
  };
  return <div className="markdown" onClick={onClick} dangerouslySetInnerHTML={{ __html: html }} />;
});

function copyCode(target: HTMLElement) {
  const button = target.closest<HTMLButtonElement>("button[data-copy-code]");
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
