import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ToolKind } from "../../../gen/agents/v1/agent_pb";
import {
  CompactionStartedSchema,
  EventSchema,
  RunStartedSchema,
  RunStoppedSchema,
  SessionCompactedSchema,
  ToolCallDeltaSchema,
  type Event,
} from "../../../gen/agents/v1/event_pb";
import {
  CompactionSchema,
  DeferredCallSchema,
  LlmTurnSchema,
  SessionMetaSchema,
  SessionSchema,
  SessionStatus,
  ToolCallSchema,
  ToolResultSchema,
  ToolResultStatus,
  TurnInProgressSchema,
  TurnSchema,
  UserTurnSchema,
  type Session,
  type Turn,
} from "../../../gen/agents/v1/session_pb";
import { awaitsRun, callsOf, initialState, sessionReducer, type SessionAction, type SessionState } from "./session-state";

const id = "s-1";

function meta(status: SessionStatus, turnCount: number, extra: Partial<{ statusReason: string; pendingCalls: number }> = {}) {
  return create(SessionMetaSchema, { id, agent: "assistant", status, turnCount, ...extra });
}

const call1 = create(ToolCallSchema, { id: "c1", name: "bash_clock", arguments: '{"tz":"UTC"}', kind: ToolKind.BASH });
const result1 = create(ToolResultSchema, { callId: "c1", name: "bash_clock", text: "12:00", status: ToolResultStatus.OK });

const turns: Turn[] = [
  create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "what time is it?" }) } }),
  create(TurnSchema, { index: 1, kind: { case: "llm", value: create(LlmTurnSchema, { text: "Hello", toolCalls: [call1] }) } }),
  create(TurnSchema, { index: 2, kind: { case: "user", value: create(UserTurnSchema, { toolResults: [result1] }) } }),
  create(TurnSchema, { index: 3, kind: { case: "llm", value: create(LlmTurnSchema, { text: "It is noon." }) } }),
];

function session(init: MessageInitShape<typeof SessionSchema> & { seq: bigint }): Session {
  return create(SessionSchema, { firstTurnIndex: 0, ...init });
}

type Body = Event["body"];
function ev(seq: number, body: Body, delta: number | bigint = 0, sessionId = id): Event {
  return create(EventSchema, { seq: BigInt(seq), deltaSeq: BigInt(delta), sessionId, body });
}

function run(state: SessionState, actions: SessionAction[]): SessionState {
  return actions.reduce(sessionReducer, state);
}

function loadedWith(sess: Session): SessionState {
  return run(initialState(id), [{ type: "fetch" }, { type: "loaded", session: sess }]);
}

// The session opened in the middle of its first answer.
const midAnswer = session({
  seq: 10n,
  deltaSeq: 3n,
  meta: meta(SessionStatus.RUNNING, 1),
  turns: turns.slice(0, 1),
  inProgress: create(TurnInProgressSchema, { turnIndex: 1, text: "Hel" }),
});

// What the stream says from there to the end of the run.
const rest: Event[] = [
  ev(10, { case: "textDelta", value: { $typeName: "agents.v1.TextDelta", text: "l", turnIndex: 1 } }, 2),
  ev(10, { case: "textDelta", value: { $typeName: "agents.v1.TextDelta", text: "lo", turnIndex: 1 } }, 4),
  ev(11, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: meta(SessionStatus.RUNNING, 2), headTurn: turns[1] } }),
  ev(12, { case: "toolStarted", value: { $typeName: "agents.v1.ToolStarted", call: call1 } }),
  ev(13, { case: "toolProgressed", value: { $typeName: "agents.v1.ToolProgressed", callId: "c1", message: "tick" } }),
  ev(14, { case: "toolCompleted", value: { $typeName: "agents.v1.ToolCompleted", result: result1 } }),
  ev(15, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: meta(SessionStatus.RUNNING, 3), headTurn: turns[2] } }),
  ev(15, { case: "thinkingDelta", value: { $typeName: "agents.v1.ThinkingDelta", text: "noon", turnIndex: 3 } }, 5),
  ev(15, { case: "textDelta", value: { $typeName: "agents.v1.TextDelta", text: "It is noon.", turnIndex: 3 } }, 6),
  ev(16, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: meta(SessionStatus.RUNNING, 4), headTurn: turns[3] } }),
  ev(17, { case: "runStopped", value: create(RunStoppedSchema, { status: SessionStatus.READY, reason: "done", steps: 2, text: "It is noon." }) }),
  ev(18, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: meta(SessionStatus.READY, 4, { statusReason: "done" }) } }),
];

describe("sessionReducer", () => {
  it("shows the partial turn of a session opened mid-answer", () => {
    const s = loadedWith(midAnswer);
    expect(s.loaded).toBe(true);
    expect(s.live).toEqual({ turnIndex: 1, text: "Hel", thinking: "", toolCalls: [] });
    expect(s.pos).toEqual({ seq: 10n, deltaSeq: 3n });
  });

  it("drops events at or before the loaded position and applies those after", () => {
    const s = run(loadedWith(midAnswer), rest.slice(0, 2).map((event) => ({ type: "event", event })));
    expect(s.live?.text).toBe("Hello");
  });

  it("ends where a fresh load ends: deltas then head turns equal the stored turns", () => {
    const followed = run(loadedWith(midAnswer), rest.map((event) => ({ type: "event", event })));
    const fresh = loadedWith(session({ seq: 18n, meta: meta(SessionStatus.READY, 4, { statusReason: "done" }), turns }));
    expect(followed).toEqual(fresh);
  });

  it("ends where a fresh load ends in the middle of a tool call", () => {
    const followed = run(loadedWith(midAnswer), rest.slice(0, 4).map((event) => ({ type: "event", event })));
    const fresh = loadedWith(
      session({
        seq: 12n,
        meta: meta(SessionStatus.RUNNING, 2),
        turns: turns.slice(0, 2),
        inProgress: create(TurnInProgressSchema, { turnIndex: 2 }),
      }),
    );
    expect(followed).toEqual(fresh);
    expect(callsOf(followed, [call1])[0]).toMatchObject({ running: true, owner: 1 });
  });

  it("ends where a fresh load ends while the model writes a tool call", () => {
    const piece = (delta: number, callIndex: number, args: string, callId = "", name = "") =>
      ev(10, { case: "toolCallDelta", value: create(ToolCallDeltaSchema, { turnIndex: 1, callIndex, callId, name, arguments: args }) }, delta);
    const opened = session({ seq: 10n, deltaSeq: 3n, meta: meta(SessionStatus.RUNNING, 1), turns: turns.slice(0, 1), inProgress: create(TurnInProgressSchema, { turnIndex: 1 }) });
    const followed = run(loadedWith(opened), [
      piece(4, 0, "", "c1", "bash_clock"),
      piece(5, 0, '{"tz":'),
      piece(6, 1, "{", "c2", "bash_date"),
      piece(7, 0, '"UTC"}'),
    ].map((event) => ({ type: "event", event })));
    const written = [
      create(ToolCallSchema, { id: "c1", name: "bash_clock", arguments: '{"tz":"UTC"}' }),
      create(ToolCallSchema, { id: "c2", name: "bash_date", arguments: "{" }),
    ];
    const fresh = loadedWith(
      session({
        seq: 10n,
        deltaSeq: 7n,
        meta: meta(SessionStatus.RUNNING, 1),
        turns: turns.slice(0, 1),
        inProgress: create(TurnInProgressSchema, { turnIndex: 1, toolCalls: written }),
      }),
    );
    expect(followed).toEqual(fresh);
    expect(callsOf(followed, followed.live?.toolCalls ?? []).map((c) => c.call?.arguments)).toEqual(['{"tz":"UTC"}', "{"]);
    // Once the answer is stored, its calls are the truth.
    const stored = sessionReducer(followed, { type: "event", event: rest[2] });
    expect(stored.live).toBeUndefined();
    expect(stored.calls.c1.call).toBe(call1);
  });

  it("shows progress while a tool runs and forgets it with the result", () => {
    let s = run(loadedWith(midAnswer), rest.slice(0, 5).map((event) => ({ type: "event", event })));
    expect(s.calls.c1).toMatchObject({ running: true, progress: "tick" });
    s = sessionReducer(s, { type: "event", event: rest[5] });
    expect(s.calls.c1).toEqual({ call: call1, owner: 1, result: result1, running: false });
  });

  it("holds events while a load is in flight, then applies those past its position", () => {
    let s = run(initialState(id), [{ type: "fetch" }, ...rest.slice(0, 3).map((event): SessionAction => ({ type: "event", event }))]);
    expect(s.held).toHaveLength(3);
    s = sessionReducer(s, { type: "loaded", session: midAnswer });
    expect(s.held).toEqual([]);
    expect(s.live).toBeUndefined();
    expect(s.turns.map((t) => t?.index)).toEqual([0, 1]);
    expect(s.pos).toEqual({ seq: 11n, deltaSeq: 0n });
  });

  it("ignores the events of other sessions", () => {
    const s = loadedWith(midAnswer);
    const other = ev(20, { case: "runStopped", value: create(RunStoppedSchema, { status: SessionStatus.READY, reason: "done", steps: 1, text: "" }) }, 0, "s-2");
    expect(sessionReducer(s, { type: "event", event: other })).toBe(s);
  });

  it("drops a load older than what the events already brought", () => {
    const s = run(loadedWith(midAnswer), rest.map((event) => ({ type: "event", event })));
    const stale = run(s, [{ type: "fetch" }, { type: "loaded", session: midAnswer }]);
    expect(stale.turns).toEqual(s.turns);
    expect(stale.pos).toEqual(s.pos);
  });

  // A delta_seq carries in its bits above 33 the tag of the server process
  // that numbered it (tagA < tagB). GetSession
  // answered by one server and the stream by another cannot be ordered at
  // one seq: a delta there may be text the load has already.
  const tagA = 0x7fff0n << 33n;
  const tagB = 0x7fffen << 33n;
  const text = (seq: number, t: string, delta: bigint, turnIndex = 1) =>
    ev(seq, { case: "textDelta", value: { $typeName: "agents.v1.TextDelta", text: t, turnIndex } }, delta);

  it("drops another server's deltas at the seq of a load, and applies them from the next seq", () => {
    const fromA = session({ ...midAnswer, seq: 10n, deltaSeq: tagA | 3n });
    const s = run(loadedWith(fromA), [
      { type: "event", event: text(10, " DUPLICATE", tagB | 1n) },
      { type: "event", event: text(10, "l", tagA | 4n) },
      { type: "event", event: text(10, " TWICE", tagB | 2n) },
      { type: "event", event: ev(11, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: meta(SessionStatus.RUNNING, 1) } }) },
      { type: "event", event: text(11, "o", tagB | 3n) },
    ]);
    expect(s.live?.text).toBe("Hello");
    expect(s.pos).toEqual({ seq: 11n, deltaSeq: tagB | 3n });
  });

  it("orders one server's deltas exactly", () => {
    const fromA = session({ ...midAnswer, seq: 10n, deltaSeq: tagA | 3n });
    const s = run(loadedWith(fromA), [
      { type: "event", event: text(10, "l", tagA | 4n) },
      { type: "event", event: text(10, "l", tagA | 4n) },
      { type: "event", event: text(10, "o", tagA | 5n) },
      { type: "event", event: text(10, "o", tagA | 3n) },
    ]);
    expect(s.live?.text).toBe("Hello");
  });

  it("takes a refetch another server answered at the seq the events reached", () => {
    // Followed on server B to 11 with a hole at turn 1 (its head turn was
    // missed), then refetched from server A at the same seq.
    const followed = run(loadedWith(session({ seq: 10n, deltaSeq: tagB, meta: meta(SessionStatus.RUNNING, 1), turns: turns.slice(0, 1) })), [
      { type: "event", event: ev(11, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: meta(SessionStatus.RUNNING, 3), headTurn: turns[2] } }) },
      { type: "event", event: text(11, "It is", tagB | 9n, 3) },
    ]);
    expect(followed.turns.map((t) => t?.index)).toEqual([0, undefined, 2]);
    const s = run(followed, [
      { type: "fetch" },
      {
        type: "loaded",
        session: session({
          seq: 11n,
          deltaSeq: tagA | 2n,
          meta: meta(SessionStatus.RUNNING, 3),
          turns: turns.slice(1, 3),
          firstTurnIndex: 1,
          inProgress: create(TurnInProgressSchema, { turnIndex: 3, text: "It is" }),
        }),
      },
      { type: "event", event: text(11, " It is", tagB | 10n, 3) },
      { type: "event", event: text(11, " noon.", tagA | 3n, 3) },
    ]);
    expect(s.turns.map((t) => t?.index)).toEqual([0, 1, 2]);
    expect(s.pos).toEqual({ seq: 11n, deltaSeq: tagA | 3n });
    expect(s.live?.text).toBe("It is noon.");
  });

  it("prepends an older page before the first turn held", () => {
    const last = loadedWith(session({ seq: 18n, meta: meta(SessionStatus.READY, 4), turns: turns.slice(2), firstTurnIndex: 2 }));
    expect(last.first).toBe(2);
    // The result of turn 2 is known before the call that asked for it.
    expect(last.calls.c1).toMatchObject({ owner: -1, result: result1 });
    const s = sessionReducer(last, { type: "older", session: session({ seq: 18n, turns: turns.slice(0, 2), firstTurnIndex: 0 }) });
    expect(s.first).toBe(0);
    expect(s.turns).toEqual(turns);
    expect(s.calls.c1).toEqual({ call: call1, owner: 1, result: result1, running: false });
  });

  it("ignores a page that does not end at the first turn held", () => {
    const last = loadedWith(session({ seq: 18n, meta: meta(SessionStatus.READY, 4), turns: turns.slice(3), firstTurnIndex: 3 }));
    expect(sessionReducer(last, { type: "older", session: session({ seq: 18n, turns: turns.slice(0, 2) }) })).toBe(last);
  });

  it("fills the turns missed with a refetch after a snapshot", () => {
    // Turn 2 was missed: turn 3 arrives and leaves a hole.
    let s = run(loadedWith(session({ seq: 11n, meta: meta(SessionStatus.RUNNING, 2), turns: turns.slice(0, 2) })), [
      { type: "event", event: rest[9] },
    ]);
    expect(s.turns.map((t) => t?.index)).toEqual([0, 1, undefined, 3]);
    s = run(s, [
      { type: "fetch" },
      { type: "loaded", session: session({ seq: 18n, meta: meta(SessionStatus.READY, 4, { statusReason: "done" }), turns: turns.slice(2), firstTurnIndex: 2 }) },
    ]);
    expect(s).toEqual(loadedWith(session({ seq: 18n, meta: meta(SessionStatus.READY, 4, { statusReason: "done" }), turns })));
  });

  it("lists deferred calls and drops those answered elsewhere on a refetch", () => {
    const ask = create(ToolCallSchema, { id: "c9", name: "ask_user", kind: ToolKind.CLIENT, mode: 2 });
    const d = create(DeferredCallSchema, { token: "tok", sessionId: id, call: ask, reason: "client_tool" });
    let s = run(loadedWith(session({ seq: 5n, meta: meta(SessionStatus.RUNNING, 1), turns: turns.slice(0, 1) })), [
      { type: "event", event: ev(6, { case: "callsDeferred", value: { $typeName: "agents.v1.CallsDeferred", calls: [d] } }) },
      { type: "event", event: ev(6, { case: "callsDeferred", value: { $typeName: "agents.v1.CallsDeferred", calls: [d] } }) },
    ]);
    expect(s.pending).toEqual([d]);
    expect(s.calls.c9).toMatchObject({ deferred: "client_tool" });
    s = run(s, [{ type: "fetch" }, { type: "loaded", session: session({ seq: 8n, meta: meta(SessionStatus.RUNNING, 1), turns: [], firstTurnIndex: 1 }) }]);
    expect(s.pending).toEqual([]);
    expect(s.calls.c9.deferred).toBeUndefined();
  });

  it("links a helper call to its child session while it runs and after", () => {
    const helper = create(ToolCallSchema, { id: "h1", name: "prompt_agent_researcher", kind: ToolKind.HELPER });
    const llm = create(TurnSchema, { index: 1, kind: { case: "llm", value: create(LlmTurnSchema, { toolCalls: [helper] }) } });
    let s = run(loadedWith(session({ seq: 1n, meta: meta(SessionStatus.RUNNING, 2), turns: [turns[0], llm] })), [
      { type: "event", event: ev(2, { case: "subcallStarted", value: { $typeName: "agents.v1.SubcallStarted", childSessionId: "child", agent: "researcher", callId: "h1", depth: 1 } }) },
    ]);
    expect(s.calls.h1).toMatchObject({ child: "child", childAgent: "researcher", owner: 1 });
    const r = create(ToolResultSchema, { callId: "h1", name: helper.name, text: "found", status: ToolResultStatus.OK, childSessionId: "child" });
    s = sessionReducer(s, { type: "event", event: ev(3, { case: "toolCompleted", value: { $typeName: "agents.v1.ToolCompleted", result: r } }) });
    expect(s.calls.h1).toEqual({ call: helper, owner: 1, result: r, running: false });
  });

  it("marks a failure with its reason and code and ends the partial turn", () => {
    const s = run(loadedWith(midAnswer), [
      { type: "event", event: ev(11, { case: "sessionFailed", value: { $typeName: "agents.v1.SessionFailed", reason: "model down", code: "model_error" } }) },
    ]);
    expect(s.meta).toMatchObject({ status: SessionStatus.FAILED, statusReason: "model down" });
    expect(s.failureCode).toBe("model_error");
    expect(s.live).toBeUndefined();
  });

  it("marks the session deleted", () => {
    const s = run(loadedWith(midAnswer), [
      { type: "event", event: ev(11, { case: "sessionDeleted", value: { $typeName: "agents.v1.SessionDeleted", meta: meta(SessionStatus.READY, 1) } }) },
    ]);
    expect(s.deleted).toBe(true);
  });

  it("follows the tree's spend from the sessions of its tree, not from others", () => {
    const root = session({ seq: 10n, meta: create(SessionMetaSchema, { id, rootId: id, status: SessionStatus.WAITING, budget: { budget: { tokens: 1000n }, spent: { tokens: 100n } } }) });
    let s = loadedWith(root);
    const helper = (seq: number, rootId: string, spent: bigint) =>
      ev(
        seq,
        {
          case: "sessionUpdated",
          value: { $typeName: "agents.v1.SessionUpdated", meta: create(SessionMetaSchema, { id: "kid", rootId, budget: { budget: { tokens: 1000n }, spent: { tokens: spent } } }) },
        },
        0,
        "kid",
      );
    s = sessionReducer(s, { type: "event", event: helper(11, id, 400n) });
    expect(s.meta?.budget?.spent?.tokens).toBe(400n);
    expect(s.meta?.status).toBe(SessionStatus.WAITING);
    // Another tree's spend is not this one's; an old change is not news.
    const after = sessionReducer(s, { type: "event", event: helper(12, "other-root", 900n) });
    expect(after).toBe(s);
    expect(sessionReducer(s, { type: "event", event: helper(9, id, 50n) }).meta?.budget?.spent?.tokens).toBe(400n);
  });

  it("keeps which budget stopped the run until the next run starts", () => {
    let s = loadedWith(midAnswer);
    s = sessionReducer(s, {
      type: "event",
      event: ev(11, { case: "runStopped", value: create(RunStoppedSchema, { status: SessionStatus.PAUSED, reason: "budget_exceeded", budget: "session" }) }),
    });
    expect(s.stoppedBy).toBe("session");
    expect(s.meta).toMatchObject({ status: SessionStatus.PAUSED, statusReason: "budget_exceeded" });
    s = sessionReducer(s, { type: "event", event: ev(12, { case: "runStarted", value: create(RunStartedSchema) }) });
    expect(s.stoppedBy).toBeUndefined();
  });

  it("does not take back spend the tree showed when the root's own update saw less", () => {
    const budget = (spent: bigint) => ({ budget: { tokens: 1000n }, spent: { tokens: spent } });
    let s = loadedWith(session({ seq: 10n, meta: create(SessionMetaSchema, { id, rootId: id, status: SessionStatus.WAITING, budget: budget(100n) }) }));
    const update = (seq: number, sessionId: string, spent: bigint) =>
      ev(seq, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: create(SessionMetaSchema, { id: sessionId, rootId: id, status: SessionStatus.RUNNING, budget: budget(spent) }) } }, 0, sessionId);
    s = run(s, [
      { type: "event", event: update(11, "kid", 500n) },
      // The root saw the tree at its last model call.
      { type: "event", event: update(12, id, 100n) },
    ]);
    expect(s.meta?.status).toBe(SessionStatus.RUNNING);
    expect(s.meta?.budget?.spent?.tokens).toBe(500n);
    expect(s.meta?.budget?.left?.tokens).toBe(500n);
  });

  it("says a compaction runs from its start until its turn arrives, which ends where a fresh load ends", () => {
    const compaction = create(TurnSchema, {
      index: 4,
      kind: { case: "compaction", value: create(CompactionSchema, { reason: "threshold", summaryEnd: 3, summarizedTurns: 3, summary: "noon", tokensBefore: 38204n, tokensAfter: 2310n }) },
    });
    let s = loadedWith(session({ seq: 10n, meta: meta(SessionStatus.RUNNING, 4), turns }));
    s = sessionReducer(s, { type: "event", event: ev(11, { case: "compactionStarted", value: create(CompactionStartedSchema, { reason: "threshold", tokens: 38204n }) }) });
    expect(s.compacting).toEqual({ reason: "threshold", tokens: 38204n });
    s = run(s, [
      { type: "event", event: ev(12, { case: "sessionCompacted", value: create(SessionCompactedSchema, { meta: meta(SessionStatus.RUNNING, 5), turn: compaction }) }) },
      { type: "event", event: ev(13, { case: "sessionUpdated", value: { $typeName: "agents.v1.SessionUpdated", meta: meta(SessionStatus.RUNNING, 5), headTurn: compaction } }) },
    ]);
    expect(s.compacting).toBeUndefined();
    expect(s).toEqual(loadedWith(session({ seq: 13n, meta: meta(SessionStatus.RUNNING, 5), turns: [...turns, compaction] })));
  });

  it("forgets a compaction in flight when the run stops or fails", () => {
    const started = (seq: number) => ev(seq, { case: "compactionStarted", value: create(CompactionStartedSchema, { reason: "overflow", tokens: 9n }) });
    let s = loadedWith(session({ seq: 10n, meta: meta(SessionStatus.RUNNING, 4), turns }));
    s = run(s, [
      { type: "event", event: started(11) },
      { type: "event", event: ev(12, { case: "runStopped", value: create(RunStoppedSchema, { status: SessionStatus.READY, reason: "cancelled" }) }) },
    ]);
    expect(s.compacting).toBeUndefined();
    s = run(s, [
      { type: "event", event: ev(13, { case: "runStarted", value: create(RunStartedSchema) }) },
      { type: "event", event: started(14) },
      { type: "event", event: ev(15, { case: "sessionFailed", value: { $typeName: "agents.v1.SessionFailed", reason: "model down", code: "model_error" } }) },
    ]);
    expect(s.compacting).toBeUndefined();
  });
});

describe("awaitsRun", () => {
  const ready = (n: number) => loadedWith(session({ seq: 5n, meta: meta(SessionStatus.READY, n), turns: turns.slice(0, n) }));

  it("is true for a ready session that ends with a question, as a fork cut there", () => {
    expect(awaitsRun(ready(1))).toBe(true);
    // Tool results with no answer after them: the model has not seen them.
    expect(awaitsRun(ready(3))).toBe(true);
  });

  it("is false once the model answered, while a run goes on, and before everything up to the head is loaded", () => {
    expect(awaitsRun(ready(4))).toBe(false);
    expect(awaitsRun(ready(2))).toBe(false);
    expect(awaitsRun(loadedWith(session({ seq: 5n, meta: meta(SessionStatus.RUNNING, 1), turns: turns.slice(0, 1) })))).toBe(false);
    expect(awaitsRun(loadedWith(session({ seq: 5n, meta: meta(SessionStatus.READY, 3), turns: turns.slice(0, 1) })))).toBe(false);
    expect(awaitsRun(initialState(id))).toBe(false);
  });
});
