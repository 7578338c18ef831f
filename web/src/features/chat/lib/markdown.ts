// Markdown for model answers: marked for the syntax, DOMPurify with an
// allow-list of what markdown makes, so what a model (or a tool it read)
// writes can neither run in the page nor restyle, cover or phish it,
// highlight.js core with a handful of languages (the whole library would
// be most of the bundle), and a copy button on every code block. Images
// load only when the user asks: an image's address can carry what the
// model read to whoever serves it.

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
      return `<pre><code${cls}>${highlight(text.replace(/\n$/, ""), name)}</code></pre>`;
    },
    // A task list's boxes are text: the page shows no form fields of a
    // model's.
    checkbox({ checked }) {
      return checked ? "☑ " : "☐ ";
    },
    html({ text }) {
      return withoutStyles(text);
    },
  },
});

// The sanitiser parses the HTML in a document that has the page's
// content policy, and the browser reports (while it blocks) every inline
// style that parser meets. Styles are dropped anyway, so they are taken
// out of the answer's raw HTML (the only place markdown lets them in)
// before it is parsed: an answer with styles trips nothing. The sanitiser
// still judges what is left; this is not what keeps the page safe.
const styleElement = /<style\b(?:[^>"']|"[^"]*"|'[^']*')*>[\s\S]*?(?:<\/style\s*>|$)|<\/style\s*>/gi;
const startTag = /<[a-z](?:[^>"']|"[^"]*"|'[^']*')*>/gi;
const attribute = /([^\s"'>/=]+)(\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g;

function withoutStyles(html: string): string {
  return html
    .replace(styleElement, "")
    .replace(startTag, (tag) => tag.replace(attribute, (a, name: string) => (name.toLowerCase() === "style" ? "" : a)));
}

// What markdown (GitHub's flavour, with the inline HTML models use for
// keys, sub- and superscripts and folded sections) needs, and nothing
// else: no style, no forms, fields or buttons, no frames, no embedded
// content, no ids or names (they could shadow the page's globals).
const allowedTags = [
  ...["a", "blockquote", "br", "code", "del", "details", "div", "em", "hr", "img", "kbd", "li", "ol", "p", "pre"],
  ...["s", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul"],
  ...["b", "i", "ins", "mark", "small", "u"],
  ...["h1", "h2", "h3", "h4", "h5", "h6"],
];
const allowedAttrs = ["href", "title", "src", "alt", "align", "start", "class"];

// The classes a model's HTML may keep: the highlighter's (hljs,
// hljs-keyword, the sub-scopes like function_) and a code block's
// language. The app's own classes could lay the text over the page.
const allowedClass = /^(?:hljs(?:-[\w-]+)?|language-[\w+#.-]+|[a-z]+_+)$/;

// A private instance: its configuration is nobody else's.
let purify: ReturnType<typeof DOMPurify> | undefined;
function sanitizer() {
  purify ??= DOMPurify(window);
  return purify;
}

export interface RenderOptions {
  // The addresses of the remote images the user asked to load.
  loadImages?: ReadonlySet<string>;
}

// renderMarkdown turns markdown into HTML safe to put in the page.
export function renderMarkdown(src: string, opts: RenderOptions = {}): string {
  const html = marked.parse(src, { async: false });
  const root = sanitizer().sanitize(html, {
    ALLOWED_TAGS: allowedTags,
    ALLOWED_ATTR: allowedAttrs,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  finish(root, opts.loadImages ?? new Set());
  const out = document.createElement("div");
  out.append(root);
  return out.innerHTML;
}

// finish works on the sanitised tree, which holds nothing that can run:
// what it adds (the copy buttons, the image placeholders) is the app's
// own.
function finish(root: DocumentFragment, loadImages: ReadonlySet<string>) {
  for (const el of root.querySelectorAll("[class]")) {
    const kept = [...el.classList].filter((c) => allowedClass.test(c));
    if (kept.length > 0) el.className = kept.join(" ");
    else el.removeAttribute("class");
  }
  // Links open outside the app and tell the target nothing.
  for (const a of root.querySelectorAll("a[href]")) {
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
  }
  for (const pre of root.querySelectorAll("pre")) {
    const block = document.createElement("div");
    block.className = "code-block";
    const copy = document.createElement("button");
    copy.type = "button";
    copy.className = "copy-code";
    copy.dataset.copyCode = "";
    copy.textContent = "Copy";
    pre.replaceWith(block);
    block.append(copy, pre);
  }
  for (const img of root.querySelectorAll("img")) {
    const src = img.getAttribute("src") ?? "";
    if (/^data:image\//i.test(src)) continue;
    if (src !== "" && loadImages.has(src)) {
      img.setAttribute("referrerpolicy", "no-referrer");
      img.setAttribute("loading", "lazy");
      continue;
    }
    img.replaceWith(placeholder(src, img.getAttribute("alt") ?? ""));
  }
}

// placeholder stands in for an image not loaded: it names the host the
// image would come from, links to it, and offers to load it where the
// page's content policy allows (over https, or from the app's origin).
function placeholder(src: string, alt: string): HTMLElement {
  const holder = document.createElement("span");
  holder.className = "remote-image";
  let url: URL | undefined;
  try {
    url = new URL(src, window.location.href);
  } catch {
    // not an address: nothing to load or link to
  }
  const label = document.createElement("span");
  label.textContent = `Image${alt ? ` “${alt}”` : ""} from ${url?.host || "an unknown place"}, not loaded`;
  holder.append(label);
  if (!url) return holder;
  if (url.protocol === "https:" || url.origin === window.location.origin) {
    const load = document.createElement("button");
    load.type = "button";
    load.dataset.loadImage = src;
    load.textContent = "Load image";
    holder.append(" ", load);
  }
  const link = document.createElement("a");
  link.href = src;
  link.target = "_blank";
  link.rel = "noopener noreferrer";
  link.textContent = "Open";
  holder.append(" ", link);
  return holder;
}
