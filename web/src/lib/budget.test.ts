import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { BudgetStateSchema } from "../gen/agents/v1/session_pb";
import { budgetText, fieldsOf, isFieldError, limits, parseLimits } from "./budget";

const state = (init: Parameters<typeof create<typeof BudgetStateSchema>>[1]) => create(BudgetStateSchema, init);

describe("limits", () => {
  it("says spent / limit and what is left, per measure", () => {
    const l = limits(state({ budget: { tokens: 5000n, costUsd: 1 }, spent: { tokens: 1200n, costUsd: 0.25 }, left: { tokens: 3800n, costUsd: 0.75 } }));
    expect(l.map(({ measure, spent, limit, left, over }) => ({ measure, spent, limit, left, over }))).toEqual([
      { measure: "tokens", spent: "1.2k", limit: "5.0k", left: "3.8k", over: false },
      { measure: "cost", spent: "$0.25", limit: "$1.00", left: "$0.75", over: false },
    ]);
    expect(l[0].exact).toBe("1200 of 5000 tokens spent");
  });

  it("marks a limit reached, leaving nothing", () => {
    const [tokens] = limits(state({ budget: { tokens: 100n }, spent: { tokens: 130n }, left: { tokens: 0n }, exceeded: true }));
    expect(tokens).toMatchObject({ spent: "130", limit: "100", left: "0", over: true });
  });

  it("shows the tokens spent without a budget, and a cost only where one was priced", () => {
    expect(limits(state({ spent: { tokens: 42n } }))).toEqual([expect.objectContaining({ measure: "tokens", spent: "42", limit: undefined, over: false })]);
    expect(limits(state({ spent: { tokens: 42n, costUsd: 0.0004 } })).map((l) => l.spent)).toEqual(["42", "$0.0004"]);
    expect(limits(undefined).map((l) => l.spent)).toEqual(["0"]);
  });

  it("works out what is left when the server did not say", () => {
    const [, cost] = limits(state({ budget: { costUsd: 2 }, spent: { costUsd: 2.5 } }));
    expect(cost).toMatchObject({ left: "$0.00", over: true });
  });
});

describe("parseLimits", () => {
  it("reads whole tokens and dollars, empty for no limit", () => {
    expect(parseLimits({ tokens: " 10_000 ", costUsd: "$1.50" })).toEqual({ tokens: 10000n, costUsd: 1.5 });
    expect(parseLimits({ tokens: "", costUsd: "" })).toEqual({});
    expect(parseLimits({ tokens: "0", costUsd: ".5" })).toEqual({ tokens: 0n, costUsd: 0.5 });
  });

  it("names the field a value is wrong in", () => {
    const t = parseLimits({ tokens: "1.5", costUsd: "" });
    expect(isFieldError(t) && t.field).toBe("tokens");
    const c = parseLimits({ tokens: "", costUsd: "-1" });
    expect(isFieldError(c) && c.field).toBe("costUsd");
    expect(isFieldError(parseLimits({ tokens: "lots", costUsd: "" }))).toBe(true);
    expect(isFieldError(parseLimits({ tokens: "", costUsd: "1e3" }))).toBe(true);
  });

  it("gives back the fields of a budget", () => {
    expect(fieldsOf({ $typeName: "agents.v1.Budget", tokens: 300n, autoResume: false })).toEqual({ tokens: "300", costUsd: "" });
    expect(fieldsOf(undefined)).toEqual({ tokens: "", costUsd: "" });
  });
});

describe("budgetText", () => {
  it("words the limits a budget sets, and nothing for none", () => {
    expect(budgetText({ tokens: 50000n, costUsd: 1.5 })).toBe("50,000 tokens · $1.50");
    expect(budgetText({ costUsd: 0.25 })).toBe("$0.25");
    expect(budgetText({})).toBeUndefined();
    expect(budgetText(undefined)).toBeUndefined();
  });
});
