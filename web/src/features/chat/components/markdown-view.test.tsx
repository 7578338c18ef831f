import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { MarkdownView } from "./markdown-view";

afterEach(cleanup);

describe("MarkdownView", () => {
  it("loads a remote image when asked, that one only, and keeps it as the answer grows", () => {
    const a = "https://images.example/a.png";
    const b = "https://images.example/b.png";
    const text = `![first](${a}) ![second](${b})`;
    const { container, rerender } = render(<MarkdownView text={text} />);
    expect(container.querySelector("img")).toBeNull();

    fireEvent.click(screen.getAllByRole("button", { name: "Load image" })[0]);
    expect([...container.querySelectorAll("img")].map((i) => i.getAttribute("src"))).toEqual([a]);
    expect(screen.getByText(/Image “second” from images.example/)).toBeDefined();

    // More text streams in: the image asked for stays loaded.
    rerender(<MarkdownView text={`${text}\n\nand more`} />);
    expect([...container.querySelectorAll("img")].map((i) => i.getAttribute("src"))).toEqual([a]);
  });
});
