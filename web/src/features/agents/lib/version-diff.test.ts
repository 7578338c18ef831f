import { describe, expect, it } from "vitest";
import { canonical, diffDefinitions } from "./version-diff";

const v1 = `{"tag": "OpenAIAgentDescription", "contents": {"slug": "poet", "modelName": "m1", "announce": "Writes short poems.", "systemPrompt": ["a", "b"]}}`;
// The same meaning spelt otherwise: keys moved, other spacing.
const v1again = `{
    "contents": {"systemPrompt": ["a", "b"], "announce": "Writes short poems.", "modelName": "m1", "slug": "poet"},
    "tag": "OpenAIAgentDescription"
}`;
const v2 = `{"tag": "OpenAIAgentDescription", "contents": {"slug": "poet", "modelName": "m2", "announce": "Writes short poems.", "systemPrompt": ["a", "b", "c"]}}`;

describe("canonical", () => {
  it("spells one meaning one way: keys sorted, two-space indent", () => {
    expect(canonical(v1)).toBe(canonical(v1again));
    expect(canonical(v1).split("\n").slice(0, 4)).toEqual(["{", '  "contents": {', '    "announce": "Writes short poems.",', '    "modelName": "m1",']);
  });

  it("keeps text that is not JSON as it is", () => {
    expect(canonical("{oops")).toBe("{oops\n");
  });
});

describe("diffDefinitions", () => {
  it("finds no change between two spellings of one definition", () => {
    expect(diffDefinitions(v1, v1again)).toEqual({ hunks: [], added: 0, removed: 0 });
  });

  it("shows changed lines with their numbers in each version, and context around them", () => {
    const d = diffDefinitions(v1, v2, 1);
    expect(d.added).toBe(3);
    expect(d.removed).toBe(2);
    const lines = d.hunks.flatMap((h) => h.lines.map((l) => `${l.kind === "added" ? "+" : l.kind === "removed" ? "-" : " "}${l.oldLine ?? ""}/${l.newLine ?? ""} ${l.text.trim()}`));
    expect(lines).toEqual([
      " 3/3 \"announce\": \"Writes short poems.\",",
      "-4/ \"modelName\": \"m1\",",
      "+/4 \"modelName\": \"m2\",",
      " 5/5 \"slug\": \"poet\",",
      " 7/7 \"a\",",
      "-8/ \"b\"",
      "+/8 \"b\",",
      "+/9 \"c\"",
      " 9/10 ]",
    ]);
    expect(d.hunks).toHaveLength(2);
    expect(d.hunks[0]).toMatchObject({ oldStart: 3, newStart: 3 });
  });

  it("compares a version that is not JSON as text", () => {
    const d = diffDefinitions("{oops", v1);
    expect(d.removed).toBe(1);
    expect(d.added).toBe(canonical(v1).split("\n").length - 1);
  });
});
