import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import axe from "axe-core";
import { MemoryRouter, Route, Routes } from "react-router";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentDescriptorSchema, AgentService, ParamDescriptorSchema, ToolKind } from "../../../gen/agents/v1/agent_pb";
import { CompactionStartedSchema, EventSchema, RunStoppedSchema, SessionCompactedSchema, ToolCallDeltaSchema, type Event } from "../../../gen/agents/v1/event_pb";
import { MailEnvelopeSchema, MailPriority } from "../../../gen/agents/v1/mail_pb";
import {
  CompactionSchema,
  DeferredCallSchema,
  LlmTurnSchema,
  BudgetStateSchema,
  SessionMetaSchema,
  SessionSchema,
  SessionStatus,
  ToolCallSchema,
  TurnInProgressSchema,
  TurnSchema,
  UserTurnSchema,
  type Session,
} from "../../../gen/agents/v1/session_pb";
import {
  DeleteMode,
  SessionService,
  type CompactRequest,
  type CompleteCallRequest,
  type DeleteSessionRequest,
  type ForkSessionRequest,
  type GetSessionRequest,
  type PostMessageRequest,
  type RenameSessionRequest,
  type ResumeRequest,
  type SendMailRequest,
  type UpdateSessionRequest,
} from "../../../gen/agents/v1/session_service_pb";
import { EventStream, type StreamUpdate } from "../../../lib/event-stream";
import { EventStreamContext } from "../../../lib/event-stream-context";
import { shortcuts, useShortcutList } from "../../../lib/shortcuts";
import { createEventClient } from "../../../lib/transport";
import { ChatPage } from "./chat-page";
import { Where } from "../../../testing/where";

// A stream the test drives.
class TestStream extends EventStream {
  push(u: StreamUpdate) {
    act(() => this.emit(u));
  }
}

beforeAll(() => {
  // jsdom scrolls nothing; the transcript asks it to.
  Element.prototype.scrollTo ??= function () {};
  // axe asks for a canvas, which jsdom does not draw.
  HTMLCanvasElement.prototype.getContext = () => null;
  // jsdom lays nothing out: give the transcript a size, so the
  // virtualiser has a view to fill.
  Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "clientWidth", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "offsetHeight", { configurable: true, get: () => 100 });
});

afterEach(cleanup);

function server(sess: Session, older?: Session, readOnly = false) {
  const gets: GetSessionRequest[] = [];
  const posted: PostMessageRequest[] = [];
  const completed: CompleteCallRequest[] = [];
  const forked: ForkSessionRequest[] = [];
  const mailed: SendMailRequest[] = [];
  const deleted: DeleteSessionRequest[] = [];
  const renamed: RenameSessionRequest[] = [];
  const updated: UpdateSessionRequest[] = [];
  const resumed: ResumeRequest[] = [];
  const compacted: CompactRequest[] = [];
  const transport = createRouterTransport(({ service }) => {
    service(SessionService, {
      getSession: (req) => {
        gets.push(req);
        // Fixtures: a session that is not there, and a fork's source.
        if (req.sessionId === "gone") throw new ConnectError("no session gone", Code.NotFound);
        if (req.sessionId === "source" && sess.meta?.id !== "source") {
          return { session: create(SessionSchema, { meta: create(SessionMetaSchema, { id: "source", title: "Original plan" }) }) };
        }
        return { session: older && req.beforeTurn !== undefined ? older : sess, readOnly };
      },
      postMessage: (req) => {
        posted.push(req);
        return { meta: sess.meta };
      },
      completeCall: (req) => {
        completed.push(req);
        return { meta: sess.meta, remaining: 0 };
      },
      listMail: (req) => ({
        mail: req.pendingOnly
          ? []
          : [
              create(MailEnvelopeSchema, {
                id: "m1",
                sessionId: sess.meta?.id,
                sender: { kind: { case: "sessionId", value: "other" } },
                body: { kind: { case: "agentMessage", value: { agent: "critic", text: "looks wrong" } } },
              }),
            ],
      }),
      sendMail: (req) => {
        mailed.push(req);
        return {};
      },
      listSessions: (req) => ({
        sessions: req.parentId ? [create(SessionMetaSchema, { id: "kid", agent: "researcher", title: "digging", parentId: req.parentId })] : [],
      }),
      deleteSession: (req) => {
        deleted.push(req);
        return { deletedIds: [req.sessionId, "kid"] };
      },
      renameSession: (req) => {
        renamed.push(req);
        return { meta: { id: sess.meta?.id, title: req.title } };
      },
      updateSession: (req) => {
        updated.push(req);
        return { meta: sess.meta };
      },
      resume: (req) => {
        resumed.push(req);
        return { meta: sess.meta };
      },
      // A running session compacts before its next step; one with no
      // run answers with the compaction. Fixture: "fail" is refused.
      compact: (req) => {
        compacted.push(req);
        if (req.instruction === "fail") throw new ConnectError("nothing to compact yet", Code.FailedPrecondition);
        if (sess.meta?.status === SessionStatus.RUNNING) return { meta: sess.meta, pending: true };
        return { meta: sess.meta, compaction: compactionTurn(sess.meta?.turnCount ?? 0, req.instruction) };
      },
      forkSession: (req) => {
        forked.push(req);
        return { session: create(SessionSchema, { meta: create(SessionMetaSchema, { id: "forked", agent: req.agent || "assistant" }) }) };
      },
    });
    service(AgentService, {
      getAgent: () => ({
        agent: create(AgentDescriptorSchema, {
          slug: "assistant",
          params: [create(ParamDescriptorSchema, { name: "API_TOKEN", secret: true, required: true })],
        }),
      }),
      listAgents: () => ({ agents: [create(AgentDescriptorSchema, { slug: "assistant" }), create(AgentDescriptorSchema, { slug: "critic" })] }),
    });
  });
  return { transport, posted, completed, forked, mailed, deleted, gets, renamed, updated, resumed, compacted };
}

function open(sess: Session, path = `/sessions/${sess.meta?.id}`, older?: Session, readOnly = false) {
  const srv = server(sess, older, readOnly);
  const stream = new TestStream(createEventClient(srv.transport));
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const view = render(
    <TransportProvider transport={srv.transport}>
      <QueryClientProvider client={qc}>
        <EventStreamContext.Provider value={stream}>
          <MemoryRouter initialEntries={[path]}>
            <Where />
            <Routes>
              <Route path="/sessions/:id/*" element={<ChatPage />} />
              <Route path="/" element={<p>home</p>} />
            </Routes>
          </MemoryRouter>
        </EventStreamContext.Provider>
      </QueryClientProvider>
    </TransportProvider>,
  );
  return { ...srv, stream, view };
}

function running(id: string): Session {
  return create(SessionSchema, {
    seq: 10n,
    deltaSeq: 3n,
    meta: create(SessionMetaSchema, { id, agent: "assistant", title: "Clock", status: SessionStatus.RUNNING, turnCount: 1 }),
    turns: [create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "what time is it?" }) } })],
    inProgress: create(TurnInProgressSchema, { turnIndex: 1, text: "Hel" }),
  });
}

function compactionTurn(index: number, instruction = "", reason = "manual") {
  return create(TurnSchema, {
    index,
    kind: {
      case: "compaction",
      value: create(CompactionSchema, {
        reason,
        summaryEnd: index,
        summarizedTurns: index,
        summary: "The user asked the **time**; it is noon.",
        tokensBefore: 38204n,
        tokensAfter: 2310n,
        model: "summary-model",
        instruction,
        usage: { promptTokens: 38000n, completionTokens: 310n, costUsd: 0.0012 },
      }),
    },
  });
}

function ready(id: string, turns: number): Session {
  const sess = running(id);
  sess.meta!.status = SessionStatus.READY;
  sess.meta!.turnCount = turns;
  sess.inProgress = undefined;
  for (let i = 1; i < turns; i++) {
    sess.turns.push(create(TurnSchema, { index: i, kind: { case: "llm", value: create(LlmTurnSchema, { text: `answer ${i}` }) } }));
  }
  return sess;
}

function ev(id: string, seq: number, body: Event["body"], delta = 0): StreamUpdate {
  return { event: create(EventSchema, { seq: BigInt(seq), deltaSeq: BigInt(delta), sessionId: id, body }) };
}

function stopped(id: string, seq: number): StreamUpdate {
  return ev(id, seq, { case: "runStopped", value: create(RunStoppedSchema, { status: SessionStatus.READY, reason: "done", steps: 1, text: "" }) });
}

// moreItem opens the header's More menu and finds an item of it.
async function moreItem(name: string): Promise<HTMLElement> {
  fireEvent.click(await screen.findByRole("button", { name: "More" }));
  return screen.findByRole("menuitem", { name });
}

describe("ChatPage", () => {
  it("shows the turns and the partial answer at once, then streams on", async () => {
    const { stream } = open(running("p-1"));
    const log = await screen.findByRole("log", { name: "Conversation" });
    await within(log).findByRole("article", { name: "You, turn 1" });
    const live = within(log).getByRole("article", { name: "assistant, answering" });
    expect(live.textContent).toContain("Hel");
    stream.push(ev("p-1", 10, { case: "textDelta", value: { $typeName: "agents.v1.TextDelta", text: "lo there", turnIndex: 1 } }, 4));
    await waitFor(() => expect(within(log).getByRole("article", { name: "assistant, answering" }).textContent).toContain("Hello there"));
    stream.push(
      ev("p-1", 11, {
        case: "sessionUpdated",
        value: {
          $typeName: "agents.v1.SessionUpdated",
          meta: create(SessionMetaSchema, { id: "p-1", agent: "assistant", status: SessionStatus.RUNNING, turnCount: 2 }),
          headTurn: create(TurnSchema, {
            index: 1,
            kind: { case: "llm", value: create(LlmTurnSchema, { text: "Hello there", toolCalls: [create(ToolCallSchema, { id: "c1", name: "bash_clock", kind: ToolKind.BASH })] }) },
          }),
        },
      }),
    );
    const answer = await within(log).findByRole("article", { name: "assistant, turn 2" });
    expect(within(answer).getByRole("group", { name: "bash_clock" })).toBeTruthy();
    expect(within(log).queryByRole("article", { name: "assistant, answering" })).toBeNull();
  });

  it("shows the tool call the model is writing as it grows", async () => {
    const { stream } = open(running("p-9"));
    const log = await screen.findByRole("log", { name: "Conversation" });
    const piece = (delta: number, args: string, callId = "", name = "") =>
      ev("p-9", 10, { case: "toolCallDelta", value: create(ToolCallDeltaSchema, { turnIndex: 1, callIndex: 0, callId, name, arguments: args }) }, delta);
    stream.push(piece(4, '{"tz":', "c1", "bash_clock"));
    const card = await within(log).findByRole("group", { name: "bash_clock" });
    expect(within(log).getByRole("article", { name: "assistant, answering" }).contains(card)).toBe(true);
    expect(card.textContent).toContain('{"tz":');
    stream.push(piece(5, '"UTC"}'));
    await waitFor(() => expect(within(log).getByRole("group", { name: "bash_clock" }).textContent).toContain('"tz": "UTC"'));
  });

  it("adds to the draft while the run is busy and posts it whole when the run stops", async () => {
    const { stream, posted } = open(running("p-2"));
    const box = await screen.findByRole("textbox", { name: "Message" });
    await screen.findByRole("status", { name: "Status: running" });
    fireEvent.change(box, { target: { value: "also this" } });
    fireEvent.keyDown(box, { key: "Enter" });
    fireEvent.change(box, { target: { value: "and that" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    const draft = await screen.findByRole("region", { name: "Draft" });
    expect(draft.textContent).toContain("also this");
    expect(posted).toEqual([]);
    stream.push(stopped("p-2", 12));
    await waitFor(() => expect(posted.map((p) => p.message?.text)).toEqual(["also this\n\nand that"]));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Draft" })).toBeNull());
  });

  it("sends now on request, and interrupts bypassing the draft", async () => {
    const { posted } = open(running("p-3"));
    const box = await screen.findByRole("textbox", { name: "Message" });
    await screen.findByRole("status", { name: "Status: running" });
    fireEvent.change(box, { target: { value: "later" } });
    fireEvent.keyDown(box, { key: "Enter" });
    fireEvent.click(await screen.findByRole("button", { name: "Send now" }));
    await waitFor(() => expect(posted.map((p) => [p.message?.text, p.message?.interrupt])).toEqual([["later", false]]));
    fireEvent.change(box, { target: { value: "stop, do this" } });
    fireEvent.click(screen.getByRole("button", { name: "Interrupt" }));
    await waitFor(() => expect(posted.map((p) => [p.message?.text, p.message?.interrupt])).toEqual([["later", false], ["stop, do this", true]]));
  });

  it("names the version of its stored agent a session runs, and says when it is pinned", async () => {
    const pinned = create(SessionSchema, {
      seq: 1n,
      meta: create(SessionMetaSchema, { id: "p-v", agent: "assistant", status: SessionStatus.READY, turnCount: 0, agentVersion: 2n, pinnedAgentVersion: 2n }),
    });
    open(pinned);
    expect(await screen.findByText("v2 (pinned)")).toBeTruthy();
  });

  it("posts at once on a ready session, with the params given", async () => {
    const ready = create(SessionSchema, {
      seq: 1n,
      meta: create(SessionMetaSchema, { id: "p-4", agent: "assistant", status: SessionStatus.READY, turnCount: 0 }),
    });
    const { posted } = open(ready);
    const secret = await screen.findByLabelText(/API_TOKEN/);
    expect(secret.getAttribute("type")).toBe("password");
    fireEvent.change(secret, { target: { value: "s3cret" } });
    const box = screen.getByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "hello" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(posted).toHaveLength(1));
    expect(posted[0].message?.text).toBe("hello");
    expect(posted[0].params).toEqual({ API_TOKEN: "s3cret" });
    expect(screen.queryByRole("region", { name: "Draft" })).toBeNull();
  });

  it("answers the last pending call and resumes", async () => {
    const call = create(ToolCallSchema, { id: "c9", name: "ask_user", arguments: '{"q":"ok?"}', kind: ToolKind.CLIENT });
    const waiting = create(SessionSchema, {
      seq: 5n,
      meta: create(SessionMetaSchema, { id: "p-5", agent: "assistant", status: SessionStatus.WAITING, turnCount: 2, pendingCalls: 1 }),
      turns: [
        create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "ask me" }) } }),
        create(TurnSchema, { index: 1, kind: { case: "llm", value: create(LlmTurnSchema, { toolCalls: [call] }) } }),
      ],
      pendingCalls: [create(DeferredCallSchema, { token: "tok", sessionId: "p-5", call, reason: "client_tool" })],
    });
    const { completed } = open(waiting);
    const region = await screen.findByRole("region", { name: "Pending calls" });
    fireEvent.change(within(region).getByRole("textbox", { name: "Result" }), { target: { value: "yes" } });
    fireEvent.click(within(region).getByRole("button", { name: "Answer" }));
    await waitFor(() => expect(completed).toHaveLength(1));
    expect(completed[0]).toMatchObject({ token: "tok", resume: true, result: { case: "text", value: "yes" } });
  });

  it("opens another owner's session read-only for an admin: everything to read, nothing to change", async () => {
    const call = create(ToolCallSchema, { id: "c9", name: "bash_deploy", arguments: '{"env":"prod"}', kind: ToolKind.BASH });
    const waiting = create(SessionSchema, {
      seq: 5n,
      meta: create(SessionMetaSchema, { id: "p-ro", agent: "assistant", owner: "alice", title: "Deploy", status: SessionStatus.WAITING, turnCount: 2, pendingCalls: 1 }),
      turns: [
        create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "deploy" }) } }),
        create(TurnSchema, { index: 1, kind: { case: "llm", value: create(LlmTurnSchema, { text: "Deploying now.", toolCalls: [call] }) } }),
      ],
      pendingCalls: [create(DeferredCallSchema, { token: "t", sessionId: "p-ro", call, reason: "approval" })],
    });
    const { completed } = open(waiting, "/sessions/p-ro", undefined, true);
    const note = await screen.findByRole("note", { name: "Read only" });
    expect(note.textContent).toContain("alice");
    const log = await screen.findByRole("log", { name: "Conversation" });
    await within(log).findByText("Deploying now.");
    // What there is to read: the turns, the call waiting, the export.
    const region = screen.getByRole("region", { name: "Pending calls" });
    expect(region.textContent).toContain("bash_deploy");
    expect(within(region).queryByRole("button")).toBeNull();
    expect(screen.getByRole("button", { name: "Export" })).toBeTruthy();
    // Nothing that writes.
    expect(screen.queryByRole("textbox", { name: "Message" })).toBeNull();
    for (const name of ["Approve", "Pause", "Resume", "Cancel run", "Hard cancel", "Fork", "Fork here", "More", "Continue", "Delete"]) {
      expect(screen.queryByRole("button", { name }), name).toBeNull();
    }
    expect(completed).toEqual([]);
    // The mailbox reads, and sends nothing.
    fireEvent.click(screen.getByRole("link", { name: "Mail" }));
    await screen.findByText(/looks wrong/);
    expect(screen.queryByRole("form", { name: "Send mail" })).toBeNull();
  });

  it("approves, always allows or rejects a call held for approval", async () => {
    const call = create(ToolCallSchema, { id: "c3", name: "bash_deploy", arguments: '{"env":"prod"}', kind: ToolKind.BASH });
    const held = (token: string) => create(DeferredCallSchema, { token, sessionId: "p-6", call, reason: "approval" });
    const waiting = create(SessionSchema, {
      seq: 5n,
      meta: create(SessionMetaSchema, { id: "p-6", agent: "assistant", status: SessionStatus.WAITING, turnCount: 2, pendingCalls: 3 }),
      turns: [
        create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "deploy" }) } }),
        create(TurnSchema, { index: 1, kind: { case: "llm", value: create(LlmTurnSchema, { toolCalls: [call] }) } }),
      ],
      pendingCalls: [held("a"), held("b"), held("c")],
    });
    const { completed } = open(waiting);
    const region = await screen.findByRole("region", { name: "Pending calls" });
    const forms = within(region).getAllByRole("form", { name: "Approve bash_deploy" });
    expect(forms).toHaveLength(3);
    expect(within(forms[0]).queryByRole("textbox", { name: "Result" })).toBeNull();
    fireEvent.click(within(forms[0]).getByRole("button", { name: "Approve" }));
    fireEvent.click(within(forms[1]).getByRole("button", { name: "Always allow" }));
    fireEvent.change(within(forms[2]).getByRole("textbox", { name: "Reason" }), { target: { value: "not on a Friday" } });
    fireEvent.click(within(forms[2]).getByRole("button", { name: "Reject" }));
    await waitFor(() => expect(completed).toHaveLength(3));
    const answers = Object.fromEntries(completed.map((c) => [c.token, c.result]));
    expect(answers.a).toMatchObject({ case: "approval", value: { approve: true, always: false } });
    expect(answers.b).toMatchObject({ case: "approval", value: { approve: true, always: true } });
    expect(answers.c).toMatchObject({ case: "approval", value: { approve: false, reason: "not on a Friday" } });
  });

  it("forks at a turn, counting from the newest, and opens the fork", async () => {
    const { forked } = open(running("p-7"));
    const turn = await screen.findByRole("article", { name: "You, turn 1" });
    fireEvent.click(within(turn).getByRole("button", { name: "Fork here" }));
    await waitFor(() => expect(forked).toHaveLength(1));
    // One turn stored: the first is the head, at_turn 0.
    expect(forked[0]).toMatchObject({ sessionId: "p-7", atTurn: 0 });
    await waitFor(() => expect(screen.getByLabelText("Location").textContent).toBe("/sessions/forked"));
  });

  it("offers to run a fork that ends with a question, with its own agent, and not once it is answered", async () => {
    const fork = ready("p-q", 1);
    fork.meta!.forkedFrom = "source";
    const { resumed } = open(fork);
    const note = await screen.findByRole("region", { name: "Not answered yet" });
    expect(note.textContent).toContain("This fork ends with a question");
    expect(note.textContent).toContain("assistant");
    fireEvent.click(within(note).getByRole("button", { name: "Run" }));
    await waitFor(() => expect(resumed).toHaveLength(1));
    expect(resumed[0]).toMatchObject({ sessionId: "p-q" });
    cleanup();
    open(ready("p-a", 2));
    await screen.findByRole("article", { name: "assistant, turn 2" });
    expect(screen.queryByRole("region", { name: "Not answered yet" })).toBeNull();
  });

  it("keeps the main controls in view and the others in a More menu the keyboard works", async () => {
    open(ready("p-menu", 2));
    const bar = await screen.findByRole("toolbar", { name: "Session controls" });
    for (const name of ["Pause", "Cancel run", "Fork", "More"]) within(bar).getByRole("button", { name });
    expect(within(bar).queryByRole("button", { name: "Delete" })).toBeNull();
    const more = within(bar).getByRole("button", { name: "More" });
    expect(more.getAttribute("aria-haspopup")).toBe("menu");
    expect(more.getAttribute("aria-expanded")).toBe("false");
    fireEvent.keyDown(more, { key: "ArrowDown" });
    const menu = await screen.findByRole("menu", { name: "More" });
    expect(more.getAttribute("aria-expanded")).toBe("true");
    const items = within(menu).getAllByRole("menuitem");
    expect(items.map((i) => i.textContent)).toEqual(["Hard cancel", "Compact", "Continue with…", "Rename", "Export", "Delete"]);
    await waitFor(() => expect(document.activeElement).toBe(items[0]));
    // A ready session has nothing to hard-cancel: the item says so and does nothing.
    expect(items[0].getAttribute("aria-disabled")).toBe("true");
    fireEvent.keyDown(items[0], { key: "Enter" });
    expect(screen.getByRole("menu")).toBeTruthy();
    fireEvent.keyDown(menu, { key: "ArrowUp" });
    expect(document.activeElement).toBe(items[5]);
    fireEvent.keyDown(menu, { key: "Home" });
    fireEvent.keyDown(menu, { key: "ArrowDown" });
    expect(document.activeElement).toBe(items[1]);
    fireEvent.keyDown(menu, { key: "Escape" });
    await waitFor(() => expect(screen.queryByRole("menu")).toBeNull());
    expect(document.activeElement).toBe(more);
    // Enter on an item picks it and closes the menu.
    fireEvent.keyDown(more, { key: "ArrowUp" });
    const last = await screen.findByRole("menuitem", { name: "Delete" });
    await waitFor(() => expect(document.activeElement).toBe(last));
    fireEvent.keyDown(last, { key: "Enter" });
    await screen.findByRole("alertdialog", { name: "Delete this session?" });
    expect(screen.queryByRole("menu")).toBeNull();
  });

  it("continues with another agent", async () => {
    const { forked } = open(running("p-8"));
    fireEvent.click(await moreItem("Continue with…"));
    const dialog = await screen.findByRole("dialog", { name: "Continue with another agent" });
    const pick = within(dialog).getByRole("combobox", { name: "Agent to continue with" });
    await within(pick).findByRole("option", { name: "critic" });
    fireEvent.change(pick, { target: { value: "critic" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Continue" }));
    await waitFor(() => expect(forked).toHaveLength(1));
    expect(forked[0]).toMatchObject({ sessionId: "p-8", agent: "critic" });
    expect(forked[0].atTurn).toBeUndefined();
  });

  it("interrupts with Alt+I from the composer, and lists its keys for the help", async () => {
    const stop = shortcuts.install();
    try {
      let listed: readonly { keys: string; description: string }[] = [];
      function Keys() {
        listed = useShortcutList();
        return null;
      }
      render(<Keys />);
      const { posted } = open(running("p-9"));
      const box = await screen.findByRole("textbox", { name: "Message" });
      await screen.findByRole("status", { name: "Status: running" });
      fireEvent.change(box, { target: { value: "now this" } });
      fireEvent.keyDown(box, { key: "i", code: "KeyI", altKey: true });
      await waitFor(() => expect(posted.map((p) => [p.message?.text, p.message?.interrupt])).toEqual([["now this", true]]));
      expect(listed.map((s) => s.keys)).toEqual(expect.arrayContaining(["alt+i", "alt+p"]));
    } finally {
      stop();
    }
  });

  it("lists the mail with its sender and sends mail", async () => {
    const { mailed } = open(running("p-10"), "/sessions/p-10/mail");
    const list = await screen.findByRole("list", { name: "Mail list" });
    expect(within(list).getByRole("link", { name: "agent critic" }).getAttribute("href")).toBe("/sessions/other");
    expect(list.textContent).toContain("looks wrong");
    fireEvent.click(screen.getByRole("radio", { name: "Pending" }));
    await screen.findByText("No mail waiting.");
    fireEvent.change(screen.getByRole("textbox", { name: "Mail text" }), { target: { value: "hurry" } });
    fireEvent.click(screen.getByRole("checkbox", { name: /Urgent/ }));
    fireEvent.click(screen.getByRole("button", { name: "Send mail" }));
    await waitFor(() => expect(mailed).toHaveLength(1));
    expect(mailed[0]).toMatchObject({ sessionId: "p-10", priority: MailPriority.URGENT, body: { kind: { case: "userMessage", value: { text: "hurry" } } } });
  });

  it("deletes after confirming, with the sub-sessions named", async () => {
    const { deleted } = open(running("p-11"));
    await screen.findByRole("status", { name: "Status: running" });
    fireEvent.click(await moreItem("Delete"));
    const dialog = await screen.findByRole("alertdialog", { name: "Delete this session?" });
    await within(dialog).findByText(/researcher: digging/);
    fireEvent.click(within(dialog).getByRole("button", { name: "Delete with 1 sub-session" }));
    await waitFor(() => expect(deleted).toHaveLength(1));
    expect(deleted[0]).toMatchObject({ sessionId: "p-11", mode: DeleteMode.CASCADE });
    await waitFor(() => expect(screen.getByLabelText("Location").textContent).toBe("/"));
  });

  it("opens on the last turns and loads the older ones from the top", async () => {
    const user = (index: number, text: string) => create(TurnSchema, { index, kind: { case: "user", value: create(UserTurnSchema, { text }) } });
    const llm = (index: number, text: string) => create(TurnSchema, { index, kind: { case: "llm", value: create(LlmTurnSchema, { text }) } });
    const last = create(SessionSchema, {
      seq: 9n,
      meta: create(SessionMetaSchema, { id: "p-12", agent: "assistant", status: SessionStatus.READY, turnCount: 3 }),
      turns: [user(2, "third")],
      firstTurnIndex: 2,
    });
    const page = create(SessionSchema, { seq: 9n, meta: last.meta, turns: [user(0, "first"), llm(1, "second")], firstTurnIndex: 0 });
    const { gets } = open(last, "/sessions/p-12", page);
    const log = await screen.findByRole("log", { name: "Conversation" });
    await within(log).findByRole("article", { name: "You, turn 3" });
    await within(log).findByRole("article", { name: "You, turn 1" });
    expect(within(log).getByRole("article", { name: "assistant, turn 2" }).textContent).toContain("second");
    expect(gets[0]).toMatchObject({ lastTurns: 100 });
    expect(gets.find((g) => g.beforeTurn !== undefined)).toMatchObject({ beforeTurn: 2, lastTurns: 100 });
  });

  it("says a session that does not exist does not, offers the way back, and nothing else", async () => {
    open(create(SessionSchema, { meta: create(SessionMetaSchema, { id: "gone" }) }));
    await screen.findByRole("heading", { name: "No such session" });
    expect(screen.getByRole("link", { name: "Back to the start page" }).getAttribute("href")).toBe("/");
    expect(screen.queryByText("Loading…")).toBeNull();
    expect(screen.queryByRole("textbox", { name: "Message" })).toBeNull();
    expect(screen.queryByRole("log", { name: "Conversation" })).toBeNull();
    expect(screen.queryByRole("toolbar", { name: "Session controls" })).toBeNull();
  });

  it("says each stop control does to the run and its tools, and keeps Resume off while a call waits", async () => {
    const call = create(ToolCallSchema, { id: "c9", name: "ask_user", arguments: "{}", kind: ToolKind.CLIENT });
    const waiting = create(SessionSchema, {
      seq: 5n,
      meta: create(SessionMetaSchema, { id: "p-w", agent: "assistant", status: SessionStatus.WAITING, statusReason: "waiting", turnCount: 2, pendingCalls: 1 }),
      turns: [
        create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "ask me" }) } }),
        create(TurnSchema, { index: 1, kind: { case: "llm", value: create(LlmTurnSchema, { toolCalls: [call] }) } }),
      ],
      pendingCalls: [create(DeferredCallSchema, { token: "tok", sessionId: "p-w", call, reason: "client_tool" })],
    });
    open(waiting);
    const bar = await screen.findByRole("toolbar", { name: "Session controls" });
    const resume = (await within(bar).findByRole("button", { name: "Resume" })) as HTMLButtonElement;
    expect(resume.disabled).toBe(true);
    expect(resume.title).toMatch(/answer it/);
    expect(within(bar).getByRole("button", { name: "Cancel run" }).title).toMatch(/running tools are cancelled/);
    expect(screen.getByRole("button", { name: "Interrupt" }).title).toMatch(/go on with this message/);
    expect((await moreItem("Hard cancel")).title).toMatch(/running tool calls.*run goes on/);
    // The status line says waiting once.
    const log = screen.getByRole("log", { name: "Conversation" });
    await waitFor(() => expect(log.querySelector(".status-line")?.textContent).toBe("waiting"));
  });

  it("says what Pause does to the running tools", async () => {
    open(running("p-pause"));
    const pause = await screen.findByRole("button", { name: "Pause" });
    expect(pause.title).toMatch(/next step.*running tools finish first/);
  });

  it("shows the user's message sent during the run as the user's, not as mail from user local", async () => {
    const interrupt = create(MailEnvelopeSchema, {
      id: "m1",
      sender: { kind: { case: "user", value: "local" } },
      priority: MailPriority.URGENT,
      body: { kind: { case: "userMessage", value: { text: "stop, use metres" } } },
    });
    const sess = create(SessionSchema, {
      seq: 4n,
      meta: create(SessionMetaSchema, { id: "p-int", agent: "assistant", status: SessionStatus.READY, turnCount: 2 }),
      turns: [
        create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "how far?" }) } }),
        create(TurnSchema, { index: 1, kind: { case: "user", value: create(UserTurnSchema, { mail: [interrupt] }) } }),
      ],
    });
    open(sess);
    const turn = await screen.findByRole("article", { name: "You, turn 2" });
    const note = within(turn).getByRole("note", { name: "Your message, interrupting the run" });
    expect(note.textContent).toContain("stop, use metres");
    expect(turn.textContent).not.toContain("Mail from user local");
  });

  it("shows a helper's progress with the helper session's title, linked, not its id", async () => {
    const sess = create(SessionSchema, {
      seq: 10n,
      meta: create(SessionMetaSchema, { id: "p-h", agent: "assistant", title: "Clock", status: SessionStatus.RUNNING, turnCount: 2 }),
      turns: [
        create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "dig" }) } }),
        create(TurnSchema, {
          index: 1,
          kind: { case: "llm", value: create(LlmTurnSchema, { toolCalls: [create(ToolCallSchema, { id: "h1", name: "prompt_agent_researcher", kind: ToolKind.HELPER })] }) },
        }),
      ],
      inProgress: create(TurnInProgressSchema, { turnIndex: 2 }),
    });
    const { stream } = open(sess);
    const card = await screen.findByRole("group", { name: "prompt_agent_researcher" });
    stream.push(ev("p-h", 11, { case: "subcallStarted", value: { $typeName: "agents.v1.SubcallStarted", childSessionId: "kid-1234", agent: "researcher", callId: "h1", depth: 1 } }));
    stream.push(ev("p-h", 12, { case: "toolProgressed", value: { $typeName: "agents.v1.ToolProgressed", callId: "h1", message: "kid-1234: calling bash_search" } }));
    await waitFor(() => expect(card.querySelector(".tool-progress")?.textContent).toMatch(/: calling bash_search$/));
    const progress = card.querySelector(".tool-progress") as HTMLElement;
    expect(progress.textContent).not.toContain("kid-1234");
    // The in-memory server answers every id with this session: its title.
    await waitFor(() => expect(within(progress).getByRole("link", { name: "Clock" }).getAttribute("href")).toBe("/sessions/kid-1234"));
    expect(within(card).getByRole("link", { name: "Open the researcher session" })).toBeTruthy();
  });

  it("says a fork is one, naming and linking the session it came from", async () => {
    const fork = create(SessionSchema, {
      seq: 1n,
      meta: create(SessionMetaSchema, { id: "p-fork", agent: "assistant", title: "Original plan", forkedFrom: "source", status: SessionStatus.READY }),
    });
    open(fork);
    const link = await screen.findByRole("link", { name: "“Original plan”" });
    expect(link.getAttribute("href")).toBe("/sessions/source");
    expect(link.parentElement?.textContent).toBe("Fork of “Original plan”");
  });

  it("renames the session from its heading, and shows the title the server then announces", async () => {
    const { renamed, stream } = open(running("p-ren"));
    await screen.findByRole("heading", { name: "Clock" });
    fireEvent.click(await moreItem("Rename"));
    const field = screen.getByRole("textbox", { name: "Session title" }) as HTMLInputElement;
    expect(field.value).toBe("Clock");
    // Escape leaves it as it was.
    fireEvent.keyDown(field, { key: "Escape" });
    await screen.findByRole("heading", { name: "Clock" });
    fireEvent.click(await moreItem("Rename"));
    fireEvent.change(screen.getByRole("textbox", { name: "Session title" }), { target: { value: "  Time zones " } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(renamed).toHaveLength(1));
    expect(renamed[0]).toMatchObject({ sessionId: "p-ren", title: "Time zones" });
    await waitFor(() => expect(screen.queryByRole("textbox", { name: "Session title" })).toBeNull());
    stream.push(
      ev("p-ren", 11, {
        case: "sessionUpdated",
        value: { $typeName: "agents.v1.SessionUpdated", meta: create(SessionMetaSchema, { id: "p-ren", agent: "assistant", title: "Time zones", status: SessionStatus.RUNNING, turnCount: 1 }) },
      }),
    );
    await screen.findByRole("heading", { name: "Time zones" });
  });

  it("has no serious or critical accessibility violations", async () => {
    const { view } = open(running("p-6"));
    await screen.findByRole("article", { name: "You, turn 1" });
    const res = await axe.run(view.container, { rules: { "color-contrast": { enabled: false } } });
    const bad = res.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(", ")}`)).toEqual([]);
  });

  it("shows the tree's spend against its budget, and follows it live", async () => {
    const sess = running("p-b");
    sess.meta!.rootId = "p-b";
    sess.meta!.budget = create(BudgetStateSchema, { budget: { tokens: 5000n, costUsd: 1 }, spent: { tokens: 1200n, costUsd: 0.25 }, left: { tokens: 3800n, costUsd: 0.75 } });
    const { stream } = open(sess);
    const budget = await screen.findByLabelText("Budget");
    expect(budget.textContent).toContain("1.2k / 5.0k (3.8k left)");
    expect(budget.textContent).toContain("$0.25 / $1.00 ($0.75 left)");
    // A helper's update carries the whole tree's spend.
    stream.push(
      ev("kid", 11, {
        case: "sessionUpdated",
        value: {
          $typeName: "agents.v1.SessionUpdated",
          meta: create(SessionMetaSchema, { id: "kid", parentId: "p-b", rootId: "p-b", budget: { budget: { tokens: 5000n }, spent: { tokens: 4900n }, left: { tokens: 100n } } }),
        },
      }),
    );
    await waitFor(() => expect(screen.getByLabelText("Budget").textContent).toContain("4.9k / 5.0k (100 left)"));
    expect(await moreItem("Budget")).toBeTruthy();
  });

  it("shows neither spend nor Budget where the server keeps no budgets", async () => {
    open(running("p-nb"));
    await screen.findByRole("heading", { name: "Clock" });
    expect(screen.queryByLabelText("Budget")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "More" }));
    await screen.findByRole("menuitem", { name: "Export" });
    expect(screen.queryByRole("menuitem", { name: "Budget" })).toBeNull();
  });

  it("marks a run stopped at its budget, raises the budget on the tree's root and resumes", async () => {
    const sess = create(SessionSchema, {
      seq: 10n,
      meta: create(SessionMetaSchema, {
        id: "p-kid",
        parentId: "p-root",
        rootId: "p-root",
        agent: "assistant",
        title: "Digging",
        status: SessionStatus.PAUSED,
        statusReason: "budget_exceeded",
        turnCount: 1,
        // The tree's budget resumes by itself when raised: a new one
        // set here keeps that.
        budget: { budget: { tokens: 100n, autoResume: true }, spent: { tokens: 130n }, left: { tokens: 0n }, exceeded: true },
      }),
      turns: [create(TurnSchema, { index: 0, kind: { case: "user", value: create(UserTurnSchema, { text: "dig" }) } })],
    });
    const { updated, resumed } = open(sess);
    const note = await screen.findByRole("alert", { name: "Budget spent" });
    expect(note.textContent).toContain("the session's budget is spent");
    expect(screen.getByLabelText("Budget").textContent).toContain("130 / 100 (spent)");
    fireEvent.click(within(note).getByRole("button", { name: "Raise the budget" }));
    const form = await screen.findByRole("form", { name: "Set the session budget" });
    expect(form.textContent).toContain("helper's session");
    const tokens = within(form).getByRole("textbox", { name: "Most tokens" }) as HTMLInputElement;
    expect(tokens.value).toBe("100");
    // A wrong value is marked at its field, and nothing is sent.
    fireEvent.change(tokens, { target: { value: "lots" } });
    fireEvent.click(within(form).getByRole("button", { name: "Save and resume" }));
    await waitFor(() => expect(tokens.getAttribute("aria-invalid")).toBe("true"));
    expect(within(form).getByText(/a whole number/)).toBeTruthy();
    expect(updated).toEqual([]);
    fireEvent.change(tokens, { target: { value: "1000" } });
    fireEvent.change(within(form).getByRole("textbox", { name: "Most US dollars" }), { target: { value: "0.5" } });
    fireEvent.click(within(form).getByRole("button", { name: "Save and resume" }));
    await waitFor(() => expect(resumed).toHaveLength(1));
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ sessionId: "p-root", budget: { tokens: 1000n, costUsd: 0.5, autoResume: true } });
    expect(resumed[0].sessionId).toBe("p-kid");
    await waitFor(() => expect(screen.queryByRole("form", { name: "Set the session budget" })).toBeNull());
  });

  it("says when the owner's budget stopped the run, which the session cannot raise", async () => {
    const sess = create(SessionSchema, {
      seq: 10n,
      meta: create(SessionMetaSchema, {
        id: "p-own",
        rootId: "p-own",
        agent: "assistant",
        status: SessionStatus.PAUSED,
        statusReason: "budget_exceeded",
        budget: { spent: { tokens: 130n } },
      }),
    });
    open(sess);
    const note = await screen.findByRole("alert", { name: "Budget spent" });
    expect(note.textContent).toContain("the owner's budget is spent");
    expect(within(note).getByRole("link", { name: "usage" }).getAttribute("href")).toBe("/usage");
    expect(within(note).queryByRole("button", { name: "Raise the budget" })).toBeNull();
  });

  it("shows a compaction as a marker that opens on its instruction and summary, with the turns it covers still above", async () => {
    const sess = ready("p-cm", 3);
    sess.turns.push(compactionTurn(3, "keep the time zone"));
    sess.meta!.turnCount = 4;
    const { view } = open(sess);
    const log = await screen.findByRole("log", { name: "Conversation" });
    const marker = await within(log).findByRole("article", { name: "Context compacted, turn 4" });
    expect(within(log).getByRole("article", { name: "You, turn 1" })).toBeTruthy();
    expect(within(log).getByRole("article", { name: "assistant, turn 3" })).toBeTruthy();
    const summary = marker.querySelector("summary")!;
    expect(summary.textContent).toBe("3 turns summarised · 38,204 → 2,310 tokens · $0.0012 · on request");
    const details = marker.querySelector("details")!;
    expect(details.open).toBe(false);
    fireEvent.click(summary);
    await waitFor(() => expect(details.open).toBe(true));
    expect(marker.textContent).toContain("Instruction: keep the time zone");
    expect(marker.textContent).toContain("Turns 1–3 above are sent to the model as this summary, written by summary-model");
    expect(within(marker).getByText("time").tagName).toBe("STRONG");
    const res = await axe.run(view.container, { rules: { "color-contrast": { enabled: false } } });
    expect(res.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  });

  it("says a compaction that only shortened tool results did, and not why when it was the threshold", async () => {
    const sess = ready("p-cp", 2);
    sess.turns.push(create(TurnSchema, { index: 2, kind: { case: "compaction", value: create(CompactionSchema, { reason: "threshold", pruneEnd: 2, prunedResults: 12 }) } }));
    sess.meta!.turnCount = 3;
    open(sess);
    const marker = await screen.findByRole("article", { name: "Context compacted, turn 3" });
    expect(marker.querySelector("summary")?.textContent).toBe("12 tool results shortened");
  });

  it("shows that the run compacts while the summary is written, until the compaction arrives", async () => {
    const { stream } = open(running("p-cing"));
    await screen.findByRole("status", { name: "Status: running" });
    stream.push(ev("p-cing", 11, { case: "compactionStarted", value: create(CompactionStartedSchema, { reason: "threshold", tokens: 38204n, threshold: 30000n, contextWindow: 32000n }) }));
    const note = await screen.findByRole("status", { name: "Compacting" });
    expect(note.textContent).toBe("compacting 38,204 tokens…");
    stream.push(
      ev("p-cing", 12, {
        case: "sessionCompacted",
        value: create(SessionCompactedSchema, {
          meta: create(SessionMetaSchema, { id: "p-cing", agent: "assistant", title: "Clock", status: SessionStatus.RUNNING, turnCount: 2 }),
          turn: compactionTurn(1, "", "threshold"),
        }),
      }),
    );
    await screen.findByRole("article", { name: "Context compacted, turn 2" });
    expect(screen.queryByRole("status", { name: "Compacting" })).toBeNull();
    // A run that stops mid-compaction ends it too.
    stream.push(ev("p-cing", 13, { case: "compactionStarted", value: create(CompactionStartedSchema, { reason: "overflow", tokens: 40000n }) }));
    await screen.findByRole("status", { name: "Compacting" });
    stream.push(stopped("p-cing", 14));
    await waitFor(() => expect(screen.queryByRole("status", { name: "Compacting" })).toBeNull());
  });

  it("compacts a session with no run with the instruction given, and closes once the compaction is stored", async () => {
    const { compacted } = open(ready("p-cr", 2));
    await screen.findByRole("article", { name: "You, turn 1" });
    fireEvent.click(await moreItem("Compact"));
    const dialog = await screen.findByRole("dialog", { name: "Compact the session" });
    fireEvent.change(within(dialog).getByRole("textbox", { name: "What the summary must keep (optional)" }), { target: { value: "  keep the time zone " } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Compact" }));
    await waitFor(() => expect(compacted).toHaveLength(1));
    expect(compacted[0]).toMatchObject({ sessionId: "p-cr", instruction: "keep the time zone" });
    await waitFor(() => expect(screen.queryByRole("dialog", { name: "Compact the session" })).toBeNull());
  });

  it("says a running session compacts before its next step, and shows a refusal in the form", async () => {
    const { compacted } = open(running("p-cq"));
    await screen.findByRole("status", { name: "Status: running" });
    fireEvent.click(await moreItem("Compact"));
    const dialog = await screen.findByRole("dialog", { name: "Compact the session" });
    fireEvent.change(within(dialog).getByRole("textbox"), { target: { value: "fail" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Compact" }));
    expect((await within(dialog).findByRole("alert")).textContent).toBe("Could not compact: nothing to compact yet");
    fireEvent.change(within(dialog).getByRole("textbox"), { target: { value: "" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Compact" }));
    await waitFor(() => expect(compacted).toHaveLength(2));
    expect(compacted[1]).toMatchObject({ sessionId: "p-cq", instruction: "" });
    expect((await within(dialog).findByRole("status")).textContent).toBe("The run is under way: the session will compact before the next step.");
    fireEvent.click(within(dialog).getByRole("button", { name: "OK" }));
    await waitFor(() => expect(screen.queryByRole("dialog", { name: "Compact the session" })).toBeNull());
  });
});
