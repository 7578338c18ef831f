import { Code, ConnectError } from "@connectrpc/connect";
import type { Event, Snapshot } from "../gen/agents/v1/event_pb";
import { SubscribeScope } from "../gen/agents/v1/event_pb";
import type { EventClient } from "./transport";

// The connection to the server's event stream, as the app shows it.
// retryAt is the time (Date.now()) of the next attempt, so a screen can
// count down to it.
export type ConnState =
  | { status: "connecting" }
  | { status: "connected" }
  | { status: "reconnecting"; error: string; retryInMs: number; retryAt: number }
  | { status: "unauthenticated" }
  | { status: "stopped" };

// One thing the stream reports: exactly one field is set. A snapshot says
// the server could not replay from the last position: what the app shows
// may have missed events, so it refetches.
export interface StreamUpdate {
  event?: Event;
  snapshot?: Snapshot;
}

// Position is a place in the server's event order: the seq of a logged
// event and, for the deltas after it (text, thinking, tool calls), their
// delta_seq. A delta_seq is the position of a delta among those of the
// server process that numbered it: its bits above tagShift are that
// process's tag, the bits below its counter. A logged event's delta_seq
// is 0.
export interface Position {
  seq: bigint;
  deltaSeq: bigint;
}

const tagShift = 33n;

// follows reports whether p comes after q. Seqs are the same on every
// server; at one seq, a delta numbered by another server process than
// q's (a reconnect that reached another server, or GetSession answered
// by one and the stream by another) cannot be placed: it counts as not
// after, so a piece of streamed text may be missing until the turn is
// stored, never shown twice.
export function follows(p: Position, q: Position): boolean {
  if (p.seq !== q.seq) return p.seq > q.seq;
  if (q.deltaSeq !== 0n && p.deltaSeq >> tagShift !== q.deltaSeq >> tagShift) return false;
  return p.deltaSeq > q.deltaSeq;
}

// isAfter says whether an event comes after a position (a screen that read
// GetSession at a position keeps only the events after it).
export function isAfter(ev: Event, pos: Position | undefined): boolean {
  return !pos || follows({ seq: ev.seq, deltaSeq: ev.deltaSeq }, pos);
}

export interface EventStreamOptions {
  // The scope; owner by default (the server widens nothing on its own).
  scope?: SubscribeScope;
  // The session, for the session scope.
  sessionId?: string;
  // Where to start; absent starts with live events, the first heartbeat
  // giving the position.
  after?: Position;
  // A silent stream is given up after this long (the server sends a
  // heartbeat every 15 s).
  stallMs?: number;
  // The first retry waits minBackoffMs, each failed attempt doubles it up
  // to maxBackoffMs; a connection that opens resets it.
  minBackoffMs?: number;
  maxBackoffMs?: number;
  // Told when the server refuses the caller: the stream stops until
  // start() is called again (after a sign-in).
  onUnauthenticated?: () => void;
}

const defaults = { stallMs: 45_000, minBackoffMs: 100, maxBackoffMs: 5_000 };

// EventStream follows the server's events for the whole app: one
// subscription, reconnecting by itself from the last position it
// delivered, each event delivered once. Screens listen to it.
export class EventStream {
  private listeners = new Set<(u: StreamUpdate) => void>();
  private stateListeners = new Set<(s: ConnState) => void>();
  private current: ConnState = { status: "connecting" };
  private pos: Position | undefined;
  // The running loop's controller; aborting it ends the loop.
  private run: AbortController | undefined;

  constructor(
    private readonly client: EventClient,
    private readonly opts: EventStreamOptions = {},
  ) {
    this.pos = opts.after;
  }

  get state(): ConnState {
    return this.current;
  }

  // The position of the last thing delivered (or of the stream's start).
  get position(): Position | undefined {
    return this.pos;
  }

  on(listener: (u: StreamUpdate) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  onState(listener: (s: ConnState) => void): () => void {
    this.stateListeners.add(listener);
    return () => {
      this.stateListeners.delete(listener);
    };
  }

  // start opens the stream, or reconnects it at once if it is open (the
  // backoff starts over, the position is kept).
  start(): void {
    this.run?.abort();
    // Whether the caller is an admin is learnt again: a start follows a
    // sign-in, perhaps with another token.
    this.notAdmin = false;
    this.setAdmin(undefined);
    const run = new AbortController();
    this.run = run;
    void this.loop(run.signal);
  }

  // stop closes the stream and cancels any retry; start opens it again.
  stop(): void {
    this.run?.abort();
    this.run = undefined;
    this.setState({ status: "stopped" });
  }

  // notAdmin is learnt from the server: the all scope was refused.
  private notAdmin = false;

  // admin says whether the caller may see every owner's sessions: the
  // stream asks the server once (it subscribes to the all scope, refused
  // to anyone else), and the app's other screens read the answer here
  // instead of asking again and being refused. Undefined until the server
  // answered, and again after each start.
  get admin(): boolean | undefined {
    return this.isAdmin;
  }

  // whenAdminKnown resolves with admin once the server answered.
  whenAdminKnown(signal?: AbortSignal): Promise<boolean> {
    if (this.isAdmin !== undefined) return Promise.resolve(this.isAdmin);
    return new Promise((resolve, reject) => {
      const done = () => {
        off();
        signal?.removeEventListener("abort", abort);
      };
      const off = this.onAdmin((a) => {
        done();
        resolve(a);
      });
      const abort = () => {
        done();
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", abort);
    });
  }

  private isAdmin: boolean | undefined;
  private adminListeners = new Set<(admin: boolean) => void>();

  // onAdmin tells listener each time the server answered whether the
  // caller is an admin.
  onAdmin(listener: (admin: boolean) => void): () => void {
    this.adminListeners.add(listener);
    return () => {
      this.adminListeners.delete(listener);
    };
  }

  private setAdmin(a: boolean | undefined) {
    if (this.isAdmin === a) return;
    this.isAdmin = a;
    if (a === undefined) return;
    for (const l of [...this.adminListeners]) l(a);
  }

  // scope is the one asked for; by default every owner's sessions for an
  // admin (the server says whether one is), one's own for anyone else.
  private scope(): SubscribeScope {
    if (this.opts.scope !== undefined) return this.opts.scope;
    return this.notAdmin ? SubscribeScope.OWNER : SubscribeScope.ALL;
  }

  private async loop(stop: AbortSignal): Promise<void> {
    const o = { ...defaults, ...this.opts };
    let backoff = o.minBackoffMs;
    this.setState({ status: "connecting" });
    while (!stop.aborted) {
      const call = new AbortController();
      const onStop = () => call.abort();
      stop.addEventListener("abort", onStop);
      let stalled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          stalled = true;
          call.abort();
        }, o.stallMs);
      };
      let error = "the stream ended";
      let again = false; // reconnect at once (lagged)
      try {
        arm();
        const req = {
          scope: this.scope(),
          sessionId: this.opts.sessionId ?? "",
          after: this.pos?.seq,
          afterDelta: this.pos?.deltaSeq ?? 0n,
        };
        for await (const res of this.client.subscribe(req, { signal: call.signal, timeoutMs: 0 })) {
          if (stop.aborted) break;
          arm();
          // The server took the scope asked for: an admin's, if it was
          // every owner's.
          if (req.scope === SubscribeScope.ALL) this.setAdmin(true);
          if (this.current.status !== "connected") {
            backoff = o.minBackoffMs;
            this.setState({ status: "connected" });
          }
          const item = res.item;
          if (item.case === "event") {
            const ev = item.value;
            if (!isAfter(ev, this.pos)) continue;
            this.pos = { seq: ev.seq, deltaSeq: ev.deltaSeq };
            this.emit({ event: ev });
          } else if (item.case === "snapshot") {
            this.pos = { seq: item.value.seq, deltaSeq: item.value.deltaSeq };
            this.emit({ snapshot: item.value });
          } else if (item.case === "heartbeat") {
            this.pos ??= { seq: item.value.seq, deltaSeq: 0n };
          } else if (item.case === "lagged") {
            // The last position this server delivered; one it sent and
            // this stream dropped does not replace the position kept.
            const last = { seq: item.value.lastSeq, deltaSeq: item.value.lastDeltaSeq };
            if (!this.pos || follows(last, this.pos)) this.pos = last;
            error = "fell behind the server";
            again = true;
            break;
          }
        }
      } catch (err) {
        const ce = ConnectError.from(err);
        if (ce.code === Code.PermissionDenied && this.scope() === SubscribeScope.ALL && !stop.aborted) {
          // Not an admin: every session one may see is one's own.
          this.notAdmin = true;
          this.setAdmin(false);
          continue;
        } else if (stalled) error = `no word from the server for ${Math.round(o.stallMs / 1000)} s`;
        else if (ce.code === Code.Unauthenticated && !stop.aborted) {
          this.setState({ status: "unauthenticated" });
          this.opts.onUnauthenticated?.();
          return;
        } else if (/fetch|network/i.test(ce.rawMessage)) error = "cannot reach the server";
        else error = ce.rawMessage || ce.message;
      } finally {
        clearTimeout(timer);
        stop.removeEventListener("abort", onStop);
        call.abort();
      }
      if (stop.aborted) return;
      if (again) {
        this.setState({ status: "reconnecting", error, retryInMs: 0, retryAt: Date.now() });
        continue;
      }
      this.setState({ status: "reconnecting", error, retryInMs: backoff, retryAt: Date.now() + backoff });
      await sleep(backoff, stop);
      backoff = Math.min(backoff * 2, o.maxBackoffMs);
    }
  }

  protected emit(u: StreamUpdate): void {
    for (const l of this.listeners) {
      try {
        l(u);
      } catch (err) {
        // One screen's bug must not end the stream for the others.
        console.error(err);
      }
    }
  }

  protected setState(s: ConnState): void {
    this.current = s;
    for (const l of this.stateListeners) l(s);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}
