import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { patience, seriousViolations, type AxeViolation } from "./app";
import { type AgentsServer, describeE2E, errorsOf, openPage, screenshot, withServerAndBrowser } from "./harness";

// Webhooks through the web app against the real server, its deliveries
// to an endpoint on this machine (the config allows 127.0.0.1 alone):
// a private address refused at the URL field; a webhook made from the
// form, its secret shown once and the one the endpoint checks each
// request's signature with; its deliveries, a failed attempt then a
// delivered one, as the page reads them again; disabled and deleted
// from the list. On a phone the bar's More menu leads there and the
// pages fit the screen.

// The config file: webhooks may reach this machine's loopback address
// (the receiver below), and nothing else that is not public.
const config = join(mkdtempSync(join(tmpdir(), "agents-e2e-webhooks-")), "agents.json");
writeFileSync(config, JSON.stringify({ webhooks: { allow_cidrs: ["127.0.0.1/32"], retry_base: "2s" } }));

// Receiver is the endpoint: it answers every request with status, and
// keeps what it took and whether its signature held with secret.
class Receiver {
  status = 500;
  secret = "";
  readonly taken: { id: string; kind: string; signed: boolean }[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    let r: Receiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const kind = (JSON.parse(body.toString()) as { kind?: string }).kind ?? "";
        r!.taken.push({ id: String(req.headers["webhook-id"]), kind, signed: r!.verify(req.headers, body) });
        res.writeHead(r!.status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    r = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/agents`);
    return r;
  }

  // verify checks the Standard Webhooks signature with the secret.
  private verify(h: IncomingHttpHeaders, body: Buffer): boolean {
    if (!this.secret.startsWith("whsec_")) return false;
    const key = Buffer.from(this.secret.slice("whsec_".length), "base64");
    const expected = createHmac("sha256", key).update(`${String(h["webhook-id"])}.${String(h["webhook-timestamp"])}.`).update(body).digest();
    return String(h["webhook-signature"] ?? "")
      .split(" ")
      .some((sig) => {
        const [version, value] = sig.split(",");
        const given = Buffer.from(value ?? "", "base64");
        return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
      });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describeE2E("the webhooks pages", () => {
  let server: AgentsServer;
  let browser: Browser;
  let receiver: Receiver;
  withServerAndBrowser(
    (s, b) => {
      [server, browser] = [s, b];
    },
    { args: ["--config", config] },
  );
  beforeAll(async () => {
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  // The Connect protocol's JSON, as a script would call it.
  interface Webhook {
    id: string;
    url: string;
    status?: string;
  }
  async function call<T>(service: string, method: string, body: unknown): Promise<T> {
    const res = await server.request("POST", `/agents.v1.${service}/${method}`, body);
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

  const list = (page: Page) => page.getByRole("list", { name: "Webhooks" });
  const item = (page: Page, url: string) => list(page).getByRole("listitem", { name: url, exact: true });
  // The refused create is a 400 the browser logs; the page showed it.
  const unexpected = (page: Page) => errorsOf(page).filter((e) => !/status of 400/.test(e));

  test("a webhook made from the form: a private address refused at its field, the secret shown once signs the deliveries, which the page follows", async () => {
    const page = await openPage(browser, server.url + "/");
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.getByRole("banner").getByRole("link", { name: "Webhooks" }).click();
    await page.getByText("No webhooks yet").waitFor({ timeout: patience });
    await page.getByRole("link", { name: "New webhook" }).click();

    const form = page.getByRole("main");
    const url = form.getByRole("textbox", { name: "URL" });
    await url.fill("http://10.20.30.40/agents");
    await form.getByRole("checkbox", { name: /^call\.waiting/ }).check();
    await form.getByRole("button", { name: "Create the webhook" }).click();
    await expect.poll(() => url.getAttribute("aria-invalid"), { timeout: patience }).toBe("true");
    const why = form.getByRole("alert");
    expect(await why.textContent()).toMatch(/10\.20\.30\.40 is a private address, which webhooks may not reach/);
    expect(await url.getAttribute("aria-describedby")).toContain(await why.getAttribute("id"));
    await screenshot(page, "webhook-form-refused");
    await noSeriousViolations(page);

    await url.fill(receiver.url);
    await form.getByRole("button", { name: "Create the webhook" }).click();
    const once = page.getByRole("region", { name: "Its signing secret" });
    await once.waitFor({ timeout: patience });
    expect(await once.textContent()).toContain("you will not see it again");
    const secret = await once.getByRole("textbox", { name: "Secret" }).inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await once.getByRole("button", { name: "Copy" }).click();
    await once.getByText("Copied to the clipboard.").waitFor({ timeout: patience });
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshot(page, "webhook-secret");
    await noSeriousViolations(page);
    receiver.secret = secret;

    // The server keeps it as made, and no answer of it carries the secret.
    const { webhooks } = await call<{ webhooks: Webhook[] }>("WebhookService", "ListWebhooks", {});
    expect(webhooks.map((w) => w.url)).toEqual([receiver.url]);
    expect(JSON.stringify(webhooks)).not.toContain(secret);

    // A run stops: its run.stopped is sent, and the receiver refuses the
    // first attempt.
    await call("SessionService", "CreateSession", { agent: "chat", message: { text: "hello hooks" }, wait: true });
    await page.getByRole("link", { name: "Its deliveries" }).click();
    await page.waitForURL(`${server.url}/webhooks/${webhooks[0].id}`, { timeout: patience });
    const table = page.getByRole("table", { name: "Deliveries" });
    const row = table.getByRole("row").filter({ hasText: "run.stopped" });
    await expect.poll(() => row.textContent(), { timeout: patience }).toMatch(/pending/);
    const cells = row.getByRole("cell");
    await expect.poll(() => cells.nth(3).textContent(), { timeout: patience }).toBe("500");
    expect(Number(await cells.nth(2).textContent())).toBeGreaterThanOrEqual(1);
    expect(await cells.nth(4).locator("time").count()).toBeGreaterThan(0);
    await noSeriousViolations(page);

    // The receiver takes the next attempt; the page reads the log again
    // on its own.
    receiver.status = 204;
    await expect.poll(() => row.textContent(), { timeout: patience }).toMatch(/delivered/);
    expect(await cells.nth(3).textContent()).toBe("204");
    expect(await cells.nth(4).textContent()).toBe("none");
    const runStopped = receiver.taken.filter((t) => t.kind === "run.stopped");
    expect(runStopped.length).toBeGreaterThanOrEqual(2);
    // Every attempt of the one event carries the same id, signed with the
    // secret the page showed.
    expect(new Set(runStopped.map((t) => t.id)).size).toBe(1);
    expect(runStopped.every((t) => t.signed)).toBe(true);
    // Delivered, it is failing no more, and the page says so.
    await expect.poll(() => page.getByRole("article").textContent(), { timeout: patience }).not.toContain("every attempt failed since");

    // Another run stops while the receiver refuses: its delivery waits,
    // newest first, over the one delivered.
    receiver.status = 500;
    await call("SessionService", "CreateSession", { agent: "chat", message: { text: "hello again" }, wait: true });
    await expect.poll(() => table.getByRole("row").count(), { timeout: patience }).toBe(3);
    const newest = table.getByRole("row").nth(1);
    await expect.poll(() => newest.textContent(), { timeout: patience }).toMatch(/pending/);
    await expect.poll(() => newest.getByRole("cell").nth(3).textContent(), { timeout: patience }).toBe("500");
    await screenshot(page, "webhook-deliveries");

    // The list: its state and its last delivery; disabled, the server
    // says so; deleted once confirmed.
    // A second one, server-wide and disabled, beside it.
    const other = await call<{ webhook: Webhook }>("WebhookService", "CreateWebhook", {
      url: `${receiver.url}/operators`,
      events: ["agent.changed", "schedule.fired"],
      serverWide: true,
      description: "the operators' room",
    });
    await call("WebhookService", "UpdateWebhook", { webhookId: other.webhook.id, enabled: false });
    await page.getByRole("link", { name: "All webhooks" }).click();
    const mine = item(page, receiver.url);
    await mine.waitFor({ timeout: patience });
    await expect.poll(() => mine.textContent(), { timeout: patience }).toMatch(/run\.stopped pending \(HTTP 500/);
    expect(await mine.textContent()).toContain("enabled");
    await mine.getByRole("button", { name: "Disable" }).click();
    await mine.getByRole("button", { name: "Enable" }).waitFor({ timeout: patience });
    expect(await mine.textContent()).toContain("Disabled: it is sent no event until it is enabled.");
    const got = await call<{ webhook: Webhook }>("WebhookService", "GetWebhook", { webhookId: webhooks[0].id });
    expect(got.webhook.status).toBe("WEBHOOK_STATUS_DISABLED");
    await screenshot(page, "webhooks");
    await noSeriousViolations(page);

    await mine.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete the webhook?" });
    await dialog.getByRole("button", { name: "Delete the webhook" }).click();
    await mine.waitFor({ state: "detached", timeout: patience });
    const left = await call<{ webhooks?: Webhook[] }>("WebhookService", "ListWebhooks", {});
    expect((left.webhooks ?? []).map((w) => w.url)).toEqual([`${receiver.url}/operators`]);
    await call("WebhookService", "DeleteWebhook", { webhookId: other.webhook.id });
    expect(unexpected(page)).toEqual([]);
    await page.close();
  });

  test("on a phone the bar's More menu leads to the webhooks, and their pages fit the screen", async () => {
    receiver.status = 204;
    const { webhook } = await call<{ webhook: Webhook }>("WebhookService", "CreateWebhook", {
      url: `${receiver.url}/with/a/rather/long/path/that/has/to/wrap/on/a/phone`,
      events: ["run.stopped", "run.failed", "call.waiting", "session.idle"],
      description: "the night shift",
    });
    await call("SessionService", "CreateSession", { agent: "chat", message: { text: "hello from the phone" }, wait: true });
    const viewport = { width: 390, height: 844 };
    const page = await openPage(browser, server.url + "/", { viewport });
    const bar = page.getByRole("banner");
    await bar.getByRole("button", { name: "More" }).click();
    await page.getByRole("menu", { name: "More" }).getByRole("menuitem", { name: "Webhooks" }).click();
    const hook = item(page, webhook.url);
    await hook.waitFor({ timeout: patience });
    await expect.poll(() => hook.textContent(), { timeout: patience }).toMatch(/delivered \(HTTP 204\)/);
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await fits()).toBe(0);
    const box = await list(page).boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= viewport.width).toBe(true);
    // The bar stays one line.
    const barBox = await bar.boundingBox();
    expect(barBox && barBox.width <= viewport.width && barBox.height < 60).toBe(true);
    await screenshot(page, "phone-webhooks");
    await noSeriousViolations(page);

    await hook.getByRole("link", { name: "Deliveries" }).click();
    const table = page.getByRole("table", { name: "Deliveries" });
    await table.getByRole("row").filter({ hasText: "delivered" }).first().waitFor({ timeout: patience });
    expect(await fits()).toBe(0);
    await screenshot(page, "phone-webhook-deliveries");
    await noSeriousViolations(page);

    await page.goto(server.url + "/webhooks/+new");
    await page.getByRole("textbox", { name: "URL" }).waitFor({ timeout: patience });
    expect(await fits()).toBe(0);
    await noSeriousViolations(page);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });
});
