// The difference between two versions of a stored agent, as people read
// a code review: a line diff of the two definitions in one canonical
// spelling (parsed, keys sorted, two-space indent), so that only changes
// of meaning show, not where a key moved or how the text was spaced. The
// diff itself is jsdiff's (`diff`): Myers' algorithm, well kept and small.

import { structuredPatch } from "diff";

// canonical is a definition in its canonical spelling; text that is not
// JSON (a version stored before it was checked) stays as it is.
export function canonical(definition: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(definition)), null, 2) + "\n";
  } catch {
    return definition.endsWith("\n") ? definition : definition + "\n";
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === "object" && v !== null) {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

export type LineKind = "same" | "added" | "removed";

// DiffLine is one line of a hunk, numbered in the old text (removed and
// same lines) and in the new one (added and same lines).
export interface DiffLine {
  kind: LineKind;
  text: string;
  oldLine?: number;
  newLine?: number;
}

// Hunk is a run of changes with the lines of context around it.
export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

export interface VersionDiff {
  hunks: Hunk[];
  added: number;
  removed: number;
}

// diffDefinitions compares two definitions line by line in their
// canonical spelling, with context lines around each change.
export function diffDefinitions(older: string, newer: string, context = 3): VersionDiff {
  const patch = structuredPatch("old", "new", canonical(older), canonical(newer), undefined, undefined, { context });
  let added = 0;
  let removed = 0;
  const hunks = patch.hunks.map((h) => {
    let o = h.oldStart;
    let n = h.newStart;
    const lines: DiffLine[] = [];
    for (const raw of h.lines) {
      // "\ No newline at end of file" markers: canonical text always ends
      // with one, other text may not; nothing to show.
      if (raw.startsWith("\\")) continue;
      const text = raw.slice(1);
      if (raw[0] === "+") {
        lines.push({ kind: "added", text, newLine: n++ });
        added++;
      } else if (raw[0] === "-") {
        lines.push({ kind: "removed", text, oldLine: o++ });
        removed++;
      } else {
        lines.push({ kind: "same", text, oldLine: o++, newLine: n++ });
      }
    }
    return { oldStart: h.oldStart, oldLines: h.oldLines, newStart: h.newStart, newLines: h.newLines, lines };
  });
  return { hunks, added, removed };
}
