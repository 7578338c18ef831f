import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useEffect, useState } from "react";
import { Link } from "react-router";
import { MailPriority, type MailEnvelope } from "../../../gen/agents/v1/mail_pb";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { errorText } from "../../../lib/error-text";
import { useEventStream } from "../../../lib/event-stream-context";
import { mailText, senderOf } from "../lib/format";

// MailTab is the session's mailbox: every piece of mail or only the
// pending ones, newest first, and, unless the session is read-only, a
// form to send it mail.
export function MailTab({ sessionId, readOnly }: { sessionId: string; readOnly?: boolean }) {
  const [pendingOnly, setPendingOnly] = useState(false);
  const list = useQuery(SessionService.method.listMail, { sessionId, pendingOnly });
  const stream = useEventStream();
  const { refetch } = list;
  useEffect(
    () =>
      stream.on((u) => {
        const ev = u.event;
        if (u.snapshot || (ev && ev.sessionId === sessionId && (ev.body.case === "mailAccepted" || ev.body.case === "mailRejected" || ev.body.case === "sessionUpdated"))) void refetch();
      }),
    [stream, sessionId, refetch],
  );
  const mail = list.data?.mail ?? [];
  return (
    <section className="mail-tab" aria-label="Mail">
      {!readOnly && <SendMailForm sessionId={sessionId} onSent={() => void refetch()} />}
      <div className="row" role="radiogroup" aria-label="Which mail">
        <label>
          <input type="radio" name="mail-filter" checked={!pendingOnly} onChange={() => setPendingOnly(false)} /> All
        </label>
        <label>
          <input type="radio" name="mail-filter" checked={pendingOnly} onChange={() => setPendingOnly(true)} /> Pending
        </label>
      </div>
      {list.error && (
        <p role="alert" className="error-text">
          {errorText(list.error)}
        </p>
      )}
      {list.isPending ? (
        <p className="muted">Loading mail…</p>
      ) : mail.length === 0 ? (
        <p className="muted">{pendingOnly ? "No mail waiting." : "No mail yet."}</p>
      ) : (
        <ul className="mail-list" aria-label="Mail list">
          {mail.map((m) => (
            <MailRow key={m.id} m={m} />
          ))}
        </ul>
      )}
    </section>
  );
}

function MailRow({ m }: { m: MailEnvelope }) {
  const from = senderOf(m);
  const when = m.createTime ? new Date(Number(m.createTime.seconds) * 1000) : undefined;
  return (
    <li className="mail">
      <p className="mail-from">
        {from.session ? <Link to={`/sessions/${from.session}`}>{from.label}</Link> : from.label}
        {m.priority === MailPriority.URGENT && <span className="badge badge-failed">urgent</span>}
        <span className={`badge ${m.deliverTime ? "badge-ready" : "badge-waiting"}`}>{m.deliverTime ? "delivered" : "pending"}</span>
        {when && <time dateTime={when.toISOString()} className="muted">{when.toLocaleString()}</time>}
      </p>
      <p className="mail-text">{mailText(m)}</p>
    </li>
  );
}

function SendMailForm({ sessionId, onSent }: { sessionId: string; onSent: () => void }) {
  const [text, setText] = useState("");
  const [urgent, setUrgent] = useState(false);
  const send = useMutation(SessionService.method.sendMail, {
    onSuccess: () => {
      setText("");
      onSent();
    },
  });
  return (
    <form
      className="send-mail"
      aria-label="Send mail"
      onSubmit={(e) => {
        e.preventDefault();
        if (!text.trim()) return;
        send.mutate({
          sessionId,
          body: { kind: { case: "userMessage", value: { text: text.trim() } } },
          priority: urgent ? MailPriority.URGENT : MailPriority.NORMAL,
        });
      }}
    >
      <textarea aria-label="Mail text" rows={2} value={text} onChange={(e) => setText(e.target.value)} />
      <div className="row">
        <label>
          <input type="checkbox" checked={urgent} onChange={(e) => setUrgent(e.target.checked)} /> Urgent (interrupts the step in flight)
        </label>
        <button type="submit" className="primary" disabled={send.isPending || !text.trim()}>
          Send mail
        </button>
      </div>
      {send.error && (
        <p role="alert" className="error-text">
          {errorText(send.error)}
        </p>
      )}
    </form>
  );
}
