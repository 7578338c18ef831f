import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { relativeTime } from "../../../components/relative-time";
import { FiringStatus, ScheduleFiringSchema, ScheduleSchema } from "../../../gen/agents/v1/schedule_pb";
import { SessionStatus } from "../../../gen/agents/v1/session_pb";
import { absoluteTime, firingStatusText, firingTags, outcomeText, shortDuration, targetText, timingText, upcoming } from "./spec";

const now = Date.parse("2026-12-07T13:00:00Z");

describe("a schedule's timing", () => {
  it("words a cron expression with the zone it is read in, UTC when it names none", () => {
    expect(timingText(create(ScheduleSchema, { cron: "0 7 * * 1-5", timezone: "Europe/Paris" }))).toBe("cron 0 7 * * 1-5 in Europe/Paris");
    expect(timingText(create(ScheduleSchema, { cron: "@daily" }))).toBe("cron @daily in UTC");
  });

  it("words an interval as a person writes it", () => {
    expect(timingText(create(ScheduleSchema, { every: "1h0m0s" }))).toBe("every 1h");
    expect(timingText(create(ScheduleSchema, { every: "15m" }))).toBe("every 15m");
  });

  it("words one time in its zone", () => {
    const s = create(ScheduleSchema, { at: timestampFromDate(new Date("2026-12-24T06:00:00Z")), timezone: "Europe/Paris" });
    expect(timingText(s, "en-GB")).toBe("once, at Thu, 24 Dec 2026, 07:00 CET");
  });

  it("says what a firing does to its target", () => {
    expect(targetText({ agent: "chat", sessionId: "" })).toBe("starts a session of chat");
    expect(targetText({ agent: "", sessionId: "s-1" })).toBe("posts to session s-1");
  });
});

describe("shortDuration", () => {
  it.each([
    ["1h0m0s", "1h"],
    ["1h30m0s", "1h30m"],
    ["90s", "1m30s"],
    ["2s", "2s"],
    ["36h", "36h"],
    // Not read: given back as it came.
    ["1.5ms", "1.5ms"],
    ["soon", "soon"],
    ["1h and", "1h and"],
  ])("%s is %s", (d, want) => expect(shortDuration(d)).toBe(want));
});

describe("a schedule's next firings", () => {
  const every = (enabled: boolean) =>
    create(ScheduleSchema, { every: "1h", enabled, nextFirings: [timestampFromMs(now + 3_600_000), timestampFromMs(now + 7_200_000)] });

  it("are each relative to now and absolute", () => {
    const u = upcoming(every(true), now, "en-GB");
    expect(u.state).toBe("scheduled");
    // As the app words a time from now everywhere (in the browser's language).
    expect(u.firings.map((f) => f.relative)).toEqual([relativeTime(now + 3_600_000, now), relativeTime(now + 7_200_000, now)]);
    expect(u.firings[0].relative).toMatch(/1/);
    expect(u.firings[0].iso).toBe("2026-12-07T14:00:00.000Z");
    expect(u.firings[0].absolute).toMatch(/^Mon, 7 Dec 2026, \d\d:00 /);
  });

  it("of a cron expression are shown in the zone it is read in", () => {
    const s = create(ScheduleSchema, { cron: "0 7 * * *", timezone: "Asia/Tokyo", enabled: true, nextFirings: [timestampFromDate(new Date("2026-12-07T22:00:00Z"))] });
    expect(upcoming(s, now, "en-GB").firings[0].absolute).toBe("Tue, 8 Dec 2026, 07:00 GMT+9");
  });

  it("are none while paused, and the page says so", () => {
    const u = upcoming(every(false), now);
    expect(u).toMatchObject({ state: "paused", firings: [] });
    expect(u.note).toMatch(/^Paused/);
  });

  it("are none once a schedule of one time has fired", () => {
    const s = create(ScheduleSchema, { at: timestampFromMs(now - 1000), enabled: true });
    expect(upcoming(s, now)).toMatchObject({ state: "done", note: "Done: its one time has passed." });
  });

  it("cross a change to winter time at the same wall time", () => {
    // 07:00 in Paris is 05:00Z in summer time and 06:00Z after it.
    const s = create(ScheduleSchema, {
      cron: "0 7 * * *",
      timezone: "Europe/Paris",
      enabled: true,
      nextFirings: [timestampFromDate(new Date("2026-10-24T05:00:00Z")), timestampFromDate(new Date("2026-10-25T06:00:00Z"))],
    });
    expect(upcoming(s, Date.parse("2026-10-23T12:00:00Z"), "en-GB").firings.map((f) => f.absolute)).toEqual([
      "Sat, 24 Oct 2026, 07:00 CEST",
      "Sun, 25 Oct 2026, 07:00 CET",
    ]);
  });
});

describe("a firing", () => {
  it("says what it did, and how its run ended", () => {
    const started = create(ScheduleFiringSchema, { status: FiringStatus.STARTED, outcome: SessionStatus.READY, outcomeReason: "done" });
    expect(firingStatusText(started)).toBe("started a session");
    expect(outcomeText(started)).toBe("ready (done)");
    expect(outcomeText({ ...started, outcome: SessionStatus.UNSPECIFIED, outcomeReason: "" })).toBe("running");
    expect(outcomeText({ ...started, outcome: SessionStatus.FAILED, outcomeReason: "budget_exceeded" })).toBe("failed (budget_exceeded)");
    expect(outcomeText({ status: FiringStatus.SKIPPED, outcome: SessionStatus.UNSPECIFIED, outcomeReason: "" })).toBe("—");
    expect(firingStatusText({ status: FiringStatus.QUEUED })).toBe("queued as mail");
  });

  it("is tagged a catch-up or fired by hand", () => {
    expect(firingTags({ catchUp: true, manual: false })).toEqual(["catch-up"]);
    expect(firingTags({ catchUp: false, manual: true })).toEqual(["fired by hand"]);
    expect(firingTags({ catchUp: false, manual: false })).toEqual([]);
  });
});

describe("absoluteTime", () => {
  it("names the zone it is in", () => {
    expect(absoluteTime(new Date("2026-07-01T12:00:00Z"), "America/New_York", "en-GB")).toBe("Wed, 1 Jul 2026, 08:00 GMT-4");
  });
});
