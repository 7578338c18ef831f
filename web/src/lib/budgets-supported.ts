import { Code, ConnectError } from "@connectrpc/connect";
import { useQuery } from "@connectrpc/connect-query";
import { OwnerService } from "../gen/agents/v1/owner_pb";

// useOwnUsage reads the caller's own usage (GetOwnerUsage with no owner).
// The usage page shows it, and useBudgetsSupported asks the same query,
// so the shell's Usage link, the start page's budget fields and the page
// cost one call.
export function useOwnUsage(enabled = true) {
  return useQuery(OwnerService.method.getOwnerUsage, {}, { staleTime: 10_000, retry: false, enabled });
}

// useBudgetsSupported reports whether the server keeps budgets: it
// answers GetOwnerUsage for the caller, where a server without budgets
// answers unimplemented. Unknown (undefined) until it answered; the
// features that set budgets stay hidden until then, and for good on such
// a server.
export function useBudgetsSupported(enabled = true): boolean | undefined {
  const q = useOwnUsage(enabled);
  if (q.isSuccess) return true;
  if (q.isError) return !isUnimplemented(q.error);
  return undefined;
}

export function isUnimplemented(err: unknown): boolean {
  return ConnectError.from(err).code === Code.Unimplemented;
}
