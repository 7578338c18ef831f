// Drafts: what a user wrote to a session while its run was busy. One
// message being elaborated, not a queue: sending while busy appends a
// paragraph; the draft is posted whole when the run stops in a status
// that accepts input, or at once with "Send now". Nothing about a draft
// crosses the wire before it is posted, and nothing is stored: drafts
// live for the page's life, in one store for every session, so leaving a
// chat and coming back keeps its draft, and a draft is posted even when
// its chat is not open.

import type { Event } from "../../../gen/agents/v1/event_pb";
import { SessionStatus, type Attachment } from "../../../gen/agents/v1/session_pb";
import type { StreamUpdate } from "../../../lib/event-stream";
import { acceptsInput } from "./session-state";

export interface Draft {
  text: string;
  attachments: Attachment[];
}

export const emptyDraft: Draft = { text: "", attachments: [] };

export function isEmpty(d: Draft | undefined): boolean {
  return !d || (d.text.trim() === "" && d.attachments.length === 0);
}

// appended is d with text added as a new paragraph and atts after its own.
export function appended(d: Draft, text: string, atts: Attachment[]): Draft {
  const t = text.trim();
  let out = d.text;
  if (t !== "") out = d.text.trim() === "" ? t : `${d.text.replace(/\n+$/, "")}\n\n${t}`;
  return { text: out, attachments: [...d.attachments, ...atts] };
}

// Poster posts a draft as one message of the session.
export type Poster = (sessionId: string, draft: Draft) => Promise<void>;

export interface DraftError {
  sessionId: string;
  message: string;
}

export class DraftStore {
  private drafts = new Map<string, Draft>();
  private sending = new Set<string>();
  private errors = new Map<string, string>();
  private listeners = new Set<() => void>();
  private poster?: Poster;
  private unsubscribe?: () => void;
  private source?: unknown;

  constructor(poster?: Poster) {
    this.poster = poster;
  }

  // connect makes the store post through poster and follow the stream's
  // events. Calling it again with the same stream changes nothing; with
  // another one (a new transport after sign-in) it moves over.
  connect(stream: { on(l: (u: StreamUpdate) => void): () => void }, poster: Poster): void {
    this.poster = poster;
    if (this.source === stream) return;
    this.unsubscribe?.();
    this.source = stream;
    this.unsubscribe = stream.on((u) => {
      if (u.event) this.handle(u.event);
      // Events were missed: a run may have stopped unseen.
      else if (u.snapshot) for (const m of u.snapshot.sessions) void this.settle(m.id, m.status);
    });
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(id: string): Draft {
    return this.drafts.get(id) ?? emptyDraft;
  }

  // isSending reports whether the session's draft is being posted.
  isSending(id: string): boolean {
    return this.sending.has(id);
  }

  // error is why the last post of the session's draft failed, if it did.
  error(id: string): string | undefined {
    return this.errors.get(id);
  }

  append(id: string, text: string, atts: Attachment[] = []): void {
    this.set(id, appended(this.get(id), text, atts));
  }

  setText(id: string, text: string): void {
    this.set(id, { ...this.get(id), text });
  }

  removeAttachment(id: string, index: number): void {
    const d = this.get(id);
    this.set(id, { ...d, attachments: d.attachments.filter((_, i) => i !== index) });
  }

  clear(id: string): void {
    this.set(id, emptyDraft);
  }

  // send posts the session's draft now, if there is one. During a run the
  // server delivers it as mail folded at the next step. When the post
  // fails nothing typed is lost: the draft comes back, ahead of what was
  // added since.
  async send(id: string): Promise<void> {
    const d = this.drafts.get(id);
    if (isEmpty(d) || !d || this.sending.has(id) || !this.poster) return;
    this.sending.add(id);
    this.errors.delete(id);
    this.set(id, emptyDraft);
    try {
      await this.poster(id, d);
    } catch (err) {
      const cur = this.get(id);
      this.errors.set(id, err instanceof Error ? err.message : String(err));
      this.set(id, appended(d, cur.text, cur.attachments));
    } finally {
      this.sending.delete(id);
      this.notify();
    }
  }

  // settle posts the draft when status accepts input: the run it waited
  // for is over, so it is the user's turn. A paused session keeps it.
  settle(id: string, status: SessionStatus | undefined): Promise<void> {
    if (!acceptsInput(status) || isEmpty(this.drafts.get(id))) return Promise.resolve();
    return this.send(id);
  }

  // handle takes one event of the stream.
  handle(ev: Event): void {
    if (ev.body.case === "sessionDeleted") {
      if (this.drafts.delete(ev.sessionId)) this.notify();
      return;
    }
    const st = statusOf(ev);
    if (st !== undefined) void this.settle(ev.sessionId, st);
  }

  private set(id: string, d: Draft) {
    if (isEmpty(d)) this.drafts.delete(id);
    else this.drafts.set(id, d);
    this.notify();
  }

  private notify() {
    for (const l of this.listeners) l();
  }
}

// statusOf is the session status an event reports, if it reports one.
// run.started is left out: a run starting is never the user's turn.
export function statusOf(ev: Event): SessionStatus | undefined {
  switch (ev.body.case) {
    case "runStopped":
      return ev.body.value.status;
    case "sessionFailed":
      return SessionStatus.FAILED;
    case "sessionUpdated":
      return ev.body.value.meta?.status;
  }
  return undefined;
}

// drafts is the page's one store.
export const drafts = new DraftStore();
