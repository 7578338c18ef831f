// A budget's limits: what was spent against them and what is left, as
// the session header and the usage page show them, and the limits a
// budget form's fields give.

import { create } from "@bufbuild/protobuf";
import { BudgetSchema, type Budget, type BudgetState } from "../gen/agents/v1/session_pb";
import { formatCount, formatTokens, formatUsd } from "./format";

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

// budgetText words a budget's limits: "50,000 tokens · $1.50"; undefined
// for one that limits nothing.
export function budgetText(b: { tokens?: bigint; costUsd?: number } | undefined): string | undefined {
  const parts: string[] = [];
  if (b?.tokens !== undefined) parts.push(`${formatTokens(b.tokens)} tokens`);
  if (b?.costUsd !== undefined) parts.push(formatUsd(b.costUsd));
  return parts.length ? parts.join(" · ") : undefined;
}
