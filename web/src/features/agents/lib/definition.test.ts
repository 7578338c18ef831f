import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";
import { definitionError, pathOf, placeAt, placeOf, slugOf, syntaxError } from "./definition";

const text = `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "helper",
    "flavor": "Nope",
    "bashToolboxes": [
      { "tag": "FileSystemDirectory", "contents": { "Path": "/opt/tools" } }
    ]
  }
}
`;

const marked = (field: string) => {
  const p = placeOf(text, field);
  return p && { text: text.slice(p.from, p.to), line: p.line, exact: p.exact };
};

describe("pathOf", () => {
  it("splits keys and indexes", () => {
    expect(pathOf("contents.modelUrl")).toEqual(["contents", "modelUrl"]);
    expect(pathOf("contents.bashToolboxes[0].contents.Path")).toEqual(["contents", "bashToolboxes", 0, "contents", "Path"]);
    expect(pathOf("contents.approvals[2][1]")).toEqual(["contents", "approvals", 2, 1]);
    expect(pathOf("contents.systemPrompt.1")).toEqual(["contents", "systemPrompt", 1]);
  });
});

describe("placeOf", () => {
  it("marks a value at its field", () => {
    expect(marked("contents.flavor")).toEqual({ text: '"Nope"', line: 5, exact: true });
    expect(marked("contents.bashToolboxes[0].contents.Path")).toEqual({ text: '"/opt/tools"', line: 7, exact: true });
  });

  it("marks the key of an object or an array, not the whole block", () => {
    expect(marked("contents.bashToolboxes")).toEqual({ text: '"bashToolboxes"', line: 6, exact: true });
    // An array's element has no key: the element is marked.
    expect(marked("contents.bashToolboxes[0]")?.text).toMatch(/^\{ "tag"/);
  });

  it("marks where a missing field belongs", () => {
    expect(marked("contents.modelUrl")).toEqual({ text: '"contents"', line: 3, exact: false });
    expect(marked("contents.bashToolboxes[3].x")).toEqual({ text: '"bashToolboxes"', line: 6, exact: false });
    expect(marked("nothing")).toEqual({ text: "{", line: 1, exact: false });
  });

  it("finds nothing in what is not JSON", () => {
    expect(placeOf("", "contents.slug")).toBeUndefined();
  });
});

describe("placeAt and syntaxError", () => {
  it("places a line and column", () => {
    const p = placeAt(text, 4, 5);
    expect(text.slice(p.from, p.to)).toBe('"');
    expect(p.line).toBe(4);
    // Past the end of the line: its end.
    expect(placeAt("ab\ncd", 1, 9)).toMatchObject({ from: 2, to: 2, line: 1 });
  });

  it("words the first syntax error and places it", () => {
    const bad = '{\n  "tag": "x"\n  "contents": {}\n}';
    const e = syntaxError(bad);
    expect(e?.message).toBe("line 3, column 3: comma expected");
    expect(e?.place.line).toBe(3);
    expect(syntaxError(text)).toBeUndefined();
  });
});

describe("definitionError", () => {
  it("takes the field from the error's detail", () => {
    const err = new ConnectError("contents.modelUrl: required", Code.InvalidArgument, undefined, [
      { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_agent", metadata: { field: "contents.modelUrl" } }) },
    ]);
    expect(definitionError(err)).toMatchObject({ message: "contents.modelUrl: required", field: "contents.modelUrl" });
  });

  it("reads the field or the line and column from the message", () => {
    expect(definitionError(new ConnectError("contents.bashToolboxes[0]: /x is not under /opt", Code.InvalidArgument)).field).toBe("contents.bashToolboxes[0]");
    expect(definitionError(new ConnectError("line 2, column 7: invalid character", Code.InvalidArgument))).toMatchObject({ line: 2, column: 7 });
  });

  it("names no field for what is not a definition's fault", () => {
    const e = definitionError(new ConnectError("agent: writing agents needs an admin token", Code.PermissionDenied));
    expect(e).toEqual({ message: "agent: writing agents needs an admin token", code: Code.PermissionDenied });
  });

  it("reads the slug a definition gives", () => {
    expect(slugOf(text)).toBe("helper");
    expect(slugOf("{")).toBeUndefined();
  });
});
