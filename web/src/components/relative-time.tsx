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

// relativeTime says how long ago a moment was: "now", "5 min. ago", …
export function relativeTime(ms: number, now = Date.now()): string {
  const s = Math.round((ms - now) / 1000);
  if (Math.abs(s) < 45) return "now";
  for (const [unit, size] of units) {
    if (Math.abs(s) >= size * 0.9 || unit === "minute") return format.format(Math.round(s / size), unit);
  }
  return "now";
}

// useNow re-renders every interval, so relative times stay true.
export function useNow(intervalMs = 30_000): number {
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
