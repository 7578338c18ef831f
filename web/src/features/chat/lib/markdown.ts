// Markdown for model answers: marked for the syntax, DOMPurify so what a
// model writes can never run in the page, highlight.js core with a
// handful of languages (the whole library would be most of the bundle),
// and a copy button on every code block.

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked } from "marked";

const languages = { bash, css, diff, go, javascript, json, python, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
hljs.registerAliases(["sh", "shell", "console", "zsh"], { languageName: "bash" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });
hljs.registerAliases(["golang"], { languageName: "go" });
hljs.registerAliases(["patch"], { languageName: "diff" });

function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

// highlight renders code as HTML, coloured when its language is known.
export function highlight(code: string, lang: string | undefined): string {
  const name = (lang ?? "").trim().split(/\s+/)[0].toLowerCase();
  if (name && hljs.getLanguage(name)) {
    try {
      return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    } catch {
      // fall through to plain text
    }
  }
  return escape(code);
}

const marked = new Marked({
  gfm: true,
  renderer: {
    code({ text, lang }) {
      const name = (lang ?? "").trim().split(/\s+/)[0];
      const cls = name ? ` class="hljs language-${escape(name)}"` : ` class="hljs"`;
      return (
        `<div class="code-block"><button type="button" class="copy-code" data-copy-code="">Copy</button>` +
        `<pre><code${cls}>${highlight(text.replace(/\n$/, ""), name)}</code></pre></div>`
      );
    },
  },
});

let hooked = false;
function hook() {
  if (hooked) return;
  hooked = true;
  // Links open outside the app and tell the target nothing.
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node instanceof Element && node.tagName === "A" && node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

// renderMarkdown turns markdown into HTML safe to put in the page.
export function renderMarkdown(src: string): string {
  hook();
  const html = marked.parse(src, { async: false });
  return DOMPurify.sanitize(html, { ADD_ATTR: ["target"] });
}
