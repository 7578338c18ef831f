// The state of one open session, as the chat view shows it: the turns
// loaded, the turn in progress, what is known of every tool call, the
// deferred calls and the position in the event stream this reflects. One
// pure reducer folds the loads (GetSession answers) and the live events
// into it, so a session followed live ends up where a fresh load of it
// would: the unit tests hold it to that.

import { create } from "@bufbuild/protobuf";
import { ToolKind } from "../../../gen/agents/v1/agent_pb";
import type { Event } from "../../../gen/agents/v1/event_pb";
import {
  SessionMetaSchema,
  SessionStatus,
  ToolCallSchema,
  type DeferredCall,
  type Session,
  type SessionMeta,
  type ToolCall,
  type ToolResult,
  type Turn,
} from "../../../gen/agents/v1/session_pb";
import { follows, type Position } from "../../../lib/event-stream";
import { latestSpend } from "./tree-budget";

// Positions are the event stream's: ordered by follows, which does not
// place one server's deltas after another's at one seq.
export const origin: Position = { seq: 0n, deltaSeq: 0n };

export function positionOf(ev: Event): Position {
  return { seq: ev.seq, deltaSeq: ev.deltaSeq };
}

// CallInfo is what is known of one tool call: the model asks for it in an
// LLM turn, its result comes in the next user turn (or, while the round
// runs, from tool.completed). It is drawn with the LLM turn that asked.
export interface CallInfo {
  call?: ToolCall;
  // Index of the LLM turn that asked for it; -1 while unknown.
  owner: number;
  result?: ToolResult;
  running: boolean;
  // The last progress line of a running call.
  progress?: string;
  // The helper session running a helper call, while it runs (the result
  // names it once the call ends).
  child?: string;
  childAgent?: string;
  childFailed?: string;
  // Why the call waits for a client (`client_tool`, `approval`), while it
  // does.
  deferred?: string;
}

// LiveTurn is the model's answer being streamed.
export interface LiveTurn {
  turnIndex: number;
  text: string;
  thinking: string;
  toolCalls: ToolCall[];
}

export interface SessionState {
  id: string;
  // Set once the first load arrived.
  loaded: boolean;
  meta?: SessionMeta;
  // Index of turns[0]; the session's turns before it are not loaded.
  first: number;
  // Consecutive turns from first; undefined marks a turn not received.
  turns: (Turn | undefined)[];
  live?: LiveTurn;
  calls: Record<string, CallInfo>;
  pending: DeferredCall[];
  // The event position the state reflects: events at or before it are in
  // it already.
  pos: Position;
  // Loads in flight that reflect a position: events are held meanwhile
  // and applied after, those past the load's position.
  fetching: number;
  held: Event[];
  deleted: boolean;
  // The code of the last failure (`params_required`, …), until a run
  // starts again.
  failureCode?: string;
  // The compaction the run is writing a summary for, from its
  // compaction.started until the compaction turn arrives or the run
  // stops.
  compacting?: { reason: string; tokens: bigint };
  // The budget a run stopped for (`session`, `owner`), as its
  // run.stopped said, until a run starts again.
  stoppedBy?: string;
}

export type SessionAction =
  // A load that reflects a position starts: hold events until it ends.
  | { type: "fetch" }
  // It failed: stop holding.
  | { type: "fetchFailed" }
  // A GetSession answer: the first load, a refetch after missed events
  // (after_turn), or a meta_only one for the pending calls.
  | { type: "loaded"; session: Session }
  // An older page of turns (before_turn): turns only, no position.
  | { type: "older"; session: Session }
  // One event of the app's stream; events of other sessions are ignored.
  | { type: "event"; event: Event };

export function initialState(id: string): SessionState {
  return { id, loaded: false, first: 0, turns: [], calls: {}, pending: [], pos: origin, fetching: 0, held: [], deleted: false };
}

export function sessionReducer(state: SessionState, action: SessionAction): SessionState {
  switch (action.type) {
    case "fetch":
      return { ...state, fetching: state.fetching + 1 };
    case "fetchFailed":
      return release({ ...state, fetching: Math.max(0, state.fetching - 1) });
    case "loaded":
      return release(load({ ...state, fetching: Math.max(0, state.fetching - 1) }, action.session));
    case "older":
      return prepend(state, action.session);
    case "event": {
      const ev = action.event;
      if (ev.sessionId !== state.id) return treeSpend(state, ev);
      if (state.fetching > 0 || !state.loaded) return { ...state, held: [...state.held, ev] };
      return apply(state, ev);
    }
  }
}

// release applies the held events once no load is in flight.
function release(state: SessionState): SessionState {
  if (state.fetching > 0 || !state.loaded || state.held.length === 0) return state;
  let s: SessionState = { ...state, held: [] };
  for (const ev of state.held) s = apply(s, ev);
  return s;
}

// load takes a GetSession answer. The first one replaces everything; a
// later one (a refetch) keeps the turns loaded and puts those it carries
// in their place. An answer older than what the state reflects is
// dropped: the events since are in the state already. One another server
// gave at the seq the events reached does not place their deltas: it is
// taken (it is the truth of what was missed), and the deltas after it at
// that seq are dropped as they would be after a first load.
function load(state: SessionState, sess: Session): SessionState {
  const pos = { seq: sess.seq, deltaSeq: sess.deltaSeq };
  if (state.loaded && follows(state.pos, pos)) return state;
  const meta = sess.meta;
  let s: SessionState;
  if (!state.loaded) {
    s = { ...state, loaded: true, first: sess.firstTurnIndex, turns: [], calls: {} };
  } else {
    s = { ...state, turns: [...state.turns], calls: { ...state.calls } };
  }
  s.meta = state.loaded && meta ? { ...meta, budget: latestSpend(state.meta?.budget, meta.budget) } : meta;
  s.pos = pos;
  s.live = undefined;
  // The run stopped while the events were missed.
  if (meta?.status !== SessionStatus.RUNNING) s.compacting = undefined;
  for (const t of sess.turns) store(s, t);
  // Calls that waited and no longer do were answered elsewhere.
  const tokens = new Set(sess.pendingCalls.map((d) => d.token));
  for (const d of state.pending) {
    if (!tokens.has(d.token)) {
      const id = d.call?.id;
      if (id && s.calls[id]) s.calls[id] = { ...s.calls[id], deferred: undefined };
    }
  }
  s.pending = [...sess.pendingCalls];
  for (const d of sess.pendingCalls) deferred(s, d);
  const ip = sess.inProgress;
  if (ip) {
    if (ip.text !== "" || ip.thinking !== "" || ip.toolCalls.length > 0) {
      s.live = { turnIndex: ip.turnIndex, text: ip.text, thinking: ip.thinking, toolCalls: [...ip.toolCalls] };
      asked(s, ip.turnIndex, ip.toolCalls, false);
    } else {
      // The calls of the stored answer run; some have finished.
      const owner = turnAt(s, ip.turnIndex - 1);
      if (owner?.kind.case === "llm") {
        for (const tc of owner.kind.value.toolCalls) {
          const c = s.calls[tc.id];
          if (c && !c.result && !c.deferred && !c.running) s.calls[tc.id] = { ...c, running: true };
        }
      }
    }
    answered(s, ip.toolResults);
  }
  return s;
}

// prepend adds a page of older turns: the consecutive run that ends just
// before the first one held.
function prepend(state: SessionState, sess: Session): SessionState {
  const turns = sess.turns;
  let end = turns.length;
  while (end > 0 && turns[end - 1].index >= state.first) end--;
  let start = end;
  while (start > 0 && turns[start - 1].index === state.first - (end - start) - 1) start--;
  const page = turns.slice(start, end);
  if (page.length === 0 || page[page.length - 1].index !== state.first - 1) return state;
  const s: SessionState = { ...state, first: state.first - page.length, turns: [...page, ...state.turns], calls: { ...state.calls } };
  for (const t of page) record(s, t);
  return s;
}

// apply folds one live event into the state. s is not shared: the
// caller copied it or it is fresh.
function apply(state: SessionState, ev: Event): SessionState {
  const p = positionOf(ev);
  if (!follows(p, state.pos)) return state; // already in what was loaded
  const s: SessionState = { ...state, pos: p };
  const b = ev.body;
  switch (b.case) {
    case "textDelta":
    case "thinkingDelta": {
      const { text, turnIndex } = b.value;
      if (text === "" || turnAt(s, turnIndex)) return s;
      const live = liveTurn(s, turnIndex);
      s.live = b.case === "textDelta" ? { ...live, text: live.text + text } : { ...live, thinking: live.thinking + text };
      return s;
    }
    case "toolCallDelta": {
      const { turnIndex, callIndex, callId, name, arguments: piece } = b.value;
      if (callIndex < 0 || callIndex >= maxWrittenCalls || turnAt(s, turnIndex)) return s;
      const live = liveTurn(s, turnIndex);
      const toolCalls = [...live.toolCalls];
      while (toolCalls.length <= callIndex) toolCalls.push(create(ToolCallSchema));
      const was = toolCalls[callIndex];
      const tc: ToolCall = { ...was, id: callId || was.id, name: name || was.name, arguments: was.arguments + piece };
      toolCalls[callIndex] = tc;
      s.live = { ...live, toolCalls };
      // The call is not stored: what the model wrote so far is the
      // newest there is of it.
      s.calls = { ...s.calls };
      if (was.id !== tc.id && was.id && !s.calls[was.id]?.result) delete s.calls[was.id];
      if (tc.id) s.calls[tc.id] = { ...getCall(s, tc.id), call: tc, owner: turnIndex };
      return s;
    }
    case "toolStarted": {
      const tc = b.value.call;
      if (!tc) return s;
      s.calls = { ...s.calls };
      const c = getCall(s, tc.id);
      s.calls[tc.id] = { ...c, call: c.call ?? tc, running: !c.result };
      return s;
    }
    case "toolProgressed": {
      s.calls = { ...s.calls };
      const c = getCall(s, b.value.callId);
      if (c.result) return s;
      s.calls[b.value.callId] = { ...c, progress: b.value.message };
      return s;
    }
    case "toolCompleted": {
      if (!b.value.result) return s;
      s.calls = { ...s.calls };
      answered(s, [b.value.result]);
      return s;
    }
    case "subcallStarted": {
      s.calls = { ...s.calls };
      const c = getCall(s, b.value.callId);
      if (c.result) return s;
      s.calls[b.value.callId] = { ...c, child: b.value.childSessionId, childAgent: b.value.agent };
      return s;
    }
    case "subcallCompleted": {
      s.calls = { ...s.calls };
      const c = getCall(s, b.value.callId);
      if (c.result) return s;
      s.calls[b.value.callId] = { ...c, child: b.value.childSessionId };
      return s;
    }
    case "subcallFailed": {
      s.calls = { ...s.calls };
      const c = getCall(s, b.value.callId);
      if (c.result) return s;
      s.calls[b.value.callId] = { ...c, child: b.value.childSessionId, childFailed: b.value.reason };
      return s;
    }
    case "callsDeferred": {
      s.calls = { ...s.calls };
      const known = new Set(s.pending.map((d) => d.token));
      s.pending = [...s.pending, ...b.value.calls.filter((d) => !known.has(d.token))];
      for (const d of b.value.calls) deferred(s, d);
      return s;
    }
    case "compactionStarted":
      s.compacting = { reason: b.value.reason, tokens: b.value.tokens };
      return s;
    case "sessionCompacted":
    case "sessionUpdated": {
      // session.compacted and session.updated both bring the compaction
      // turn: whichever comes first puts it in its place.
      const m = b.value.meta;
      if (m) s.meta = { ...m, budget: latestSpend(s.meta?.budget, m.budget) };
      const t = b.case === "sessionUpdated" ? b.value.headTurn : b.value.turn;
      if (t?.kind.case === "compaction") s.compacting = undefined;
      if (t) {
        s.turns = [...s.turns];
        s.calls = { ...s.calls };
        store(s, t);
      }
      return s;
    }
    case "runStarted":
      s.meta = withStatus(s, SessionStatus.RUNNING, "");
      s.failureCode = undefined;
      s.stoppedBy = undefined;
      return s;
    case "runStopped":
      s.meta = withStatus(s, b.value.status, b.value.reason);
      s.stoppedBy = b.value.budget || undefined;
      s.compacting = undefined;
      endRun(s);
      return s;
    case "sessionFailed":
      s.meta = withStatus(s, SessionStatus.FAILED, b.value.reason);
      s.failureCode = b.value.code;
      s.compacting = undefined;
      endRun(s);
      return s;
    case "sessionDeleted":
      s.deleted = true;
      return s;
    default:
      return s;
  }
}

// treeSpend takes the tree's budget state from another session of the
// same tree: a helper's session.updated carries what the whole tree has
// spent, which the root's header shows as it grows. Only a change newer
// than what the state reflects is taken; the session's own events, and
// its loads, bring the rest.
function treeSpend(state: SessionState, ev: Event): SessionState {
  const b = ev.body;
  if (b.case !== "sessionUpdated" || !state.loaded || state.fetching > 0) return state;
  const root = state.meta?.rootId;
  const m = b.value.meta;
  if (!root || !m?.budget || m.rootId !== root || !state.meta) return state;
  if (!follows(positionOf(ev), state.pos)) return state;
  return { ...state, meta: { ...state.meta, budget: latestSpend(state.meta.budget, m.budget) } };
}

function withStatus(s: SessionState, status: SessionStatus, reason: string): SessionMeta {
  const m = s.meta ?? create(SessionMetaSchema, { id: s.id });
  return { ...m, status, statusReason: reason };
}

// endRun forgets what only a run in flight has: the partial turn, and the
// running state of calls that will not report again.
function endRun(s: SessionState) {
  s.live = undefined;
  let copied = false;
  for (const [id, c] of Object.entries(s.calls)) {
    if (c.running || c.progress !== undefined) {
      if (!copied) {
        s.calls = { ...s.calls };
        copied = true;
      }
      s.calls[id] = { ...c, running: false, progress: undefined };
    }
  }
}

// maxWrittenCalls bounds the calls of a turn being written, as the
// server does: a delta that claims a call beyond it is not grown into.
const maxWrittenCalls = 1024;

// liveTurn is the turn in progress at that index, a new one when the
// model started another. A streaming answer means the session runs.
function liveTurn(s: SessionState, turnIndex: number): LiveTurn {
  if (s.live && s.live.turnIndex === turnIndex) return s.live;
  if (s.meta && s.meta.status !== SessionStatus.RUNNING) s.meta = withStatus(s, SessionStatus.RUNNING, "");
  return { turnIndex, text: "", thinking: "", toolCalls: [] };
}

export function turnAt(s: SessionState, index: number): Turn | undefined {
  const i = index - s.first;
  return i >= 0 && i < s.turns.length ? s.turns[i] : undefined;
}

// store puts a stored turn in its place (s.turns and s.calls are copies
// the caller owns). A turn past those held leaves holes for the ones
// between, which a refetch fills.
function store(s: SessionState, t: Turn) {
  const i = t.index - s.first;
  if (i < 0) return;
  while (s.turns.length < i) s.turns.push(undefined);
  s.turns[i] = t;
  record(s, t);
  if (s.live && s.live.turnIndex <= t.index) s.live = undefined;
}

function record(s: SessionState, t: Turn) {
  if (t.kind.case === "llm") asked(s, t.index, t.kind.value.toolCalls, true);
  else if (t.kind.case === "user") answered(s, t.kind.value.toolResults);
}

function getCall(s: SessionState, id: string): CallInfo {
  return s.calls[id] ?? { owner: -1, running: false };
}

function asked(s: SessionState, owner: number, calls: ToolCall[], stored: boolean) {
  for (const tc of calls) {
    const c = getCall(s, tc.id);
    // A stored call is the truth about its arguments; a streamed one may
    // still grow.
    s.calls[tc.id] = { ...c, call: stored || !c.call ? tc : c.call, owner };
  }
}

// answered records results: the result carries the helper session, so
// what the live events said of it goes.
function answered(s: SessionState, results: ToolResult[]) {
  for (const r of results) {
    const c = getCall(s, r.callId);
    s.calls[r.callId] = { call: c.call, owner: c.owner, result: r, running: false };
  }
}

function deferred(s: SessionState, d: DeferredCall) {
  const tc = d.call;
  if (!tc) return;
  const c = getCall(s, tc.id);
  if (c.result) return;
  s.calls[tc.id] = { ...c, call: c.call ?? tc, deferred: d.reason };
}

// acceptsInput reports whether a message posted now starts a run (ready
// and failed); otherwise it becomes mail.
export function acceptsInput(status: SessionStatus | undefined): boolean {
  return status === SessionStatus.READY || status === SessionStatus.FAILED;
}

// isBusy reports whether a run is active (running or waiting for calls).
export function isBusy(status: SessionStatus | undefined): boolean {
  return status === SessionStatus.RUNNING || status === SessionStatus.WAITING;
}

// awaitsRun reports whether the session is ready and ends with a user
// turn nobody answered: a fork cut at a question holds it so, and Resume
// runs it.
export function awaitsRun(s: SessionState): boolean {
  const m = s.meta;
  if (!s.loaded || !m || m.status !== SessionStatus.READY || s.live) return false;
  // Only what is loaded up to the session's last turn can tell.
  if (lastTurnIndex(s) !== m.turnCount - 1) return false;
  for (let i = s.turns.length - 1; i >= 0; i--) {
    const t = s.turns[i];
    if (!t) return false;
    if (t.kind.case === "compaction") continue;
    return t.kind.case === "user";
  }
  return false;
}

// lastTurnIndex is the index of the newest turn held, -1 without one.
export function lastTurnIndex(s: SessionState): number {
  return s.first + s.turns.length - 1;
}

// holes reports whether some turn between those held is missing.
export function hasHoles(s: SessionState): boolean {
  return s.turns.some((t) => t === undefined);
}

// callsOf is the calls an LLM turn asked for, in order, with what is
// known of each.
export function callsOf(s: SessionState, calls: ToolCall[]): CallInfo[] {
  return calls.map((tc) => s.calls[tc.id] ?? unknownCall(tc));
}

// unknownCall is a call nothing is known of yet; the same object for the
// same call, so a turn drawn from it is not drawn again.
const unknown = new WeakMap<ToolCall, CallInfo>();
function unknownCall(tc: ToolCall): CallInfo {
  let c = unknown.get(tc);
  if (!c) unknown.set(tc, (c = { call: tc, owner: -1, running: false }));
  return c;
}

// helperAgent is the slug of a helper call's agent.
export function helperAgent(c: CallInfo): string | undefined {
  if (c.childAgent) return c.childAgent;
  const name = c.call?.name ?? c.result?.name ?? "";
  if (name.startsWith("prompt_agent_")) return name.slice("prompt_agent_".length);
  return undefined;
}

export function isHelper(c: CallInfo): boolean {
  return c.call?.kind === ToolKind.HELPER || !!c.child || !!c.result?.childSessionId || !!helperAgent(c);
}

export function childOf(c: CallInfo): string | undefined {
  return c.result?.childSessionId || c.child || undefined;
}
