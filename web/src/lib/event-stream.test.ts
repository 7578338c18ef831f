import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport, type HandlerContext } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  EventService,
  SubscribeScope,
  type SubscribeRequest,
  type SubscribeResponseSchema,
} from "../gen/agents/v1/event_pb";
import { EventStream, follows, type ConnState, type StreamUpdate } from "./event-stream";
import { createEventClient } from "./transport";

type Item = MessageInitShape<typeof SubscribeResponseSchema>;
type Script = (req: SubscribeRequest, ctx: HandlerContext) => AsyncIterable<Item>;

const hb = (seq: number): Item => ({ item: { case: "heartbeat", value: { seq: BigInt(seq) } } });
const ev = (seq: number, deltaSeq: number | bigint = 0): Item => ({
  item: { case: "event", value: { seq: BigInt(seq), deltaSeq: BigInt(deltaSeq), sessionId: "s1", kind: "session.updated" } },
});
// A delta_seq carries in its bits above 33 the tag of the server process
// that numbered it (53 bits in all). a < b, so comparing the numbers
// would take b's deltas for later than a's.
const tagA = 0x7fff0n << 33n;
const tagB = 0x7fffen << 33n;
const pos = (seq: bigint, deltaSeq: bigint) => ({ seq, deltaSeq });
const broken = () => new ConnectError("server went away", Code.Unavailable);
// hang waits until the client gives up on the call.
const hang = (ctx: HandlerContext) =>
  new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    ctx.signal.addEventListener("abort", () => resolve());
  });

// serve answers the nth Subscribe with the nth script (the last one
// repeats) and records the requests.
function serve(...scripts: Script[]) {
  const requests: SubscribeRequest[] = [];
  const transport = createRouterTransport(({ service }) => {
    service(EventService, {
      subscribe(req, ctx) {
        requests.push(req);
        const s = scripts[Math.min(requests.length - 1, scripts.length - 1)];
        return s(req, ctx);
      },
    });
  });
  return { client: createEventClient(transport), requests };
}

function record(stream: EventStream) {
  const updates: StreamUpdate[] = [];
  const states: ConnState[] = [];
  stream.on((u) => updates.push(u));
  stream.onState((s) => states.push(s));
  const seqs = () => updates.filter((u) => u.event).map((u) => Number(u.event!.seq));
  return { updates, states, seqs };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

describe("follows", () => {
  it("orders the events of one server by seq, then delta_seq", () => {
    expect(follows(pos(3n, 0n), pos(2n, tagA | 9n))).toBe(true);
    expect(follows(pos(2n, tagA | 1n), pos(2n, 0n))).toBe(true);
    expect(follows(pos(2n, 0n), pos(2n, tagA | 1n))).toBe(false);
    expect(follows(pos(2n, tagA | 2n), pos(2n, tagA | 1n))).toBe(true);
    expect(follows(pos(2n, tagA | 1n), pos(2n, tagA | 1n))).toBe(false);
    expect(follows(pos(2n, tagA | 1n), pos(2n, tagA | 2n))).toBe(false);
    // GetSession's position before the server's first delta: seq.0.tag.
    expect(follows(pos(2n, tagA | 1n), pos(2n, tagA))).toBe(true);
  });

  it("compares the largest delta_seqs exactly", () => {
    expect(tagB | 2n).toBeLessThan(2n ** 53n);
    expect(follows(pos(2n, tagA | 2n), pos(2n, tagA | 1n))).toBe(true);
    expect(follows(pos(2n, tagA | 1n), pos(2n, tagA | 2n))).toBe(false);
  });

  it("does not place a delta of another server after a position at its seq", () => {
    expect(follows(pos(2n, tagB | 1n), pos(2n, tagA | 5n))).toBe(false);
    expect(follows(pos(2n, tagA | 5n), pos(2n, tagB | 1n))).toBe(false);
    expect(follows(pos(2n, tagB | 1n), pos(2n, tagA))).toBe(false);
    // An older server's delta_seq has no tag: it is another server's too.
    expect(follows(pos(2n, tagB | 1n), pos(2n, 7n))).toBe(false);
    // The next seq places them.
    expect(follows(pos(3n, tagB | 1n), pos(2n, tagA | 5n))).toBe(true);
    expect(follows(pos(3n, 0n), pos(2n, tagB | 5n))).toBe(true);
  });
});

describe("EventStream", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reconnects after a break from the last position it delivered", async () => {
    const { client, requests } = serve(
      async function* () {
        yield hb(5);
        yield ev(6);
        yield ev(7);
        throw broken();
      },
      async function* (_req, ctx) {
        yield hb(7);
        yield ev(8);
        await hang(ctx);
      },
    );
    const stream = new EventStream(client);
    const { seqs, states } = record(stream);
    stream.start();
    await flush();
    expect(seqs()).toEqual([6, 7]);
    expect(stream.state).toMatchObject({ status: "reconnecting", error: "server went away", retryInMs: 100 });
    await vi.advanceTimersByTimeAsync(100);
    expect(requests).toHaveLength(2);
    expect(requests[0].after).toBeUndefined();
    expect(requests[1].after).toBe(7n);
    expect(requests[1].afterDelta).toBe(0n);
    expect(seqs()).toEqual([6, 7, 8]);
    expect(states.map((s) => s.status)).toEqual(["connecting", "connected", "reconnecting", "connected"]);
    stream.stop();
  });

  it("asks for every owner's sessions, and for its own once the server says it is no admin", async () => {
    const { client, requests } = serve(
      async function* () {
        throw new ConnectError("the all scope needs an admin token", Code.PermissionDenied);
      },
      async function* (_req, ctx) {
        yield hb(3);
        yield ev(4);
        await hang(ctx);
      },
    );
    const stream = new EventStream(client);
    const { seqs, states } = record(stream);
    stream.start();
    await flush();
    expect(requests.map((r) => r.scope)).toEqual([SubscribeScope.ALL, SubscribeScope.OWNER]);
    expect(seqs()).toEqual([4]);
    expect(states.map((s) => s.status)).toEqual(["connecting", "connected"]);
    // Started again (a sign-in, maybe an admin's token now): it asks again.
    stream.start();
    await flush();
    expect(requests[2].scope).toBe(SubscribeScope.ALL);
    stream.stop();
  });

  it("says whether the caller is an admin once the server answered, and learns it again at each start", async () => {
    let admin = false;
    const { client } = serve(async function* (req, ctx) {
      if (req.scope === SubscribeScope.ALL && !admin) throw new ConnectError("the all scope needs an admin token", Code.PermissionDenied);
      yield hb(3);
      await hang(ctx);
    });
    const stream = new EventStream(client);
    const known = stream.whenAdminKnown();
    expect(stream.admin).toBeUndefined();
    stream.start();
    await flush();
    expect(await known).toBe(false);
    expect(stream.admin).toBe(false);

    admin = true;
    stream.start();
    expect(stream.admin).toBeUndefined();
    const again = stream.whenAdminKnown();
    await flush();
    expect(await again).toBe(true);
    expect(await stream.whenAdminKnown()).toBe(true);
    stream.stop();
  });

  it("takes its starting position from the first heartbeat", async () => {
    const { client, requests } = serve(
      async function* () {
        yield hb(41);
        throw broken();
      },
      async function* (_req, ctx) {
        await hang(ctx);
      },
    );
    const stream = new EventStream(client);
    stream.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(requests[1].after).toBe(41n);
    stream.stop();
  });

  it("drops events at or before the last position, deltas included", async () => {
    const { client } = serve(
      async function* () {
        yield hb(1);
        yield ev(2);
        yield ev(2, 1);
        yield ev(2, 2);
        throw broken();
      },
      async function* (_req, ctx) {
        yield hb(3);
        yield ev(2); // replayed again by a confused server
        yield ev(2, 2);
        yield ev(2, 3);
        yield ev(3);
        await hang(ctx);
      },
    );
    const stream = new EventStream(client);
    const { updates } = record(stream);
    stream.start();
    await vi.advanceTimersByTimeAsync(100);
    const got = updates.map((u) => `${u.event!.seq}.${u.event!.deltaSeq}`);
    expect(got).toEqual(["2.0", "2.1", "2.2", "2.3", "3.0"]);
    expect(stream.position).toEqual({ seq: 3n, deltaSeq: 0n });
    stream.stop();
  });

  // Behind a load balancer a reconnect may reach another server, whose
  // deltas do not compare with the last one delivered: at that seq they
  // may repeat text already shown, so they are dropped and the position
  // kept until the next logged event places what follows.
  it("drops another server's deltas at the seq it resumed from and keeps the last position", async () => {
    const { client, requests } = serve(
      async function* () {
        yield hb(1);
        yield ev(2);
        yield ev(2, tagA | 1n);
        yield ev(2, tagA | 2n);
        throw broken();
      },
      async function* () {
        yield ev(2, tagB | 7n);
        yield ev(2, tagB | 8n);
        yield { item: { case: "lagged", value: { lastSeq: 2n, lastDeltaSeq: tagB | 8n } } };
      },
      async function* (_req, ctx) {
        yield ev(2, tagB | 9n);
        yield ev(3);
        yield ev(3, tagB | 10n);
        await hang(ctx);
      },
    );
    const stream = new EventStream(client);
    const { updates } = record(stream);
    stream.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(requests).toHaveLength(3);
    expect(requests[1].after).toBe(2n);
    expect(requests[1].afterDelta).toBe(tagA | 2n);
    expect(requests[2].after).toBe(2n);
    expect(requests[2].afterDelta).toBe(tagA | 2n);
    const got = updates.map((u) => [u.event!.seq, u.event!.deltaSeq]);
    expect(got).toEqual([
      [2n, 0n],
      [2n, tagA | 1n],
      [2n, tagA | 2n],
      [3n, 0n],
      [3n, tagB | 10n],
    ]);
    expect(stream.position).toEqual({ seq: 3n, deltaSeq: tagB | 10n });
    stream.stop();
  });

  it("drops another server's deltas at the seq of a GetSession position", async () => {
    const { client, requests } = serve(async function* (_req, ctx) {
      yield ev(10, tagB | 3n);
      yield ev(11);
      yield ev(11, tagB | 4n);
      await hang(ctx);
    });
    // GetSession answered by server A before its first delta: 10.0.tag.
    const stream = new EventStream(client, { after: { seq: 10n, deltaSeq: tagA } });
    const { updates } = record(stream);
    stream.start();
    await flush();
    expect(requests[0].after).toBe(10n);
    expect(requests[0].afterDelta).toBe(tagA);
    expect(updates.map((u) => [u.event!.seq, u.event!.deltaSeq])).toEqual([
      [11n, 0n],
      [11n, tagB | 4n],
    ]);
    stream.stop();
  });

  it("reconnects at once from the lagged position", async () => {
    const { client, requests } = serve(
      async function* () {
        yield hb(1);
        yield ev(2);
        yield ev(3, 4);
        yield { item: { case: "lagged", value: { lastSeq: 3n, lastDeltaSeq: 4n } } };
      },
      async function* (_req, ctx) {
        yield ev(4);
        await hang(ctx);
      },
    );
    const stream = new EventStream(client);
    const { seqs, states } = record(stream);
    stream.start();
    await flush(); // no time passes: no backoff after lagged
    expect(requests).toHaveLength(2);
    expect(requests[1].after).toBe(3n);
    expect(requests[1].afterDelta).toBe(4n);
    expect(seqs()).toEqual([2, 3, 4]);
    expect(states).toContainEqual(expect.objectContaining({ status: "reconnecting", retryInMs: 0 }));
    expect(stream.state.status).toBe("connected");
    stream.stop();
  });

  it("passes a snapshot on and continues from its position", async () => {
    const { client, requests } = serve(async function* (_req, ctx) {
      yield { item: { case: "snapshot", value: { seq: 10n, deltaSeq: 2n, sessions: [{ id: "s1" }] } } };
      yield ev(10, 1); // covered by the snapshot
      yield ev(10, 3);
      yield ev(11);
      await hang(ctx);
    });
    const stream = new EventStream(client, { after: { seq: 2n, deltaSeq: 0n } });
    const { updates } = record(stream);
    stream.start();
    await flush();
    expect(requests[0].after).toBe(2n);
    expect(updates[0].snapshot?.sessions.map((s) => s.id)).toEqual(["s1"]);
    expect(updates.slice(1).map((u) => `${u.event!.seq}.${u.event!.deltaSeq}`)).toEqual(["10.3", "11.0"]);
    stream.stop();
  });

  it("gives up on a silent stream after the stall timeout", async () => {
    const { client, requests } = serve(
      async function* (_req, ctx) {
        yield hb(1);
        yield ev(2);
        await hang(ctx);
      },
      async function* (_req, ctx) {
        yield hb(2);
        await hang(ctx);
      },
    );
    const stream = new EventStream(client);
    stream.start();
    await flush();
    await vi.advanceTimersByTimeAsync(44_000);
    expect(stream.state.status).toBe("connected");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stream.state).toMatchObject({ status: "reconnecting", retryInMs: 100 });
    expect((stream.state as { error: string }).error).toMatch(/45 s/);
    await vi.advanceTimersByTimeAsync(100);
    expect(requests).toHaveLength(2);
    expect(requests[1].after).toBe(2n);
    expect(stream.state.status).toBe("connected");
    stream.stop();
  });

  it("keeps a stream open while heartbeats arrive", async () => {
    const { client, requests } = serve(async function* (_req, ctx) {
      for (let i = 0; i < 5; i++) {
        yield hb(1);
        await new Promise((r) => setTimeout(r, 15_000));
      }
      await hang(ctx);
    });
    const stream = new EventStream(client);
    stream.start();
    await vi.advanceTimersByTimeAsync(70_000);
    expect(requests).toHaveLength(1);
    expect(stream.state.status).toBe("connected");
    stream.stop();
  });

  it("doubles the backoff up to its limit and resets it once connected", async () => {
    let failures = 6;
    const { client } = serve(async function* (_req, ctx) {
      if (failures-- > 0) throw broken();
      yield hb(1);
      if (failures === -1) throw broken(); // connected once, then broken
      await hang(ctx);
    });
    const stream = new EventStream(client, { maxBackoffMs: 1_000 });
    const { states } = record(stream);
    stream.start();
    await vi.advanceTimersByTimeAsync(10_000);
    const waits = states.flatMap((s) => (s.status === "reconnecting" ? [s.retryInMs] : []));
    expect(waits).toEqual([100, 200, 400, 800, 1_000, 1_000, 100]);
    expect(stream.state.status).toBe("connected");
    stream.stop();
  });

  it("stops retrying and tells when the server refuses the caller", async () => {
    const refused = vi.fn();
    const { client, requests } = serve(async function* () {
      throw new ConnectError("no token", Code.Unauthenticated);
    });
    const stream = new EventStream(client, { onUnauthenticated: refused });
    stream.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(requests).toHaveLength(1);
    expect(refused).toHaveBeenCalledOnce();
    expect(stream.state.status).toBe("unauthenticated");
    stream.start(); // signed in
    await flush();
    expect(requests).toHaveLength(2);
  });

  it("stop() ends the call, the retries and the deliveries", async () => {
    let aborted = false;
    const { client, requests } = serve(
      async function* () {
        yield hb(1);
        throw broken();
      },
      async function* (_req, ctx) {
        yield hb(1);
        await hang(ctx);
        aborted = ctx.signal.aborted;
        yield ev(5);
      },
    );
    const stream = new EventStream(client);
    const { updates } = record(stream);
    stream.start();
    await flush();
    stream.stop(); // while waiting to retry
    await vi.advanceTimersByTimeAsync(10_000);
    expect(requests).toHaveLength(1);
    expect(stream.state.status).toBe("stopped");

    stream.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(requests).toHaveLength(2);
    stream.stop(); // while connected
    await vi.advanceTimersByTimeAsync(60_000);
    expect(aborted).toBe(true);
    expect(requests).toHaveLength(2);
    expect(updates).toEqual([]);
    expect(stream.state.status).toBe("stopped");
  });
});
