import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { BudgetPeriod, BudgetSource, OwnerBudgetSchema, UsageBucket, UsageSeriesSchema } from "../../../gen/agents/v1/owner_pb";
import { bucketLabel, budgetLine, chartOf, stacked } from "./usage-series";

const day = (d: number, h = 0) => Date.UTC(2026, 2, d, h);

// Three days of March: two agents on the 1st, one model unnamed, nothing
// on the 2nd, one call on the 3rd.
const series = create(UsageSeriesSchema, {
  bucket: UsageBucket.DAY,
  since: timestampFromMs(day(1)),
  until: timestampFromMs(day(4)),
  points: [
    { start: timestampFromMs(day(1)), owner: "alice", agent: "coder", model: "small", calls: 2n, promptTokens: 100n, completionTokens: 10n, costUsd: 0.5 },
    { start: timestampFromMs(day(1)), owner: "alice", agent: "reviewer", model: "", calls: 1n, promptTokens: 300n, completionTokens: 30n, costUsd: 0.25 },
    { start: timestampFromMs(day(3)), owner: "bob", agent: "coder", model: "large", calls: 1n, promptTokens: 5n, completionTokens: 5n, costUsd: 1 },
  ],
});

describe("chartOf", () => {
  it("gives every bucket of the range, zeros where no call was made", () => {
    const c = chartOf(series, "cost", "agent");
    expect(c.starts).toEqual([day(1), day(2), day(3)]);
    expect(c.groups).toEqual([
      { name: "coder", values: [0.5, 0, 1], total: 1.5 },
      { name: "reviewer", values: [0.25, 0, 0], total: 0.25 },
    ]);
    expect(c.totals).toEqual([0.75, 0, 1]);
  });

  it("counts tokens as input plus output, and names an unnamed model —", () => {
    const c = chartOf(series, "tokens", "model");
    expect(c.groups.map((g) => [g.name, g.values])).toEqual([
      ["—", [330, 0, 0]],
      ["small", [110, 0, 0]],
      ["large", [0, 0, 10]],
    ]);
  });

  it("breaks the usage down by owner", () => {
    expect(chartOf(series, "tokens", "owner").groups.map((g) => [g.name, g.total])).toEqual([
      ["alice", 440],
      ["bob", 10],
    ]);
  });

  it("stacks the groups bar on bar", () => {
    expect(stacked(chartOf(series, "cost", "agent"))).toEqual([
      [0.5, 0, 1],
      [0.75, 0, 1],
    ]);
  });

  it("lays hours out as hours", () => {
    const hours = create(UsageSeriesSchema, {
      bucket: UsageBucket.HOUR,
      since: timestampFromMs(day(1, 22)),
      until: timestampFromMs(day(2, 1)),
      points: [{ start: timestampFromMs(day(2, 0)), agent: "coder", promptTokens: 7n }],
    });
    const c = chartOf(hours, "tokens", "agent");
    expect(c.starts).toEqual([day(1, 22), day(1, 23), day(2, 0)]);
    expect(c.totals).toEqual([0, 0, 7]);
    expect(bucketLabel(c.starts[1], UsageBucket.HOUR)).toBe("2026-03-01 23:00");
    expect(bucketLabel(c.starts[1], UsageBucket.DAY)).toBe("2026-03-01");
  });
});

describe("budgetLine", () => {
  const budget = (period: BudgetPeriod, tokens?: bigint, costUsd?: number) =>
    create(OwnerBudgetSchema, { owner: "alice", period, source: BudgetSource.OWNER, budget: { tokens, costUsd } });
  const hours = create(UsageSeriesSchema, {
    bucket: UsageBucket.HOUR,
    since: timestampFromMs(day(1, 22)),
    until: timestampFromMs(day(2, 2)),
    points: [1, 23, 24, 25].map((h) => ({ start: timestampFromMs(day(1, 0) + h * 3_600_000), agent: "a", promptTokens: 10n })),
  });

  it("sums a day's spend bucket by bucket, from zero at each UTC midnight", () => {
    const line = budgetLine(chartOf(hours, "tokens", "agent"), budget(BudgetPeriod.DAY, 100n), "tokens", 40);
    expect(line).toEqual({ limit: 100, spent: [0, 10, 10, 20] });
  });

  it("counts what was spent before the range in a budget in total", () => {
    const line = budgetLine(chartOf(hours, "tokens", "agent"), budget(BudgetPeriod.TOTAL, 1000n), "tokens", 500);
    expect(line).toEqual({ limit: 1000, spent: [470, 480, 490, 500] });
  });

  it("has none without a limit in the measure drawn", () => {
    const c = chartOf(hours, "cost", "agent");
    expect(budgetLine(c, budget(BudgetPeriod.DAY, 100n), "cost", 0)).toBeUndefined();
    expect(budgetLine(c, undefined, "cost", 0)).toBeUndefined();
    expect(budgetLine(c, budget(BudgetPeriod.MONTH, undefined, 2), "cost", 0)).toEqual({ limit: 2, spent: [0, 0, 0, 0] });
  });
});
