import type { Webhook } from "../../../gen/agents/v1/webhook_pb";
import { errorText } from "../../../lib/error-text";
import { useEnableWebhook } from "../hooks/use-webhook-actions";
import { stateOf } from "../lib/webhooks";

// EnableToggle disables an enabled webhook and enables a disabled one
// (by its owner or by the server for failing: enabled again, its count
// of failing days starts over). The server's refusal shows beside it.
export function EnableToggle({ webhook }: { webhook: Webhook }) {
  const update = useEnableWebhook();
  const { enabled } = stateOf(webhook);
  return (
    <>
      <button
        type="button"
        className="button"
        disabled={update.isPending}
        title={enabled ? "Send it no event until it is enabled" : "Send it events again, from now on"}
        onClick={() => {
          update.reset();
          update.mutate({ webhookId: webhook.id, enabled: !enabled });
        }}
      >
        {enabled ? "Disable" : "Enable"}
      </button>
      {update.error && (
        <span role="alert" className="error">
          {errorText(update.error)}
        </span>
      )}
    </>
  );
}
