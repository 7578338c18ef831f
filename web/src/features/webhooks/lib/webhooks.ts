// The webhooks pages' words: the events a webhook may be sent, a
// webhook's state and a delivery's, the new-webhook form's request, and
// which field of the form a refusal of the server's belongs to.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";
import {
  DeliveryStatus,
  WebhookStatus,
  type CreateWebhookRequestSchema,
  type Webhook,
  type WebhookDelivery,
} from "../../../gen/agents/v1/webhook_pb";

// webhookEvents are the names the server accepts in a webhook's events,
// in its order, each with what it is sent for (docs/webhooks.md).
export const webhookEvents: readonly { name: string; description: string }[] = [
  { name: "run.stopped", description: "a run ended without failing, whatever its reason" },
  { name: "run.failed", description: "a run failed" },
  { name: "call.waiting", description: "a run waits for a client tool's answer or an approval" },
  { name: "budget.exceeded", description: "a run stopped at its budget" },
  { name: "session.idle", description: "a run stopped and its session waits for input" },
  { name: "schedule.fired", description: "a schedule started a session or posted to one" },
  { name: "agent.changed", description: "the agents were reloaded, or a stored agent changed" },
];

// WebhookForm is the new-webhook form as the page holds it.
export interface WebhookForm {
  url: string;
  events: string[];
  description: string;
  // Sent every owner's events (an admin's to ask for).
  serverWide: boolean;
}

export type FormField = "url" | "events" | "description" | "serverWide";

export interface FieldError {
  // The field to mark; none for a refusal the form has no field for.
  field?: FormField;
  message: string;
}

export function emptyForm(): WebhookForm {
  return { url: "", events: ["run.stopped", "run.failed"], description: "", serverWide: false };
}

type CreateRequest = MessageInitShape<typeof CreateWebhookRequestSchema>;

// createRequest is the request the form makes, or the first field to
// fill before anything is sent. The server checks the rest (the URL's
// scheme and address) and names the field it refuses.
export function createRequest(f: WebhookForm): { request: CreateRequest } | { error: FieldError } {
  const url = f.url.trim();
  if (!url) return { error: { field: "url", message: "Give the http or https URL the events are POSTed to." } };
  if (f.events.length === 0) return { error: { field: "events", message: "Pick at least one event." } };
  const events = webhookEvents.map((e) => e.name).filter((n) => f.events.includes(n));
  const req: CreateRequest = { url, events };
  if (f.description.trim()) req.description = f.description.trim();
  if (f.serverWide) req.serverWide = true;
  return { request: req };
}

// The names a refusal may give a field by, to the form's.
const fieldNames: Record<string, FormField> = {
  url: "url",
  events: "events",
  description: "description",
  server_wide: "serverWide",
  serverWide: "serverWide",
};

// refusalOf is where a failed CreateWebhook belongs: the field the
// server named (the error detail's `field`, else the word its message
// starts with: "url: …", "events: …", "description is …"); a refused
// server-wide webhook at its box; or none.
export function refusalOf(err: unknown): FieldError {
  const e = ConnectError.from(err);
  const message = e.rawMessage || e.message;
  if (e.code === Code.PermissionDenied && /server-wide/i.test(message)) return { field: "serverWide", message };
  if (e.code === Code.InvalidArgument) {
    const named = e.findDetails(ErrorDetailSchema).find((d) => d.metadata.field)?.metadata.field ?? /^([A-Za-z_]+)\b/.exec(message)?.[1];
    const field = named ? fieldNames[named] : undefined;
    if (field) return { field, message };
  }
  return { message };
}

// stateOf is a webhook's state in a word, and whether it is sent events.
export function stateOf(w: Webhook): { word: "enabled" | "disabled" | "failing"; enabled: boolean } {
  switch (w.status) {
    case WebhookStatus.ENABLED:
      return { word: "enabled", enabled: true };
    case WebhookStatus.FAILING:
      return { word: "failing", enabled: false };
    default:
      return { word: "disabled", enabled: false };
  }
}

// stateText says why a webhook is not sent events, or undefined while
// it is.
export function stateText(w: Webhook): string | undefined {
  switch (w.status) {
    case WebhookStatus.ENABLED:
      return undefined;
    case WebhookStatus.FAILING:
      return `Disabled by the server: ${w.statusReason || "every attempt to deliver to it failed for too long"}. Enable it to start again.`;
    default:
      return "Disabled: it is sent no event until it is enabled.";
  }
}

// deliveryStatusText is where a delivery stands, in a word.
export function deliveryStatusText(s: DeliveryStatus): string {
  switch (s) {
    case DeliveryStatus.PENDING:
      return "pending";
    case DeliveryStatus.DELIVERED:
      return "delivered";
    case DeliveryStatus.FAILED:
      return "failed";
    default:
      return "unknown";
  }
}

// outcomeText is what the last attempt of a delivery got: the endpoint's
// HTTP status, what went wrong, or that none was made yet.
export function outcomeText(d: WebhookDelivery): string {
  if (d.attempts === 0) return "not attempted yet";
  const code = d.lastStatusCode ? `HTTP ${d.lastStatusCode}` : "";
  // The server's error may name the status itself ("HTTP 500").
  if (d.lastError) return code && !d.lastError.includes(String(d.lastStatusCode)) ? `${code}: ${d.lastError}` : d.lastError;
  return code || "no answer";
}

// triedAt is when a delivery not delivered was last tried, undefined
// before any attempt (or when its attempts were made before servers
// timed them). A delivered one's last attempt is its delivered time,
// which says as much.
export function triedAt(d: WebhookDelivery): Date | undefined {
  if (d.status === DeliveryStatus.DELIVERED || !d.lastAttempt) return undefined;
  return timestampDate(d.lastAttempt);
}

const seconds = new Intl.RelativeTimeFormat(undefined, { numeric: "always", style: "narrow" });

// dueText says when a next attempt is due, to the second while it is
// under a minute away (retries start seconds apart); undefined past that,
// for the app's relative time to say.
export function dueText(ms: number, now: number): string | undefined {
  const ahead = Math.round((ms - now) / 1000);
  if (ahead <= 0) return "due now";
  if (ahead < 60) return seconds.format(ahead, "second");
  return undefined;
}

// attemptsText counts a delivery's attempts.
export function attemptsText(n: number): string {
  return n === 1 ? "1 attempt" : `${n} attempts`;
}

// scopeText says whose events a webhook is sent.
export function scopeText(w: Webhook): string {
  return w.serverWide ? "every owner's events" : w.owner ? `its owner's events (${w.owner})` : "its owner's events";
}
