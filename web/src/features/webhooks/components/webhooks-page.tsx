import { useQuery } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { Link } from "react-router";
import { WebhookService, type Webhook } from "../../../gen/agents/v1/webhook_pb";
import { errorText } from "../../../lib/error-text";
import { useAdmin } from "../../../lib/event-stream-context";
import { newWebhookPath, webhookPath } from "../../../lib/paths";
import { DeleteWebhookDialog } from "./delete-webhook-dialog";
import { EnableToggle } from "./enable-toggle";
import { WebhookFacts } from "./webhook-facts";
import { WebhookState } from "./webhook-state";
import "./webhooks.css";

// How often the list is read again on its own, so each webhook's last
// delivery keeps up and one the server disabled for failing says so
// without a reload. Each webhook carries its last delivery: the list is
// one request, however many webhooks it has.
const refreshMs = 15_000;

// WebhooksPage lists the caller's webhooks, oldest first (an admin may
// list every owner's): the URL each is sent to, its events, its state
// with why it is disabled, and its last delivery; enable or disable,
// its deliveries and delete. New webhook registers another.
export function WebhooksPage() {
  const admin = useAdmin();
  const [everyOwner, setEveryOwner] = useState(false);
  const allOwners = everyOwner && !!admin;
  const q = useQuery(WebhookService.method.listWebhooks, { allOwners }, { refetchInterval: refreshMs });
  const heading = useId();
  const [deleting, setDeleting] = useState<Webhook>();
  const webhooks = q.data?.webhooks ?? [];
  return (
    <section className="page-content webhooks-page" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>Webhooks</h1>
        <Link to={newWebhookPath} className="button primary">
          New webhook
        </Link>
      </header>
      <p className="muted">A webhook is an HTTP endpoint the server POSTs chosen events to as they happen, signed with its secret.</p>
      {admin && (
        <div className="field check">
          <input id={`${heading}-all`} type="checkbox" checked={everyOwner} onChange={(e) => setEveryOwner(e.target.checked)} />
          <label htmlFor={`${heading}-all`}>Every owner's webhooks</label>
        </div>
      )}
      {q.isPending ? (
        <p>Loading webhooks…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the webhooks: {errorText(q.error)}
        </p>
      ) : webhooks.length === 0 ? (
        <p>No webhooks yet: register one to have the server POST events such as a run's stop to it.</p>
      ) : (
        <ul className="webhook-list" aria-label="Webhooks">
          {webhooks.map((w) => (
            <WebhookItem key={w.id} webhook={w} showOwner={allOwners} onDelete={() => setDeleting(w)} />
          ))}
        </ul>
      )}
      {deleting && <DeleteWebhookDialog webhook={deleting} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

function WebhookItem({ webhook: w, showOwner, onDelete }: { webhook: Webhook; showOwner: boolean; onDelete: () => void }) {
  const name = useId();
  return (
    <li aria-labelledby={name}>
      <div className="webhook-head">
        <Link id={name} to={webhookPath(w.id)} className="webhook-url">
          {w.url}
        </Link>
        <WebhookState webhook={w} />
        {showOwner && w.owner && <span className="muted">{w.owner}</span>}
      </div>
      <WebhookFacts webhook={w} />
      <div className="page-actions webhook-actions">
        <EnableToggle webhook={w} />
        <Link to={webhookPath(w.id)} className="button">
          Deliveries
        </Link>
        <button type="button" className="button danger" onClick={onDelete}>
          Delete
        </button>
      </div>
    </li>
  );
}
