import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";

describe("renderMarkdown", () => {
  it("renders markdown with highlighted code and a copy button", () => {
    const html = renderMarkdown("# Title\n\n```go\nfunc main() {}\n```\n");
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain('class="hljs-keyword"');
    expect(html).toContain('data-copy-code=""');
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
    expect(renderMarkdown("[x](https://example.com)")).toContain('rel="noopener noreferrer"');
  });
});
