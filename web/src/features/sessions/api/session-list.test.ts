import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EventSchema, type Event } from "../../../gen/agents/v1/event_pb";
import { SessionMetaSchema, SessionStatus, type SessionMeta } from "../../../gen/agents/v1/session_pb";
import {
  flatten,
  initialSessionList,
  reduceSessionList,
  sessionTree,
  type SessionListAction,
  type SessionListState,
} from "./session-list";

type MetaInit = { parentId?: string; depth?: number; title?: string; agent?: string; status?: SessionStatus; turnCount?: number };
const meta = (id: string, at: number, extra: MetaInit = {}): SessionMeta =>
  create(SessionMetaSchema, { id, agent: "assistant", title: id, status: SessionStatus.READY, updateTime: timestampFromMs(at), ...extra });

const event = (sessionId: string, at: number, body: MessageInitShape<typeof EventSchema>["body"]): Event =>
  create(EventSchema, { sessionId, time: timestampFromMs(at), body });

const created = (m: SessionMeta) => event(m.id, 0, { case: "sessionCreated", value: { meta: m } });
const updated = (m: SessionMeta, turn = false) =>
  event(m.id, 0, { case: "sessionUpdated", value: { meta: m, headTurn: turn ? { index: m.turnCount - 1 } : undefined } });
const deleted = (id: string) => event(id, 0, { case: "sessionDeleted", value: { meta: { id } } });
const started = (id: string, at: number) => event(id, at, { case: "runStarted", value: {} });
const stopped = (id: string, at: number) =>
  event(id, at, { case: "runStopped", value: { status: SessionStatus.READY, reason: "done" } });
const failed = (id: string, at: number) => event(id, at, { case: "sessionFailed", value: { reason: "model down", code: "model_error" } });

function run(actions: SessionListAction[], state: SessionListState = initialSessionList): SessionListState {
  return actions.reduce(reduceSessionList, state);
}

const load = (sessions: SessionMeta[], generation = 1): SessionListAction[] => [
  { type: "refresh", generation },
  { type: "loaded", generation, sessions },
];

const ids = (s: SessionListState) => flatten(sessionTree(s)).map((n) => n.meta.id);

describe("the session list", () => {
  it("fills from a listing, newest first", () => {
    const s = run(load([meta("a", 1), meta("b", 3), meta("c", 2)]));
    expect(s.loaded).toBe(true);
    expect(ids(s)).toEqual(["b", "c", "a"]);
  });

  it("adds a created session and changes an updated one", () => {
    const s = run([
      ...load([meta("a", 1)]),
      { type: "event", event: created(meta("b", 2)) },
      { type: "event", event: updated(meta("a", 3, { title: "renamed", turnCount: 2 })) },
    ]);
    expect(ids(s)).toEqual(["a", "b"]);
    expect(s.metas.get("a")?.title).toBe("renamed");
    expect(s.metas.get("a")?.turnCount).toBe(2);
  });

  it("ignores an update older than what it holds", () => {
    const s = run([...load([meta("a", 5, { title: "new" })]), { type: "event", event: updated(meta("a", 4, { title: "old" })) }]);
    expect(s.metas.get("a")?.title).toBe("new");
  });

  it("follows run events: status, reason, updated time", () => {
    let s = run([...load([meta("a", 1)]), { type: "event", event: started("a", 10) }]);
    expect(s.metas.get("a")?.status).toBe(SessionStatus.RUNNING);
    s = run([{ type: "event", event: failed("a", 20) }], s);
    expect(s.metas.get("a")).toMatchObject({ status: SessionStatus.FAILED, statusReason: "model down" });
    expect(Number(s.metas.get("a")?.updateTime?.seconds)).toBe(0); // 20 ms
    s = run([{ type: "event", event: stopped("a", 30_000) }], s);
    expect(s.metas.get("a")).toMatchObject({ status: SessionStatus.READY, statusReason: "done" });
    expect(Number(s.metas.get("a")?.updateTime?.seconds)).toBe(30);
  });

  it("nests sub-sessions under their parent, and a child without its parent is a root", () => {
    const s = run([
      ...load([meta("root", 1), meta("other", 2)]),
      { type: "event", event: created(meta("child", 3, { parentId: "root", depth: 1 })) },
      { type: "event", event: created(meta("grandchild", 4, { parentId: "child", depth: 2 })) },
      { type: "event", event: created(meta("orphan", 5, { parentId: "gone" })) },
    ]);
    const tree = sessionTree(s);
    expect(tree.map((n) => n.meta.id)).toEqual(["orphan", "other", "root"]);
    const root = tree[2];
    expect(root.children.map((n) => n.meta.id)).toEqual(["child"]);
    expect(root.children[0].children.map((n) => [n.meta.id, n.depth])).toEqual([["grandchild", 2]]);
  });

  it("keeps the ancestors of a session that matches a filter", () => {
    const s = run(
      load([
        meta("root", 1, { title: "plan the trip" }),
        meta("child", 2, { parentId: "root", title: "find trains", agent: "researcher" }),
        meta("x", 3, { title: "unrelated", status: SessionStatus.FAILED }),
      ]),
    );
    expect(flatten(sessionTree(s, { text: "TRAINS" })).map((n) => n.meta.id)).toEqual(["root", "child"]);
    expect(flatten(sessionTree(s, { agent: "researcher" })).map((n) => n.meta.id)).toEqual(["root", "child"]);
    expect(flatten(sessionTree(s, { status: SessionStatus.FAILED })).map((n) => n.meta.id)).toEqual(["x"]);
    expect(flatten(sessionTree(s, { text: "nothing" }))).toEqual([]);
  });

  it("removes a deleted session and its unread marker", () => {
    const s = run([...load([meta("a", 1), meta("b", 2)]), { type: "event", event: stopped("a", 3) }, { type: "event", event: deleted("a") }]);
    expect(ids(s)).toEqual(["b"]);
    expect(s.unread.has("a")).toBe(false);
  });

  it("marks news in a session not open as unread until it is opened", () => {
    let s = run([
      ...load([meta("a", 1, { turnCount: 1 }), meta("b", 1), meta("c", 1), meta("d", 1)]),
      { type: "open", id: "b" },
      { type: "event", event: updated(meta("a", 2, { turnCount: 2 }), true) }, // a new turn
      { type: "event", event: stopped("b", 3) }, // open: stays read
      { type: "event", event: failed("c", 3) },
      { type: "event", event: updated(meta("d", 2, { title: "renamed" })) }, // no turn: no news
    ]);
    expect([...s.unread].sort()).toEqual(["a", "c"]);
    expect(sessionTree(s).find((n) => n.meta.id === "a")?.unread).toBe(true);
    s = run([{ type: "open", id: "a" }], s);
    expect([...s.unread]).toEqual(["c"]);
    s = run([{ type: "event", event: stopped("a", 4) }], s);
    expect(s.unread.has("a")).toBe(false);
    s = run([{ type: "open", id: undefined }, { type: "event", event: stopped("a", 5) }], s);
    expect(s.unread.has("a")).toBe(true);
  });

  it("keeps the unread markers across a listing", () => {
    const s = run([...load([meta("a", 1), meta("b", 1)]), { type: "event", event: stopped("a", 2) }, ...load([meta("a", 2)], 2)]);
    expect([...s.unread]).toEqual(["a"]);
  });

  it("does not let a stale listing undo newer events", () => {
    const s = run([
      ...load([meta("a", 1), meta("b", 1)]),
      // A listing is asked for; while it is in flight, events arrive.
      { type: "refresh", generation: 2 },
      { type: "event", event: created(meta("c", 5)) },
      { type: "event", event: started("a", 6) },
      { type: "event", event: deleted("b") },
      // Its answer predates them.
      { type: "loaded", generation: 2, sessions: [meta("a", 1), meta("b", 1)] },
    ]);
    expect(ids(s)).toEqual(["a", "c"]);
    expect(s.metas.get("a")?.status).toBe(SessionStatus.RUNNING);
  });

  it("ignores the answer of a listing a newer one replaced", () => {
    const s = run([
      { type: "refresh", generation: 1 },
      { type: "refresh", generation: 2 },
      { type: "loaded", generation: 2, sessions: [meta("new", 2)] },
      { type: "loaded", generation: 1, sessions: [meta("old", 1)] },
    ]);
    expect(ids(s)).toEqual(["new"]);
  });

  it("keeps no events once no listing is in flight", () => {
    const s = run([...load([meta("a", 1)]), { type: "event", event: started("a", 2) }]);
    expect(s.sinceRefresh).toEqual([]);
  });
});
