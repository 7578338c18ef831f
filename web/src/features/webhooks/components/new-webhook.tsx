import { useMutation } from "@connectrpc/connect-query";
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import { Link } from "react-router";
import { WebhookService, type Webhook } from "../../../gen/agents/v1/webhook_pb";
import { useAdmin } from "../../../lib/event-stream-context";
import { webhookPath, webhooksPath } from "../../../lib/paths";
import { useRefreshWebhooks } from "../hooks/use-webhook-actions";
import { createRequest, emptyForm, refusalOf, webhookEvents, type FieldError, type FormField, type WebhookForm } from "../lib/webhooks";
import "./webhooks.css";

// NewWebhookPage registers a webhook: the form, then, once the server
// made it, its secret, shown this once.
export function NewWebhookPage() {
  const [made, setMade] = useState<{ webhook: Webhook; secret: string }>();
  return made ? <SecretOnce webhook={made.webhook} secret={made.secret} /> : <WebhookEditor onCreated={setMade} />;
}

// WebhookEditor is the form of a new webhook: its URL, the events it is
// sent, a description, and for an admin whether it is sent every
// owner's events. A field the server refuses (a private address, a
// scheme it does not send to) is marked, its reason beside it.
function WebhookEditor({ onCreated }: { onCreated: (made: { webhook: Webhook; secret: string }) => void }) {
  const admin = useAdmin();
  const refresh = useRefreshWebhooks();
  const heading = useId();
  const [form, setForm] = useState<WebhookForm>(emptyForm);
  const [error, setError] = useState<FieldError>();
  const formRef = useRef<HTMLFormElement>(null);
  const create = useMutation(WebhookService.method.createWebhook, {
    onSuccess: async (res) => {
      if (res.webhook) onCreated({ webhook: res.webhook, secret: res.secret });
      await refresh();
    },
    onError: (err) => show(refusalOf(err)),
  });

  // show marks a refusal at its field and takes the focus there; one of
  // a field the form does not show is said above the buttons.
  const show = (e: FieldError) => {
    if (e.field === "serverWide" && !admin && !form.serverWide) e = { message: e.message };
    setError(e);
    if (e.field) requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>(`[name="${e.field}"]`)?.focus());
  };
  const set = <K extends keyof WebhookForm>(k: K, v: WebhookForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    if (error?.field === k) setError(undefined);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = createRequest(form);
    if ("error" in r) return show(r.error);
    setError(undefined);
    create.mutate(r.request);
  };

  const id = (field: FormField) => `${heading}-${field}`;
  const errorId = (field: FormField) => `${heading}-${field}-error`;
  const bad = (field: FormField) => error?.field === field;
  const described = (field: FormField, hint?: boolean) => ({
    name: field,
    "aria-invalid": bad(field) || undefined,
    "aria-describedby": [bad(field) ? errorId(field) : "", hint ? `${id(field)}-hint` : ""].filter(Boolean).join(" ") || undefined,
  });
  const fieldError = (field: FormField) =>
    bad(field) && (
      <p id={errorId(field)} role="alert" className="error field-error">
        {error!.message}
      </p>
    );

  return (
    <section className="page-content webhook-editor" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>New webhook</h1>
      </header>
      <form ref={formRef} onSubmit={submit} aria-labelledby={heading} noValidate>
        <Field label="URL" id={id("url")} hint="The http or https address the server POSTs each event to, as JSON, signed with the webhook's secret." error={fieldError("url")}>
          <input
            id={id("url")}
            type="text"
            inputMode="url"
            autoComplete="off"
            spellCheck={false}
            placeholder="https://ops.example.com/agents"
            value={form.url}
            onChange={(e) => set("url", e.target.value)}
            {...described("url", true)}
          />
        </Field>

        <fieldset aria-describedby={bad("events") ? errorId("events") : undefined}>
          <legend>Events</legend>
          {webhookEvents.map((ev, i) => (
            <div key={ev.name} className="field check">
              <input
                id={`${id("events")}-${ev.name}`}
                type="checkbox"
                // The first box is where a refusal of the events takes
                // the focus.
                name={i === 0 ? "events" : undefined}
                checked={form.events.includes(ev.name)}
                aria-invalid={bad("events") || undefined}
                onChange={(e) => set("events", e.target.checked ? [...form.events, ev.name] : form.events.filter((n) => n !== ev.name))}
              />
              <label htmlFor={`${id("events")}-${ev.name}`}>
                <code>{ev.name}</code> <span className="muted">{ev.description}</span>
              </label>
            </div>
          ))}
          {fieldError("events")}
        </fieldset>

        <Field label="Description (optional)" id={id("description")} error={fieldError("description")}>
          <input id={id("description")} type="text" autoComplete="off" value={form.description} onChange={(e) => set("description", e.target.value)} {...described("description")} />
        </Field>

        {(admin || form.serverWide) && (
          <div className="field check with-hint">
            <input id={id("serverWide")} type="checkbox" checked={form.serverWide} onChange={(e) => set("serverWide", e.target.checked)} {...described("serverWide", true)} />
            <label htmlFor={id("serverWide")}>Server-wide</label>
            <p id={`${id("serverWide")}-hint`} className="muted">
              Sent every owner's events, not only yours (an admin's to choose).
            </p>
            {fieldError("serverWide")}
          </div>
        )}

        {error && !error.field && (
          <p role="alert" className="error">
            Could not create the webhook: {error.message}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="button primary" disabled={create.isPending}>
            {create.isPending ? "Creating…" : "Create the webhook"}
          </button>
          <Link to={webhooksPath} className="button">
            Cancel
          </Link>
        </div>
      </form>
    </section>
  );
}

// SecretOnce shows a new webhook's signing secret, which no later
// answer carries: copy it now, or make the webhook again.
function SecretOnce({ webhook, secret }: { webhook: Webhook; secret: string }) {
  const heading = useId();
  const [copied, setCopied] = useState<"copied" | "failed">();
  const field = useRef<HTMLInputElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  // The page changed under the button pressed: the focus goes to what
  // it says now.
  useEffect(() => headingRef.current?.focus(), []);
  const copy = () => {
    field.current?.select();
    const written = navigator.clipboard?.writeText(secret);
    if (!written) return setCopied("failed");
    written.then(
      () => setCopied("copied"),
      () => setCopied("failed"),
    );
  };
  return (
    <section className="page-content webhook-created" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading} ref={headingRef} tabIndex={-1}>
          Webhook created
        </h1>
      </header>
      <p className="webhook-url">{webhook.url}</p>
      <div className="secret-once" role="region" aria-labelledby={`${heading}-secret`}>
        <h2 id={`${heading}-secret`}>Its signing secret</h2>
        <p>
          <strong>Copy it now: you will not see it again.</strong> The server shows it only in this answer; a receiver checks each request's{" "}
          <code>webhook-signature</code> with it.
        </p>
        <div className="secret-row">
          <label htmlFor={`${heading}-value`} className="visually-hidden">
            Secret
          </label>
          <input id={`${heading}-value`} ref={field} className="secret-value" type="text" readOnly value={secret} spellCheck={false} onFocus={(e) => e.target.select()} />
          <button type="button" className="button primary" onClick={copy}>
            Copy
          </button>
        </div>
        <p role="status" className="muted">
          {copied === "copied" ? "Copied to the clipboard." : copied === "failed" ? "Could not copy: select the secret and copy it yourself." : ""}
        </p>
      </div>
      <div className="actions">
        <Link to={webhookPath(webhook.id)} className="button">
          Its deliveries
        </Link>
        <Link to={webhooksPath} className="button">
          All webhooks
        </Link>
      </div>
    </section>
  );
}

function Field({ label, id, hint, error, children }: { label: string; id: string; hint?: string; error: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && (
        <p id={`${id}-hint`} className="muted">
          {hint}
        </p>
      )}
      {error}
    </div>
  );
}
