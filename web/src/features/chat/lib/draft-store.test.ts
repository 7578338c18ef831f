import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EventSchema, RunStoppedSchema, SnapshotSchema, type Event } from "../../../gen/agents/v1/event_pb";
import { AttachmentSchema, SessionMetaSchema, SessionStatus } from "../../../gen/agents/v1/session_pb";
import { SessionService, type PostMessageRequest } from "../../../gen/agents/v1/session_service_pb";
import type { StreamUpdate } from "../../../lib/event-stream";
import { createSessionClient } from "../../../lib/transport";
import { draftPoster } from "../api/post-draft";
import { appended, DraftStore } from "./draft-store";

// A server that records what it was posted, failing while fail is set.
function server() {
  const posted: PostMessageRequest[] = [];
  const ctl = { fail: false };
  const transport = createRouterTransport(({ service }) => {
    service(SessionService, {
      postMessage: (req) => {
        if (ctl.fail) throw new ConnectError("server away", Code.Unavailable);
        posted.push(req);
        return {};
      },
    });
  });
  return { posted, ctl, poster: draftPoster(createSessionClient(transport)) };
}

// A stream the test drives.
function stream() {
  const ls = new Set<(u: StreamUpdate) => void>();
  return {
    on(l: (u: StreamUpdate) => void) {
      ls.add(l);
      return () => ls.delete(l);
    },
    emit(event: Event) {
      for (const l of ls) l({ event });
    },
    update(u: StreamUpdate) {
      for (const l of ls) l(u);
    },
    get listeners() {
      return ls.size;
    },
  };
}

function stopped(sessionId: string, status: SessionStatus, seq = 1): Event {
  return create(EventSchema, {
    seq: BigInt(seq),
    sessionId,
    body: { case: "runStopped", value: create(RunStoppedSchema, { status, reason: "done", steps: 1, text: "" }) },
  });
}

async function settled() {
  await new Promise((r) => setTimeout(r, 0));
}

describe("appended", () => {
  it("adds paragraphs, trimming what is sent", () => {
    let d = appended({ text: "", attachments: [] }, "  first  ", []);
    expect(d.text).toBe("first");
    d = appended(d, "second\n", []);
    expect(d.text).toBe("first\n\nsecond");
    expect(appended(d, "   ", []).text).toBe("first\n\nsecond");
  });
});

describe("DraftStore", () => {
  it("keeps one draft per session, appending paragraphs and attachments", () => {
    const store = new DraftStore();
    const png = create(AttachmentSchema, { name: "a.png", mediaType: "image/png", data: new Uint8Array([1]) });
    store.append("a", "one");
    store.append("a", "two", [png]);
    store.append("b", "other");
    expect(store.get("a")).toEqual({ text: "one\n\ntwo", attachments: [png] });
    expect(store.get("b").text).toBe("other");
    store.setText("a", "rewritten");
    expect(store.get("a")).toEqual({ text: "rewritten", attachments: [png] });
    store.removeAttachment("a", 0);
    store.clear("b");
    expect(store.get("a").attachments).toEqual([]);
    expect(store.get("b")).toEqual({ text: "", attachments: [] });
  });

  it("notifies its listeners of every change", () => {
    const store = new DraftStore();
    let n = 0;
    const off = store.subscribe(() => n++);
    store.append("a", "one");
    store.setText("a", "two");
    off();
    store.clear("a");
    expect(n).toBe(2);
  });

  it("posts the draft whole when the run stops in a status that accepts input", async () => {
    const { posted, poster } = server();
    const s = stream();
    const store = new DraftStore();
    store.connect(s, poster);
    store.append("a", "one");
    store.append("a", "two");
    s.emit(stopped("a", SessionStatus.WAITING));
    await settled();
    expect(posted).toEqual([]);
    s.emit(stopped("a", SessionStatus.READY));
    await settled();
    expect(posted.map((r) => [r.sessionId, r.message?.text])).toEqual([["a", "one\n\ntwo"]]);
    expect(store.get("a").text).toBe("");
    // Nothing left to post: a second stop posts nothing.
    s.emit(stopped("a", SessionStatus.READY, 2));
    await settled();
    expect(posted).toHaveLength(1);
  });

  it("posts after a failure too, and keeps the draft of a paused session", async () => {
    const { posted, poster } = server();
    const s = stream();
    const store = new DraftStore();
    store.connect(s, poster);
    store.append("a", "for later");
    s.emit(stopped("a", SessionStatus.PAUSED));
    await settled();
    expect(posted).toEqual([]);
    expect(store.get("a").text).toBe("for later");
    s.emit(create(EventSchema, { seq: 3n, sessionId: "a", body: { case: "sessionFailed", value: { $typeName: "agents.v1.SessionFailed", reason: "x", code: "model_error" } } }));
    await settled();
    expect(posted.map((r) => r.message?.text)).toEqual(["for later"]);
  });

  it("posts the drafts of sessions a snapshot says accept input", async () => {
    const { posted, poster } = server();
    const s = stream();
    const store = new DraftStore();
    store.connect(s, poster);
    store.append("a", "missed the stop");
    store.append("b", "still running");
    s.update({
      snapshot: create(SnapshotSchema, {
        seq: 9n,
        sessions: [create(SessionMetaSchema, { id: "a", status: SessionStatus.READY }), create(SessionMetaSchema, { id: "b", status: SessionStatus.RUNNING })],
      }),
    });
    await settled();
    expect(posted.map((r) => [r.sessionId, r.message?.text])).toEqual([["a", "missed the stop"]]);
    expect(store.get("b").text).toBe("still running");
  });

  it("sends now on request, and only the session's own draft", async () => {
    const { posted, poster } = server();
    const store = new DraftStore(poster);
    store.append("a", "now");
    store.append("b", "later");
    await store.send("a");
    expect(posted.map((r) => [r.sessionId, r.message?.text])).toEqual([["a", "now"]]);
    expect(store.get("b").text).toBe("later");
  });

  it("gives the draft back, ahead of what was typed since, when the post fails", async () => {
    const { ctl, poster } = server();
    ctl.fail = true;
    const store = new DraftStore(poster);
    store.append("a", "first");
    const p = store.send("a");
    expect(store.isSending("a")).toBe(true);
    store.append("a", "typed meanwhile");
    await p;
    expect(store.isSending("a")).toBe(false);
    expect(store.get("a").text).toBe("first\n\ntyped meanwhile");
    expect(store.error("a")).toContain("server away");
  });

  it("forgets the draft of a deleted session", () => {
    const s = stream();
    const store = new DraftStore();
    store.connect(s, async () => {});
    store.append("a", "gone");
    s.emit(create(EventSchema, { seq: 1n, sessionId: "a", body: { case: "sessionDeleted", value: { $typeName: "agents.v1.SessionDeleted" } } }));
    expect(store.get("a").text).toBe("");
  });

  it("subscribes to a stream once, and moves to a new one", () => {
    const s1 = stream();
    const s2 = stream();
    const store = new DraftStore();
    store.connect(s1, async () => {});
    store.connect(s1, async () => {});
    expect(s1.listeners).toBe(1);
    store.connect(s2, async () => {});
    expect(s1.listeners).toBe(0);
    expect(s2.listeners).toBe(1);
  });
});
