import { describe, expect, it } from "vitest";
import { formatUsd } from "./format";

describe("formatUsd", () => {
  it("words dollars, cents and what a few tokens cost", () => {
    expect([0, 0.00001, 0.0012, 0.001, 0.5, 12.345, 2500].map(formatUsd)).toEqual(["$0.00", "<$0.0001", "$0.0012", "$0.001", "$0.50", "$12.35", "$2,500"]);
  });
});
