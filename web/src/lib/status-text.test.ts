import { describe, expect, it } from "vitest";
import { statusText } from "./status-text";

describe("statusText", () => {
  it.each([
    ["waiting", "waiting", "waiting"],
    ["paused", "paused", "paused"],
    ["paused", " Paused ", "paused"],
    ["ready", "", "ready"],
    ["ready", undefined, "ready"],
    ["ready", "done", "ready — the run finished"],
    ["ready", "max_steps", "ready — the run reached its step limit"],
    ["failed", "model: connection refused", "failed — model: connection refused"],
  ])("%s with reason %j says %j", (label, reason, want) => {
    expect(statusText(label, reason)).toBe(want);
  });
});
