// The budget of a session's tree as the session view follows it: why a
// run stopped at a budget, and the spend its updates carry.

import { create } from "@bufbuild/protobuf";
import { BudgetSchema, BudgetStateSchema, SpendSchema, type BudgetState, type SessionMeta, SessionStatus, type Turn } from "../../../gen/agents/v1/session_pb";
import { hasLimit } from "../../../lib/budget";

// The status reason of a run stopped before a model call because a
// budget is spent.
export const budgetExceeded = "budget_exceeded";

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
