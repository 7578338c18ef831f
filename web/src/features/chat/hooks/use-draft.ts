import { useTransport } from "@connectrpc/connect-query";
import { useEffect, useSyncExternalStore } from "react";
import { useEventStream } from "../../../lib/event-stream-context";
import { createSessionClient } from "../../../lib/transport";
import { draftPoster } from "../api/post-draft";
import { drafts, type Draft } from "../lib/draft-store";

// useDraftsConnected makes the page's draft store follow the app's event
// stream: once connected it stays so for the page's life, so a draft is
// posted when its run stops even after its chat was left.
export function useDraftsConnected(): void {
  const stream = useEventStream();
  const transport = useTransport();
  useEffect(() => {
    drafts.connect(stream, draftPoster(createSessionClient(transport)));
  }, [stream, transport]);
}

const subscribe = (l: () => void) => drafts.subscribe(l);

// useDraft is the session's draft, kept current.
export function useDraft(id: string): { draft: Draft; sending: boolean; error?: string } {
  const draft = useSyncExternalStore(subscribe, () => drafts.get(id));
  const sending = useSyncExternalStore(subscribe, () => drafts.isSending(id));
  const error = useSyncExternalStore(subscribe, () => drafts.error(id));
  return { draft, sending, error };
}
