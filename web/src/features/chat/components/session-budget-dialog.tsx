import { useRef, useState, type FormEvent } from "react";
import { BudgetMeter } from "../../../components/budget-meter";
import { Dialog } from "../../../components/dialog";
import { LimitsFields } from "../../../components/limits-fields";
import type { SessionMeta } from "../../../gen/agents/v1/session_pb";
import { budgetOf, fieldsOf, isFieldError, parseLimits, type FieldError, type LimitFields } from "../../../lib/budget";
import { errorText } from "../../../lib/error-text";
import type { Stop } from "../lib/tree-budget";

interface Props {
  open: boolean;
  meta: SessionMeta;
  stop: Stop;
  onClose: () => void;
  // save sets the tree's budget (UpdateSession on the tree's root), then,
  // when resume is asked, resumes this session's run.
  save: (budget: ReturnType<typeof budgetOf>, resume: boolean) => Promise<void>;
}

// SessionBudgetDialog sets the budget of the session's tree: the session
// and every helper session under it spend it together. After a run
// stopped at the budget, "Save and resume" raises it and goes on.
export function SessionBudgetDialog({ open, meta, stop, onClose, save }: Props) {
  return (
    <Dialog open={open} onClose={onClose} title="Session budget" className="budget-dialog">
      {open && <BudgetForm meta={meta} stop={stop} onClose={onClose} save={save} />}
    </Dialog>
  );
}

function BudgetForm({ meta, stop, onClose, save }: Omit<Props, "open">) {
  const [values, setValues] = useState<LimitFields>(() => fieldsOf(meta.budget?.budget));
  const [error, setError] = useState<FieldError>();
  const [failure, setFailure] = useState<string>();
  const [busy, setBusy] = useState(false);
  // Which button submitted: Enter in a field saves only.
  const then = useRef<"save" | "resume">("save");
  const helper = !!meta.rootId && meta.rootId !== meta.id;
  const resumable = stop?.by === "session";

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const resume = then.current === "resume";
    then.current = "save";
    const parsed = parseLimits(values);
    if (isFieldError(parsed)) return setError(parsed);
    setError(undefined);
    setBusy(true);
    try {
      // The form sets the limits; whether the budget resumes what it
      // paused by itself is kept as it was (the budget is replaced whole).
      await save(budgetOf({ ...parsed, autoResume: meta.budget?.budget?.autoResume }), resume);
      onClose();
    } catch (err) {
      setFailure(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} aria-label="Set the session budget" noValidate>
      <p className="muted">
        {helper
          ? "This is a helper's session: it spends the budget of its whole tree, set here on the root session."
          : "The session and every helper session under it spend this budget together."}{" "}
        Before each model call the server checks what the tree spent; at a limit, the run stops.
      </p>
      <BudgetMeter state={meta.budget} label="The tree's spend" />
      <LimitsFields legend="Limits" values={values} onChange={setValues} error={error} hint="Leave a field empty for no limit." />
      {failure && (
        <p role="alert" className="error">
          Could not set the budget: {failure}
        </p>
      )}
      <div className="actions">
        {resumable && (
          <button type="submit" className="button primary" disabled={busy} onClick={() => (then.current = "resume")}>
            Save and resume
          </button>
        )}
        <button type="submit" className={`button${resumable ? "" : " primary"}`} disabled={busy} onClick={() => (then.current = "save")}>
          Save
        </button>
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
