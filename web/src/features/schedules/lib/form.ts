// The schedule form: its fields as the page holds them (text, as the
// inputs give it), the form of a stored schedule, the CreateSchedule
// or UpdateSchedule request they make, and which field a refusal of the
// server's belongs to, so the page shows it there.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";
import {
  ScheduleMissed,
  ScheduleOverlap,
  type CreateScheduleRequestSchema,
  type Schedule,
  type UpdateScheduleRequestSchema,
} from "../../../gen/agents/v1/schedule_pb";

export type TargetKind = "agent" | "session";
export type TimingKind = "cron" | "every" | "at";

export interface ScheduleForm {
  name: string;
  target: TargetKind;
  agent: string;
  sessionId: string;
  timing: TimingKind;
  cron: string;
  every: string;
  // A datetime-local input's value ("2026-12-24T07:00"), a wall time in
  // timezone.
  at: string;
  // The IANA zone cron and at are read in.
  timezone: string;
  // The message's text.
  text: string;
  overlap: ScheduleOverlap;
  missed: ScheduleMissed;
  // Created paused (enabled false).
  paused: boolean;
}

// FormField is a field of the form a refusal is shown at.
export type FormField = "name" | "agent" | "sessionId" | "cron" | "every" | "at" | "timezone" | "text" | "overlap" | "missed";

export interface FieldError {
  // The field at fault; none when the refusal is of the whole.
  field?: FormField;
  message: string;
}

// emptyForm is a new form: an agent target, an hourly interval, the
// viewer's time zone, missed times skipped.
export function emptyForm(timezone = localZone()): ScheduleForm {
  return {
    name: "",
    target: "agent",
    agent: "",
    sessionId: "",
    timing: "every",
    cron: "",
    every: "1h",
    at: "",
    timezone,
    text: "",
    overlap: ScheduleOverlap.SKIP,
    missed: ScheduleMissed.SKIP,
    paused: false,
  };
}

export type CreateRequest = MessageInitShape<typeof CreateScheduleRequestSchema>;
export type UpdateRequest = MessageInitShape<typeof UpdateScheduleRequestSchema>;

// formOf is the form of a stored schedule, to edit: its one time as a
// wall time in its zone; an unset rule as the server reads it (skip).
export function formOf(s: Schedule, fallbackZone = localZone()): ScheduleForm {
  const timing: TimingKind = s.cron ? "cron" : s.at ? "at" : "every";
  const timezone = s.timezone || (s.cron ? "UTC" : fallbackZone);
  return {
    name: s.name,
    target: s.sessionId ? "session" : "agent",
    agent: s.agent,
    sessionId: s.sessionId,
    timing,
    cron: s.cron,
    every: s.every,
    at: s.at ? wallTimeOf(timestampDate(s.at).getTime(), timezone) : "",
    timezone,
    text: s.message?.text ?? "",
    overlap: s.overlap || ScheduleOverlap.SKIP,
    missed: s.missed || ScheduleMissed.SKIP,
    paused: !s.enabled,
  };
}

// updateRequest is the UpdateSchedule request that makes a schedule
// whose form was before what the form is now: only what changed, a
// target or a timing whole (the server counts the next firing from
// now when the timing changes, so an unchanged one is not sent); or the
// first field to fill or fix. Pausing is not the form's: Pause does it.
export function updateRequest(id: string, before: ScheduleForm, now: ScheduleForm): { request: UpdateRequest } | { error: FieldError } {
  const checked = createRequest({ ...now, paused: false });
  if ("error" in checked) return checked;
  const c = checked.request;
  const req: UpdateRequest = { scheduleId: id };
  if (now.name.trim() !== before.name.trim()) req.name = now.name.trim();
  const target = (f: ScheduleForm) => (f.target === "agent" ? `agent:${f.agent.trim()}` : `session:${f.sessionId.trim()}`);
  if (target(now) !== target(before)) {
    if (now.target === "agent") req.agent = c.agent;
    else req.sessionId = c.sessionId;
  }
  const value = (f: ScheduleForm) => `${f.timing}:${f.timing === "cron" ? f.cron.trim() : f.timing === "every" ? f.every.trim() : f.at}`;
  const zoned = now.timing !== "every";
  const zoneChanged = zoned && now.timezone !== before.timezone;
  // One time read in another zone is another moment: it is sent again.
  if (value(now) !== value(before) || (now.timing === "at" && zoneChanged)) {
    if (now.timing === "cron") req.cron = c.cron;
    else if (now.timing === "every") req.every = c.every;
    else req.at = c.at;
  }
  if (zoneChanged) req.timezone = now.timezone;
  if (now.text !== before.text) req.message = { text: now.text };
  if (now.target === "session" && now.overlap !== before.overlap) req.overlap = now.overlap;
  if (now.missed !== before.missed) req.missed = now.missed;
  return { request: req };
}

// changed reports whether an update request changes anything.
export function changes(req: UpdateRequest): boolean {
  return Object.keys(req).some((k) => k !== "scheduleId");
}

// createRequest is the request the form makes, or the first field a
// person must fill or fix before it is sent. The server checks the rest
// (the expression, the interval, the zone, the target) and names the
// field it refuses.
export function createRequest(f: ScheduleForm): { request: CreateRequest } | { error: FieldError } {
  const fail = (field: FormField, message: string) => ({ error: { field, message } });
  const req: CreateRequest = { name: f.name.trim(), missed: f.missed };
  if (f.target === "agent") {
    if (!f.agent.trim()) return fail("agent", "Pick the agent each firing starts a session of.");
    req.agent = f.agent.trim();
  } else {
    if (!f.sessionId.trim()) return fail("sessionId", "Give the id of the session each firing posts to.");
    req.sessionId = f.sessionId.trim();
    req.overlap = f.overlap;
  }
  switch (f.timing) {
    case "cron":
      if (!f.cron.trim()) return fail("cron", "Give a cron expression, such as 0 7 * * 1-5.");
      req.cron = f.cron.trim();
      req.timezone = f.timezone;
      break;
    case "every":
      if (!f.every.trim()) return fail("every", "Give an interval, such as 15m or 1h30m.");
      req.every = f.every.trim();
      break;
    case "at": {
      const ms = f.at ? wallTimeToMs(f.at, f.timezone) : undefined;
      if (ms === undefined) return fail("at", "Give the date and time it fires at.");
      req.at = timestampFromMs(ms);
      req.timezone = f.timezone;
      break;
    }
  }
  if (!f.text.trim()) return fail("text", "Write the message each firing sends.");
  req.message = { text: f.text };
  if (f.paused) req.enabled = false;
  return { request: req };
}

// The names a server's refusal may give a field by (the proto's, its
// JSON's, dotted into the message), to the form's.
const fieldNames: Record<string, FormField> = {
  name: "name",
  agent: "agent",
  session_id: "sessionId",
  sessionId: "sessionId",
  cron: "cron",
  every: "every",
  at: "at",
  timezone: "timezone",
  time_zone: "timezone",
  message: "text",
  "message.text": "text",
  text: "text",
  overlap: "overlap",
  missed: "missed",
};

// A message that starts with the name of a field no other word is
// spelled as ("cron expression …", "timezone …").
const leadingField = /^(cron|every|timezone|session_id)\b/i;

// The machine codes of a target that is not there, for the field that
// named it.
const codeFields: Record<string, FormField> = { unknown_agent: "agent", unknown_session: "sessionId" };

// refusalOf is where a failed CreateSchedule belongs: the field the
// server named (the error detail's `field`, else the `field: reason`
// its message starts with, else a field's name it starts with), the
// target a not-found code names, or none.
export function refusalOf(err: unknown): FieldError {
  const e = ConnectError.from(err);
  const message = e.rawMessage || e.message;
  const details = e.findDetails(ErrorDetailSchema);
  const named =
    details.find((d) => d.metadata.field)?.metadata.field ?? /^([A-Za-z_][\w.]*): /.exec(message)?.[1] ?? leadingField.exec(message)?.[1];
  if (named && (e.code === Code.InvalidArgument || e.code === Code.NotFound)) {
    const field = fieldNames[named] ?? fieldNames[named.toLowerCase()] ?? fieldNames[named.split(".")[0]];
    if (field) return { field, message };
  }
  for (const d of details) {
    const field = codeFields[d.code];
    if (field) return { field, message };
  }
  return { message };
}

// localZone is the viewer's IANA time zone.
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

// timeZones are the IANA zones to pick from, as the browser knows them,
// with UTC and the given ones (the viewer's) among them.
export function timeZones(...with_: string[]): string[] {
  const known = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  const all = new Set(known);
  for (const z of ["UTC", ...with_]) if (z) all.add(z);
  return [...all].sort((a, b) => (a === "UTC" ? -1 : b === "UTC" ? 1 : a.localeCompare(b)));
}

// wallTimeToMs is the moment a wall time ("2026-12-24T07:00", as a
// datetime-local input gives it) names in an IANA zone; undefined for
// text that is no such time. A wall time that a change to summer time
// skips is read with the offset before the change (02:30 is 03:30), one
// that the change back repeats as its later (with the winter offset).
export function wallTimeToMs(wall: string, zone: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(wall);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0));
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  if (Number.isNaN(asUtc) || new Date(asUtc).getUTCDate() !== d) return undefined;
  let offset: number;
  try {
    offset = offsetAt(asUtc, zone);
  } catch {
    return undefined;
  }
  const guess = asUtc - offset;
  const again = offsetAt(guess, zone);
  return again === offset ? guess : Math.max(guess, asUtc - again);
}

// wallTimeOf is a moment as a datetime-local input's value, a wall time
// in an IANA zone ("2026-12-24T07:00").
export function wallTimeOf(ms: number, zone: string): string {
  let offset = 0;
  try {
    offset = offsetAt(ms, zone);
  } catch {
    // An unknown zone: the moment in UTC.
  }
  return new Date(ms + offset).toISOString().slice(0, 16);
}

// offsetAt is how far a zone's wall clock is ahead of UTC at a moment,
// in milliseconds.
function offsetAt(ms: number, zone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(ms);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return wall - (ms - (((ms % 1000) + 1000) % 1000));
}
