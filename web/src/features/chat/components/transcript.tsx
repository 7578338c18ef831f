import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef } from "react";
import { callsOf, type CallInfo, type SessionState } from "../lib/session-state";
import { statusText } from "../../../lib/status-text";
import { statusLabel } from "../lib/format";
import { LiveTurnView, TurnView } from "./turn-view";

type Row =
  | { kind: "older"; key: string }
  | { kind: "turn"; key: string; index: number }
  | { kind: "live"; key: string }
  | { kind: "status"; key: string };

interface Props {
  state: SessionState;
  olderLoading: boolean;
  onLoadOlder: () => void;
  // Absent, no turn offers a fork (the session is not the caller's).
  onFork?: (index: number) => void;
}

// How close to the bottom counts as at the bottom, in pixels.
const stickSlack = 48;

// Transcript is the conversation as a virtualised log: only the turns in
// view are in the page, so a session of thousands of turns scrolls
// smoothly. It follows the bottom while the answer streams, until the
// user scrolls up; reaching the top loads the page of turns before.
export function Transcript({ state, olderLoading, onLoadOlder, onFork }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const follow = useRef(true);
  const agent = state.meta?.agent ?? "";

  const rows = useMemo<Row[]>(() => {
    const out: Row[] = [];
    if (state.first > 0) out.push({ kind: "older", key: "older" });
    state.turns.forEach((t, i) => {
      if (t) out.push({ kind: "turn", key: `t${state.first + i}`, index: state.first + i });
    });
    if (state.live) out.push({ kind: "live", key: `live${state.live.turnIndex}` });
    out.push({ kind: "status", key: "status" });
    return out;
  }, [state.first, state.turns, state.live]);

  const v = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 140,
    overscan: 6,
    getItemKey: (i) => rows[i].key,
    initialRect: { width: 800, height: 800 },
  });

  // Keep the turn at the top of the view in place when a page of older
  // turns is prepended.
  const anchor = useRef<{ key: string; delta: number } | null>(null);
  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < stickSlack;
    const first = v.getVirtualItems().find((it) => it.end > el.scrollTop);
    if (first) anchor.current = { key: String(first.key), delta: el.scrollTop - first.start };
  }, [v]);

  const first = state.first;
  const prevFirst = useRef(first);
  useLayoutEffect(() => {
    if (prevFirst.current === first) return;
    prevFirst.current = first;
    const a = anchor.current;
    if (!a || follow.current) return;
    const i = rows.findIndex((r) => r.key === a.key);
    if (i < 0) return;
    const [offset] = v.getOffsetForIndex(i, "start") ?? [0];
    v.scrollToOffset(offset + a.delta);
  }, [first, rows, v]);

  // Follow the bottom as turns arrive and the answer grows.
  const live = state.live;
  const liveSize = live ? live.text.length + live.thinking.length + live.toolCalls.reduce((n, tc) => n + tc.arguments.length, 0) : 0;
  useEffect(() => {
    if (follow.current && rows.length > 0) v.scrollToIndex(rows.length - 1, { align: "end" });
  }, [rows.length, liveSize, v]);

  const items = v.getVirtualItems();
  // Reaching the top loads older turns.
  const topVisible = items.length > 0 && rows[items[0].index]?.kind === "older";
  useEffect(() => {
    if (topVisible && !olderLoading) onLoadOlder();
  }, [topVisible, olderLoading, onLoadOlder]);

  return (
    <div ref={scroller} className="transcript" role="log" aria-label="Conversation" tabIndex={0} onScroll={onScroll}>
      <div style={{ height: v.getTotalSize(), position: "relative", width: "100%" }}>
        {items.map((it) => {
          const row = rows[it.index];
          return (
            <div key={it.key} data-index={it.index} ref={v.measureElement} className="transcript-row" style={{ transform: `translateY(${it.start}px)` }}>
              {row.kind === "older" && (
                <button type="button" className="load-older" onClick={onLoadOlder} disabled={olderLoading}>
                  {olderLoading ? "Loading older turns…" : `Load ${state.first} older turn${state.first === 1 ? "" : "s"}`}
                </button>
              )}
              {row.kind === "turn" && <TurnRow state={state} index={row.index} agent={agent} onFork={onFork} />}
              {row.kind === "live" && state.live && (
                <LiveTurnView live={state.live} agent={agent} calls={callsOf(state, state.live.toolCalls)} />
              )}
              {row.kind === "status" && <StatusLine state={state} />}
            </div>
          );
        })}
      </div>
    </div>
  );
}

const none: CallInfo[] = [];

function TurnRow({ state, index, agent, onFork }: { state: SessionState; index: number; agent: string; onFork?: (i: number) => void }) {
  const turn = state.turns[index - state.first];
  const asked = turn?.kind.case === "llm" ? turn.kind.value.toolCalls : undefined;
  // The calls' infos are recomputed only when the calls change, so an
  // unchanged turn is not drawn again.
  const prev = useRef<CallInfo[]>(none);
  const calls = useMemo(() => {
    const next = asked ? callsOf(state, asked) : none;
    // The same infos as before: keep the array, so the turn is not drawn
    // again when another turn's call changed.
    if (next.length === prev.current.length && next.every((c, i) => c === prev.current[i])) return prev.current;
    prev.current = next;
    return next;
  }, [asked, state.calls]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!turn) return null;
  return <TurnView turn={turn} agent={agent} calls={calls} onFork={onFork} />;
}

function StatusLine({ state }: { state: SessionState }) {
  const m = state.meta;
  if (!m) return <p className="status-line muted">Loading…</p>;
  if (m.turnCount === 0 && !state.live) return <p className="status-line muted">No messages yet. Write one below.</p>;
  return (
    <p className="status-line muted">
      {statusText(statusLabel(m.status), m.statusReason)}
      {m.pendingMail > 0 ? ` · ${m.pendingMail} mail waiting for the next step` : ""}
    </p>
  );
}
