import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router";
import { afterEach, describe, expect, it } from "vitest";
import { AuthStore, type TokenStorage } from "../features/auth/api/auth-store";
import { UsagePage } from "../features/budgets/components/usage-page";
import { Home } from "../features/sessions/components/home";
import { AgentService } from "../gen/agents/v1/agent_pb";
import { EventService, SubscribeScope } from "../gen/agents/v1/event_pb";
import {
  BudgetPeriod,
  BudgetSource,
  OwnerService,
  OwnerUsageSchema,
  type OwnerUsage,
  type SetOwnerBudgetRequest,
} from "../gen/agents/v1/owner_pb";
import { SessionService, type CreateSessionRequest } from "../gen/agents/v1/session_service_pb";
import { Providers } from "./providers";
import { seriousViolations } from "../testing/a11y";

afterEach(cleanup);

type UsageInit = Exclude<MessageInitShape<typeof OwnerUsageSchema>, OwnerUsage>;
const usage = (owner: string, init: Omit<UsageInit, "$typeName"> = {}): OwnerUsage =>
  create(OwnerUsageSchema, {
    owner,
    budget: { owner, budget: { tokens: 10_000n, costUsd: 2 }, period: BudgetPeriod.DAY, source: BudgetSource.OWNER },
    periodStart: timestampFromMs(Date.UTC(2026, 11, 2)),
    periodEnd: timestampFromMs(Date.UTC(2026, 11, 3)),
    current: { budget: { tokens: 10_000n, costUsd: 2 }, spent: { tokens: 2500n, costUsd: 0.5 }, left: { tokens: 7500n, costUsd: 1.5 } },
    total: { tokens: 123_456n, costUsd: 7.25 },
    ...init,
  });

// fakeServer answers as a server with budgets (or, with budgets false,
// as one without: OwnerService unimplemented); admin decides what the
// caller may read and set.
function fakeServer(opts: { budgets?: boolean; admin?: boolean } = {}) {
  const { budgets = true, admin = true } = opts;
  const created: CreateSessionRequest[] = [];
  const set: SetOwnerBudgetRequest[] = [];
  const owners = new Map<string, OwnerUsage>([
    ["alice", usage("alice")],
    ["bob", usage("bob", { budget: { owner: "bob", period: BudgetPeriod.TOTAL, source: BudgetSource.NONE }, current: { spent: { tokens: 40n } }, total: { tokens: 40n } })],
  ]);
  const transport = createRouterTransport((router) => {
    router.service(AgentService, { listAgents: () => ({ agents: [{ slug: "assistant", announce: "Answers" }] }) });
    router.service(SessionService, {
      listSessions: () => ({ sessions: [] }),
      createSession: (req) => {
        created.push(req);
        return { session: { meta: { id: "new-id", agent: req.agent } } };
      },
    });
    router.service(EventService, {
      async *subscribe(req, ctx) {
        if (req.scope === SubscribeScope.ALL && !admin) throw new ConnectError("the all scope needs an admin token", Code.PermissionDenied);
        yield { item: { case: "heartbeat", value: { seq: 1n } } };
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      },
    });
    if (budgets) {
      router.service(OwnerService, {
        getOwnerUsage: (req) => {
          const name = req.owner || "alice";
          if (name !== "alice" && !admin) throw new ConnectError("another owner's budget and usage need an admin token", Code.PermissionDenied);
          const u = owners.get(name);
          if (!u) return { usage: create(OwnerUsageSchema, { owner: name, budget: { owner: name, source: BudgetSource.NONE }, current: {}, total: {} }) };
          return { usage: u };
        },
        setOwnerBudget: (req) => {
          if (!admin) throw new ConnectError("setting a budget needs an admin token", Code.PermissionDenied);
          set.push(req);
          const b = { owner: req.owner, budget: { tokens: req.tokens, costUsd: req.costUsd }, period: req.period, source: BudgetSource.OWNER };
          owners.set(req.owner, usage(req.owner, { budget: b, current: { budget: b.budget, spent: { tokens: 40n } } }));
          return { budget: b };
        },
      });
    }
  });
  return { transport, created, set };
}

function memoryStorage(): TokenStorage["session"] {
  const m = new Map<string, string>();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) };
}

function mount(server: ReturnType<typeof fakeServer>, path: string) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <Providers makeTransport={() => server.transport} authStore={new AuthStore({ session: memoryStorage(), local: memoryStorage() })}>
        <Routes>
          <Route path="/" element={<Home />} />
          <Route path="/usage" element={<UsagePage />} />
          <Route path="/sessions/:id" element={<p>opened</p>} />
        </Routes>
      </Providers>
    </MemoryRouter>,
  );
}

describe("a new session's budget", () => {
  it("is sent with the session when given, its field marked when wrong", async () => {
    const server = fakeServer();
    mount(server, "/");
    fireEvent.click(await screen.findByText("Budget (optional)"));
    const tokens = screen.getByRole("textbox", { name: "Most tokens" });
    fireEvent.change(tokens, { target: { value: "ten" } });
    fireEvent.click(screen.getByRole("button", { name: /Start a session with assistant/ }));
    await waitFor(() => expect(tokens.getAttribute("aria-invalid")).toBe("true"));
    expect(server.created).toEqual([]);
    fireEvent.change(tokens, { target: { value: "2000" } });
    fireEvent.click(screen.getByRole("button", { name: /Start a session with assistant/ }));
    await screen.findByText("opened");
    expect(server.created[0].budget).toMatchObject({ tokens: 2000n });
    expect(server.created[0].budget?.costUsd).toBeUndefined();
  });

  it("is not sent, nor asked for, by a server without budgets", async () => {
    const server = fakeServer({ budgets: false });
    mount(server, "/");
    await screen.findByRole("radio", { name: "assistant" });
    // The server's answer to GetOwnerUsage (unimplemented) hides it.
    await waitFor(() => expect(screen.queryByText("Budget (optional)")).toBeNull());
    fireEvent.click(screen.getByRole("button", { name: /Start a session with assistant/ }));
    await screen.findByText("opened");
    expect(server.created[0].budget).toBeUndefined();
  });
});

describe("the usage page", () => {
  it("shows the owner's spend in the period and in total, with the budget and what is left", async () => {
    const { container } = mount(fakeServer(), "/usage");
    const yours = await screen.findByRole("region", { name: "Yours (alice)" });
    expect(within(yours).getByText("set for this owner, per day (UTC)")).toBeTruthy();
    const period = within(yours).getByLabelText("Spent: Today (UTC)");
    expect(period.textContent).toContain("2.5k / 10k (7.5k left)");
    expect(period.textContent).toContain("$0.50 / $2.00 ($1.50 left)");
    expect(within(yours).getByLabelText("Spent in total").textContent).toContain("123k");
    expect(within(yours).getByLabelText("Spent in total").textContent).toContain("$7.25");
    expect(await seriousViolations(container)).toEqual([]);
  });

  it("lets an admin look up an owner and set its budget", async () => {
    const server = fakeServer();
    mount(server, "/usage");
    await screen.findByRole("region", { name: "Yours (alice)" });
    fireEvent.change(screen.getByRole("textbox", { name: "Owner" }), { target: { value: "bob" } });
    fireEvent.click(screen.getByRole("button", { name: "Look up" }));
    const bob = await screen.findByRole("region", { name: "Usage of bob" });
    expect(within(bob).getByText("none: no limit")).toBeTruthy();
    // In total, the period's spend is everything spent: shown once.
    expect(within(bob).getByLabelText("Spent in total").textContent).toContain("40 spent, no limit");
    expect(within(bob).queryByText("Ever")).toBeNull();
    const form = screen.getByRole("form", { name: "Set the budget of bob" });
    fireEvent.change(within(form).getByRole("textbox", { name: "Most tokens" }), { target: { value: "500" } });
    fireEvent.change(within(form).getByRole("combobox", { name: "Period" }), { target: { value: String(BudgetPeriod.MONTH) } });
    fireEvent.click(within(form).getByRole("checkbox", { name: /Resume the sessions it paused by themselves/ }));
    fireEvent.click(within(form).getByRole("button", { name: "Save the budget" }));
    await within(form).findByRole("status");
    expect(server.set).toHaveLength(1);
    expect(server.set[0]).toMatchObject({ owner: "bob", tokens: 500n, period: BudgetPeriod.MONTH, autoResume: true });
    expect(server.set[0].costUsd).toBeUndefined();
    // The page reads the usage again: the budget now in force shows.
    await waitFor(() => expect(within(screen.getByRole("region", { name: "Usage of bob" })).getByText("set for this owner, per month (UTC)")).toBeTruthy());
  });

  it("shows what the server answers a non-admin who sets a budget", async () => {
    mount(fakeServer({ admin: false }), "/usage");
    await screen.findByRole("region", { name: "Yours (alice)" });
    await screen.findByText(/are an admin's to read and set/);
    fireEvent.change(screen.getByRole("textbox", { name: "Owner" }), { target: { value: "alice" } });
    fireEvent.click(screen.getByRole("button", { name: "Look up" }));
    const form = await screen.findByRole("form", { name: "Set the budget of alice" });
    fireEvent.click(within(form).getByRole("button", { name: "Save the budget" }));
    const alert = await within(form).findByRole("alert");
    expect(alert.textContent).toContain("setting a budget needs an admin token");
  });

  it("says a server without budgets keeps none", async () => {
    mount(fakeServer({ budgets: false }), "/usage");
    await screen.findByText(/keeps no budgets/);
  });
});
