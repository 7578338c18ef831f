import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { create } from "@bufbuild/protobuf";
import { ListWebhooksResponseSchema, WebhookService, type ListWebhooksResponse } from "../../../gen/agents/v1/webhook_pb";

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

// useForgetWebhook is what a deleted webhook leaves: it goes from every
// list at once, and only the lists are read again; its own queries (its
// page, its deliveries) are not, for the server knows it no more and
// would answer not found.
export function useForgetWebhook(): (id: string) => Promise<void> {
  const queryClient = useQueryClient();
  return (id) => {
    const lists = createConnectQueryKey({ schema: WebhookService.method.listWebhooks, cardinality: undefined });
    queryClient.setQueriesData<ListWebhooksResponse>({ queryKey: lists }, (old) =>
      old ? create(ListWebhooksResponseSchema, { webhooks: old.webhooks.filter((w) => w.id !== id) }) : old,
    );
    return queryClient.invalidateQueries({ queryKey: lists });
  };
}
