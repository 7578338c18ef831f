import { useMemo } from "react";
import { diffDefinitions } from "../lib/version-diff";

interface Props {
  older: { version: bigint; definition: string };
  newer: { version: bigint; definition: string };
}

const signs = { added: "+", removed: "−", same: " " } as const;
const spoken = { added: "added", removed: "removed", same: "" } as const;

// VersionDiffView shows what changed from one version to another: each
// changed line, with three lines of context, numbered in both versions.
export function VersionDiffView({ older, newer }: Props) {
  const d = useMemo(() => diffDefinitions(older.definition, newer.definition), [older.definition, newer.definition]);
  const label = `Changes from version ${older.version} to version ${newer.version}`;
  if (d.hunks.length === 0)
    return (
      <p className="diff-summary" role="status">
        Versions {String(older.version)} and {String(newer.version)} mean the same: no line differs.
      </p>
    );
  return (
    <>
      <p className="diff-summary" role="status">
        <span className="diff-added">{plural(d.added, "line")} added</span>, <span className="diff-removed">{plural(d.removed, "line")} removed</span>{" "}
        from version {String(older.version)} to version {String(newer.version)}.
      </p>
      <div className="diff" role="region" aria-label={label} tabIndex={0}>
        <table>
          <thead className="visually-hidden">
            <tr>
              <th scope="col">Line in version {String(older.version)}</th>
              <th scope="col">Line in version {String(newer.version)}</th>
              <th scope="col">Change</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          {d.hunks.map((h, i) => (
            <tbody key={i}>
              <tr className="hunk">
                <td colSpan={4}>
                  Lines {range(h.oldStart, h.oldLines)} of version {String(older.version)}, {range(h.newStart, h.newLines)} of version {String(newer.version)}
                </td>
              </tr>
              {h.lines.map((l, j) => (
                <tr key={j} className={l.kind}>
                  <td className="num">{l.oldLine ?? ""}</td>
                  <td className="num">{l.newLine ?? ""}</td>
                  <td className="sign">
                    <span aria-hidden="true">{signs[l.kind]}</span>
                    {spoken[l.kind] && <span className="visually-hidden">{spoken[l.kind]}</span>}
                  </td>
                  <td>{l.text}</td>
                </tr>
              ))}
            </tbody>
          ))}
        </table>
      </div>
    </>
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function range(start: number, count: number): string {
  if (count === 0) return "none";
  return count === 1 ? String(start) : `${start}–${start + count - 1}`;
}
