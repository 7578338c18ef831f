import type { Webhook } from "../../../gen/agents/v1/webhook_pb";
import { stateOf } from "../lib/webhooks";

// WebhookState says whether a webhook is sent events (enabled), was
// disabled by its owner, or by the server for failing, in a word beside
// a mark, so it never depends on colour alone.
export function WebhookState({ webhook }: { webhook: Webhook }) {
  const { word } = stateOf(webhook);
  return (
    <span className={`webhook-state state-${word}`}>
      <span className="webhook-state-dot" aria-hidden="true" />
      {word}
    </span>
  );
}
