// Usage over time as the usage page draws it: GetOwnerUsage's series
// (one row per bucket, owner, agent and model that made a call) turned
// into one value per bucket for each group, every bucket of the range
// present, and the line a budget is checked against.

import { timestampMs } from "@bufbuild/protobuf/wkt";
import { BudgetPeriod, UsageBucket, type OwnerBudget, type UsageSeries } from "../../../gen/agents/v1/owner_pb";

// What the chart measures, and what it breaks the usage down by.
export type Measure = "cost" | "tokens";
export type GroupBy = "agent" | "model" | "owner";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

// Chart is a series ready to draw: the start of every bucket (ms since
// the epoch, UTC) and, for each group, its value in each bucket.
export type Chart = {
  starts: number[];
  groups: { name: string; values: number[]; total: number }[];
  // totals[i] is every group's sum in bucket i.
  totals: number[];
};

// bucketMs is the length of a series' bucket.
export function bucketMs(b: UsageBucket): number {
  return b === UsageBucket.HOUR ? HOUR_MS : DAY_MS;
}

// valueOf is what one row counts for a measure: its cost in dollars, or
// its input plus output tokens (as a budget counts them).
function valueOf(p: UsageSeries["points"][number], m: Measure): number {
  return m === "cost" ? p.costUsd : Number(p.promptTokens + p.completionTokens);
}

// groupName is a row's group; a model the provider did not name is "—".
function groupName(p: UsageSeries["points"][number], g: GroupBy): string {
  const name = g === "agent" ? p.agent : g === "model" ? p.model : p.owner;
  return name || "—";
}

// chartOf sums a series per bucket and group. Groups are ordered by what
// they spent over the range, the largest first; buckets with no call
// are zeros.
export function chartOf(series: UsageSeries, measure: Measure, groupBy: GroupBy): Chart {
  const step = bucketMs(series.bucket);
  const since = series.since ? timestampMs(series.since) : 0;
  const until = series.until ? timestampMs(series.until) : since;
  const starts: number[] = [];
  for (let t = since; t < until; t += step) starts.push(t);
  const byGroup = new Map<string, number[]>();
  for (const p of series.points) {
    if (!p.start) continue;
    const i = Math.round((timestampMs(p.start) - since) / step);
    if (i < 0 || i >= starts.length) continue;
    const name = groupName(p, groupBy);
    let values = byGroup.get(name);
    if (!values) byGroup.set(name, (values = starts.map(() => 0)));
    values[i] += valueOf(p, measure);
  }
  const groups = [...byGroup].map(([name, values]) => ({ name, values, total: values.reduce((a, b) => a + b, 0) }));
  groups.sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  const totals = starts.map((_, i) => groups.reduce((sum, g) => sum + g.values[i], 0));
  return { starts, groups, totals };
}

// stacked is each group's running sum over the groups before it, bucket
// by bucket: drawn as bars, the largest first, they read as one stacked
// bar per bucket.
export function stacked(chart: Chart): number[][] {
  const out: number[][] = [];
  let below = chart.starts.map(() => 0);
  for (const g of chart.groups) {
    below = below.map((v, i) => v + g.values[i]);
    out.push(below);
  }
  return out;
}

// periodStart is the start of the budget period that holds t (UTC).
function periodStart(period: BudgetPeriod, t: number): number {
  const d = new Date(t);
  switch (period) {
    case BudgetPeriod.DAY:
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case BudgetPeriod.MONTH:
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  return 0;
}

// BudgetLine is what a budget's limit is checked against, bucket by
// bucket: the spend in its period up to the end of each bucket (it starts
// again at zero with each new UTC day or month), and the limit.
export type BudgetLine = { limit: number; spent: number[] };

// budgetLine is the line of an owner's budget on a chart, or undefined
// when the budget has no limit in the chart's measure. In a budget of
// every period ("in total") the spend before the range counts: total is
// what the owner ever spent, so the line ends at it. A day's or month's
// period cut by the range's start counts from there.
export function budgetLine(chart: Chart, budget: OwnerBudget | undefined, measure: Measure, total: number): BudgetLine | undefined {
  const b = budget?.budget;
  const limit = measure === "cost" ? b?.costUsd : b?.tokens === undefined ? undefined : Number(b.tokens);
  if (limit === undefined || !budget) return undefined;
  const period = budget.period === BudgetPeriod.DAY || budget.period === BudgetPeriod.MONTH ? budget.period : BudgetPeriod.TOTAL;
  const inRange = chart.totals.reduce((a, b) => a + b, 0);
  let sum = period === BudgetPeriod.TOTAL ? Math.max(0, total - inRange) : 0;
  let current = Number.NaN;
  const spent = chart.starts.map((start, i) => {
    const p = periodStart(period, start);
    if (p !== current) {
      if (period !== BudgetPeriod.TOTAL) sum = 0;
      current = p;
    }
    sum += chart.totals[i];
    return sum;
  });
  return { limit, spent };
}

// bucketLabel names a bucket as the table and the axis show it, in UTC.
export function bucketLabel(start: number, bucket: UsageBucket): string {
  const iso = new Date(start).toISOString();
  return bucket === UsageBucket.HOUR ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10);
}
