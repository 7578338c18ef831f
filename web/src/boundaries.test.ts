import { describe, expect, it } from "vitest";

// The app's layers import one way: lib and components (shared by all)
// ← features (one folder each, none importing another) ← app (the shell
// and routes, which composes the features). A feature that needs another's
// piece gets it from lib or components, or from app through props; so a
// feature can change, move or go without breaking another, and its tests
// need none of the others.

// Every module of the app as text, by its path under src
// ("features/chat/lib/format.ts"); the generated code imports only itself.
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob<string>(["./**/*.{ts,tsx}", "!./gen/**"], { query: "?raw", import: "default", eager: true })).map(([path, text]) => [
    path.slice("./".length),
    text,
  ]),
);

// specifiers are the modules a source imports: import and export … from,
// a bare import for its effect (CSS), and import().
function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm, /^\s*import\s*["']([^"']+)["']/gm, /\bimport\(\s*["']([^"']+)["']\s*\)/g];
  for (const p of patterns) for (const m of text.matchAll(p)) found.push(m[1]);
  return found;
}

// resolve is the path under src that a relative specifier in the module
// at from names, without an extension; a package's is undefined.
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const parts = from.split("/").slice(0, -1);
  for (const s of spec.split("/")) {
    if (s === "..") parts.pop();
    else if (s !== ".") parts.push(s);
  }
  return parts.join("/");
}

// area is the layer a path under src is in: "features/<name>", "app",
// "lib", "components", "gen", or "" for the files at the top (main's
// setup, this test).
function area(path: string): string {
  const [top, name] = path.split("/");
  if (top === "features") return `features/${name}`;
  return path.includes("/") ? top : "";
}

// refusal says why the module at from may not import the one at to, or
// is undefined where it may.
function refusal(from: string, to: string): string | undefined {
  const a = area(from);
  const b = area(to);
  if (a.startsWith("features/")) {
    if (b.startsWith("features/") && b !== a) return `imports another feature (${b})`;
    if (b === "app") return "imports the app shell, which composes the features";
  }
  if ((a === "lib" || a === "components") && (b.startsWith("features/") || b === "app")) return `is shared but imports ${b}`;
  return undefined;
}

// crossings are the imports that break the layers, one line each.
function crossings(modules: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [from, text] of Object.entries(modules)) {
    for (const spec of specifiers(text)) {
      const to = resolve(from, spec);
      const why = to === undefined ? undefined : refusal(from, to);
      if (why) out.push(`${from} ${why}: "${spec}"`);
    }
  }
  return out.sort();
}

// graph is which modules each module imports, by path under src; imports
// of files that are not modules here (CSS, packages) are left out.
function graph(modules: Record<string, string>): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const [from, text] of Object.entries(modules)) {
    const to = specifiers(text)
      .map((s) => resolve(from, s))
      .flatMap((p) => (p === undefined ? [] : [p, `${p}.ts`, `${p}.tsx`].filter((c) => c in modules).slice(0, 1)));
    g.set(from, to);
  }
  return g;
}

// cycles are the groups of modules that import each other, round a
// loop, each as its modules in order (Tarjan's strongly connected
// components); a module that imports itself is one too.
function cycles(g: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (g.get(v) ?? []).includes(v)) out.push(group.sort());
  };
  for (const v of [...g.keys()].sort()) if (!index.has(v)) visit(v);
  return out.sort((x, y) => x[0].localeCompare(y[0]));
}

describe("the app's layers", () => {
  it("has no feature that imports another feature or the app, and no shared module that imports either", () => {
    // The scan saw the features, and their imports: an empty scan
    // would pass for nothing.
    const features = new Set(Object.keys(sources).map(area).filter((a) => a.startsWith("features/")));
    expect(features.size).toBeGreaterThan(1);
    expect([...graph(sources).values()].flat().length).toBeGreaterThan(Object.keys(sources).length);
    expect(crossings(sources)).toEqual([]);
  });

  it("has no modules that import each other round a loop", () => {
    expect(cycles(graph(sources))).toEqual([]);
  });
});

describe("the layer check", () => {
  it("finds every form of import", () => {
    const text = [
      'import { a } from "./a";',
      'import type {\n  B,\n  C,\n} from "../b";',
      'export { d } from "../../c/d";',
      'export * from "./e";',
      'import "./chat.css";',
      "const f = await import('./f');",
      'import { useState } from "react";',
      "// a comment that says from here",
      'const g = "from";',
    ].join("\n");
    expect(specifiers(text).sort()).toEqual(["../../c/d", "../b", "./a", "./chat.css", "./e", "./f", "react"]);
  });

  it("refuses a feature's import of another feature or of the app, and a shared module's of a feature", () => {
    const modules = {
      "features/chat/components/header.tsx": 'import { Meter } from "../../budgets/components/meter";\nimport { own } from "../lib/own";',
      "features/chat/lib/own.ts": 'import { formatUsd } from "../../../lib/format";',
      "features/budgets/components/meter.tsx": 'import { Providers } from "../../../app/providers";',
      "lib/format.ts": 'import { x } from "../features/chat/lib/own";',
      "components/dialog.tsx": 'import { App } from "../app/app";',
      "app/app.tsx": 'import { Header } from "../features/chat/components/header";',
    };
    expect(crossings(modules)).toEqual([
      'components/dialog.tsx is shared but imports app: "../app/app"',
      'features/budgets/components/meter.tsx imports the app shell, which composes the features: "../../../app/providers"',
      'features/chat/components/header.tsx imports another feature (features/budgets): "../../budgets/components/meter"',
      'lib/format.ts is shared but imports features/chat: "../features/chat/lib/own"',
    ]);
  });

  it("finds modules that import each other, and not those that only share an import", () => {
    const modules = {
      "features/chat/a.ts": 'import { b } from "./b";\nimport { s } from "../../lib/s";',
      "features/chat/b.tsx": 'import { c } from "./c";',
      "features/chat/c.ts": 'import { a } from "./a";\nimport { s } from "../../lib/s";',
      "lib/s.ts": 'import { s } from "./s";',
      "lib/t.ts": 'import { s } from "./s";',
    };
    expect(cycles(graph(modules))).toEqual([["features/chat/a.ts", "features/chat/b.tsx", "features/chat/c.ts"], ["lib/s.ts"]]);
  });
});
