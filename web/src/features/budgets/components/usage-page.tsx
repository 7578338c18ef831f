import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { BudgetMeter } from "../../../components/budget-meter";
import { LimitsFields } from "../../../components/limits-fields";
import { BudgetPeriod, OwnerService, type OwnerUsage } from "../../../gen/agents/v1/owner_pb";
import { fieldsOf, isFieldError, parseLimits, type FieldError, type LimitFields } from "../../../lib/budget";
import { isUnimplemented, useOwnUsage } from "../../../lib/budgets-supported";
import { errorText } from "../../../lib/error-text";
import { useAdmin } from "../../../lib/event-stream-context";
import { formatCount, formatUsd } from "../../../lib/format";
import { UsageChart } from "./usage-chart";
import { currentPeriodLabel, periodLabel, sourceLabel } from "../lib/owner-budget";

// UsagePage is an owner's spend: the caller's own in the current period
// of its budget and in total, with the budget and what is left; below it
// any owner's, looked up by name, and the form that sets an owner's
// budget (an admin's to use: the server refuses anyone else, and the
// page says what it answered).
export function UsagePage() {
  const own = useOwnUsage();
  const heading = useId();
  const [owner, setOwner] = useState<string>();
  return (
    <section className="page-content usage-page" aria-labelledby={heading}>
      <h1 id={heading}>Usage</h1>
      {own.isPending ? (
        <p>Loading…</p>
      ) : own.error ? (
        isUnimplemented(own.error) ? (
          <p role="note">This server keeps no budgets: it counts no spend per owner.</p>
        ) : (
          <p role="alert" className="error">
            Could not read your usage: {errorText(own.error)}
          </p>
        )
      ) : own.data.usage ? (
        <>
          <UsageView usage={own.data.usage} title={own.data.usage.owner ? `Yours (${own.data.usage.owner})` : "Yours"} mine />
          <OwnerLookup owner={owner} onOwner={setOwner} />
          {owner !== undefined && <OtherOwner owner={owner} />}
        </>
      ) : null}
    </section>
  );
}

// UsageView is one owner's usage: the current period's spend against the
// budget, and everything spent.
function UsageView({ usage, title, mine }: { usage: OwnerUsage; title: string; mine?: boolean }) {
  const id = useId();
  const admin = useAdmin();
  const b = usage.budget;
  const start = usage.periodStart && timestampDate(usage.periodStart);
  const end = usage.periodEnd && timestampDate(usage.periodEnd);
  // A budget per day or month: its period, then everything ever spent;
  // in total, the two are one.
  const periodic = b?.period === BudgetPeriod.DAY || b?.period === BudgetPeriod.MONTH;
  return (
    <section className="usage-view" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <dl className="facts">
        <dt>Budget</dt>
        <dd>
          {sourceLabel(b?.source)}
          {b?.budget && (b.budget.tokens !== undefined || b.budget.costUsd !== undefined) && <>, {periodLabel(b.period)}</>}
        </dd>
        {start && end && (
          <>
            <dt>Period</dt>
            <dd>
              <time dateTime={start.toISOString()}>{start.toLocaleString()}</time> to <time dateTime={end.toISOString()}>{end.toLocaleString()}</time>
            </dd>
          </>
        )}
      </dl>
      <h3>{currentPeriodLabel(b?.period)}</h3>
      <BudgetMeter state={usage.current} label={periodic ? `Spent: ${currentPeriodLabel(b?.period)}` : "Spent in total"} className="wide" />
      {usage.current?.exceeded && (
        <p role="alert" className="error">
          The budget is spent: the owner's sessions stop before their next model call until it is raised.
        </p>
      )}
      {periodic && (
        <>
          <h3>Ever</h3>
          <dl className="budget-meter wide" aria-label="Spent in total">
            <div>
              <dt>tokens</dt>
              <dd>{formatCount(usage.total?.tokens ?? 0n)}</dd>
            </div>
            <div>
              <dt>cost</dt>
              <dd>{formatUsd(usage.total?.costUsd ?? 0)}</dd>
            </div>
          </dl>
        </>
      )}
      <UsageChart owner={mine ? undefined : usage.owner} usage={usage} admin={mine && admin === true} />
    </section>
  );
}

// OwnerLookup names the owner to show and set a budget for.
function OwnerLookup({ owner, onOwner }: { owner?: string; onOwner: (o: string) => void }) {
  const admin = useAdmin();
  const [text, setText] = useState(owner ?? "");
  const id = useId();
  return (
    <section className="owner-lookup" aria-labelledby={id}>
      <h2 id={id}>An owner's budget</h2>
      <p className="muted">
        {admin === false
          ? "Another owner's usage and every budget are an admin's to read and set: the server refuses them to your token."
          : "Look up an owner to read its usage and set its budget."}
      </p>
      <form
        className="row"
        aria-label="Look up an owner"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) onOwner(text.trim());
        }}
      >
        <label htmlFor={`${id}-owner`}>Owner</label>
        <input id={`${id}-owner`} type="text" autoComplete="off" value={text} onChange={(e) => setText(e.target.value)} />
        <button type="submit" className="button" disabled={!text.trim()}>
          Look up
        </button>
      </form>
    </section>
  );
}

// OtherOwner is the usage of the owner looked up and the form that sets
// its budget.
function OtherOwner({ owner }: { owner: string }) {
  const usage = useQuery(OwnerService.method.getOwnerUsage, { owner }, { retry: false });
  return (
    <>
      {usage.isPending ? (
        <p>Loading…</p>
      ) : usage.error ? (
        <p role="alert" className="error">
          Could not read the usage of {owner}: {errorText(usage.error)}
        </p>
      ) : usage.data.usage ? (
        <UsageView usage={usage.data.usage} title={`Usage of ${owner}`} />
      ) : null}
      <SetBudget key={owner} owner={owner} usage={usage.data?.usage} />
    </>
  );
}

// SetBudget replaces an owner's budget (SetOwnerBudget).
function SetBudget({ owner, usage }: { owner: string; usage?: OwnerUsage }) {
  const queryClient = useQueryClient();
  const set = useMutation(OwnerService.method.setOwnerBudget, {
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema: OwnerService, cardinality: undefined }) }),
  });
  const current = usage?.budget;
  const [values, setValues] = useState<LimitFields | undefined>();
  const [period, setPeriod] = useState<BudgetPeriod>();
  const [autoResume, setAutoResume] = useState<boolean>();
  const [error, setError] = useState<FieldError>();
  const id = useId();
  // Until edited, the form shows the budget in force.
  const shown = values ?? fieldsOf(current?.budget);
  const shownPeriod = period ?? (current?.period || BudgetPeriod.TOTAL);
  const shownAutoResume = autoResume ?? !!current?.budget?.autoResume;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseLimits(shown);
    if (isFieldError(parsed)) return setError(parsed);
    setError(undefined);
    set.mutate({ owner, ...parsed, period: shownPeriod, autoResume: shownAutoResume });
  };

  return (
    <form className="set-budget" aria-label={`Set the budget of ${owner}`} onSubmit={submit} noValidate>
      <h3>Set the budget of {owner}</h3>
      <LimitsFields
        legend="Limits"
        hint="Every session of the owner stops at them before its next model call. Empty: no limit (this overrides the server's default)."
        values={shown}
        onChange={setValues}
        error={error}
      />
      <div className="field">
        <label htmlFor={`${id}-period`}>Period</label>
        <select id={`${id}-period`} value={shownPeriod} onChange={(e) => setPeriod(Number(e.target.value) as BudgetPeriod)}>
          <option value={BudgetPeriod.DAY}>per day (UTC)</option>
          <option value={BudgetPeriod.MONTH}>per month (UTC)</option>
          <option value={BudgetPeriod.TOTAL}>in total</option>
        </select>
      </div>
      <div className="field">
        <label>
          <input type="checkbox" checked={shownAutoResume} onChange={(e) => setAutoResume(e.target.checked)} /> Resume the sessions it paused by
          themselves when it is raised or a new period starts
        </label>
      </div>
      {set.error && (
        <p role="alert" className="error">
          Could not set the budget: {errorText(set.error)}
        </p>
      )}
      {set.isSuccess && !set.isPending && (
        <p role="status">Saved.</p>
      )}
      <div className="actions">
        <button type="submit" className="button primary" disabled={set.isPending}>
          Save the budget
        </button>
      </div>
    </form>
  );
}
