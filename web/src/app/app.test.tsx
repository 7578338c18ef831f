import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport, type Interceptor } from "@connectrpc/connect";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryRouter } from "react-router";
import { AgentService, ToolKind } from "../gen/agents/v1/agent_pb";
import { EventSchema, EventService, SubscribeScope, type Event } from "../gen/agents/v1/event_pb";
import { SessionMetaSchema, SessionStatus, type SessionMeta } from "../gen/agents/v1/session_pb";
import { SessionService } from "../gen/agents/v1/session_service_pb";
import { FiringStatus, ScheduleService, type ScheduleSchema } from "../gen/agents/v1/schedule_pb";
import { AuthStore, type TokenStorage } from "../features/auth/api/auth-store";
import { Home } from "../features/sessions/components/home";
import { Sidebar } from "../features/sessions/components/sidebar";
import { AgentPage } from "../features/agents/components/agent-page";
import type { TransportOptions } from "../lib/transport";
import { App } from "./app";
import { Providers } from "./providers";
import { Route, Routes } from "react-router";
import { seriousViolations } from "../testing/a11y";

// The chat feature is tested on its own; here the route only needs to exist.
vi.mock("../features/chat/components/chat-page", () => ({ ChatPage: () => <p>chat</p> }));

// A channel of events the fake server streams to subscribers.
class Channel {
  private waiting: ((e: Event) => void)[] = [];
  private queued: Event[] = [];
  push(e: Event) {
    const w = this.waiting.shift();
    if (w) w(e);
    else this.queued.push(e);
  }
  next(signal: AbortSignal): Promise<Event | undefined> {
    const q = this.queued.shift();
    if (q) return Promise.resolve(q);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      signal.addEventListener("abort", () => resolve(undefined));
    });
  }
}

const meta = (id: string, at: number, extra: { parentId?: string; title?: string; status?: SessionStatus } = {}): SessionMeta =>
  create(SessionMetaSchema, { id, agent: "assistant", title: id, status: SessionStatus.READY, updateTime: timestampFromMs(at), ...extra });

// fakeServer answers the app's calls in memory; with a token, calls
// without it are refused.
function fakeServer(opts: { token?: string; sessions?: SessionMeta[]; admin?: boolean; offline?: boolean } = {}) {
  const events = new Channel();
  const created: string[] = [];
  // The listings asked for: "all" (every owner's) or "own".
  const listed: string[] = [];
  const admin = opts.admin ?? true;
  // The schedules ListSchedules answers, as a test sets them.
  const schedules: { list: MessageInitShape<typeof ScheduleSchema>[]; listings: number } = { list: [], listings: 0 };
  const routes = (router: Parameters<Parameters<typeof createRouterTransport>[0]>[0]) => {
    router.service(AgentService, {
      listAgents: () => ({
        agents: [
          { slug: "assistant", announce: "Answers questions", model: { flavor: "OpenAIv1", name: "gpt" } },
          { slug: "researcher", announce: "Looks things up", parent: "assistant" },
        ],
      }),
      getAgent: (req) => ({
        agent: {
          slug: req.slug,
          announce: "Answers questions",
          model: opts.offline
            ? { flavor: "OpenAIv1", name: "gpt-4o-mini", url: "http://127.0.0.1:7421/v1", apiKeyId: "openai", apiKeyPresent: false, offline: true }
            : { flavor: "OpenAIv1", name: "gpt-4o-mini", url: "http://127.0.0.1:9/v1", apiKeyId: "openai", apiKeyPresent: true },
          systemPrompt: ["You help.", "Be brief."],
          tools: [
            { name: "bash_clock", description: "tells the time", kind: ToolKind.BASH, source: "/tools/clock" },
            { name: "prompt_agent_researcher", kind: ToolKind.HELPER, source: "researcher" },
          ],
          helpers: ["researcher"],
          params: [{ name: "GITHUB_TOKEN", description: "a token", secret: true, required: true }],
          mcpServers: [{ name: "files", transport: "stdio", target: "mcp-files" }],
        },
      }),
    });
    router.service(SessionService, {
      listSessions: (req) => {
        listed.push(req.allOwners ? "all" : "own");
        if (req.allOwners && !admin) throw new ConnectError("listing every owner's sessions needs an admin token", Code.PermissionDenied);
        return { sessions: opts.sessions ?? [] };
      },
      createSession: (req) => {
        created.push(req.agent);
        return { session: { meta: { id: "new-id", agent: req.agent } } };
      },
    });
    router.service(ScheduleService, {
      listSchedules: () => {
        schedules.listings++;
        return { schedules: schedules.list };
      },
    });
    router.service(EventService, {
      async *subscribe(req, ctx) {
        if (req.scope === SubscribeScope.ALL && !admin) throw new ConnectError("the all scope needs an admin token", Code.PermissionDenied);
        yield { item: { case: "heartbeat", value: { seq: 1n } } };
        for (;;) {
          const e = await events.next(ctx.signal);
          if (!e) return;
          yield { item: { case: "event", value: e } };
        }
      },
    });
  };
  const makeTransport = (o: TransportOptions) => {
    // As lib/transport's interceptor does, over the in-memory router.
    const auth: Interceptor = (next) => async (req) => {
      const t = o.token?.();
      if (t) req.header.set("Authorization", `Bearer ${t}`);
      try {
        return await next(req);
      } catch (err) {
        if (ConnectError.from(err).code === Code.Unauthenticated) o.onUnauthenticated?.();
        throw err;
      }
    };
    const check: Interceptor = (next) => async (req) => {
      if (opts.token && req.header.get("Authorization") !== `Bearer ${opts.token}`) {
        throw new ConnectError("token required", Code.Unauthenticated);
      }
      return next(req);
    };
    return createRouterTransport(routes, { router: { interceptors: [check] }, transport: { interceptors: [auth] } });
  };
  return { makeTransport, events, created, listed, schedules };
}

function memoryStorage(): TokenStorage["session"] {
  const m = new Map<string, string>();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) };
}

function mount(node: React.ReactNode, server = fakeServer(), path = "/") {
  const authStore = new AuthStore({ session: memoryStorage(), local: memoryStorage() });
  const view = render(
    <MemoryRouter initialEntries={[path]}>
      <Providers makeTransport={server.makeTransport} authStore={authStore}>
        {node}
      </Providers>
    </MemoryRouter>,
  );
  return { ...view, server, authStore };
}

afterEach(() => {
  cleanup();
});

describe("the app", () => {
  it("shows the sessions, nested, and follows the stream", async () => {
    const server = fakeServer({
      sessions: [meta("a", 1, { title: "plan a trip" }), meta("child", 2, { parentId: "a", title: "find trains" })],
    });
    mount(
      <Routes>
        <Route path="*" element={<Sidebar />} />
      </Routes>,
      server,
      "/sessions/a",
    );
    const trip = await screen.findByRole("link", { name: /plan a trip/ });
    expect(trip.getAttribute("aria-current")).toBe("page");
    const sub = screen.getByRole("list", { name: "Sub-sessions of plan a trip" });
    expect(within(sub).getByRole("link", { name: /find trains/ })).toBeTruthy();

    act(() => {
      server.events.push(create(EventSchema, { seq: 2n, sessionId: "b", body: { case: "sessionCreated", value: { meta: meta("b", 3, { title: "from curl" }) } } }));
      server.events.push(create(EventSchema, { seq: 3n, sessionId: "b", time: timestampFromMs(4), body: { case: "runStopped", value: { status: SessionStatus.READY, reason: "done" } } }));
    });
    const b = await screen.findByRole("link", { name: /from curl \(unread\)/ });
    expect(b.getAttribute("href")).toBe("/sessions/b");

    fireEvent.change(screen.getByRole("searchbox", { name: "Search sessions" }), { target: { value: "trains" } });
    expect(screen.queryByRole("link", { name: /from curl/ })).toBeNull();
    expect(screen.getByRole("link", { name: /find trains/ })).toBeTruthy();
  });

  it("links the schedules from the bar, and lists them again when one fires", async () => {
    const server = fakeServer();
    const at = Date.now() + 3_600_000;
    const hourly = { id: "sch-1", name: "Hourly check", agent: "assistant", every: "1h", enabled: true };
    server.schedules.list = [{ ...hourly, nextFirings: [timestampFromMs(at)] }];
    mount(<App />, server);
    fireEvent.click(within(await screen.findByRole("banner")).getByRole("link", { name: "Schedules" }));
    const item = await screen.findByRole("listitem", { name: "Hourly check" });
    expect(item.textContent).not.toContain("Last");
    const listings = server.schedules.listings;

    // It fired: its next time moved on and its last firing is known.
    server.schedules.list = [
      {
        ...hourly,
        nextFirings: [timestampFromMs(at + 3_600_000)],
        lastFiring: { scheduleId: "sch-1", fireTime: timestampFromMs(Date.now()), status: FiringStatus.STARTED, sessionId: "s-9" },
      },
    ];
    act(() => {
      server.events.push(
        create(EventSchema, { seq: 2n, sessionId: "s-9", body: { case: "scheduleFired", value: { firing: { scheduleId: "sch-1", sessionId: "s-9", status: FiringStatus.STARTED } } } }),
      );
    });
    await waitFor(() => expect(screen.getByRole("listitem", { name: "Hourly check" }).textContent).toContain("Last"));
    expect(server.schedules.listings).toBeGreaterThan(listings);
  });

  it("links the webhooks from the bar", async () => {
    mount(<App />);
    fireEvent.click(within(await screen.findByRole("banner")).getByRole("link", { name: "Webhooks" }));
    await screen.findByRole("heading", { name: "Webhooks", level: 1 });
  });

  it("keeps a phone's bar to one line: the schedules and webhooks are in its More menu", async () => {
    vi.stubGlobal("matchMedia", (media: string) => ({ matches: true, media, addEventListener: () => {}, removeEventListener: () => {} }));
    try {
      mount(<App />);
      const bar = await screen.findByRole("banner");
      expect(within(bar).queryByRole("link", { name: "Webhooks" })).toBeNull();
      expect(within(bar).queryByRole("link", { name: "Schedules" })).toBeNull();
      fireEvent.click(within(bar).getByRole("button", { name: "More" }));
      expect(within(screen.getByRole("menu", { name: "More" })).getByRole("menuitem", { name: "Schedules" })).toBeTruthy();
      fireEvent.click(within(screen.getByRole("menu", { name: "More" })).getByRole("menuitem", { name: "Webhooks" }));
      await screen.findByRole("heading", { name: "Webhooks", level: 1 });
      expect(within(bar).getByRole("button", { name: "More" }).classList.contains("current")).toBe(true);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("starts a session with the agent picked", async () => {
    const { server } = mount(
      <Routes>
        <Route path="/" element={<Home />} />
        <Route path="/sessions/:id" element={<p>opened</p>} />
      </Routes>,
    );
    const researcher = await screen.findByRole("radio", { name: "researcher" });
    expect((screen.getByRole("radio", { name: "assistant" }) as HTMLInputElement).checked).toBe(true);
    fireEvent.click(researcher);
    fireEvent.change(screen.getByLabelText("First message (optional)"), { target: { value: "hello" } });
    fireEvent.click(screen.getByRole("button", { name: /Start a session with researcher/ }));
    await screen.findByText("opened");
    expect(server.created).toEqual(["researcher"]);
  });

  it("asks for a token when the server wants one, then loads", async () => {
    const server = fakeServer({ token: "sesame" });
    const { authStore } = mount(<App />, server);
    const field = await screen.findByLabelText("Token");
    expect(await seriousViolations(document.body)).toEqual([]);
    fireEvent.change(field, { target: { value: "sesame" } });
    fireEvent.click(screen.getByRole("checkbox", { name: "Remember on this device" }));
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    await screen.findByRole("radio", { name: "assistant" });
    expect(authStore.getState()).toMatchObject({ token: "sesame", remembered: true });
    await waitFor(() => expect(screen.getByRole("status").textContent).toBe("Live"));
    fireEvent.click(screen.getByRole("button", { name: "Sign out" }));
    await screen.findByLabelText("Token");
  });

  it("has no serious accessibility problems: sidebar and home", async () => {
    const { container } = mount(<App />, fakeServer({ sessions: [meta("a", 1), meta("c", 2, { parentId: "a" })] }));
    await screen.findByRole("radio", { name: "assistant" });
    await screen.findByRole("link", { name: /^c/ });
    expect(screen.getByRole("navigation", { name: "Sessions" })).toBeTruthy();
    expect(screen.getByRole("main")).toBeTruthy();
    expect(screen.getByRole("banner")).toBeTruthy();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it("has no serious accessibility problems: the agent page", async () => {
    const { container } = mount(
      <Routes>
        <Route path="/agents/:slug" element={<AgentPage />} />
      </Routes>,
      fakeServer(),
      "/agents/assistant",
    );
    await screen.findByText("bash_clock");
    expect(screen.getByText("GITHUB_TOKEN")).toBeTruthy();
    expect(screen.getByRole("link", { name: "Start a session" }).getAttribute("href")).toBe("/?agent=assistant");
    expect(await seriousViolations(container)).toEqual([]);
  });

  it("lists a non-admin's own sessions without asking for every owner's first", async () => {
    const server = fakeServer({ admin: false, sessions: [meta("mine", 1, { title: "my session" })] });
    mount(<App />, server);
    await screen.findByRole("link", { name: /my session/ });
    expect(server.listed).toEqual(["own"]);
  });

  it("lists an admin's every owner's sessions", async () => {
    const server = fakeServer({ sessions: [meta("theirs", 1, { title: "their session" })] });
    mount(<App />, server);
    await screen.findByRole("link", { name: /their session/ });
    expect(server.listed).toEqual(["all"]);
  });

  it("says an agent without its key talks to the offline model, not that it cannot reach its model", async () => {
    mount(
      <Routes>
        <Route path="/agents/:slug" element={<AgentPage />} />
      </Routes>,
      fakeServer({ offline: true }),
      "/agents/assistant",
    );
    await screen.findByText("bash_clock");
    const page = screen.getByRole("article", { name: "assistant" });
    expect(page.textContent).toContain("talks to the offline model");
    expect(page.textContent).not.toMatch(/cannot reach|missing on the server/);
    expect(page.querySelector(".error")).toBeNull();
  });

  it("opens the shortcut help with ?", async () => {
    mount(<App />);
    await screen.findByRole("radio", { name: "assistant" });
    fireEvent.keyDown(document.body, { key: "?" });
    const dialog = await screen.findByRole("dialog", { name: "Keyboard shortcuts" });
    expect(within(dialog).getByText("New session")).toBeTruthy();
    expect(within(dialog).getByText("Search sessions")).toBeTruthy();
    expect(await seriousViolations(dialog)).toEqual([]);
  });
});
