import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router";
import { afterEach, describe, expect, it } from "vitest";
import { AgentDescriptorSchema, AgentService } from "../../../gen/agents/v1/agent_pb";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";
import {
  FiringStatus,
  ScheduleFiringSchema,
  ScheduleMissed,
  ScheduleOverlap,
  ScheduleSchema,
  ScheduleService,
  type CreateScheduleRequest,
  type UpdateScheduleRequest,
  type Schedule,
  type ScheduleFiring,
} from "../../../gen/agents/v1/schedule_pb";
import { SessionStatus } from "../../../gen/agents/v1/session_pb";
import { EditSchedulePage, NewSchedulePage } from "./schedule-editor";
import { SchedulePage } from "./schedule-page";
import { SchedulesPage } from "./schedules-page";
import { seriousViolations } from "../../../testing/a11y";
import { Where, where } from "../../../testing/where";

afterEach(cleanup);

const hour = 3_600_000;

// fakeServer keeps schedules as the server does: an interval's next
// times counted from now, none while paused, a bad cron expression or
// time zone refused naming its field, an unknown agent refused as not
// found; firing adds to the history, newest first.
function fakeServer() {
  const created: CreateScheduleRequest[] = [];
  const updated: UpdateScheduleRequest[] = [];
  const schedules = new Map<string, Schedule>();
  const firings = new Map<string, ScheduleFiring[]>();
  const next = (every: number, from = Date.now()) => [1, 2, 3, 4, 5].map((i) => timestampFromMs(from + i * every));
  const refuse = (field: string, message: string) =>
    new ConnectError(message, Code.InvalidArgument, undefined, [
      { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_argument", metadata: { field } }) },
    ]);
  const add = (s: MessageInitShape<typeof ScheduleSchema>) => {
    const id = `sch-${schedules.size + 1}`;
    const v = create(ScheduleSchema, { id, owner: "alice", enabled: true, missed: ScheduleMissed.SKIP, ...s });
    schedules.set(id, v);
    return v;
  };
  const hourly = add({ name: "Hourly check", agent: "chat", every: "1h0m0s", message: { text: "check the queue" }, nextFirings: next(hour) });
  const mornings = add({
    name: "",
    sessionId: "s-42",
    cron: "0 7 * * 1-5",
    timezone: "Europe/Paris",
    overlap: ScheduleOverlap.QUEUE,
    message: { text: "good morning" },
    enabled: false,
  });
  firings.set(hourly.id, [
    create(ScheduleFiringSchema, {
      scheduleId: hourly.id,
      fireTime: timestampFromMs(Date.now() - hour),
      fired: timestampFromMs(Date.now() - hour),
      status: FiringStatus.STARTED,
      sessionId: "s-7",
      outcome: SessionStatus.READY,
      outcomeReason: "done",
      finished: timestampFromMs(Date.now() - hour + 5000),
    }),
    create(ScheduleFiringSchema, {
      scheduleId: hourly.id,
      fireTime: timestampFromMs(Date.now() - 2 * hour),
      fired: timestampFromMs(Date.now() - 2 * hour),
      status: FiringStatus.FAILED,
      reason: "agent chat is not loaded",
      catchUp: true,
    }),
  ]);
  hourly.lastFiring = firings.get(hourly.id)![0];
  const get = (id: string) => {
    const s = schedules.get(id);
    if (!s) throw new ConnectError(`no schedule ${id}`, Code.NotFound);
    return s;
  };
  const transport = createRouterTransport(({ service }) => {
    service(AgentService, {
      listAgents: () => ({ agents: ["chat", "counter"].map((slug) => create(AgentDescriptorSchema, { slug })) }),
    });
    service(ScheduleService, {
      listSchedules: () => ({ schedules: [...schedules.values()] }),
      getSchedule: (req) => ({ schedule: get(req.scheduleId) }),
      createSchedule: (req) => {
        created.push(req);
        if (req.agent && !["chat", "counter"].includes(req.agent))
          throw new ConnectError(`no agent ${req.agent}`, Code.NotFound, undefined, [{ desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "unknown_agent" }) }]);
        if (req.cron && req.cron.split(" ").length !== 5) throw refuse("cron", `cron: expected 5 fields, found ${req.cron.split(" ").length}`);
        if (req.timezone === "Mars/Base") throw refuse("timezone", "timezone: unknown time zone Mars/Base");
        if (req.message?.text === "refuse the overlap") throw refuse("overlap", "overlap: not for an agent");
        const { $typeName: _, ...fields } = req;
        const s = add({ ...fields, enabled: req.enabled ?? true, nextFirings: req.every ? next(hour) : [] });
        return { schedule: s };
      },
      updateSchedule: (req) => {
        updated.push(req);
        const s = get(req.scheduleId);
        if (req.cron !== undefined && req.cron.split(" ").length !== 5) throw refuse("cron", `cron: expected 5 fields, found ${req.cron.split(" ").length}`);
        if (req.name !== undefined) s.name = req.name;
        if (req.every !== undefined) {
          Object.assign(s, { every: req.every, cron: "", at: undefined, nextFirings: next(2 * hour) });
        }
        if (req.cron !== undefined) Object.assign(s, { cron: req.cron, every: "", at: undefined });
        if (req.timezone !== undefined) s.timezone = req.timezone;
        if (req.message) s.message = req.message;
        return { schedule: s };
      },
      pauseSchedule: (req) => {
        const s = get(req.scheduleId);
        s.enabled = false;
        s.nextFirings = [];
        return { schedule: s };
      },
      resumeSchedule: (req) => {
        const s = get(req.scheduleId);
        s.enabled = true;
        s.nextFirings = next(hour);
        return { schedule: s };
      },
      deleteSchedule: (req) => {
        get(req.scheduleId);
        schedules.delete(req.scheduleId);
        return {};
      },
      fireSchedule: (req) => {
        const f = create(ScheduleFiringSchema, {
          scheduleId: req.scheduleId,
          fireTime: timestampFromMs(Date.now()),
          fired: timestampFromMs(Date.now()),
          status: FiringStatus.STARTED,
          sessionId: "s-99",
          manual: true,
        });
        firings.set(req.scheduleId, [f, ...(firings.get(req.scheduleId) ?? [])]);
        get(req.scheduleId).lastFiring = f;
        return { firing: f };
      },
      listFirings: (req) => ({ firings: firings.get(req.scheduleId) ?? [] }),
    });
  });
  return { transport, created, updated, schedules, hourly, mornings };
}

function mount(path: string, server = fakeServer()) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const view = render(
    <TransportProvider transport={server.transport}>
      <QueryClientProvider client={qc}>
        <MemoryRouter initialEntries={[path]}>
          <Where />
          <Routes>
            <Route path="/schedules" element={<SchedulesPage />} />
            <Route path="/schedules/+new" element={<NewSchedulePage />} />
            <Route path="/schedules/:id" element={<SchedulePage />} />
            <Route path="/schedules/:id/edit" element={<EditSchedulePage />} />
          </Routes>
        </MemoryRouter>
      </QueryClientProvider>
    </TransportProvider>,
  );
  return { ...server, view };
}


const item = async (name: string) => within(await screen.findByRole("list", { name: "Schedules" })).getByRole("listitem", { name });

describe("the schedules page", () => {
  it("lists each schedule's target, timing, next firings and state", async () => {
    const { view } = mount("/schedules");
    const hourly = await item("Hourly check");
    expect(hourly.textContent).toContain("starts a session of chat");
    expect(within(hourly).getByRole("link", { name: "chat" }).getAttribute("href")).toBe("/agents/chat");
    expect(hourly.textContent).toContain("every 1h");
    expect(hourly.textContent).toContain("enabled");
    // The next three of its five times, each how far off and when.
    const next = within(hourly).getByRole("list", { name: "Next firings" });
    const times = within(next).getAllByRole("listitem");
    expect(times).toHaveLength(3);
    expect(times[0].querySelector("time")?.getAttribute("dateTime")).toMatch(/Z$/);
    expect(times[0].textContent).toMatch(/1/);
    expect(times[0].textContent).toMatch(/\d{4}/);
    // The last firing, linked to its session.
    expect(hourly.textContent).toMatch(/Laststarted a session, 1 ?hr?\.? ago/);
    expect(within(hourly).getByRole("link", { name: "session" }).getAttribute("href")).toBe("/sessions/s-7");

    // A schedule with no name goes by its id; paused, it has no next times.
    const mornings = await item("sch-2");
    expect(mornings.textContent).toContain("posts to session s-42");
    expect(within(mornings).getByRole("link", { name: "s-42" }).getAttribute("href")).toBe("/sessions/s-42");
    expect(mornings.textContent).toContain("cron 0 7 * * 1-5 in Europe/Paris");
    expect(mornings.textContent).toContain("paused");
    expect(mornings.textContent).toContain("Paused: it does not fire until it is resumed.");
    expect(within(mornings).queryByRole("list", { name: "Next firings" })).toBeNull();
    expect(await seriousViolations(view.container)).toEqual([]);
  });

  it("pauses a schedule and resumes it", async () => {
    mount("/schedules");
    let hourly = await item("Hourly check");
    fireEvent.click(within(hourly).getByRole("button", { name: "Pause" }));
    await waitFor(async () => expect(within(await item("Hourly check")).getByRole("button", { name: "Resume" })).toBeTruthy());
    hourly = await item("Hourly check");
    expect(hourly.textContent).toContain("paused");
    expect(within(hourly).queryByRole("list", { name: "Next firings" })).toBeNull();
    fireEvent.click(within(hourly).getByRole("button", { name: "Resume" }));
    await waitFor(async () => expect(within(await item("Hourly check")).getByRole("list", { name: "Next firings" })).toBeTruthy());
    expect((await item("Hourly check")).textContent).toContain("enabled");
  });

  it("deletes a schedule only once confirmed", async () => {
    const { schedules } = mount("/schedules");
    fireEvent.click(within(await item("Hourly check")).getByRole("button", { name: "Delete" }));
    const dialog = screen.getByRole("dialog", { name: "Delete the schedule Hourly check?" });
    expect(dialog.textContent).toContain("sessions its firings started stay");
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(schedules.has("sch-1")).toBe(true);
    fireEvent.click(within(await item("Hourly check")).getByRole("button", { name: "Delete" }));
    fireEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete the schedule" }));
    await waitFor(() => expect(within(screen.getByRole("list", { name: "Schedules" })).queryByRole("listitem", { name: "Hourly check" })).toBeNull());
    expect(schedules.has("sch-1")).toBe(false);
  });

  it("says so when there are none", async () => {
    const server = fakeServer();
    server.schedules.clear();
    mount("/schedules", server);
    await screen.findByText(/No schedules yet/);
  });
});

describe("a schedule's page", () => {
  it("shows its firings: the time, what it did, the session linked, the run's outcome", async () => {
    const { view } = mount("/schedules/sch-1");
    await screen.findByRole("heading", { name: "Hourly check" });
    const table = await screen.findByRole("table", { name: "Firings" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows).toHaveLength(2);
    const [ok, failed] = rows;
    expect(ok.textContent).toContain("started a session");
    expect(within(ok).getByRole("link", { name: "s-7" }).getAttribute("href")).toBe("/sessions/s-7");
    expect(ok.textContent).toContain("ready (done)");
    expect(ok.textContent).toContain("finished");
    expect(failed.textContent).toContain("failed");
    expect(failed.textContent).toContain("catch-up");
    expect(failed.textContent).toContain("agent chat is not loaded");
    expect(failed.textContent).toContain("none");
    // Its message and its rules, in full.
    expect(view.container.textContent).toContain("check the queue");
    expect(view.container.textContent).toContain("Missed times");
    expect(await seriousViolations(view.container)).toEqual([]);
  });

  it("fires it now, by hand, and the firing joins the history", async () => {
    mount("/schedules/sch-1");
    const table = await screen.findByRole("table", { name: "Firings" });
    fireEvent.click(within(screen.getByRole("toolbar", { name: "Schedule actions" })).getByRole("button", { name: "Fire now" }));
    await waitFor(() => expect(within(screen.getByRole("table", { name: "Firings" })).getAllByRole("row")).toHaveLength(4));
    const newest = within(screen.getByRole("table", { name: "Firings" })).getAllByRole("row")[1];
    expect(newest.textContent).toContain("fired by hand");
    expect(newest.textContent).toContain("running");
    expect(within(newest).getByRole("link", { name: "s-99" })).toBeTruthy();
    expect(table).toBeTruthy();
  });

  it("pauses from its page, and deleting it goes back to the list", async () => {
    mount("/schedules/sch-1");
    await screen.findByRole("table", { name: "Firings" });
    const actions = screen.getByRole("toolbar", { name: "Schedule actions" });
    fireEvent.click(within(actions).getByRole("button", { name: "Pause" }));
    await within(actions).findByRole("button", { name: "Resume" });
    await screen.findByText("Paused: it does not fire until it is resumed.");
    fireEvent.click(within(actions).getByRole("button", { name: "Delete" }));
    fireEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete the schedule" }));
    await waitFor(() => expect(where()).toBe("/schedules"));
    await screen.findByRole("listitem", { name: "sch-2" });
  });

  it("says a schedule that is not there is not", async () => {
    mount("/schedules/sch-9");
    expect((await screen.findByRole("alert")).textContent).toContain("no schedule sch-9");
  });
});

describe("the new-schedule form", () => {
  const field = (name: string | RegExp) => screen.getByLabelText(name) as HTMLInputElement;

  it("creates a schedule of an agent at an interval and opens it", async () => {
    const { created, view } = mount("/schedules/+new?agent=counter");
    await screen.findByRole("option", { name: "chat" });
    expect((field("Agent") as unknown as HTMLSelectElement).value).toBe("counter");
    expect(field("Every").value).toBe("1h");
    fireEvent.change(field("Name (optional)"), { target: { value: "Count" } });
    fireEvent.change(field("Every"), { target: { value: "15m" } });
    fireEvent.change(field("Message"), { target: { value: "count these words" } });
    expect(await seriousViolations(view.container)).toEqual([]);
    fireEvent.click(screen.getByRole("button", { name: "Create the schedule" }));
    await waitFor(() => expect(where()).toBe("/schedules/sch-3"));
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ name: "Count", agent: "counter", every: "15m", cron: "", timezone: "", message: { text: "count these words" } });
    await screen.findByRole("heading", { name: "Count" });
  });

  it("marks what is missing at its field and sends nothing", async () => {
    const { created } = mount("/schedules/+new");
    await screen.findByRole("option", { name: "chat" });
    fireEvent.click(screen.getByRole("button", { name: "Create the schedule" }));
    const agent = field("Agent");
    await waitFor(() => expect(agent.getAttribute("aria-invalid")).toBe("true"));
    expect(document.getElementById(agent.getAttribute("aria-describedby")!)?.textContent).toContain("Pick the agent");
    fireEvent.change(agent, { target: { value: "chat" } });
    expect(agent.getAttribute("aria-invalid")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Create the schedule" }));
    await waitFor(() => expect(field("Message").getAttribute("aria-invalid")).toBe("true"));
    expect(created).toEqual([]);
  });

  it("shows the server's refusal at the field it names, then creates once it is fixed", async () => {
    const { created, view } = mount("/schedules/+new?session=s-42");
    expect(field("Session id").value).toBe("s-42");
    fireEvent.click(screen.getByRole("radio", { name: "at the times of a cron expression" }));
    fireEvent.change(field("Cron expression"), { target: { value: "0 7 * *" } });
    fireEvent.change(field("Time zone"), { target: { value: "Europe/Paris" } });
    fireEvent.change(field("While the session is busy"), { target: { value: String(ScheduleOverlap.QUEUE) } });
    fireEvent.change(field("Missed times"), { target: { value: String(ScheduleMissed.ONCE) } });
    fireEvent.change(field("Message"), { target: { value: "good morning" } });
    fireEvent.click(screen.getByRole("button", { name: "Create the schedule" }));
    const cron = field("Cron expression");
    await waitFor(() => expect(cron.getAttribute("aria-invalid")).toBe("true"));
    expect(document.getElementById(cron.getAttribute("aria-describedby")!)?.textContent).toBe("cron: expected 5 fields, found 4");
    expect(await seriousViolations(view.container)).toEqual([]);
    fireEvent.change(cron, { target: { value: "0 7 * * 1-5" } });
    fireEvent.click(screen.getByRole("button", { name: "Create the schedule" }));
    await waitFor(() => expect(where()).toBe("/schedules/sch-3"));
    expect(created[1]).toMatchObject({
      sessionId: "s-42",
      agent: "",
      cron: "0 7 * * 1-5",
      timezone: "Europe/Paris",
      overlap: ScheduleOverlap.QUEUE,
      missed: ScheduleMissed.ONCE,
    });
  });

  it("reads one time in the zone picked, and shows an unknown agent at the agent", async () => {
    const server = fakeServer();
    const { created } = mount("/schedules/+new?agent=ghost", server);
    await screen.findByRole("option", { name: "chat" });
    fireEvent.click(screen.getByRole("radio", { name: "once, at a time" }));
    fireEvent.change(field("Date and time"), { target: { value: "2027-01-04T09:30" } });
    fireEvent.change(field("Time zone"), { target: { value: "Asia/Tokyo" } });
    fireEvent.change(field("Message"), { target: { value: "happy new year" } });
    fireEvent.click(screen.getByRole("button", { name: "Create the schedule" }));
    await waitFor(() => expect(field("Agent").getAttribute("aria-invalid")).toBe("true"));
    expect(created[0].at && new Date(Number(created[0].at.seconds) * 1000).toISOString()).toBe("2027-01-04T00:30:00.000Z");
    expect(created[0].timezone).toBe("Asia/Tokyo");
  });

  it("says a refusal of a field it does not show above the buttons", async () => {
    mount("/schedules/+new?agent=chat");
    await screen.findByRole("option", { name: "chat" });
    // The fake refuses this message naming overlap, which a schedule of
    // an agent does not show.
    fireEvent.change(field("Message"), { target: { value: "refuse the overlap" } });
    fireEvent.click(screen.getByRole("button", { name: "Create the schedule" }));
    const alert = await screen.findByText("Could not create the schedule: overlap: not for an agent");
    expect(alert.getAttribute("role")).toBe("alert");
    expect(screen.queryByRole("combobox", { name: "While the session is busy" })).toBeNull();
  });

  it("offers the browser's time zones", async () => {
    mount("/schedules/+new");
    fireEvent.click(screen.getByRole("radio", { name: "at the times of a cron expression" }));
    const zones = within(field("Time zone")).getAllByRole("option").map((o) => o.textContent);
    expect(zones[0]).toBe("UTC");
    expect(zones).toContain("Europe/Paris");
    expect(zones).toContain("America/Los_Angeles");
  });
});

describe("the edit form", () => {
  const field = (name: string | RegExp) => screen.getByLabelText(name) as HTMLInputElement;

  it("starts from the schedule and sends only what changed", async () => {
    const { updated, view } = mount("/schedules/sch-1");
    fireEvent.click(within(await screen.findByRole("toolbar", { name: "Schedule actions" })).getByRole("link", { name: "Edit" }));
    await screen.findByRole("heading", { name: "Edit Hourly check" });
    expect(field("Name (optional)").value).toBe("Hourly check");
    expect(field("Every").value).toBe("1h0m0s");
    expect(field("Message").value).toBe("check the queue");
    expect((screen.getByRole("radio", { name: "starts a new session of an agent" }) as HTMLInputElement).checked).toBe(true);
    await waitFor(() => expect((field("Agent") as unknown as HTMLSelectElement).value).toBe("chat"));
    // Paused or not is the schedule page's to change.
    expect(screen.queryByLabelText("Create it paused")).toBeNull();
    expect(await seriousViolations(view.container)).toEqual([]);
    fireEvent.change(field("Every"), { target: { value: "2h" } });
    fireEvent.click(screen.getByRole("button", { name: "Save the schedule" }));
    await waitFor(() => expect(where()).toBe("/schedules/sch-1"));
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ scheduleId: "sch-1", every: "2h" });
    expect(updated[0].name).toBeUndefined();
    expect(updated[0].cron).toBeUndefined();
    expect(updated[0].message).toBeUndefined();
    await screen.findByText("every 2h");
  });

  it("marks a refused field, and saves nothing when nothing changed", async () => {
    const { updated } = mount("/schedules/sch-2/edit");
    await screen.findByRole("heading", { name: "Edit sch-2" });
    expect(field("Session id").value).toBe("s-42");
    expect(field("Time zone").value).toBe("Europe/Paris");
    fireEvent.change(field("Cron expression"), { target: { value: "0 7 *" } });
    fireEvent.click(screen.getByRole("button", { name: "Save the schedule" }));
    await waitFor(() => expect(field("Cron expression").getAttribute("aria-invalid")).toBe("true"));
    expect(updated).toHaveLength(1);
    fireEvent.change(field("Cron expression"), { target: { value: "0 7 * * 1-5" } });
    fireEvent.click(screen.getByRole("button", { name: "Save the schedule" }));
    await waitFor(() => expect(where()).toBe("/schedules/sch-2"));
    expect(updated).toHaveLength(1);
  });
});
