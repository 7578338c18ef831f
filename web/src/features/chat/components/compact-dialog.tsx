import { useState, type FormEvent } from "react";
import { Dialog } from "../../../components/dialog";
import type { CompactResponse } from "../../../gen/agents/v1/session_service_pb";
import { errorText } from "../../../lib/error-text";

interface Props {
  open: boolean;
  onClose: () => void;
  // compact calls Compact with the instruction ("" for none).
  compact: (instruction: string) => Promise<CompactResponse>;
}

// CompactDialog compacts the session now, with an optional instruction
// for the summary. A session with no run answers once the compaction is
// stored: the dialog closes and the marker shows in the conversation. A
// running one compacts before its next step, which the dialog says.
export function CompactDialog({ open, onClose, compact }: Props) {
  return (
    <Dialog open={open} onClose={onClose} title="Compact the session" className="compact-dialog">
      {open && <CompactForm onClose={onClose} compact={compact} />}
    </Dialog>
  );
}

function CompactForm({ onClose, compact }: Omit<Props, "open">) {
  const [instruction, setInstruction] = useState("");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string>();
  const [pending, setPending] = useState(false);

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setBusy(true);
    setFailure(undefined);
    try {
      const res = await compact(instruction.trim());
      if (res.pending) setPending(true);
      else onClose();
    } catch (err) {
      setFailure(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  if (pending) {
    return (
      <>
        <p role="status">The run is under way: the session will compact before the next step.</p>
        <div className="actions">
          <button type="button" className="button primary" onClick={onClose} autoFocus>
            OK
          </button>
        </div>
      </>
    );
  }
  return (
    <form onSubmit={submit} aria-label="Compact the session">
      <p className="muted">
        From now on the model is sent a summary of the older turns instead of the turns themselves, and old long tool results as short
        stubs. Nothing is deleted: the turns stay in the conversation as they are.
      </p>
      <label>
        What the summary must keep (optional)
        <textarea
          value={instruction}
          rows={3}
          maxLength={2000}
          placeholder="keep the API names"
          onChange={(e) => setInstruction(e.target.value)}
          autoFocus
        />
      </label>
      {failure && (
        <p role="alert" className="error">
          Could not compact: {failure}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? "Compacting…" : "Compact"}
        </button>
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
