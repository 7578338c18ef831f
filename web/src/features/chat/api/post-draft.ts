import type { SessionClient } from "../../../lib/transport";
import type { Draft, Poster } from "../lib/draft-store";

// draftPoster posts a draft as one message of its session.
export function draftPoster(client: SessionClient): Poster {
  return async (sessionId: string, d: Draft) => {
    await client.postMessage({ sessionId, message: { text: d.text, attachments: d.attachments } });
  };
}
