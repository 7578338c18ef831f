import type { Browser, Page } from "playwright-core";
import { expect, test } from "vitest";
import { patience, seriousViolations, sessionIdOf, waitForTurn, type AxeViolation } from "./app";
import { type AgentsServer, describeE2E, errorsOf, openPage, screenshot, withServerAndBrowser } from "./harness";

// Schedules through the web app against the real server: a schedule made
// through the API is listed with its next firing times, paused from the
// list (and the server says it is), and its page shows its firings, each
// linked to the session it started; a schedule made from the form, a
// cron expression the server refuses marked at its field. On a phone the
// list fits the screen.
describeE2E("the schedules page", () => {
  let server: AgentsServer;
  let browser: Browser;
  withServerAndBrowser((s, b) => {
    [server, browser] = [s, b];
  });

  // The Connect protocol's JSON, as a script would call it.
  interface Schedule {
    id: string;
    enabled?: boolean;
    nextFirings?: string[];
  }
  async function call<T>(method: string, body: unknown): Promise<T> {
    const res = await server.request("POST", `/agents.v1.ScheduleService/${method}`, body);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return JSON.parse(text) as T;
  }

  function describeViolations(vs: AxeViolation[]): string {
    return vs.map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")} — ${n.failureSummary ?? ""}`).join("\n")}`).join("\n");
  }
  async function noSeriousViolations(page: Page) {
    const vs = await seriousViolations(page);
    expect(vs, describeViolations(vs)).toEqual([]);
  }

  const list = (page: Page) => page.getByRole("list", { name: "Schedules" });
  const item = (page: Page, name: string) => list(page).getByRole("listitem", { name, exact: true });

  test("a schedule every hour is listed with its next firings, paused, and its firings open their sessions", async () => {
    const made = Date.now();
    const { schedule } = await call<{ schedule: Schedule }>("CreateSchedule", { name: "Hourly check", agent: "chat", every: "1h", message: { text: "check the queue" } });
    // An interval's first firing is one interval after it is made.
    const next = (schedule.nextFirings ?? []).map((t) => Date.parse(t));
    expect(next).toHaveLength(5);
    expect(next[0] - made).toBeGreaterThan(59 * 60_000);
    expect(next[0] - made).toBeLessThan(61 * 60_000);
    // A firing by hand, so the history has a session to open.
    const { firing } = await call<{ firing: { sessionId: string } }>("FireSchedule", { scheduleId: schedule.id });
    expect(firing.sessionId).toBeTruthy();

    const page = await openPage(browser, server.url + "/");
    await page.getByRole("banner").getByRole("link", { name: "Schedules" }).click();
    const hourly = item(page, "Hourly check");
    await hourly.waitFor({ timeout: patience });
    const text = await hourly.textContent();
    expect(text).toContain("starts a session of chat");
    expect(text).toContain("every 1h");
    expect(text).toContain("enabled");
    // The next three times, each how far off and when: the same as the API's.
    const times = hourly.getByRole("list", { name: "Next firings" }).locator("time");
    expect(await times.count()).toBe(3);
    // (To the millisecond: the page rounds the server's nanoseconds.)
    const shown = async (i: number) => Date.parse((await times.nth(i).getAttribute("datetime"))!);
    expect(Math.abs((await shown(0)) - next[0])).toBeLessThanOrEqual(1);
    expect(Math.abs((await shown(1)) - next[1])).toBeLessThanOrEqual(1);
    expect(await times.first().textContent()).toMatch(/^in (1 ?h|60 ?min)/);
    await screenshot(page, "schedules");
    await noSeriousViolations(page);

    await hourly.getByRole("button", { name: "Pause" }).click();
    await hourly.getByRole("button", { name: "Resume" }).waitFor({ timeout: patience });
    expect(await hourly.textContent()).toContain("Paused: it does not fire until it is resumed.");
    expect(await hourly.getByRole("list", { name: "Next firings" }).count()).toBe(0);
    const paused = await call<{ schedule: Schedule }>("GetSchedule", { scheduleId: schedule.id });
    expect(paused.schedule.enabled ?? false).toBe(false);
    expect(paused.schedule.nextFirings ?? []).toEqual([]);

    await hourly.getByRole("link", { name: "History" }).click();
    await page.waitForURL(`${server.url}/schedules/${schedule.id}`, { timeout: patience });
    const row = page.getByRole("table", { name: "Firings" }).getByRole("row").filter({ hasText: "fired by hand" });
    await row.waitFor({ timeout: patience });
    expect(await row.textContent()).toContain("started a session");
    const session = row.getByRole("link", { name: firing.sessionId, exact: true });
    expect(await session.getAttribute("href")).toBe(`/sessions/${firing.sessionId}`);
    // The run it started stops with the offline model's answer, and the
    // history says how it ended.
    await expect.poll(() => row.textContent(), { timeout: patience }).toMatch(/ready/);
    await screenshot(page, "schedule-history");
    await noSeriousViolations(page);

    await session.click();
    await page.waitForURL(/\/sessions\/[^/]+$/, { timeout: patience });
    expect(sessionIdOf(page)).toBe(firing.sessionId);
    await waitForTurn(page, "check the queue");
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  test("the form marks a cron expression the server refuses at its field, and makes the schedule once it is right", async () => {
    const page = await openPage(browser, server.url + "/schedules");
    await page.getByRole("link", { name: "New schedule" }).click();
    const form = page.getByRole("main");
    await form.getByRole("combobox", { name: "Agent", exact: true }).selectOption("chat");
    await form.getByRole("radio", { name: "at the times of a cron expression" }).check();
    const cron = form.getByRole("textbox", { name: "Cron expression" });
    await cron.fill("0 7 * *");
    await form.getByRole("combobox", { name: "Time zone" }).selectOption("Europe/Paris");
    await form.getByRole("textbox", { name: "Message", exact: true }).fill("good morning");
    await form.getByRole("button", { name: "Create the schedule" }).click();
    await expect.poll(() => cron.getAttribute("aria-invalid"), { timeout: patience }).toBe("true");
    await noSeriousViolations(page);

    await cron.fill("0 7 * * 1-5");
    await form.getByRole("button", { name: "Create the schedule" }).click();
    await page.waitForURL(/\/schedules\/[^/+]+$/, { timeout: patience });
    await page.getByText("cron 0 7 * * 1-5 in Europe/Paris").waitFor({ timeout: patience });
    // Its next times are at 07:00 in Paris, on weekdays.
    const times = page.getByRole("list", { name: "Next firings" }).locator("time");
    await times.first().waitFor({ timeout: patience });
    expect(await times.count()).toBe(5);
    for (const t of await times.all()) {
      const at = new Date((await t.getAttribute("datetime"))!);
      const paris = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Paris", weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(at);
      expect(paris).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 07:00$/);
    }
    await page.getByText("It has not fired yet.").waitFor({ timeout: patience });
    // The refused create is a 400 the browser logs; the page showed it.
    expect(errorsOf(page).filter((e) => !/status of 400/.test(e))).toEqual([]);
    await page.close();
  });

  test("on a phone the list fits the screen", async () => {
    await call("CreateSchedule", { name: "Nightly summary of the repository", agent: "chat", cron: "30 2 * * *", timezone: "America/New_York", message: { text: "summarise" } });
    const page = await openPage(browser, server.url + "/schedules", { viewport: { width: 390, height: 844 } });
    await item(page, "Nightly summary of the repository").waitFor({ timeout: patience });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    const box = await list(page).boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    // Signed out, the bar keeps every page's link on one line.
    const bar = await page.getByRole("banner").boundingBox();
    expect(bar && bar.width <= 390 && bar.height < 60).toBe(true);
    await screenshot(page, "phone-schedules");
    await noSeriousViolations(page);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });
});
