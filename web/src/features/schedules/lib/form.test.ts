import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";
import { ScheduleMissed, ScheduleOverlap, ScheduleSchema } from "../../../gen/agents/v1/schedule_pb";
import { changes, createRequest, emptyForm, formOf, refusalOf, timeZones, updateRequest, wallTimeOf, wallTimeToMs, type ScheduleForm } from "./form";

const form = (f: Partial<ScheduleForm>): ScheduleForm => ({ ...emptyForm("Europe/Paris"), agent: "chat", text: "Check the queue", ...f });

function request(f: Partial<ScheduleForm>) {
  const r = createRequest(form(f));
  if ("error" in r) throw new Error(r.error.message);
  return r.request;
}

describe("the new-schedule form's request", () => {
  it("of an agent and an interval sends neither a zone nor an overlap", () => {
    expect(request({ every: " 15m " })).toEqual({ name: "", agent: "chat", every: "15m", message: { text: "Check the queue" }, missed: ScheduleMissed.SKIP });
  });

  it("of a session and a cron expression sends the zone and the overlap", () => {
    const r = request({ target: "session", sessionId: "s-1", timing: "cron", cron: "0 7 * * 1-5", overlap: ScheduleOverlap.QUEUE, missed: ScheduleMissed.ONCE, name: " Mornings " });
    expect(r).toEqual({
      name: "Mornings",
      sessionId: "s-1",
      cron: "0 7 * * 1-5",
      timezone: "Europe/Paris",
      overlap: ScheduleOverlap.QUEUE,
      missed: ScheduleMissed.ONCE,
      message: { text: "Check the queue" },
    });
  });

  it("of one time reads the wall time in the zone picked", () => {
    const r = request({ timing: "at", at: "2026-12-24T07:00", timezone: "Europe/Paris" });
    expect(new Date(timestampMs(r.at as never)).toISOString()).toBe("2026-12-24T06:00:00.000Z");
    expect(r.timezone).toBe("Europe/Paris");
  });

  it("created paused is not enabled; otherwise enabled is left to the server", () => {
    expect(request({ paused: true }).enabled).toBe(false);
    expect("enabled" in request({})).toBe(false);
  });

  it.each([
    [{ agent: " " }, "agent"],
    [{ target: "session" as const }, "sessionId"],
    [{ timing: "cron" as const }, "cron"],
    [{ every: "" }, "every"],
    [{ timing: "at" as const }, "at"],
    [{ timing: "at" as const, at: "2026-02-30T07:00" }, "at"],
    [{ text: "  " }, "text"],
  ])("refuses %o at its field %s", (f, field) => {
    const r = createRequest(form(f));
    expect("error" in r && r.error.field).toBe(field);
  });
});

describe("a refusal of the server", () => {
  const refused = (message: string, code = Code.InvalidArgument, detail?: { code: string; metadata?: Record<string, string> }) =>
    new ConnectError(message, code, undefined, detail ? [{ desc: ErrorDetailSchema, value: create(ErrorDetailSchema, detail) }] : []);

  it("goes to the field its detail names", () => {
    expect(refusalOf(refused("bad cron expression", Code.InvalidArgument, { code: "invalid_argument", metadata: { field: "cron" } }))).toEqual({
      field: "cron",
      message: "bad cron expression",
    });
    expect(refusalOf(refused("x", Code.InvalidArgument, { code: "invalid_argument", metadata: { field: "session_id" } })).field).toBe("sessionId");
  });

  it("goes to the field its message starts with", () => {
    expect(refusalOf(refused('timezone: unknown time zone "Mars/Base"')).field).toBe("timezone");
    expect(refusalOf(refused("message.text: required")).field).toBe("text");
    expect(refusalOf(refused("every: at least 1s")).field).toBe("every");
    expect(refusalOf(refused('cron expression "0 7 * *": expected 5 fields')).field).toBe("cron");
    expect(refusalOf(refused("Timezone Mars/Base is unknown")).field).toBe("timezone");
  });

  it("of a target that is not there goes to the target", () => {
    expect(refusalOf(refused("no agent nope", Code.NotFound, { code: "unknown_agent" })).field).toBe("agent");
    expect(refusalOf(refused("no session s-9", Code.InvalidArgument, { code: "unknown_session" })).field).toBe("sessionId");
  });

  it("of the whole goes to no field", () => {
    expect(refusalOf(refused("permission denied", Code.PermissionDenied))).toEqual({ message: "permission denied" });
    expect(refusalOf(refused("bogus: thing")).field).toBeUndefined();
  });
});

describe("wallTimeToMs", () => {
  it.each([
    ["2026-12-24T07:00", "Europe/Paris", "2026-12-24T06:00:00.000Z"],
    ["2026-07-01T07:00", "Europe/Paris", "2026-07-01T05:00:00.000Z"],
    ["2026-07-01T07:00", "UTC", "2026-07-01T07:00:00.000Z"],
    ["2026-07-01T07:00", "America/New_York", "2026-07-01T11:00:00.000Z"],
    ["2026-07-01T07:00", "Asia/Kolkata", "2026-07-01T01:30:00.000Z"],
    // Skipped by summer time: read with the winter offset (03:30 CEST).
    ["2026-03-29T02:30", "Europe/Paris", "2026-03-29T01:30:00.000Z"],
    // Repeated by winter time: its later.
    ["2026-10-25T02:30", "Europe/Paris", "2026-10-25T01:30:00.000Z"],
  ])("%s in %s is %s", (wall, zone, iso) => expect(new Date(wallTimeToMs(wall, zone)!).toISOString()).toBe(iso));

  it("is undefined for what is no time, or no zone", () => {
    expect(wallTimeToMs("tomorrow", "UTC")).toBeUndefined();
    expect(wallTimeToMs("2026-02-30T07:00", "UTC")).toBeUndefined();
    expect(wallTimeToMs("2026-02-03T07:00", "Mars/Base")).toBeUndefined();
  });
});

describe("timeZones", () => {
  it("has UTC first and the viewer's zone among the browser's", () => {
    const zones = timeZones("Etc/Unknown");
    expect(zones[0]).toBe("UTC");
    expect(zones).toContain("Europe/Paris");
    expect(zones).toContain("Etc/Unknown");
    expect(new Set(zones).size).toBe(zones.length);
  });
});

describe("the form of a stored schedule", () => {
  const stored = create(ScheduleSchema, {
    id: "sch-1",
    name: "Mornings",
    sessionId: "s-1",
    cron: "0 7 * * 1-5",
    timezone: "Europe/Paris",
    message: { text: "good morning" },
    overlap: ScheduleOverlap.QUEUE,
    enabled: true,
  });

  it("holds what the schedule holds, its unset rules as the server reads them", () => {
    expect(formOf(stored, "Asia/Tokyo")).toEqual({
      name: "Mornings",
      target: "session",
      agent: "",
      sessionId: "s-1",
      timing: "cron",
      cron: "0 7 * * 1-5",
      every: "",
      at: "",
      timezone: "Europe/Paris",
      text: "good morning",
      overlap: ScheduleOverlap.QUEUE,
      missed: ScheduleMissed.SKIP,
      paused: false,
    });
    // A cron expression with no zone is read in UTC; an interval takes the viewer's.
    expect(formOf(create(ScheduleSchema, { cron: "@daily" }), "Asia/Tokyo").timezone).toBe("UTC");
    expect(formOf(create(ScheduleSchema, { every: "1h" }), "Asia/Tokyo")).toMatchObject({ timing: "every", every: "1h", timezone: "Asia/Tokyo", paused: true });
  });

  it("holds one time as the wall time in its zone, and gives the same moment back", () => {
    const at = new Date("2026-12-24T06:00:00Z");
    const f = formOf(create(ScheduleSchema, { agent: "chat", at: timestampFromDate(at), timezone: "Europe/Paris" }));
    expect(f).toMatchObject({ timing: "at", at: "2026-12-24T07:00", timezone: "Europe/Paris" });
    expect(wallTimeToMs(f.at, f.timezone)).toBe(at.getTime());
    expect(wallTimeOf(at.getTime(), "America/New_York")).toBe("2026-12-24T01:00");
  });

  it("updates only what changed", () => {
    const before = formOf(stored);
    const update = (f: Partial<ScheduleForm>) => {
      const r = updateRequest("sch-1", before, { ...before, ...f });
      if ("error" in r) throw new Error(r.error.message);
      return r.request;
    };
    expect(changes(update({}))).toBe(false);
    expect(update({ name: "Weekday mornings" })).toEqual({ scheduleId: "sch-1", name: "Weekday mornings" });
    expect(update({ cron: "0 8 * * 1-5" })).toEqual({ scheduleId: "sch-1", cron: "0 8 * * 1-5" });
    expect(update({ timezone: "Europe/London" })).toEqual({ scheduleId: "sch-1", timezone: "Europe/London" });
    expect(update({ timing: "every", every: "30m" })).toEqual({ scheduleId: "sch-1", every: "30m" });
    expect(update({ target: "agent", agent: "chat" })).toEqual({ scheduleId: "sch-1", agent: "chat" });
    expect(update({ text: "hello", overlap: ScheduleOverlap.SKIP, missed: ScheduleMissed.ONCE })).toEqual({
      scheduleId: "sch-1",
      message: { text: "hello" },
      overlap: ScheduleOverlap.SKIP,
      missed: ScheduleMissed.ONCE,
    });
  });

  it("sends one time again when its zone changes: it is another moment", () => {
    const before = formOf(create(ScheduleSchema, { agent: "chat", at: timestampFromDate(new Date("2026-12-24T06:00:00Z")), timezone: "Europe/Paris", message: { text: "x" } }));
    const r = updateRequest("sch-1", before, { ...before, timezone: "UTC" });
    if ("error" in r) throw new Error(r.error.message);
    expect(r.request.timezone).toBe("UTC");
    expect(new Date(timestampMs(r.request.at as never)).toISOString()).toBe("2026-12-24T07:00:00.000Z");
  });

  it("refuses what it would refuse of a new one", () => {
    const before = formOf(stored);
    const r = updateRequest("sch-1", before, { ...before, cron: " " });
    expect("error" in r && r.error.field).toBe("cron");
  });
});
