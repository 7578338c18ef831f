import type { BudgetState } from "../gen/agents/v1/session_pb";
import { limits } from "../lib/budget";

// BudgetMeter shows what was spent against a budget: per measure
// "spent / limit" and what is left, or what was spent where nothing
// limits it. A measure at its limit is marked in words, not colour
// alone.
export function BudgetMeter({ state, label, className = "" }: { state: BudgetState | undefined; label: string; className?: string }) {
  return (
    <dl className={`budget-meter ${className}`} aria-label={label}>
      {limits(state).map((l) => (
        <div key={l.measure} className={l.over ? "over" : undefined} title={l.exact}>
          <dt>{l.measure}</dt>
          <dd>
            {l.limit === undefined ? (
              <>
                {l.spent} <span className="muted">spent, no limit</span>
              </>
            ) : (
              <>
                {l.spent} / {l.limit} <span className="muted">({l.over ? "spent" : `${l.left} left`})</span>
              </>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}
