import { ConnectError } from "@connectrpc/connect";

// errorText is what to tell the user of a failed call.
export function errorText(err: unknown): string {
  if (err instanceof ConnectError) return err.rawMessage || err.message;
  return err instanceof Error ? err.message : String(err);
}
