import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ToolKind } from "../../../gen/agents/v1/agent_pb";
import { EventSchema, RunTrigger, type Event } from "../../../gen/agents/v1/event_pb";
import { SessionStatus, ToolResultStatus } from "../../../gen/agents/v1/session_pb";
import { extent, formatDuration, helperSessions, rowsOf, running, timelineOf, type Bar } from "./timeline";

const T0 = Date.UTC(2026, 2, 1, 12);
let seq = 0n;
let turnIndex = 0;
type Body = MessageInitShape<typeof EventSchema>["body"];
// ev is an event of session at T0 + ms.
const ev = (session: string, ms: number, body: Body): Event =>
  create(EventSchema, { seq: ++seq, sessionId: session, time: timestampFromMs(T0 + ms), body });

const started = (s: string, ms: number) => ev(s, ms, { case: "runStarted", value: { trigger: RunTrigger.MESSAGE } });
const stopped = (s: string, ms: number, status = SessionStatus.READY) => ev(s, ms, { case: "runStopped", value: { status } });
const answer = (s: string, ms: number, took: number | undefined, usage: { in: number; out: number; cost?: number }, calls: { id: string; name: string; kind?: ToolKind }[] = []) =>
  ev(s, ms, {
    case: "sessionUpdated",
    value: {
      headTurn: {
        index: ++turnIndex,
        createTime: timestampFromMs(T0 + ms),
        kind: {
          case: "llm",
          value: {
            model: "small",
            duration: took === undefined ? undefined : durationFromMs(took),
            usage: { promptTokens: BigInt(usage.in), completionTokens: BigInt(usage.out), costUsd: usage.cost },
            toolCalls: calls,
          },
        },
      },
    },
  });
const toolStarted = (s: string, ms: number, id: string, name: string, kind = ToolKind.BASH) =>
  ev(s, ms, { case: "toolStarted", value: { call: { id, name, kind } } });
const toolDone = (s: string, ms: number, id: string, name: string, status = ToolResultStatus.OK) =>
  ev(s, ms, { case: "toolCompleted", value: { result: { callId: id, name, status } } });
const results = (s: string, ms: number, ids: string[]) =>
  ev(s, ms, {
    case: "sessionUpdated",
    value: { headTurn: { index: ++turnIndex, createTime: timestampFromMs(T0 + ms), kind: { case: "user", value: { toolResults: ids.map((callId) => ({ callId, status: ToolResultStatus.OK })) } } } },
  });

// shape is a tree as [kind label start end tokens cost children].
type Shape = [string, string, number, number | undefined, number, number | undefined, Shape[]?];
const shape = (b: Bar): Shape => {
  const s: Shape = [b.kind, b.label, b.start - T0, b.end === undefined ? undefined : b.end - T0, b.tokensIn + b.tokensOut, b.cost];
  if (b.children.length) s.push(b.children.map(shape));
  return s;
};

describe("timelineOf", () => {
  it("lays out a run's steps, model calls and tool calls as they ran", () => {
    const events = [
      started("p", 0),
      answer("p", 1200, 1000, { in: 100, out: 20, cost: 0.01 }, [{ id: "c1", name: "bash_clock" }]),
      toolStarted("p", 1200, "c1", "bash_clock"),
      toolDone("p", 1500, "c1", "bash_clock"),
      results("p", 1510, ["c1"]),
      answer("p", 2500, 900, { in: 150, out: 30, cost: 0.02 }),
      stopped("p", 2510),
    ];
    const runs = timelineOf("p", new Map([["p", events]]));
    expect(runs.map(shape)).toEqual([
      [
        "run", "run (message)", 0, 2510, 300, 0.03,
        [
          ["step", "step 1", 200, 1500, 120, 0.01, [
            ["model", "small", 200, 1200, 120, 0.01],
            ["tool", "bash_clock", 1200, 1500, 0, undefined],
          ]],
          ["step", "step 2", 1600, 2500, 180, 0.02, [["model", "small", 1600, 2500, 180, 0.02]]],
        ],
      ],
    ]);
    expect(running(runs)).toBe(false);
  });

  it("nests a helper's session under the call that started it", () => {
    const parent = [
      started("p", 0),
      answer("p", 100, 100, { in: 10, out: 1 }, [{ id: "h", name: "prompt_agent_researcher", kind: ToolKind.HELPER }]),
      toolStarted("p", 100, "h", "prompt_agent_researcher", ToolKind.HELPER),
      ev("p", 110, { case: "subcallStarted", value: { childSessionId: "c", callId: "h", agent: "researcher" } }),
      ev("p", 900, { case: "subcallCompleted", value: { childSessionId: "c", callId: "h" } }),
      toolDone("p", 900, "h", "prompt_agent_researcher"),
      results("p", 905, ["h"]),
      answer("p", 1000, 90, { in: 20, out: 2 }),
      stopped("p", 1001),
    ];
    const child = [started("c", 120), answer("c", 880, 700, { in: 50, out: 5, cost: 0.5 }), stopped("c", 890)];
    expect(helperSessions(parent)).toEqual(["c"]);
    const runs = timelineOf("p", new Map([["p", parent], ["c", child]]));
    const helper = runs[0].children[0].children[1];
    expect(shape(helper)).toEqual([
      "helper", "prompt_agent_researcher", 100, 900, 55, 0.5,
      [["run", "run (message)", 120, 890, 55, 0.5, [["step", "step 1", 180, 880, 55, 0.5, [["model", "small", 180, 880, 55, 0.5]]]]]],
    ]);
    // The run counts its helper's spend.
    expect(runs[0].tokensIn + runs[0].tokensOut).toBe(88);
    expect(rowsOf(runs).map((r) => [r.bar.kind, r.depth])).toEqual([
      ["run", 0], ["step", 1], ["model", 2], ["helper", 2], ["run", 3], ["step", 4], ["model", 5], ["step", 1], ["model", 2],
    ]);
  });

  it("keeps what runs open, and shows a run under way calling its model", () => {
    const events = [started("p", 0), answer("p", 300, 250, { in: 5, out: 5 }, [{ id: "c1", name: "bash_slow" }]), toolStarted("p", 300, "c1", "bash_slow")];
    let runs = timelineOf("p", new Map([["p", events]]));
    expect(running(runs)).toBe(true);
    expect(runs[0].children[0].end).toBeUndefined();
    expect(extent(rowsOf(runs), T0 + 5000)).toEqual({ start: T0, end: T0 + 5000 });

    events.push(toolDone("p", 800, "c1", "bash_slow"), results("p", 810, ["c1"]));
    runs = timelineOf("p", new Map([["p", events]]));
    const live = runs[0].children[1];
    expect(shape(live)).toEqual(["step", "step 2", 810, undefined, 0, undefined, [["model", "model call", 810, undefined, 0, undefined]]]);
  });

  it("begins a model call where the step before ended when its turn has no duration", () => {
    const runs = timelineOf("p", new Map([["p", [started("p", 0), answer("p", 400, undefined, { in: 1, out: 1 }), stopped("p", 410)]]]));
    expect(shape(runs[0].children[0])).toEqual(["step", "step 1", 0, 400, 2, undefined, [["model", "small", 0, 400, 2, undefined]]]);
  });

  it("waits for a deferred call past its run, until its answer", () => {
    const events = [
      started("p", 0),
      answer("p", 100, 100, { in: 1, out: 1 }, [{ id: "d", name: "ask_user", kind: ToolKind.CLIENT }]),
      ev("p", 100, { case: "callsDeferred", value: { calls: [{ token: "t", call: { id: "d", name: "ask_user" }, reason: "client" }] } }),
      stopped("p", 110, SessionStatus.WAITING),
    ];
    let runs = timelineOf("p", new Map([["p", events]]));
    expect(runs[0].status).toBe("waiting");
    expect(shape(runs[0].children[0].children[1])).toEqual(["deferred", "ask_user (client)", 100, undefined, 0, undefined]);
    events.push(started("p", 5000), results("p", 5001, ["d"]), answer("p", 5100, 90, { in: 1, out: 1 }), stopped("p", 5101));
    runs = timelineOf("p", new Map([["p", events]]));
    expect(runs.length).toBe(2);
    expect(runs[0].children[0].children[1].end).toBe(T0 + 5001);
    expect(running(runs)).toBe(false);
  });

  it("counts a turn once, whatever event carried it again", () => {
    const a = answer("p", 400, 300, { in: 1, out: 1 });
    const again = create(EventSchema, { ...a, seq: ++seq });
    const runs = timelineOf("p", new Map([["p", [started("p", 0), a, again, stopped("p", 410)]]]));
    expect(runs[0].children.length).toBe(1);
  });

  it("cancels what a failed run left running", () => {
    const events = [
      started("p", 0),
      answer("p", 100, 100, { in: 1, out: 1 }, [{ id: "c1", name: "bash_x" }]),
      toolStarted("p", 100, "c1", "bash_x"),
      ev("p", 200, { case: "sessionFailed", value: { code: "model_error", reason: "x" } }),
    ];
    const runs = timelineOf("p", new Map([["p", events]]));
    expect(runs[0].status).toBe("error");
    expect(runs[0].children[0].children[1].status).toBe("cancelled");
    expect(runs[0].children[0].children[1].end).toBe(T0 + 200);
  });
});

describe("formatDuration", () => {
  it("words spans from milliseconds to minutes", () => {
    expect([850, 1234, 12_345, 184_000].map(formatDuration)).toEqual(["850 ms", "1.2 s", "12 s", "3 min 4 s"]);
  });
});
