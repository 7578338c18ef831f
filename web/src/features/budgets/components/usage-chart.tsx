import { useQuery } from "@connectrpc/connect-query";
import { useEffect, useId, useMemo, useRef, useState } from "react";
import type uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { OwnerService, UsageBucket, type OwnerUsage } from "../../../gen/agents/v1/owner_pb";
import { errorText } from "../../../lib/error-text";
import { formatCount, formatUsd } from "../../../lib/format";
import { bucketLabel, bucketMs, budgetLine, chartOf, stacked, type BudgetLine, type Chart, type GroupBy, type Measure } from "../lib/usage-series";

// The groups' colours: mid tones that read on the light and the dark
// background alike, in an order where neighbours differ.
const PALETTE = ["#4493f8", "#d29922", "#3fb950", "#ab7df8", "#f85149", "#39c5cf", "#db61a2", "#9198a1"];
const BUDGET_COLOUR = "#f85149";

// UsageChart is usage over time: GetOwnerUsage's series for the caller
// (or, for an admin, every owner), per UTC day or hour, drawn as stacked
// bars per agent, model or owner with the budget as a line, and the same
// numbers as a table.
export function UsageChart({ owner, usage, admin }: { owner?: string; usage: OwnerUsage; admin?: boolean }) {
  const id = useId();
  const [bucket, setBucket] = useState<UsageBucket>(UsageBucket.DAY);
  const [measure, setMeasure] = useState<Measure>(usage.budget?.budget?.costUsd !== undefined || (usage.total?.costUsd ?? 0) > 0 ? "cost" : "tokens");
  const [groupBy, setGroupBy] = useState<GroupBy>("agent");
  const allOwners = groupBy === "owner";
  const q = useQuery(OwnerService.method.getOwnerUsage, { owner: owner ?? "", bucket, allOwners }, { retry: false, staleTime: 10_000 });
  const series = q.data?.usage?.series;
  const chart = useMemo(() => (series ? chartOf(series, measure, groupBy) : undefined), [series, measure, groupBy]);
  // Every owner's spend is checked against no one budget.
  const total = measure === "cost" ? (usage.total?.costUsd ?? 0) : Number(usage.total?.tokens ?? 0n);
  const line = useMemo(
    () => (chart && !allOwners ? budgetLine(chart, usage.budget, measure, total) : undefined),
    [chart, allOwners, usage.budget, measure, total],
  );
  const unit = bucket === UsageBucket.HOUR ? "hour" : "day";
  const fmt = useMemo(() => (measure === "cost" ? formatUsd : (v: number) => formatCount(Math.round(v))), [measure]);

  return (
    <section className="usage-chart" aria-labelledby={id}>
      <h3 id={id}>Over time (UTC)</h3>
      <div className="row chart-controls">
        <label>
          Per{" "}
          <select value={bucket} onChange={(e) => setBucket(Number(e.target.value) as UsageBucket)}>
            <option value={UsageBucket.DAY}>day, last 30</option>
            <option value={UsageBucket.HOUR}>hour, last 48</option>
          </select>
        </label>
        <label>
          Show{" "}
          <select value={measure} onChange={(e) => setMeasure(e.target.value as Measure)}>
            <option value="cost">cost</option>
            <option value="tokens">tokens</option>
          </select>
        </label>
        <label>
          By{" "}
          <select value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
            <option value="agent">agent</option>
            <option value="model">model</option>
            {admin && <option value="owner">owner (every owner)</option>}
          </select>
        </label>
      </div>
      {q.isPending ? (
        <p>Loading…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not read the usage over time: {errorText(q.error)}
        </p>
      ) : chart && series ? (
        <>
          <ChartFigure chart={chart} line={line} bucket={series.bucket} measure={measure} fmt={fmt} unit={unit} />
          <ChartTable chart={chart} line={line} bucket={series.bucket} measure={measure} fmt={fmt} groupBy={groupBy} unit={unit} />
        </>
      ) : null}
    </section>
  );
}

// ChartFigure draws the chart with uPlot, loaded when first shown; the
// canvas is hidden from assistive technology, which reads the figure's
// summary and the table instead. Where no canvas can be drawn the table
// stands alone.
function ChartFigure(props: { chart: Chart; line?: BudgetLine; bucket: UsageBucket; measure: Measure; fmt: (v: number) => string; unit: string }) {
  const { chart, line, bucket, measure, fmt, unit } = props;
  const host = useRef<HTMLDivElement>(null);
  const said = (v: number) => (measure === "tokens" ? `${fmt(v)} tokens` : fmt(v));
  const [failed, setFailed] = useState(false);
  const sum = chart.totals.reduce((a, b) => a + b, 0);
  const peak = chart.totals.reduce((best, v, i) => (v > chart.totals[best] ? i : best), 0);
  const summary =
    chart.groups.length === 0
      ? `No model calls in the ${chart.starts.length} ${unit}s shown.`
      : `${said(sum)} over ${chart.starts.length} ${unit}s by ${chart.groups.length} ${chart.groups.length === 1 ? "group" : "groups"}; most on ${bucketLabel(chart.starts[peak], bucket)} (${said(chart.totals[peak])})` +
        (line ? `; budget ${said(line.limit)}, highest spend in a period ${said(Math.max(...line.spent))}.` : ".");

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    let plot: uPlot | undefined;
    let cancelled = false;
    let observer: ResizeObserver | undefined;
    void import("uplot")
      .then(({ default: UPlot }) => {
        if (cancelled) return;
        const ink = getComputedStyle(el).color;
        const grid = "rgba(128, 128, 128, 0.2)";
        // Each bucket's bar and step stand on [start, start + bucket), so
        // the axis runs to the end of the last bucket.
        const bars = UPlot.paths.bars?.({ size: [0.8, 48], align: 1 });
        const steps = UPlot.paths.stepped?.({ align: 1 });
        const first = chart.starts[0] / 1000;
        const last = (chart.starts[chart.starts.length - 1] + bucketMs(bucket)) / 1000;
        const series: uPlot.Series[] = [{}];
        // One point more, at the end of the last bucket: no bar, and the
        // lines' last step drawn to the end.
        const data: uPlot.AlignedData = [[...chart.starts.map((t) => t / 1000), last]];
        // The largest stack first, so the smaller ones paint over it.
        const stacks = stacked(chart);
        for (let i = chart.groups.length - 1; i >= 0; i--) {
          const colour = PALETTE[i % PALETTE.length];
          series.push({ label: chart.groups[i].name, stroke: colour, fill: colour, paths: bars, points: { show: false } });
          data.push([...stacks[i], null]);
        }
        if (line) {
          series.push({ label: "spent in the budget's period", stroke: ink, width: 2, paths: steps, points: { show: false } });
          data.push([...line.spent, line.spent[line.spent.length - 1]]);
          series.push({ label: "budget", stroke: BUDGET_COLOUR, width: 2, dash: [6, 4], paths: steps, points: { show: false } });
          data.push([...line.spent, 0].map(() => line.limit));
        }
        const width = () => Math.max(280, el.clientWidth);
        const opts: uPlot.Options = {
          width: width(),
          height: 260,
          legend: { show: false },
          cursor: { show: false },
          tzDate: (ts) => UPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
          scales: { x: { time: true, range: () => [first, last] }, y: { range: (_u, _min, max) => [0, Math.max(max, line?.limit ?? 0) * 1.08 || 1] } },
          axes: [
            { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } },
            { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid }, size: 64, values: (_u, ticks) => ticks.map(fmt) },
          ],
          series,
        };
        plot = new UPlot(opts, data, el);
        observer = typeof ResizeObserver === "undefined" ? undefined : new ResizeObserver(() => plot?.setSize({ width: width(), height: 260 }));
        observer?.observe(el);
      })
      .catch(() => {
        if (!cancelled) setFailed(true);
      });
    return () => {
      cancelled = true;
      observer?.disconnect();
      plot?.destroy();
    };
  }, [chart, line, bucket, fmt]);

  return (
    <figure className="chart" role="img" aria-label={`Usage per ${unit}: ${summary}`}>
      {!failed && <div ref={host} className="chart-canvas" aria-hidden="true" />}
      <figcaption>
        <ul className="chart-legend" aria-hidden="true">
          {chart.groups.map((g, i) => (
            <li key={g.name}>
              <span className="swatch" style={{ background: PALETTE[i % PALETTE.length] }} /> {g.name}
            </li>
          ))}
          {line && (
            <>
              <li>
                <span className="swatch line" /> spent in the budget's period
              </li>
              <li>
                <span className="swatch line budget" /> budget {fmt(line.limit)}
              </li>
            </>
          )}
        </ul>
      </figcaption>
    </figure>
  );
}

// ChartTable is the chart's numbers: one row per bucket with a call,
// each group's value and the total.
function ChartTable(props: { chart: Chart; line?: BudgetLine; bucket: UsageBucket; measure: Measure; fmt: (v: number) => string; groupBy: GroupBy; unit: string }) {
  const { chart, line, bucket, measure, fmt, groupBy, unit } = props;
  const rows = chart.starts.map((start, i) => ({ start, i })).filter(({ i }) => chart.totals[i] > 0);
  return (
    <details className="chart-table">
      <summary>The numbers, as a table</summary>
      {rows.length === 0 ? (
        <p className="muted">No model calls in this range.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <caption>
              {measure === "tokens" ? "Tokens (input and output)" : "Cost in US dollars"} per UTC {unit}, by {groupBy}
            </caption>
            <thead>
              <tr>
                <th scope="col">{unit === "hour" ? "Hour" : "Day"}</th>
                {chart.groups.map((g) => (
                  <th scope="col" key={g.name}>
                    {g.name}
                  </th>
                ))}
                <th scope="col">Total</th>
                {line && <th scope="col">Spent in period (budget {fmt(line.limit)})</th>}
              </tr>
            </thead>
            <tbody>
              {rows.map(({ start, i }) => (
                <tr key={start}>
                  <th scope="row">
                    <time dateTime={new Date(start).toISOString()}>{bucketLabel(start, bucket)}</time>
                  </th>
                  {chart.groups.map((g) => (
                    <td key={g.name}>{fmt(g.values[i])}</td>
                  ))}
                  <td>{fmt(chart.totals[i])}</td>
                  {line && <td className={line.spent[i] >= line.limit ? "over" : undefined}>{fmt(line.spent[i])}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </details>
  );
}
