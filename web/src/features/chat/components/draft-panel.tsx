import { useState } from "react";
import { drafts, isEmpty } from "../lib/draft-store";
import { firstLine } from "../lib/format";
import { useDraft } from "../hooks/use-draft";
import { AttachmentChips } from "./attachment-chips";

// DraftPanel is the session's draft: what was sent while the run was
// busy, one message being elaborated. Collapsed it shows the first line
// and the size; expanded it is editable. It is posted whole when the run
// stops in a status that accepts input, or at once with Send now.
export function DraftPanel({ sessionId, paused }: { sessionId: string; paused: boolean }) {
  const { draft, sending, error } = useDraft(sessionId);
  const [open, setOpen] = useState(false);
  if (draft.text === "" && draft.attachments.length === 0 && !sending && !error) return null;
  const size = `${draft.text.length} character${draft.text.length === 1 ? "" : "s"}${draft.attachments.length ? `, ${draft.attachments.length} file${draft.attachments.length === 1 ? "" : "s"}` : ""}`;
  return (
    <section className="draft" role="region" aria-label="Draft">
      <header className="draft-head">
        <strong>Draft</strong>
        <span className="muted">{sending ? "sending…" : paused ? "kept while the session is paused" : "sent when the run stops"}</span>
        <span className="spacer" />
        <button type="button" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
          {open ? "Collapse" : "Edit"}
        </button>
        <button type="button" onClick={() => void drafts.send(sessionId)} disabled={sending || isEmpty(draft)}>
          Send now
        </button>
        <button type="button" onClick={() => drafts.clear(sessionId)} disabled={sending}>
          Clear
        </button>
      </header>
      {error && (
        <p role="alert" className="error-text">
          The draft could not be sent: {error}
        </p>
      )}
      {open ? (
        <>
          <textarea aria-label="Draft text" className="draft-input" rows={4} value={draft.text} onChange={(e) => drafts.setText(sessionId, e.target.value)} />
          <AttachmentChips attachments={draft.attachments} label="Draft attachments" onRemove={(i) => drafts.removeAttachment(sessionId, i)} />
        </>
      ) : (
        <p className="draft-summary">
          <span>{firstLine(draft.text)}</span> <span className="muted">({size})</span>
        </p>
      )}
    </section>
  );
}
