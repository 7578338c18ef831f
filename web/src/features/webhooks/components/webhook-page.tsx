import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { RelativeTime, useNow } from "../../../components/relative-time";
import { DeliveryStatus, WebhookService, type Webhook, type WebhookDelivery } from "../../../gen/agents/v1/webhook_pb";
import { errorText } from "../../../lib/error-text";
import { sessionPath, webhooksPath } from "../../../lib/paths";
import { deliveryStatusText, dueText, triedAt } from "../lib/webhooks";
import { DeleteWebhookDialog } from "./delete-webhook-dialog";
import { EnableToggle } from "./enable-toggle";
import { WebhookFacts } from "./webhook-facts";
import { WebhookState } from "./webhook-state";
import "./webhooks.css";

// How many deliveries the log shows, newest first.
const logLimit = 100;

// How often the log is read again: often while a delivery waits for its
// next attempt, less so once every one has ended (a new event's delivery
// shows within that). The webhook itself is read as often, so its
// failing mark comes and goes with its deliveries.
const pendingRefreshMs = 5_000;
const idleRefreshMs = 10_000;

// WebhookPage is one webhook: where it is sent, what, its state, enable
// or disable and delete, and its deliveries, newest first, read again
// as they go on.
export function WebhookPage() {
  const { id = "" } = useParams();
  const navigate = useNavigate();
  const heading = useId();
  // Once deleted, the webhook is not read again: it is gone.
  const [gone, setGone] = useState(false);
  const q = useQuery(
    WebhookService.method.getWebhook,
    { webhookId: id },
    { enabled: !gone, refetchInterval: (query) => (query.state.data?.webhook?.failingSince ? pendingRefreshMs : idleRefreshMs) },
  );
  const [deleting, setDeleting] = useState(false);
  const w = q.data?.webhook;
  return (
    <article className="page-content webhook-page" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading} className="webhook-url">
          {w ? w.url : "Webhook"}
        </h1>
        {w && <WebhookState webhook={w} />}
      </header>
      <p>
        <Link to={webhooksPath}>All webhooks</Link>
      </p>
      {q.isPending ? (
        <p>Loading…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the webhook: {errorText(q.error)}
        </p>
      ) : w ? (
        <>
          <div className="page-actions" role="toolbar" aria-label="Webhook actions">
            <EnableToggle webhook={w} />
            <button type="button" className="button danger" onClick={() => setDeleting(true)}>
              Delete
            </button>
          </div>
          <WebhookFacts webhook={w} last={false} />
          <Deliveries webhook={w} enabled={!gone} />
        </>
      ) : null}
      {deleting && w && (
        <DeleteWebhookDialog
          webhook={w}
          onClose={() => setDeleting(false)}
          onDeleted={() => {
            setGone(true);
            navigate(webhooksPath);
          }}
        />
      )}
    </article>
  );
}

// The log's filter: every delivery, or those of one status.
const filters: { label: string; status: DeliveryStatus }[] = [
  { label: "all", status: DeliveryStatus.UNSPECIFIED },
  { label: "pending", status: DeliveryStatus.PENDING },
  { label: "delivered", status: DeliveryStatus.DELIVERED },
  { label: "failed", status: DeliveryStatus.FAILED },
];

// Deliveries is a webhook's delivery log, newest first: each event, where
// its delivery stands and since when (delivered, or last tried), its
// attempts, the last answer's HTTP status and error, and when the next
// attempt is due.
function Deliveries({ webhook, enabled }: { webhook: Webhook; enabled: boolean }) {
  const heading = useId();
  const [status, setStatus] = useState(DeliveryStatus.UNSPECIFIED);
  const q = useQuery(
    WebhookService.method.listWebhookDeliveries,
    { webhookId: webhook.id, status, limit: logLimit },
    { enabled, refetchInterval: (query) => ((query.state.data?.deliveries ?? []).some((d) => d.status === DeliveryStatus.PENDING) ? pendingRefreshMs : idleRefreshMs) },
  );
  const now = useNow();
  const deliveries = q.data?.deliveries ?? [];
  return (
    <section aria-labelledby={heading}>
      <div className="deliveries-head">
        <h2 id={heading}>Deliveries</h2>
        <label className="deliveries-filter">
          Show{" "}
          <select value={status} onChange={(e) => setStatus(Number(e.target.value) as DeliveryStatus)}>
            {filters.map((f) => (
              <option key={f.status} value={f.status}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {q.isPending ? (
        <p>Loading…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the deliveries: {errorText(q.error)}
        </p>
      ) : deliveries.length === 0 ? (
        <p className="muted">
          {status === DeliveryStatus.UNSPECIFIED ? "No delivery yet: it is sent the events that happen after it was registered." : `No ${deliveryStatusText(status)} delivery.`}
        </p>
      ) : (
        <div className="table-scroll">
          <table className="deliveries-table" aria-labelledby={heading}>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col">Attempts</th>
                <th scope="col">HTTP status</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <DeliveryRow key={d.id} delivery={d} now={now} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

// shortId is the start of a long id, enough to tell sessions apart in a
// narrow column; the link's title and name carry it whole.
function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

function DeliveryRow({ delivery: d, now }: { delivery: WebhookDelivery; now: number }) {
  const created = d.created && timestampDate(d.created);
  const delivered = d.delivered && timestampDate(d.delivered);
  const next = d.nextAttempt && timestampDate(d.nextAttempt);
  const tried = triedAt(d);
  const status = deliveryStatusText(d.status);
  return (
    <tr>
      <td>
        <code>{d.kind}</code> <span className="muted">#{d.seq.toString()}</span>
        {created && (
          <div className="muted">
            queued <RelativeTime ms={created.getTime()} now={now} />
          </div>
        )}
        {d.sessionId && (
          <div>
            <Link to={sessionPath(d.sessionId)} title={d.sessionId} aria-label={`session ${d.sessionId}`}>
              {shortId(d.sessionId)}
            </Link>
          </div>
        )}
      </td>
      <td>
        <span className={`delivery-status status-${status}`}>{status}</span>
        {delivered && (
          <div className="muted">
            <RelativeTime ms={delivered.getTime()} now={now} />
          </div>
        )}
        {tried && (
          <div className="muted">
            last tried <RelativeTime ms={tried.getTime()} now={now} />
          </div>
        )}
        {/* An error that is only the status is in its own column. */}
        {d.lastError && d.lastError !== `HTTP ${d.lastStatusCode}` && <div className="delivery-error">{d.lastError}</div>}
      </td>
      <td>{d.attempts}</td>
      <td>{d.lastStatusCode ? d.lastStatusCode : <span className="muted">{d.attempts ? "no answer" : "none"}</span>}</td>
      <td>
        {d.status === DeliveryStatus.PENDING && next ? (
          <>
            {dueText(next.getTime(), now) ?? <RelativeTime ms={next.getTime()} now={now} />}
            <div className="muted">
              <time dateTime={next.toISOString()}>{next.toLocaleTimeString()}</time>
            </div>
          </>
        ) : (
          <span className="muted">none</span>
        )}
      </td>
    </tr>
  );
}
