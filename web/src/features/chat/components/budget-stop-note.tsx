import { Link } from "react-router";
import type { Stop } from "../lib/tree-budget";

interface Props {
  stop: Stop;
  readOnly?: boolean;
  onRaise: () => void;
  onResume: () => void;
  working: boolean;
}

// BudgetStopNote is the mark of a run stopped at its budget: which budget
// is spent and what goes on from here (raise it, then resume). The
// session's budget is raised here; the owner's only by an admin, on the
// usage page.
export function BudgetStopNote({ stop, readOnly, onRaise, onResume, working }: Props) {
  if (!stop) return null;
  const resume = !readOnly && (
    <button type="button" onClick={onResume} disabled={working}>
      Resume now
    </button>
  );
  return (
    <div role="alert" aria-label="Budget spent" className="banner budget-stop">
      {stop.by === "owner" ? (
        <>
          <p>
            <strong>Budget spent.</strong> The run stopped before its next model call: the owner's budget is spent (see{" "}
            <Link to="/usage">usage</Link>). Once an admin raises it, the run can resume.
          </p>
          {resume}
        </>
      ) : stop.raised ? (
        <>
          <p>
            <strong>Budget raised.</strong> The run stopped at the session's budget, which is raised now: resume to go on.
          </p>
          {resume}
        </>
      ) : (
        <>
          <p>
            <strong>Budget spent.</strong> The run stopped before its next model call: the session's budget is spent.
          </p>
          {!readOnly && (
            <button type="button" className="primary" onClick={onRaise} disabled={working}>
              Raise the budget
            </button>
          )}
        </>
      )}
    </div>
  );
}
