import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Event } from "../../../gen/agents/v1/event_pb";
import { SessionStatus, type SessionMeta } from "../../../gen/agents/v1/session_pb";

// The sidebar's sessions: what the last listing said, changed by every
// event since, with the sessions that have news not seen yet.
export interface SessionListState {
  metas: ReadonlyMap<string, SessionMeta>;
  unread: ReadonlySet<string>;
  // The session on screen: never unread.
  open?: string;
  loaded: boolean;
  // Counts the listings asked for; only the newest one's answer counts.
  generation: number;
  // A listing is in flight.
  loading: boolean;
  // Events applied while the newest listing is in flight: its answer may
  // predate them, so they are applied again over it.
  sinceRefresh: readonly Event[];
}

export type SessionListAction =
  | { type: "refresh"; generation: number }
  | { type: "loaded"; generation: number; sessions: readonly SessionMeta[] }
  | { type: "failed"; generation: number }
  | { type: "event"; event: Event }
  | { type: "open"; id?: string };

export const initialSessionList: SessionListState = {
  metas: new Map(),
  unread: new Set(),
  loaded: false,
  generation: 0,
  loading: false,
  sinceRefresh: [],
};

export function reduceSessionList(state: SessionListState, action: SessionListAction): SessionListState {
  switch (action.type) {
    case "refresh":
      if (action.generation <= state.generation) return state;
      return { ...state, generation: action.generation, loading: true, sinceRefresh: [] };
    case "loaded": {
      if (action.generation !== state.generation || !state.loading) return state;
      const metas = new Map<string, SessionMeta>();
      for (const m of action.sessions) metas.set(m.id, m);
      // Unread markers outlive a listing while their session does.
      const unread = new Set([...state.unread].filter((id) => metas.has(id)));
      let next: SessionListState = { ...state, metas, unread, loaded: true, loading: false, sinceRefresh: [] };
      for (const ev of state.sinceRefresh) next = apply(next, ev);
      return next;
    }
    case "event": {
      const next = apply(state, action.event);
      return state.loading ? { ...next, sinceRefresh: [...state.sinceRefresh, action.event] } : next;
    }
    case "failed":
      return action.generation === state.generation ? { ...state, loading: false, sinceRefresh: [] } : state;
    case "open": {
      if (state.open === action.id && (!action.id || !state.unread.has(action.id))) return state;
      return { ...state, open: action.id, unread: without(state.unread, action.id) };
    }
  }
}

// apply changes the list by one event.
function apply(state: SessionListState, ev: Event): SessionListState {
  const id = ev.sessionId;
  const b = ev.body;
  switch (b.case) {
    case "sessionCreated":
      return upsert(state, b.value.meta).state;
    case "sessionUpdated": {
      const { state: next, changed } = upsert(state, b.value.meta);
      return changed && b.value.headTurn ? markUnread(next, id) : next;
    }
    case "sessionDeleted": {
      if (!state.metas.has(id)) return state;
      const metas = new Map(state.metas);
      metas.delete(id);
      return { ...state, metas, unread: without(state.unread, id) };
    }
    case "runStarted":
      return setStatus(state, ev, SessionStatus.RUNNING, "");
    case "runStopped":
      return markUnread(setStatus(state, ev, b.value.status, b.value.reason), id);
    case "sessionFailed":
      return markUnread(setStatus(state, ev, SessionStatus.FAILED, b.value.reason), id);
    default:
      return state;
  }
}

const ms = (m: SessionMeta) => (m.updateTime ? timestampMs(m.updateTime) : 0);

// upsert stores meta unless what the list holds is newer.
function upsert(state: SessionListState, meta: SessionMeta | undefined): { state: SessionListState; changed: boolean } {
  if (!meta?.id) return { state, changed: false };
  const old = state.metas.get(meta.id);
  if (old && ms(old) > ms(meta)) return { state, changed: false };
  const metas = new Map(state.metas);
  metas.set(meta.id, meta);
  return { state: { ...state, metas }, changed: true };
}

function setStatus(state: SessionListState, ev: Event, status: SessionStatus, reason: string): SessionListState {
  const old = state.metas.get(ev.sessionId);
  if (!old || status === SessionStatus.UNSPECIFIED) return state;
  const metas = new Map(state.metas);
  const updateTime = ev.time && ms(old) < timestampMs(ev.time) ? ev.time : old.updateTime;
  metas.set(old.id, { ...old, status, statusReason: reason, updateTime });
  return { ...state, metas };
}

function markUnread(state: SessionListState, id: string): SessionListState {
  if (!state.metas.has(id) || id === state.open || state.unread.has(id)) return state;
  return { ...state, unread: new Set(state.unread).add(id) };
}

function without(set: ReadonlySet<string>, id: string | undefined): ReadonlySet<string> {
  if (!id || !set.has(id)) return set;
  const next = new Set(set);
  next.delete(id);
  return next;
}

// ---- what the sidebar shows

export interface SessionFilter {
  agent?: string;
  status?: SessionStatus;
  text?: string;
}

// A row of the tree: a session and its children, newest first.
export interface SessionNode {
  meta: SessionMeta;
  depth: number;
  unread: boolean;
  children: SessionNode[];
}

export function matches(m: SessionMeta, f: SessionFilter): boolean {
  if (f.agent && m.agent !== f.agent) return false;
  if (f.status && m.status !== f.status) return false;
  const q = f.text?.trim().toLowerCase();
  if (q && !`${m.title}\n${m.agent}\n${m.id}`.toLowerCase().includes(q)) return false;
  return true;
}

// sessionTree nests sub-sessions under their parent. With a filter, the
// sessions that match are kept with their ancestors (so a matching child
// still shows where it belongs). A child whose parent is not loaded is a
// root.
export function sessionTree(state: Pick<SessionListState, "metas" | "unread">, f: SessionFilter = {}): SessionNode[] {
  const filtering = !!(f.agent || f.status || f.text?.trim());
  const keep = new Set<string>();
  for (const m of state.metas.values()) {
    if (filtering && !matches(m, f)) continue;
    // Walk up, guarding against a cycle in bad data.
    for (let cur: SessionMeta | undefined = m; cur && !keep.has(cur.id); cur = state.metas.get(cur.parentId)) {
      keep.add(cur.id);
    }
  }
  const nodes = new Map<string, SessionNode>();
  for (const id of keep) {
    const meta = state.metas.get(id)!;
    nodes.set(id, { meta, depth: 0, unread: state.unread.has(id), children: [] });
  }
  const roots: SessionNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.meta.parentId ? nodes.get(n.meta.parentId) : undefined;
    (parent && parent !== n ? parent.children : roots).push(n);
  }
  const order = (list: SessionNode[], depth: number) => {
    list.sort((a, b) => ms(b.meta) - ms(a.meta) || a.meta.id.localeCompare(b.meta.id));
    for (const n of list) {
      n.depth = depth;
      order(n.children, depth + 1);
    }
  };
  order(roots, 0);
  return roots;
}

// flatten lists a tree in display order.
export function flatten(nodes: SessionNode[], out: SessionNode[] = []): SessionNode[] {
  for (const n of nodes) {
    out.push(n);
    flatten(n.children, out);
  }
  return out;
}
