import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { WebhookService } from "../../../gen/agents/v1/webhook_pb";

// useRefreshWebhooks is what makes every webhooks query ask again: the
// list, a webhook, its deliveries.
export function useRefreshWebhooks(): () => Promise<void> {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema: WebhookService, cardinality: undefined }) });
}

// useEnableWebhook enables or disables a webhook (UpdateWebhook with
// enabled); done, every webhooks query asks again.
export function useEnableWebhook() {
  const refresh = useRefreshWebhooks();
  return useMutation(WebhookService.method.updateWebhook, { onSuccess: () => void refresh() });
}
