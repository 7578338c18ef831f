import { createRouterTransport } from "@connectrpc/connect";
import { act, cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventStream, type ConnState } from "../lib/event-stream";
import { EventStreamContext } from "../lib/event-stream-context";
import { createEventClient } from "../lib/transport";
import { ConnectionStatus } from "./connection-status";

// A stream whose state the test sets.
class StubStream extends EventStream {
  set(s: ConnState) {
    this.setState(s);
  }
}

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe("ConnectionStatus", () => {
  it("says when the stream is live and when it tries again, and why", () => {
    vi.useFakeTimers();
    const stream = new StubStream(createEventClient(createRouterTransport(() => {})));
    render(
      <EventStreamContext.Provider value={stream}>
        <ConnectionStatus />
      </EventStreamContext.Provider>,
    );
    expect(screen.getByRole("status").textContent).toBe("Connecting…");
    act(() => stream.set({ status: "connected" }));
    expect(screen.getByRole("status").textContent).toBe("Live");
    act(() => stream.set({ status: "reconnecting", error: "server went away", retryInMs: 3_000, retryAt: Date.now() + 3_000 }));
    expect(screen.getByRole("status").textContent).toBe("Reconnecting (server went away)");
    expect(screen.getByText(/in 3 s/)).toBeTruthy();
    act(() => void vi.advanceTimersByTime(1_100));
    expect(screen.getByText(/in 2 s/)).toBeTruthy();
  });
});
