import type { Attachment } from "../../../gen/agents/v1/session_pb";
import { attachmentSize } from "../lib/attachments";
import { formatBytes } from "../lib/format";

// AttachmentChips lists files about to be sent, each removable.
export function AttachmentChips({ attachments, onRemove, label = "Attachments" }: { attachments: Attachment[]; onRemove?: (i: number) => void; label?: string }) {
  if (attachments.length === 0) return null;
  return (
    <ul className="chips" aria-label={label}>
      {attachments.map((a, i) => (
        <li key={`${a.name}-${i}`} className="chip">
          <span>{a.name}</span> <span className="muted">{formatBytes(attachmentSize(a))}</span>
          {onRemove && (
            <button type="button" className="chip-remove" aria-label={`Remove ${a.name}`} onClick={() => onRemove(i)}>
              ×
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}
