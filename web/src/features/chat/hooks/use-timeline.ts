import { useTransport } from "@connectrpc/connect-query";
import { useEffect, useMemo, useState } from "react";
import { SubscribeScope, type Event } from "../../../gen/agents/v1/event_pb";
import { EventStream } from "../../../lib/event-stream";
import { createEventClient } from "../../../lib/transport";
import { helperSessions, running, timelineOf, type Bar } from "../lib/timeline";

// The kinds the timeline reads; streamed text and progress are left out.
const kinds = new Set<Event["body"]["case"]>([
  "runStarted",
  "runStopped",
  "sessionFailed",
  "sessionUpdated",
  "toolStarted",
  "toolCompleted",
  "callsDeferred",
  "subcallStarted",
  "subcallCompleted",
  "subcallFailed",
  "compactionStarted",
  "sessionCompacted",
]);

// Helper sessions followed at most: a tree wider than this shows the
// first ones' runs.
const MAX_SESSIONS = 50;

// useTimeline follows a session's events from the start of the server's
// log (and those of the helper sessions they name, as they name them)
// and derives its waterfall, live: the bars, whether anything runs, and
// now, which ticks each second while it does.
export function useTimeline(sessionId: string): { runs: Bar[]; live: boolean; now: number; loading: boolean } {
  const transport = useTransport();
  const [events, setEvents] = useState<ReadonlyMap<string, readonly Event[]>>(new Map());
  const [loading, setLoading] = useState(true);
  useEffect(() => {
    const client = createEventClient(transport);
    const streams = new Map<string, EventStream>();
    const buffers = new Map<string, Event[]>();
    let flush: ReturnType<typeof setTimeout> | undefined;
    // Events arrive one by one on replay: draw them a frame at a time.
    const changed = () => {
      flush ??= setTimeout(() => {
        flush = undefined;
        setEvents(new Map([...buffers].map(([k, v]) => [k, [...v]])));
        setLoading(false);
      }, 50);
    };
    const follow = (id: string) => {
      if (streams.has(id) || streams.size >= MAX_SESSIONS) return;
      const list: Event[] = [];
      buffers.set(id, list);
      const s = new EventStream(client, { scope: SubscribeScope.SESSION, sessionId: id, after: { seq: 0n, deltaSeq: 0n } });
      streams.set(id, s);
      s.on((u) => {
        const ev = u.event;
        if (!ev || ev.sessionId !== id || !kinds.has(ev.body.case)) {
          if (u.snapshot) changed();
          return;
        }
        list.push(ev);
        for (const child of helperSessions([ev])) follow(child);
        changed();
      });
      s.onState((st) => {
        if (st.status === "connected") changed();
      });
      s.start();
    };
    follow(sessionId);
    return () => {
      clearTimeout(flush);
      for (const s of streams.values()) s.stop();
    };
  }, [transport, sessionId]);

  const runs = useMemo(() => timelineOf(sessionId, events), [sessionId, events]);
  const live = running(runs);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    if (!live) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [live, events]);
  return { runs, live, now, loading };
}
