import { useEffect, useState } from "react";

const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto", style: "narrow" });

// relativeTime says how long ago a moment was: "now" for the last few
// seconds, then "20 sec. ago", "5 min. ago", "3 hr. ago", … so that
// sessions made a minute apart read apart. A moment less than a minute
// ahead of this clock (the server's runs a little fast) is "now"; one
// further ahead (a schedule's next firing) reads "in 5 min.", "in 3 hr.".
export function relativeTime(ms: number, now = Date.now()): string {
  const ahead = Math.round((ms - now) / 1000);
  if (ahead >= 60) return inUnits(ahead);
  const s = Math.min(0, ahead);
  if (s > -5) return "now";
  if (s > -60) return format.format(Math.round(s / 5) * 5 || -5, "second");
  return inUnits(s);
}

// inUnits words s seconds (negative: ago) in the largest unit it nearly
// fills, minutes at the least.
function inUnits(s: number): string {
  for (const [unit, size] of units) {
    if (Math.abs(s) >= size * 0.9 || unit === "minute") return format.format(Math.round(s / size), unit);
  }
  return "now";
}

// useNow re-renders every interval, so relative times stay true to their
// step (five seconds under a minute).
export function useNow(intervalMs = 5_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

// RelativeTime is a <time> with the exact moment as its tooltip.
export function RelativeTime({ ms, now }: { ms: number; now?: number }) {
  const d = new Date(ms);
  return (
    <time dateTime={d.toISOString()} title={d.toLocaleString()}>
      {relativeTime(ms, now)}
    </time>
  );
}
