// How the schedules pages word a schedule: its target, its timing (a cron
// expression read in a time zone, an interval, or one time), its next
// firing times, and what each of its firings did. Pure, so the words are
// tested without a page.

import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { relativeTime } from "../../../components/relative-time";
import { statusLabel } from "../../../components/status-badge";
import { FiringStatus, type Schedule, type ScheduleFiring } from "../../../gen/agents/v1/schedule_pb";
import { SessionStatus } from "../../../gen/agents/v1/session_pb";

// Timing is a schedule's timing, to show: its kind and its text.
export interface Timing {
  kind: "cron" | "every" | "at" | "none";
  // The expression, the interval (`1h30m`) or the time, worded.
  text: string;
  // The time zone the expression or the time is read in; none for an
  // interval, which counts from its start in no zone.
  zone?: string;
}

// timingOf is the timing of a schedule. A cron expression with no time
// zone is read in UTC, as the server reads it.
export function timingOf(s: Schedule, locale?: string): Timing {
  if (s.cron) return { kind: "cron", text: s.cron, zone: s.timezone || "UTC" };
  if (s.every) return { kind: "every", text: shortDuration(s.every) };
  if (s.at) return { kind: "at", text: absoluteTime(timestampDate(s.at), s.timezone || undefined, locale), zone: s.timezone || undefined };
  return { kind: "none", text: "no timing" };
}

// timingText is the timing in one phrase: "cron 0 7 * * 1-5 in
// Europe/Paris", "every 1h30m", "once, at Thu, 24 Dec 2026, 07:00 CET".
export function timingText(s: Schedule, locale?: string): string {
  const t = timingOf(s, locale);
  switch (t.kind) {
    case "cron":
      return `cron ${t.text} in ${t.zone}`;
    case "every":
      return `every ${t.text}`;
    case "at":
      return `once, at ${t.text}`;
    default:
      return t.text;
  }
}

// targetText says what each firing does: "starts a session of chat",
// "posts to session s-1".
export function targetText(s: Pick<Schedule, "agent" | "sessionId">): string {
  if (s.agent) return `starts a session of ${s.agent}`;
  if (s.sessionId) return `posts to session ${s.sessionId}`;
  return "no target";
}

// scheduleName is what to call a schedule: its name, else its id.
export function scheduleName(s: Pick<Schedule, "name" | "id">): string {
  return s.name || s.id;
}

// shortDuration words a Go duration without its zero units, as a person
// writes it: "1h0m0s" → "1h", "1h30m0s" → "1h30m", "90s" → "1m30s". Text
// it does not read is given back as it is.
export function shortDuration(d: string): string {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, "µs": 1e-6, ns: 1e-9 };
  const re = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/gy;
  let seconds = 0;
  let at = 0;
  for (const m of d.matchAll(re)) {
    seconds += Number(m[1]) * units[m[2]];
    at = m.index + m[0].length;
  }
  if (at === 0 || at !== d.length || !Number.isInteger(seconds) || seconds === 0) return d;
  const h = Math.floor(seconds / 3600);
  const min = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}h` : ""}${min ? `${min}m` : ""}${s ? `${s}s` : ""}`;
}

// absoluteTime is a moment as a date and a time in a time zone (the
// viewer's when none), with the zone's short name, so a time read in
// another zone says so.
export function absoluteTime(d: Date, zone?: string, locale?: string): string {
  return new Intl.DateTimeFormat(locale, {
    weekday: "short",
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZone: zone,
    timeZoneName: "short",
  }).format(d);
}

// NextFiring is one of a schedule's next times, to show.
export interface NextFiring {
  iso: string;
  ms: number;
  // How far off it is: "in 5 min.", "tomorrow".
  relative: string;
  // When, in the schedule's time zone (the viewer's for an interval).
  absolute: string;
}

// Upcoming is what a schedule will do next: its next times, or why it
// has none.
export interface Upcoming {
  state: "scheduled" | "paused" | "done";
  firings: NextFiring[];
  // What to say in place of the times when there are none.
  note?: string;
}

// upcoming is a schedule's next firings as the server counted them, each
// relative to now and absolute in the zone its timing is read in. A
// paused schedule has none; a schedule of one time that passed is done.
export function upcoming(s: Schedule, now: number, locale?: string): Upcoming {
  if (!s.enabled) return { state: "paused", firings: [], note: "Paused: it does not fire until it is resumed." };
  const zone = timingOf(s).zone;
  const firings = s.nextFirings.map((t) => nextFiring(t, now, zone, locale));
  if (firings.length === 0) return { state: "done", firings, note: s.at ? "Done: its one time has passed." : "No next firing." };
  return { state: "scheduled", firings };
}

function nextFiring(t: Timestamp, now: number, zone: string | undefined, locale?: string): NextFiring {
  const d = timestampDate(t);
  return { iso: d.toISOString(), ms: d.getTime(), relative: relativeTime(d.getTime(), now), absolute: absoluteTime(d, zone, locale) };
}

const firingLabels: Record<FiringStatus, string> = {
  [FiringStatus.UNSPECIFIED]: "unknown",
  [FiringStatus.STARTED]: "started a session",
  [FiringStatus.POSTED]: "posted",
  [FiringStatus.QUEUED]: "queued as mail",
  [FiringStatus.SKIPPED]: "skipped",
  [FiringStatus.FAILED]: "failed",
};

// firingStatusText is what a firing did, in a few words.
export function firingStatusText(f: Pick<ScheduleFiring, "status">): string {
  return firingLabels[f.status] ?? "unknown";
}

// firingTags are what else to know of a firing: it caught up for times
// missed while no server ran, or it was fired by hand.
export function firingTags(f: Pick<ScheduleFiring, "catchUp" | "manual">): string[] {
  const out: string[] = [];
  if (f.catchUp) out.push("catch-up");
  if (f.manual) out.push("fired by hand");
  return out;
}

// outcomeText is how the run a firing started ended: "ready (done)",
// "failed (budget_exceeded)"; while it goes on, "running"; for a firing
// that sent nothing, "—".
export function outcomeText(f: Pick<ScheduleFiring, "status" | "outcome" | "outcomeReason">): string {
  if (f.status === FiringStatus.SKIPPED || f.status === FiringStatus.FAILED) return "—";
  if (f.outcome === SessionStatus.UNSPECIFIED) return f.status === FiringStatus.QUEUED ? "with the session's run" : "running";
  const label = statusLabel(f.outcome);
  return f.outcomeReason ? `${label} (${f.outcomeReason})` : label;
}
