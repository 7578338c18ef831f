import { describe, expect, it } from "vitest";
import { relativeTime } from "./relative-time";

describe("relativeTime", () => {
  const now = Date.UTC(2026, 11, 7, 12, 0, 0);
  const ago = (s: number) => relativeTime(now - s * 1000, now);

  it("tells moments a few seconds apart apart, not all 'now'", () => {
    expect(ago(0)).toBe("now");
    expect(ago(3)).toBe("now");
    expect(ago(12)).not.toBe("now");
    expect(ago(12)).not.toBe(ago(40));
    expect(ago(40)).toMatch(/40/);
  });

  it("counts minutes, hours and days as they pass", () => {
    expect(ago(120)).toMatch(/2/);
    expect(ago(5 * 60)).toMatch(/5/);
    expect(ago(3 * 3600)).toMatch(/3/);
    expect(ago(5 * 60)).not.toBe(ago(3 * 3600));
    expect(ago(2 * 86400)).not.toBe(ago(2 * 3600));
  });

  it("reads a moment a little ahead of this clock as now", () => {
    expect(relativeTime(now + 20_000, now)).toBe("now");
  });

  it("reads a moment further ahead as to come", () => {
    expect(relativeTime(now + 3_600_000, now)).toMatch(/1/);
    expect(relativeTime(now + 3_600_000, now)).not.toBe(relativeTime(now - 3_600_000, now));
    expect(relativeTime(now + 5 * 60_000, now)).toMatch(/5/);
  });
});
