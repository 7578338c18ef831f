import axe from "axe-core";

// seriousViolations are axe's findings of serious or critical impact under
// root, one line each (rule: elements), so a failing test names them.
// Contrast is left out: jsdom computes no styles to judge it by (the
// browser tests check it on the real page).
export async function seriousViolations(root: Element): Promise<string[]> {
  const res = await axe.run(root, { rules: { "color-contrast": { enabled: false } }, resultTypes: ["violations"] });
  return res.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}
