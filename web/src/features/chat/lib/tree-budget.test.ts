import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { BudgetStateSchema, SessionMetaSchema, SessionStatus, TurnSchema } from "../../../gen/agents/v1/session_pb";
import { budgetStop, latestSpend, nextCallNeeds } from "./tree-budget";

const state = (init: Parameters<typeof create<typeof BudgetStateSchema>>[1]) => create(BudgetStateSchema, init);

describe("budgetStop", () => {
  const meta = (reason: string, exceeded: boolean, status = SessionStatus.PAUSED) =>
    create(SessionMetaSchema, { id: "s", status, statusReason: reason, budget: { budget: { tokens: 10n }, spent: { tokens: exceeded ? 12n : 2n }, exceeded } });

  it("is nothing unless the run stopped at a budget", () => {
    expect(budgetStop(meta("paused", true))).toBeUndefined();
    expect(budgetStop(meta("budget_exceeded", true, SessionStatus.READY))).toBeUndefined();
    expect(budgetStop(undefined)).toBeUndefined();
  });

  it("tells the tree's budget from the owner's", () => {
    expect(budgetStop(meta("budget_exceeded", true))).toEqual({ by: "session", raised: false });
    // The tree is within its budget: the owner's stopped it.
    expect(budgetStop(meta("budget_exceeded", false))).toEqual({ by: "owner", raised: false });
    // As run.stopped said: the tree's, raised since.
    expect(budgetStop(meta("budget_exceeded", false), "session")).toEqual({ by: "session", raised: true });
    expect(budgetStop(meta("budget_exceeded", true), "owner")).toEqual({ by: "owner", raised: false });
  });

  it("takes the tree's for the stop when what it has left cannot hold the next call", () => {
    const within = create(SessionMetaSchema, {
      id: "s",
      status: SessionStatus.PAUSED,
      statusReason: "budget_exceeded",
      budget: { budget: { tokens: 100n }, spent: { tokens: 60n }, left: { tokens: 40n }, exceeded: false },
    });
    expect(budgetStop(within, undefined, nextCallNeeds([]))).toEqual({ by: "session", raised: false });
    expect(budgetStop(within, undefined, 30n)).toEqual({ by: "owner", raised: false });
  });
});

describe("nextCallNeeds", () => {
  it("is the last call's input and answer, and the least output a call starts with", () => {
    const llm = create(TurnSchema, { index: 1, kind: { case: "llm", value: { usage: { promptTokens: 300n, completionTokens: 20n } } } });
    const user = create(TurnSchema, { index: 2, kind: { case: "user", value: { text: "more" } } });
    expect(nextCallNeeds([undefined, llm, user])).toBe(384n);
    expect(nextCallNeeds([user])).toBe(64n);
  });
});

describe("latestSpend", () => {
  it("never shows less spent than was shown: an update carries the spend its session last saw", () => {
    const seen = state({ budget: { tokens: 1000n }, spent: { tokens: 600n }, left: { tokens: 400n } });
    const stale = state({ budget: { tokens: 1000n }, spent: { tokens: 200n }, left: { tokens: 800n } });
    expect(latestSpend(seen, stale)).toMatchObject({ spent: { tokens: 600n }, left: { tokens: 400n }, exceeded: false });
    const more = state({ budget: { tokens: 1000n }, spent: { tokens: 700n }, left: { tokens: 300n } });
    expect(latestSpend(seen, more)).toBe(more);
  });

  it("takes a new budget, with what is left worked out against the larger spend", () => {
    const seen = state({ budget: { tokens: 100n }, spent: { tokens: 150n, costUsd: 0.2 }, exceeded: true });
    const lowered = state({ budget: { tokens: 120n, costUsd: 0.1 }, spent: { tokens: 90n, costUsd: 0.05 } });
    expect(latestSpend(seen, lowered)).toMatchObject({ budget: { tokens: 120n, costUsd: 0.1 }, spent: { tokens: 150n, costUsd: 0.2 }, left: { tokens: 0n, costUsd: 0 }, exceeded: true });
    expect(latestSpend(undefined, lowered)).toBe(lowered);
    expect(latestSpend(seen, undefined)).toBe(seen);
  });
});
