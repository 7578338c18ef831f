// What the end-to-end tests do with the app, by the accessible names of
// its controls (listed at the top of web/src/features/chat/components/
// chat-page.tsx): start a session, send a message, wait for an answer,
// read the sidebar, run axe. Every wait is for a condition, with a
// timeout generous enough for a loaded machine.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";

/** How long a condition may take to hold on a slow machine. */
export const patience = 30_000;

/** The id of the session a page shows (from /sessions/ID). */
export function sessionIdOf(page: Page): string {
  const m = /\/sessions\/([^/?#]+)/.exec(new URL(page.url()).pathname);
  if (!m) throw new Error(`not on a session page: ${page.url()}`);
  return m[1];
}

/**
 * Starts a session with agent from the home page (the agent picker),
 * with a first message when given, and waits for its chat page.
 */
export async function startSession(page: Page, baseUrl: string, agent: string, message?: string): Promise<string> {
  if (new URL(page.url()).pathname !== "/") await page.goto(baseUrl + "/");
  await page.getByRole("radio", { name: agent, exact: true }).check({ timeout: patience });
  if (message) await page.getByLabel("First message (optional)").fill(message);
  await page.getByRole("button", { name: `Start a session with ${agent}` }).click();
  await page.waitForURL(/\/sessions\/[^/]+$/, { timeout: patience });
  await conversation(page).waitFor({ timeout: patience });
  // The chat is ready to take a message once it knows the session.
  await expect.poll(() => page.getByRole("textbox", { name: "Message" }).isEditable(), { timeout: patience }).toBe(true);
  return sessionIdOf(page);
}

/**
 * Picks an action of the session header's More menu (the rarely used
 * controls on a desktop: Hard cancel, Compact, Continue with…, Rename,
 * Budget, Export, Delete).
 */
export async function moreAction(page: Page, name: string): Promise<void> {
  await page.getByRole("toolbar", { name: "Session controls" }).getByRole("button", { name: "More" }).click();
  await page.getByRole("menu", { name: "More" }).getByRole("menuitem", { name, exact: true }).click();
}

/** The transcript. */
export function conversation(page: Page): Locator {
  return page.getByRole("log", { name: "Conversation" });
}

/** The composer's text box. */
export function composer(page: Page): Locator {
  return page.getByRole("textbox", { name: "Message" });
}

/** Types text in the composer and presses Send. */
export async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text);
  await page.getByRole("button", { name: "Send", exact: true }).click();
  // The composer empties once the message was taken (posted or drafted).
  await expect.poll(() => composer(page).inputValue(), { timeout: patience }).toBe("");
}

/** The stored turns of the conversation (not the answer being streamed). */
export function storedTurns(page: Page): Locator {
  return conversation(page).getByRole("article").and(page.locator(':not([aria-busy="true"])'));
}

/** The stored turns of the conversation whose text contains text. */
export function turnWith(page: Page, text: string): Locator {
  return storedTurns(page).filter({ hasText: text });
}

/** Waits until a stored turn of the conversation shows text. */
export async function waitForTurn(page: Page, text: string, timeout = patience): Promise<Locator> {
  const turn = turnWith(page, text).first();
  await turn.waitFor({ timeout });
  return turn;
}

/** The answer being streamed ("<agent>, answering"). */
export function liveTurn(page: Page): Locator {
  return conversation(page).getByRole("article", { name: /, answering$/ });
}

/** The session's status badge ("Status: ready", …). */
export function statusBadge(page: Page): Locator {
  return page.getByRole("status", { name: /^Status: / });
}

/** Waits until the session's status is one of these (ready, running, waiting, paused, failed). */
export async function waitForStatus(page: Page, ...statuses: string[]): Promise<void> {
  const names = statuses.map((s) => `Status: ${s}`);
  await expect.poll(async () => names.includes((await statusBadge(page).getAttribute("aria-label")) ?? ""), { timeout: patience }).toBe(true);
}

/** The connection state in the app's bar ("Live", "Reconnecting…"). */
export function connectionState(page: Page): Locator {
  return page.getByRole("banner").getByRole("status");
}

/** The sidebar. */
export function sidebar(page: Page): Locator {
  return page.getByRole("navigation", { name: "Sessions" });
}

/** The sidebar's link to a session. */
export function sidebarLink(page: Page, id: string): Locator {
  return sidebar(page).locator(`a[href="/sessions/${id}"]`);
}

/**
 * Records every text the streamed answer shows, from now on, in the page
 * itself (a MutationObserver sees each chunk however fast they come);
 * streamedTexts reads them back.
 */
export async function recordStreamedText(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __streamed: string[] };
    w.__streamed = [];
    const log = document.querySelector('[role="log"][aria-label="Conversation"]')!;
    new MutationObserver(() => {
      const live = log.querySelector('article[aria-label$=", answering"]');
      const text = live?.querySelector(".markdown")?.textContent ?? "";
      if (text && w.__streamed[w.__streamed.length - 1] !== text) w.__streamed.push(text);
    }).observe(log, { subtree: true, childList: true, characterData: true });
  });
}

/** The texts of the streamed answer seen since recordStreamedText. */
export function streamedTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __streamed: string[] }).__streamed);
}

const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Runs axe-core in the page and returns the violations of serious or critical impact. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated, not added as a script tag: the app's content policy runs
  // no inline script, and what the browser's debugging protocol runs is
  // not the page's.
  await page.evaluate(readFileSync(axePath, "utf8"));
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const res = await axe.run(document, { resultTypes: ["violations"] });
    return res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}
