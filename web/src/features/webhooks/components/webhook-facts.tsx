import { timestampDate } from "@bufbuild/protobuf/wkt";
import { RelativeTime, useNow } from "../../../components/relative-time";
import type { Webhook, WebhookDelivery } from "../../../gen/agents/v1/webhook_pb";
import { deliveryStatusText, outcomeText, scopeText, stateText, triedAt } from "../lib/webhooks";

// WebhookFacts is what a webhook is sent and how it fares: its events,
// whose events, its description, why it is disabled, since when its
// deliveries fail, and (unless its page lists them all) its last
// delivery, which the webhook carries.
export function WebhookFacts({ webhook: w, last = true }: { webhook: Webhook; last?: boolean }) {
  const now = useNow();
  const why = stateText(w);
  const failing = w.failingSince && timestampDate(w.failingSince);
  return (
    <dl className="facts webhook-facts">
      <dt>Events</dt>
      <dd>
        <ul className="webhook-events" aria-label="Events">
          {w.events.map((e) => (
            <li key={e}>
              <code>{e}</code>
            </li>
          ))}
        </ul>
      </dd>
      <dt>Sent</dt>
      <dd>{scopeText(w)}</dd>
      {w.description && (
        <>
          <dt>About</dt>
          <dd className="webhook-description">{w.description}</dd>
        </>
      )}
      {why && (
        <>
          <dt>State</dt>
          <dd>{why}</dd>
        </>
      )}
      {failing && (
        <>
          <dt>Failing</dt>
          <dd className="error">
            every attempt failed since <time dateTime={failing.toISOString()}>{failing.toLocaleString()}</time> (
            <RelativeTime ms={failing.getTime()} now={now} />)
          </dd>
        </>
      )}
      {last && (
        <>
          <dt>Last</dt>
          <dd>
            {w.lastDelivery ? <DeliverySummary delivery={w.lastDelivery} now={now} /> : <span className="muted">nothing delivered yet</span>}
          </dd>
        </>
      )}
    </dl>
  );
}

// DeliverySummary is a delivery in one line: "run.stopped delivered
// (HTTP 204), 2 min. ago"; "session.failed pending (HTTP 503), last
// tried 3 min. ago" while it is retried, or when it was queued before any
// attempt.
function DeliverySummary({ delivery: d, now }: { delivery: WebhookDelivery; now: number }) {
  const status = deliveryStatusText(d.status);
  const tried = triedAt(d);
  const stamp = d.delivered ?? d.created;
  const at = tried ?? (stamp && timestampDate(stamp));
  return (
    <span className="delivery-summary">
      <code>{d.kind}</code> <span className={`delivery-status status-${status}`}>{status}</span> ({outcomeText(d)})
      {at && (
        <>
          , {tried && "last tried "}
          <RelativeTime ms={at.getTime()} now={now} />
        </>
      )}
    </span>
  );
}
