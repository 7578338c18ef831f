import { useMutation } from "@connectrpc/connect-query";
import { Dialog } from "../../../components/dialog";
import { WebhookService, type Webhook } from "../../../gen/agents/v1/webhook_pb";
import { errorText } from "../../../lib/error-text";
import { useForgetWebhook } from "../hooks/use-webhook-actions";

interface Props {
  webhook: Webhook;
  onClose: () => void;
  onDeleted?: () => void;
}

// DeleteWebhookDialog confirms deleting a webhook: it and its delivery
// log go; a delivery already under way may still arrive.
export function DeleteWebhookDialog({ webhook, onClose, onDeleted }: Props) {
  const forget = useForgetWebhook();
  const del = useMutation(WebhookService.method.deleteWebhook, {
    onSuccess: async () => {
      onDeleted?.();
      onClose();
      await forget(webhook.id);
    },
  });
  return (
    <Dialog open onClose={onClose} title="Delete the webhook?" className="confirm">
      <p className="webhook-url">{webhook.url}</p>
      <p>It is sent no more events, and its delivery log is forgotten. A delivery already under way may still arrive.</p>
      {del.error && (
        <p role="alert" className="error">
          Could not delete the webhook: {errorText(del.error)}
        </p>
      )}
      <div className="actions">
        <button type="button" className="button" onClick={onClose} autoFocus>
          Cancel
        </button>
        <button type="button" className="button danger" disabled={del.isPending} onClick={() => del.mutate({ webhookId: webhook.id })}>
          Delete the webhook
        </button>
      </div>
    </Dialog>
  );
}
