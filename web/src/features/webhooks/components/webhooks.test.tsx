import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventService, SubscribeScope } from "../../../gen/agents/v1/event_pb";
import {
  DeliveryStatus,
  WebhookDeliverySchema,
  WebhookSchema,
  WebhookService,
  WebhookStatus,
  type CreateWebhookRequest,
  type ListWebhookDeliveriesRequest,
  type Webhook,
  type WebhookDelivery,
} from "../../../gen/agents/v1/webhook_pb";
import { EventStream } from "../../../lib/event-stream";
import { EventStreamContext } from "../../../lib/event-stream-context";
import { createEventClient } from "../../../lib/transport";
import { seriousViolations } from "../../../testing/a11y";
import { Where, where } from "../../../testing/where";
import { NewWebhookPage } from "./new-webhook";
import { WebhookPage } from "./webhook-page";
import { WebhooksPage } from "./webhooks-page";

const streams: EventStream[] = [];
afterEach(() => {
  cleanup();
  for (const s of streams.splice(0)) s.stop();
  vi.unstubAllGlobals();
});

const minute = 60_000;

// fakeServer keeps webhooks as the server does: a private address
// refused at the URL, a server-wide webhook refused to a non-admin, the
// secret in the create answer only; every owner's listed to an admin;
// the deliveries newest first, filtered by status; each webhook with its
// newest delivery.
function fakeServer(opts: { admin?: boolean } = {}) {
  const admin = opts.admin ?? true;
  const created: CreateWebhookRequest[] = [];
  const listed: ListWebhookDeliveriesRequest[] = [];
  const webhooks = new Map<string, Webhook>();
  const deliveries = new Map<string, WebhookDelivery[]>();
  const add = (w: MessageInitShape<typeof WebhookSchema>) => {
    const id = `wh_${webhooks.size + 1}`;
    const v = create(WebhookSchema, { id, owner: "alice", status: WebhookStatus.ENABLED, created: timestampFromMs(Date.now() - 60 * minute), ...w });
    webhooks.set(id, v);
    return v;
  };
  const ops = add({ url: "https://ops.example.com/agents", events: ["run.stopped", "run.failed"], description: "the ops room" });
  const dead = add({
    url: "https://gone.example.com/hook",
    events: ["call.waiting"],
    status: WebhookStatus.FAILING,
    statusReason: "every attempt failed for 3 days (since 2026-12-04 10:00 UTC): HTTP 502",
    failingSince: timestampFromMs(Date.now() - 3 * 24 * 60 * minute),
  });
  const bobs = create(WebhookSchema, { id: "wh_bob", owner: "bob", url: "https://bob.example.com/in", events: ["agent.changed"], status: WebhookStatus.DISABLED });
  deliveries.set(ops.id, [
    create(WebhookDeliverySchema, {
      id: "msg_2",
      webhookId: ops.id,
      seq: 12n,
      kind: "session.failed",
      sessionId: "s-9",
      status: DeliveryStatus.PENDING,
      attempts: 2,
      lastStatusCode: 500,
      lastError: "HTTP 500",
      lastAttempt: timestampFromMs(Date.now() - minute / 3),
      nextAttempt: timestampFromMs(Date.now() + 2 * minute),
      created: timestampFromMs(Date.now() - minute),
    }),
    create(WebhookDeliverySchema, {
      id: "msg_1",
      webhookId: ops.id,
      seq: 7n,
      kind: "run.stopped",
      sessionId: "s-7",
      status: DeliveryStatus.DELIVERED,
      attempts: 1,
      lastStatusCode: 204,
      lastAttempt: timestampFromMs(Date.now() - 10 * minute),
      created: timestampFromMs(Date.now() - 10 * minute),
      delivered: timestampFromMs(Date.now() - 10 * minute),
    }),
  ]);
  const withLast = (w: Webhook) => create(WebhookSchema, { ...w, lastDelivery: deliveries.get(w.id)?.[0] });
  const get = (id: string) => {
    const w = webhooks.get(id);
    if (!w) throw new ConnectError(`unknown webhook ${id}`, Code.NotFound);
    return w;
  };
  const transport = createRouterTransport(({ service }) => {
    service(EventService, {
      async *subscribe(req, ctx) {
        if (req.scope === SubscribeScope.ALL && !admin) throw new ConnectError("the all scope needs an admin token", Code.PermissionDenied);
        yield { item: { case: "heartbeat", value: { seq: 1n } } };
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      },
    });
    service(WebhookService, {
      listWebhooks: (req) => {
        if (req.allOwners && !admin) throw new ConnectError("every owner's webhooks need an admin token", Code.PermissionDenied);
        return { webhooks: [...webhooks.values(), ...(req.allOwners ? [bobs] : [])].map(withLast) };
      },
      getWebhook: (req) => ({ webhook: withLast(get(req.webhookId)) }),
      createWebhook: (req) => {
        created.push(req);
        if (req.serverWide && !admin) throw new ConnectError("a server-wide webhook needs an admin token", Code.PermissionDenied);
        const host = new URL(req.url).hostname;
        if (host.startsWith("10.") || host === "127.0.0.1")
          throw new ConnectError(
            `url: ${host} is a private address, which webhooks may not reach: the server's operator may allow such targets in the config file`,
            Code.InvalidArgument,
          );
        const w = add({ url: req.url, events: req.events, serverWide: req.serverWide, description: req.description });
        return { webhook: w, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };
      },
      updateWebhook: (req) => {
        const w = get(req.webhookId);
        if (req.enabled !== undefined) {
          w.status = req.enabled ? WebhookStatus.ENABLED : WebhookStatus.DISABLED;
          w.statusReason = "";
          if (req.enabled) w.failingSince = undefined;
        }
        return { webhook: withLast(w) };
      },
      deleteWebhook: (req) => {
        get(req.webhookId);
        webhooks.delete(req.webhookId);
        return {};
      },
      listWebhookDeliveries: (req) => {
        listed.push(req);
        get(req.webhookId);
        const all = (deliveries.get(req.webhookId) ?? []).filter((d) => !req.status || d.status === req.status);
        return { deliveries: req.limit ? all.slice(0, req.limit) : all };
      },
    });
  });
  return { transport, created, listed, webhooks, deliveries, ops, dead };
}

function mount(path: string, server = fakeServer()) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const stream = new EventStream(createEventClient(server.transport));
  streams.push(stream);
  stream.start();
  const view = render(
    <TransportProvider transport={server.transport}>
      <QueryClientProvider client={qc}>
        <EventStreamContext.Provider value={stream}>
          <MemoryRouter initialEntries={[path]}>
            <Where />
            <Routes>
              <Route path="/webhooks" element={<WebhooksPage />} />
              <Route path="/webhooks/+new" element={<NewWebhookPage />} />
              <Route path="/webhooks/:id" element={<WebhookPage />} />
            </Routes>
          </MemoryRouter>
        </EventStreamContext.Provider>
      </QueryClientProvider>
    </TransportProvider>,
  );
  return { ...server, view, stream };
}

const list = async () => screen.findByRole("list", { name: "Webhooks" });
const item = async (url: string) => within(await list()).getByRole("listitem", { name: url });

describe("the webhooks page", () => {
  it("lists each webhook's URL, events, state and last delivery, in one request", async () => {
    const { view, listed } = mount("/webhooks");
    const ops = await item("https://ops.example.com/agents");
    expect(within(ops).getByRole("link", { name: "https://ops.example.com/agents" }).getAttribute("href")).toBe("/webhooks/wh_1");
    const events = within(within(ops).getByRole("list", { name: "Events" })).getAllByRole("listitem");
    expect(events.map((e) => e.textContent)).toEqual(["run.stopped", "run.failed"]);
    expect(ops.textContent).toContain("enabled");
    expect(ops.textContent).toContain("the ops room");
    // The newest delivery: pending after a 500, and when that was.
    expect(ops.textContent).toMatch(/session\.failed pending \(HTTP 500\), last tried \S.* ago/);
    expect(within(ops).getByRole("link", { name: "Deliveries" }).getAttribute("href")).toBe("/webhooks/wh_1");

    // Disabled by the server for failing: it says why and since when.
    const dead = await item("https://gone.example.com/hook");
    expect(dead.textContent).toContain("failing");
    expect(dead.textContent).toContain("Disabled by the server: every attempt failed for 3 days (since 2026-12-04 10:00 UTC): HTTP 502. Enable it to start again.");
    expect(dead.textContent).toMatch(/every attempt failed since .*2026.* \(3 ?d\w* ago\)/);
    expect(dead.textContent).toContain("nothing delivered yet");
    expect(within(dead).getByRole("button", { name: "Enable" })).toBeTruthy();
    expect(await seriousViolations(view.container)).toEqual([]);
    // Each webhook carries its last delivery: no webhook's deliveries
    // are asked for.
    expect(listed).toEqual([]);
  });

  it("disables a webhook and enables it again", async () => {
    const { webhooks } = mount("/webhooks");
    fireEvent.click(within(await item("https://ops.example.com/agents")).getByRole("button", { name: "Disable" }));
    await waitFor(async () => expect(within(await item("https://ops.example.com/agents")).getByRole("button", { name: "Enable" })).toBeTruthy());
    expect(webhooks.get("wh_1")?.status).toBe(WebhookStatus.DISABLED);
    expect((await item("https://ops.example.com/agents")).textContent).toContain("Disabled: it is sent no event until it is enabled.");
    fireEvent.click(within(await item("https://ops.example.com/agents")).getByRole("button", { name: "Enable" }));
    await waitFor(async () => expect(within(await item("https://ops.example.com/agents")).getByRole("button", { name: "Disable" })).toBeTruthy());
    expect(webhooks.get("wh_1")?.status).toBe(WebhookStatus.ENABLED);
  });

  it("deletes a webhook only once confirmed", async () => {
    const { webhooks } = mount("/webhooks");
    fireEvent.click(within(await item("https://ops.example.com/agents")).getByRole("button", { name: "Delete" }));
    const dialog = screen.getByRole("dialog", { name: "Delete the webhook?" });
    expect(dialog.textContent).toContain("https://ops.example.com/agents");
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(webhooks.has("wh_1")).toBe(true);
    fireEvent.click(within(await item("https://ops.example.com/agents")).getByRole("button", { name: "Delete" }));
    fireEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete the webhook" }));
    await waitFor(() => expect(within(screen.getByRole("list", { name: "Webhooks" })).queryByRole("listitem", { name: "https://ops.example.com/agents" })).toBeNull());
    expect(webhooks.has("wh_1")).toBe(false);
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("lists every owner's for an admin who asks", async () => {
    mount("/webhooks");
    const every = await screen.findByRole("checkbox", { name: "Every owner's webhooks" });
    expect(within(await list()).queryByRole("listitem", { name: "https://bob.example.com/in" })).toBeNull();
    fireEvent.click(every);
    const bobs = await waitFor(async () => item("https://bob.example.com/in"));
    expect(bobs.textContent).toContain("bob");
    expect(bobs.textContent).toContain("disabled");
  });

  it("offers a non-admin neither every owner's nor a server-wide webhook", async () => {
    const { stream } = mount("/webhooks", fakeServer({ admin: false }));
    await item("https://ops.example.com/agents");
    expect(await stream.whenAdminKnown()).toBe(false);
    expect(screen.queryByRole("checkbox", { name: "Every owner's webhooks" })).toBeNull();
    fireEvent.click(screen.getByRole("link", { name: "New webhook" }));
    await screen.findByRole("heading", { name: "New webhook" });
    expect(screen.queryByRole("checkbox", { name: "Server-wide" })).toBeNull();
  });

  it("says so when there are none", async () => {
    const server = fakeServer();
    server.webhooks.clear();
    mount("/webhooks", server);
    await screen.findByText(/No webhooks yet/);
  });
});

describe("the new-webhook form", () => {
  it("marks a private address the server refuses at the URL, then shows the secret once", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    const { created, view } = mount("/webhooks/+new");
    const url = await screen.findByRole("textbox", { name: "URL" });
    fireEvent.change(url, { target: { value: "http://10.1.2.3/hook" } });
    // The events the server accepts, each a box; two are ticked to start.
    const boxes = within(screen.getByRole("group", { name: "Events" })).getAllByRole("checkbox");
    expect(boxes).toHaveLength(7);
    fireEvent.click(screen.getByRole("checkbox", { name: /^call\.waiting/ }));
    fireEvent.click(screen.getByRole("button", { name: "Create the webhook" }));
    await waitFor(() => expect(url.getAttribute("aria-invalid")).toBe("true"));
    const why = document.getElementById(url.getAttribute("aria-describedby")!.split(" ")[0])!;
    expect(why.textContent).toContain("10.1.2.3 is a private address");
    expect(created[0]).toMatchObject({ url: "http://10.1.2.3/hook", events: ["run.stopped", "run.failed", "call.waiting"] });
    expect(await seriousViolations(view.container)).toEqual([]);

    // Changed, the mark goes; made, the secret shows this once.
    fireEvent.change(url, { target: { value: "https://hooks.example.com/in" } });
    expect(url.getAttribute("aria-invalid")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Create the webhook" }));
    const secret = await screen.findByRole("region", { name: "Its signing secret" });
    expect(secret.textContent).toContain("you will not see it again");
    expect((within(secret).getByRole("textbox", { name: "Secret" }) as HTMLInputElement).value).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    fireEvent.click(within(secret).getByRole("button", { name: "Copy" }));
    await within(secret).findByText("Copied to the clipboard.");
    expect(writeText).toHaveBeenCalledWith("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(await seriousViolations(view.container)).toEqual([]);

    // Left, the secret is gone: the list and the webhook's page never
    // carry it.
    fireEvent.click(screen.getByRole("link", { name: "All webhooks" }));
    await item("https://hooks.example.com/in");
    expect(document.body.textContent).not.toContain("whsec_");
  });

  it("asks for a URL and an event before sending anything", async () => {
    const { created } = mount("/webhooks/+new");
    fireEvent.click(await screen.findByRole("button", { name: "Create the webhook" }));
    const url = screen.getByRole("textbox", { name: "URL" });
    await waitFor(() => expect(url.getAttribute("aria-invalid")).toBe("true"));
    fireEvent.change(url, { target: { value: "https://hooks.example.com/in" } });
    for (const name of [/^run\.stopped/, /^run\.failed/]) fireEvent.click(screen.getByRole("checkbox", { name }));
    fireEvent.click(screen.getByRole("button", { name: "Create the webhook" }));
    const group = screen.getByRole("group", { name: "Events" });
    await waitFor(() => expect(group.textContent).toContain("Pick at least one event."));
    expect(created).toEqual([]);
  });

  it("makes an admin's server-wide webhook", async () => {
    const { created } = mount("/webhooks/+new");
    fireEvent.change(await screen.findByRole("textbox", { name: "URL" }), { target: { value: "https://all.example.com/in" } });
    fireEvent.click(await screen.findByRole("checkbox", { name: "Server-wide" }));
    fireEvent.click(screen.getByRole("button", { name: "Create the webhook" }));
    await screen.findByRole("region", { name: "Its signing secret" });
    expect(created[0].serverWide).toBe(true);
  });
});

describe("a webhook's page", () => {
  it("lists its deliveries with their event, outcome, last attempt, attempts, status code and next attempt", async () => {
    const server = mount("/webhooks/wh_1");
    const { view, listed } = server;
    const table = await screen.findByRole("table", { name: "Deliveries" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows).toHaveLength(2);
    const cells = (row: HTMLElement) => within(row).getAllByRole("cell").map((c) => c.textContent);
    const [pending, delivered] = rows.map(cells);
    expect(pending[0]).toContain("session.failed");
    expect(pending[0]).toContain("#12");
    expect(within(rows[0]).getByRole("link", { name: "session s-9" }).getAttribute("href")).toBe("/sessions/s-9");
    // Retried: when it was last tried. Its error only names the status,
    // which has its column.
    expect(pending[1]).toMatch(/^pendinglast tried \S.* ago$/);
    expect(within(rows[0]).getAllByRole("cell")[1].querySelector("time")?.getAttribute("dateTime")).toBe(
      timestampDate(server.deliveries.get("wh_1")![0].lastAttempt!).toISOString(),
    );
    expect(pending.slice(2, 4)).toEqual(["2", "500"]);
    expect(pending[4]).toMatch(/^in 2 ?m/);
    // Delivered: when, which was its last attempt.
    expect(delivered[1]).toMatch(/^delivered\S.* ago$/);
    expect(delivered.slice(2, 5)).toEqual(["1", "204", "none"]);
    expect(await seriousViolations(view.container)).toEqual([]);

    // Only the failed ones: there are none.
    fireEvent.change(screen.getByRole("combobox", { name: "Show" }), { target: { value: String(DeliveryStatus.FAILED) } });
    await screen.findByText("No failed delivery.");
    expect(listed.at(-1)).toMatchObject({ webhookId: "wh_1", status: DeliveryStatus.FAILED });
  });

  it("enables a webhook the server disabled, and deletes one", async () => {
    const { webhooks } = mount("/webhooks/wh_2");
    const bar = await screen.findByRole("toolbar", { name: "Webhook actions" });
    expect(screen.getByRole("article").textContent).toContain("Disabled by the server");
    fireEvent.click(within(bar).getByRole("button", { name: "Enable" }));
    await within(bar).findByRole("button", { name: "Disable" });
    expect(webhooks.get("wh_2")?.status).toBe(WebhookStatus.ENABLED);
    await screen.findByText(/No delivery yet/);

    fireEvent.click(within(bar).getByRole("button", { name: "Delete" }));
    fireEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete the webhook" }));
    await waitFor(() => expect(where()).toBe("/webhooks"));
    expect(webhooks.has("wh_2")).toBe(false);
  });

  it("says so when the server knows no such webhook", async () => {
    mount("/webhooks/wh_404");
    expect((await screen.findByRole("alert")).textContent).toContain("unknown webhook wh_404");
  });
});
