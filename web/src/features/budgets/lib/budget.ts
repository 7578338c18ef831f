// How budgets are worded and read: a budget's limits, what was spent
// against them and what is left, as the session header and the usage
// page show them, and the limits a form's fields give.

import { create } from "@bufbuild/protobuf";
import { BudgetSchema, BudgetStateSchema, SpendSchema, type Budget, type BudgetState, type SessionMeta, SessionStatus, type Turn } from "../../../gen/agents/v1/session_pb";
import { BudgetPeriod, BudgetSource } from "../../../gen/agents/v1/owner_pb";
import { formatCount, formatUsd } from "../../../lib/format";

// The status reason of a run stopped before a model call because a
// budget is spent.
export const budgetExceeded = "budget_exceeded";

// Limit is one measure of a budget: what was spent, and, when the budget
// limits it, the limit and what is left.
export interface Limit {
  // "tokens" or "cost".
  measure: "tokens" | "cost";
  spent: string;
  limit?: string;
  left?: string;
  // Spent is at or over the limit.
  over: boolean;
  // The exact numbers, for a tooltip.
  exact: string;
}

// limits are the measures of a budget state worth showing: tokens
// always, cost where a limit or a price gave one.
export function limits(state: BudgetState | undefined): Limit[] {
  const spentTokens = state?.spent?.tokens ?? 0n;
  const spentCost = state?.spent?.costUsd ?? 0;
  const b = state?.budget;
  const left = state?.left;
  const out: Limit[] = [];
  const tokenLimit = b?.tokens;
  out.push({
    measure: "tokens",
    spent: formatCount(spentTokens),
    limit: tokenLimit === undefined ? undefined : formatCount(tokenLimit),
    left: tokenLimit === undefined ? undefined : formatCount(left?.tokens ?? clampLeft(tokenLimit - spentTokens)),
    over: tokenLimit !== undefined && spentTokens >= tokenLimit,
    exact: tokenLimit === undefined ? `${spentTokens} tokens spent` : `${spentTokens} of ${tokenLimit} tokens spent`,
  });
  const costLimit = b?.costUsd;
  if (costLimit !== undefined || spentCost > 0) {
    out.push({
      measure: "cost",
      spent: formatUsd(spentCost),
      limit: costLimit === undefined ? undefined : formatUsd(costLimit),
      left: costLimit === undefined ? undefined : formatUsd(left?.costUsd ?? Math.max(0, costLimit - spentCost)),
      over: costLimit !== undefined && spentCost >= costLimit,
      exact: costLimit === undefined ? `$${spentCost} spent` : `$${spentCost} of $${costLimit} spent`,
    });
  }
  return out;
}

function clampLeft(n: bigint): bigint {
  return n < 0n ? 0n : n;
}

// hasLimit reports whether a budget limits anything.
export function hasLimit(b: Budget | undefined): boolean {
  return b?.tokens !== undefined || b?.costUsd !== undefined;
}

// Stop says why a run stopped for its budget: the tree's (which the
// session's budget form raises) or its owner's (which only an admin
// does), and whether raising it was done already.
export type Stop = { by: "session" | "owner"; raised: boolean } | undefined;

// budgetStop is why the session's run stopped for a budget, or undefined
// when it did not. by is what run.stopped said, when it was seen live;
// otherwise the tree's budget state tells: still exceeded, or with less
// left than need (the least the session's next call reserves: its input,
// at least the last call's, and some output), it is the tree's;
// otherwise the owner's, unless the tree's was raised since.
export function budgetStop(meta: SessionMeta | undefined, by?: string, need?: bigint): Stop {
  if (!meta || meta.status !== SessionStatus.PAUSED || meta.statusReason !== budgetExceeded) return undefined;
  const exceeded = !!meta.budget?.exceeded;
  if (by === "owner") return { by: "owner", raised: false };
  if (by === "session") return { by: "session", raised: !exceeded };
  const left = meta.budget?.left?.tokens;
  const short = need !== undefined && left !== undefined && left < need;
  return exceeded || short ? { by: "session", raised: false } : { by: "owner", raised: false };
}

// minOutput is the least output the server starts a model call for: a
// budget with less left after the call's input refuses it.
const minOutput = 64n;

// nextCallNeeds is the least the session's next model call reserves of a
// budget: its input holds the last call's input and answer, and it asks
// for some output.
export function nextCallNeeds(turns: readonly (Turn | undefined)[]): bigint {
  for (let i = turns.length - 1; i >= 0; i--) {
    const t = turns[i];
    if (t?.kind.case === "llm") {
      const u = t.kind.value.usage;
      return (u?.promptTokens ?? 0n) + (u?.completionTokens ?? 0n) + minOutput;
    }
  }
  return minOutput;
}

// LimitFields are a budget form's fields as typed: empty is no limit.
export interface LimitFields {
  tokens: string;
  costUsd: string;
}

// FieldError names the field a value is wrong in.
export interface FieldError {
  field: keyof LimitFields;
  message: string;
}

// fieldsOf fills a form's fields from a budget.
export function fieldsOf(b: Budget | undefined): LimitFields {
  return { tokens: b?.tokens === undefined ? "" : String(b.tokens), costUsd: b?.costUsd === undefined ? "" : String(b.costUsd) };
}

// parseLimits reads a form's fields: a whole number of tokens and a
// number of dollars, each at least 0, empty for no limit.
export function parseLimits(f: LimitFields): { tokens?: bigint; costUsd?: number } | FieldError {
  const out: { tokens?: bigint; costUsd?: number } = {};
  const t = f.tokens.trim().replace(/[_,\s]/g, "");
  if (t !== "") {
    if (!/^\d+$/.test(t)) return { field: "tokens", message: "Tokens: a whole number, at least 0" };
    out.tokens = BigInt(t);
  }
  const c = f.costUsd.trim().replace(/^\$/, "");
  if (c !== "") {
    const n = Number(c);
    if (!/^\d*\.?\d+$|^\d+\.$/.test(c) || !Number.isFinite(n)) return { field: "costUsd", message: "Dollars: a number, at least 0" };
    out.costUsd = n;
  }
  return out;
}

// isFieldError tells parseLimits' error from its limits.
export function isFieldError(v: ReturnType<typeof parseLimits>): v is FieldError {
  return "field" in v;
}

// budgetOf is the Budget message of parsed limits, and of whether it
// resumes what it paused by itself.
export function budgetOf(l: { tokens?: bigint; costUsd?: number; autoResume?: boolean }): Budget {
  return create(BudgetSchema, l);
}

// periodLabel words the span an owner's budget covers.
export function periodLabel(p: BudgetPeriod | undefined): string {
  switch (p) {
    case BudgetPeriod.DAY:
      return "per day (UTC)";
    case BudgetPeriod.MONTH:
      return "per month (UTC)";
  }
  return "in total";
}

// currentPeriodLabel names the current period of a budget.
export function currentPeriodLabel(p: BudgetPeriod | undefined): string {
  switch (p) {
    case BudgetPeriod.DAY:
      return "Today (UTC)";
    case BudgetPeriod.MONTH:
      return "This month (UTC)";
  }
  return "In total";
}

// sourceLabel says where an owner's budget comes from.
export function sourceLabel(s: BudgetSource | undefined): string {
  switch (s) {
    case BudgetSource.OWNER:
      return "set for this owner";
    case BudgetSource.DEFAULT:
      return "the server's default for every owner";
  }
  return "none: no limit";
}

// latestSpend is the budget state to show when next arrives over prev.
// A tree's spend only grows, but a session's update carries it as that
// session last saw it (at its last model call), so an update of the
// root after its helper spent may carry less than the helper's updates
// showed: what was spent is the larger of the two, against next's
// budget (it may have been changed), with what is left worked out again.
export function latestSpend(prev: BudgetState | undefined, next: BudgetState | undefined): BudgetState | undefined {
  if (!next || !prev) return next ?? prev;
  const tokens = max(prev.spent?.tokens ?? 0n, next.spent?.tokens ?? 0n);
  const costUsd = Math.max(prev.spent?.costUsd ?? 0, next.spent?.costUsd ?? 0);
  if (tokens === (next.spent?.tokens ?? 0n) && costUsd === (next.spent?.costUsd ?? 0)) return next;
  const b = next.budget;
  const left = hasLimit(b)
    ? create(BudgetSchema, {
        tokens: b?.tokens === undefined ? undefined : max(0n, b.tokens - tokens),
        costUsd: b?.costUsd === undefined ? undefined : Math.max(0, b.costUsd - costUsd),
      })
    : undefined;
  const exceeded = (b?.tokens !== undefined && tokens >= b.tokens) || (b?.costUsd !== undefined && costUsd >= b.costUsd);
  return create(BudgetStateSchema, { budget: b, spent: create(SpendSchema, { tokens, costUsd }), left, exceeded });
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
