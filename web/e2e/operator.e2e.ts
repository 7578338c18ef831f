import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { patience, seriousViolations, type AxeViolation } from "./app";
import { describeE2E, errorsOf, launchBrowser, openPage, screenshot, startServer, type AgentsServer } from "./harness";

// An operator's view: the usage page's chart over time with the budget
// as a line, and a session's timeline of runs, live while one runs; on a
// desktop and a phone, each with no serious accessibility violation.
describeE2E("an operator's view", () => {
  let server: AgentsServer;
  let browser: Browser;
  let boss: string;

  async function made(agent: string, title: string, text: string, wait = true): Promise<string> {
    const res = await server.request("POST", `/v1/sessions${wait ? "?wait=true&timeout=60s" : ""}`, { agent, title, message: { text } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    boss = await made("boss", "Ask the researcher", "How deep is the ocean?");
    await made("counter", "Count the words", "the quick brown fox jumps over the lazy dog");
    await made("chat", "Say hello", "hello");
    // A budget of tokens per day, for the chart to draw as a line.
    const res = await server.request("PUT", "/v1/owners/local/budget", { tokens: 5000, period: "day" });
    expect(res.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  function describeViolations(vs: AxeViolation[]): string {
    return vs.map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")} — ${n.failureSummary ?? ""}`).join("\n")}`).join("\n");
  }

  async function noSeriousViolations(page: Page) {
    const vs = await seriousViolations(page);
    expect(vs, describeViolations(vs)).toEqual([]);
  }

  const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  async function usageChart(page: Page) {
    const chart = page.getByRole("region", { name: "Over time (UTC)" });
    await chart.waitFor({ timeout: patience });
    const figure = chart.getByRole("img", { name: /^Usage per day:/ });
    await figure.waitFor({ timeout: patience });
    // Drawn: uPlot's canvas is in the figure.
    await chart.locator(".chart-canvas canvas").first().waitFor({ timeout: patience });
    expect(await figure.getAttribute("aria-label")).toMatch(/by 4 groups; .*budget 5.0k tokens/);
    return chart;
  }

  test("the usage page draws tokens per day by agent with the budget as a line, and the same numbers as a table", async () => {
    const page = await openPage(browser, `${server.url}/usage`, { viewport: { width: 1280, height: 1000 } });
    const chart = await usageChart(page);
    for (const name of ["boss", "researcher", "counter", "chat", "budget 5.0k"]) await chart.locator(".chart-legend").getByText(name).first().waitFor({ timeout: patience });
    await chart.getByText("The numbers, as a table").click();
    const table = chart.getByRole("table", { name: "Tokens (input and output) per UTC day, by agent" });
    await table.waitFor({ timeout: patience });
    const head = await table.locator("thead").textContent();
    for (const name of ["Day", "boss", "researcher", "counter", "chat", "Total", "Spent in period (budget 5.0k)"]) expect(head).toContain(name);
    expect(await table.locator("tbody tr").count()).toBe(1);
    await chart.getByText("The numbers, as a table").click();
    await page.getByRole("heading", { name: "Over time (UTC)" }).scrollIntoViewIfNeeded();
    await screenshot(page, "usage-chart");
    await noSeriousViolations(page);

    // By model, and per hour: the helper's calls are the same model's.
    await chart.getByRole("combobox", { name: "By" }).selectOption("model");
    await chart.getByRole("combobox", { name: "Per" }).selectOption({ label: "hour, last 48" });
    await chart.getByRole("img", { name: /^Usage per hour: .* by 1 group;/ }).waitFor({ timeout: patience });
    // An admin (auth is off: everyone is) sums every owner's, by owner,
    // against no one budget.
    await chart.getByRole("combobox", { name: "By" }).selectOption("owner");
    await chart.getByRole("img", { name: /^Usage per hour: [\d.k]+ tokens over 48 hours by 1 group; most on .*\)\.$/ }).waitFor({ timeout: patience });
    expect(await chart.locator(".chart-legend").textContent()).not.toContain("budget");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("on a phone the chart fits the screen", async () => {
    const page = await openPage(browser, `${server.url}/usage`, { viewport: { width: 390, height: 844 } });
    await usageChart(page);
    expect(await overflow(page)).toBe(0);
    const canvas = await page.locator(".chart-canvas canvas").first().boundingBox();
    expect(canvas && canvas.x >= 0 && canvas.x + canvas.width <= 390).toBe(true);
    await page.getByRole("heading", { name: "Over time (UTC)" }).scrollIntoViewIfNeeded();
    await screenshot(page, "phone-usage-chart");
    await noSeriousViolations(page);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("a session's timeline nests its helper's run under the call that started it, with durations and tokens", async () => {
    const page = await openPage(browser, `${server.url}/sessions/${boss}`, { viewport: { width: 1280, height: 900 } });
    await page.getByRole("navigation", { name: "Session views" }).getByRole("link", { name: "Timeline" }).click();
    const list = page.getByRole("list", { name: "Runs, steps and calls as they ran" });
    await list.waitFor({ timeout: patience });
    // The parent's run, two steps, the helper call and, inside it, the
    // helper's own run.
    await expect.poll(async () => (await list.getByRole("listitem").allTextContents()).map((t) => t.replace(/\s+/g, " ")), { timeout: patience }).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Run: run \(message\) — [\d.]+ m?s, \d+ tok$/),
        expect.stringMatching(/^Step: step 1/),
        expect.stringMatching(/^Model call: e2e-model — [\d.]+ m?s, \d+ tok$/),
        expect.stringMatching(/^Helper: prompt_agent_researcher↗ — [\d.]+ m?s, \d+ tok$/),
        expect.stringMatching(/^Step: step 2/),
      ]),
    );
    expect(await list.getByText("Run: ").count()).toBe(2);
    await expect.poll(() => page.getByRole("status").filter({ hasText: /runs? over/ }).textContent(), { timeout: patience }).toMatch(/^1 run over [\d.]+ (ms|s)\.$/);
    await screenshot(page, "timeline");
    await noSeriousViolations(page);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("the timeline of a run under way grows live, and ends when the run does", async () => {
    const id = await made("slow", "A slow answer", "take your time", false);
    const page = await openPage(browser, `${server.url}/sessions/${id}/timeline`, { viewport: { width: 390, height: 844 } });
    const summary = page.getByRole("status").filter({ hasText: /runs? over/ });
    await expect.poll(() => summary.textContent(), { timeout: patience }).toMatch(/, running\.$/);
    const model = page.getByRole("listitem").filter({ hasText: "Model call: model call" });
    await model.getByText("running").waitFor({ timeout: patience });
    expect(await overflow(page)).toBe(0);
    await screenshot(page, "phone-timeline-live");
    await noSeriousViolations(page);
    // The answer arrives: the call is the model's, and nothing runs.
    await expect.poll(() => summary.textContent(), { timeout: 60_000 }).toMatch(/^1 run over [\d.]+ s\.$/);
    await page.getByRole("listitem").filter({ hasText: "Model call: e2e-model" }).waitFor({ timeout: patience });
    expect(await page.getByRole("list", { name: "Runs, steps and calls as they ran" }).getByText("running").count()).toBe(0);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });
});
