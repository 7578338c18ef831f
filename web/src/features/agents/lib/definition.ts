// A stored agent's definition is an agent file's JSON text. The server
// validates it as `agents check` validates a file and names the field at
// fault, dotted (`contents.modelUrl: required`,
// `contents.bashToolboxes[0]: …`), or, for text that is not JSON, the line
// and column. This maps either to a place in the text, so the editor can
// mark it; the JSON is read by jsonc-parser, which keeps every value's
// offset.

import { Code, ConnectError } from "@connectrpc/connect";
import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";

// DefinitionError is what the server said is wrong with a definition.
export interface DefinitionError {
  message: string;
  // The dotted field at fault, when the server named one.
  field?: string;
  // Where in the text, when the server gave a line and column (1-based).
  line?: number;
  column?: number;
  code: Code;
}

// definitionError reads a failed CreateAgent or UpdateAgent: the field
// from the error's detail (metadata `field`), else from the message's
// `FIELD: reason`; the line and column of a syntax error.
export function definitionError(err: unknown): DefinitionError {
  const e = ConnectError.from(err);
  const message = e.rawMessage || e.message;
  const out: DefinitionError = { message, code: e.code };
  if (e.code !== Code.InvalidArgument) return out;
  const detail = e.findDetails(ErrorDetailSchema).find((d) => d.metadata.field);
  const named = /^([A-Za-z_$][\w$]*(?:\[\d+\]|\.[\w$]+)*): /.exec(message);
  const field = detail?.metadata.field ?? named?.[1];
  if (field) out.field = field;
  const at = /^line (\d+), column (\d+)\b/.exec(message);
  if (at) {
    out.line = Number(at[1]);
    out.column = Number(at[2]);
  }
  return out;
}

// pathOf splits a dotted field into its keys and indexes:
// `contents.bashToolboxes[0].Path` → ["contents", "bashToolboxes", 0, "Path"].
export function pathOf(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of field.split(".")) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1] !== "") out.push(/^\d+$/.test(m[1]) ? Number(m[1]) : m[1]);
    for (const i of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]));
  }
  return out;
}

// Place is a span of the text to mark.
export interface Place {
  from: number;
  to: number;
  // The 1-based line the span starts on.
  line: number;
  // The field itself is marked; false when it is missing and what is
  // marked is the object it belongs in.
  exact: boolean;
}

// placeOf finds a field in the text: a value itself, or, for an object or
// an array, its key (a whole block is too much to mark); a missing field
// marks the key of the nearest object that is there. Undefined when the
// text is not JSON.
export function placeOf(text: string, field: string): Place | undefined {
  const root = parseTree(text, [], { disallowComments: true, allowTrailingComma: false });
  if (!root) return undefined;
  let node: Node = root;
  let exact = true;
  for (const seg of pathOf(field)) {
    const child = findNodeAtLocation(node, [seg]);
    if (!child) {
      exact = false;
      break;
    }
    node = child;
  }
  const key = node.parent?.type === "property" ? node.parent.children?.[0] : undefined;
  const span = (node.type === "object" || node.type === "array" || !exact) && key ? key : node;
  // The root object without a key: its opening brace.
  const to = span === root && (root.type === "object" || root.type === "array") ? span.offset + 1 : span.offset + span.length;
  return { from: span.offset, to, line: lineAt(text, span.offset), exact };
}

// placeAt is the place of a line and column (1-based): the character
// there, or the end of the line.
export function placeAt(text: string, line: number, column: number): Place {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", offset);
    if (nl < 0) break;
    offset = nl + 1;
  }
  const eol = text.indexOf("\n", offset);
  const end = eol < 0 ? text.length : eol;
  const from = Math.min(offset + Math.max(0, column - 1), end);
  return { from, to: Math.min(from + 1, end), line: lineAt(text, from), exact: true };
}

// syntaxError is the text's first JSON syntax error, worded, with its
// place; undefined for JSON.
export function syntaxError(text: string): { message: string; place: Place } | undefined {
  const errors: ParseError[] = [];
  parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
  const e = errors[0];
  if (!e) return undefined;
  const line = lineAt(text, e.offset);
  const column = e.offset - text.lastIndexOf("\n", e.offset - 1);
  const from = e.offset;
  return { message: `line ${line}, column ${column}: ${words(printParseErrorCode(e.error))}`, place: { from, to: Math.max(from + e.length, from + 1), line, exact: true } };
}

// words turns a parse error's name into a phrase: "CommaExpected" →
// "comma expected".
function words(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

export function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

// slugOf is the slug a definition gives its agent, if the text says.
export function slugOf(text: string): string | undefined {
  const root = parseTree(text);
  const slug = root && findNodeAtLocation(root, ["contents", "slug"]);
  return typeof slug?.value === "string" ? slug.value : undefined;
}

// newDefinition is what a new agent starts from: the agent file's shape
// with the fields every agent needs.
export const newDefinition = `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "",
    "flavor": "OpenAIv1",
    "modelUrl": "https://api.openai.com/v1",
    "apiKeyId": "openai",
    "modelName": "gpt-4o-mini",
    "announce": "",
    "systemPrompt": [
      "You are a helpful assistant."
    ]
  }
}
`;

// pretty indents a definition for editing; text that is not JSON stays
// as it is.
export function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2) + "\n";
  } catch {
    return text;
  }
}
