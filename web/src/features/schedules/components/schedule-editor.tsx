import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useId, useMemo, useRef, useState, type FormEvent, type ReactNode } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { AgentService } from "../../../gen/agents/v1/agent_pb";
import { ScheduleMissed, ScheduleOverlap, ScheduleService, type Schedule } from "../../../gen/agents/v1/schedule_pb";
import { errorText } from "../../../lib/error-text";
import { schedulePath, schedulesPath } from "../../../lib/paths";
import { useRefreshSchedules } from "../hooks/use-schedule-actions";
import {
  changes,
  createRequest,
  emptyForm,
  formOf,
  localZone,
  refusalOf,
  timeZones,
  updateRequest,
  type FieldError,
  type FormField,
  type ScheduleForm,
} from "../lib/form";
import { scheduleName } from "../lib/spec";
import "./schedules.css";

// NewSchedulePage makes a schedule. ?agent= or ?session= picks the
// target.
export function NewSchedulePage() {
  const [params] = useSearchParams();
  const [initial] = useState<ScheduleForm>(() => {
    const f = emptyForm();
    const session = params.get("session");
    if (session) return { ...f, target: "session", sessionId: session };
    return { ...f, agent: params.get("agent") ?? "" };
  });
  return <ScheduleEditor initial={initial} />;
}

// EditSchedulePage changes a schedule: what the form changes is sent,
// and nothing else; a changed timing counts the next firing from now.
export function EditSchedulePage() {
  const { id = "" } = useParams();
  const q = useQuery(ScheduleService.method.getSchedule, { scheduleId: id });
  const heading = useId();
  const s = q.data?.schedule;
  if (q.isPending) return <p className="page-content">Loading…</p>;
  if (q.error || !s)
    return (
      <section className="page-content" aria-labelledby={heading}>
        <h1 id={heading}>Edit the schedule</h1>
        <p role="alert" className="error">
          Could not load the schedule: {q.error ? errorText(q.error) : "the server sent none"}
        </p>
      </section>
    );
  // Keyed by id, read once: a change made elsewhere meanwhile does not
  // replace what is being edited.
  return <ScheduleEditor key={s.id} schedule={s} initial={formOf(s)} />;
}

// ScheduleEditor is the form of a schedule, new or stored: its target
// (an agent, each firing a new session of it, or a session, each firing
// posting to it), its timing (a cron expression or one time, read in a
// time zone, or an interval), the message, and what becomes of missed
// times and of a firing while the session is busy. A field the server
// refuses is marked, its reason beside it.
function ScheduleEditor({ schedule, initial }: { schedule?: Schedule; initial: ScheduleForm }) {
  const navigate = useNavigate();
  const refresh = useRefreshSchedules();
  const heading = useId();
  const [form, setForm] = useState<ScheduleForm>(initial);
  const [error, setError] = useState<FieldError>();
  const agents = useQuery(AgentService.method.listAgents, {});
  const zones = useMemo(() => timeZones(localZone(), initial.timezone), [initial.timezone]);
  const formRef = useRef<HTMLFormElement>(null);
  const done = async (id?: string) => {
    await refresh();
    navigate(id ? schedulePath(id) : schedulesPath);
  };
  const create = useMutation(ScheduleService.method.createSchedule, {
    onSuccess: (res) => done(res.schedule?.id),
    onError: (err) => show(refusalOf(err)),
  });
  const update = useMutation(ScheduleService.method.updateSchedule, {
    onSuccess: (res) => done(res.schedule?.id ?? schedule?.id),
    onError: (err) => show(refusalOf(err)),
  });
  const pending = create.isPending || update.isPending;

  // show marks a refusal at its field and takes the focus there; one of
  // a field the form does not show now is said above the buttons.
  const show = (e: FieldError) => {
    if (e.field && !shown(form, e.field)) e = { message: e.message };
    setError(e);
    if (e.field) requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>(`[name="${e.field}"]`)?.focus());
  };
  const set = <K extends keyof ScheduleForm>(k: K, v: ScheduleForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    if (error?.field === k) setError(undefined);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (schedule) {
      const r = updateRequest(schedule.id, initial, form);
      if ("error" in r) return show(r.error);
      setError(undefined);
      if (!changes(r.request)) return navigate(schedulePath(schedule.id));
      return update.mutate(r.request);
    }
    const r = createRequest(form);
    if ("error" in r) return show(r.error);
    setError(undefined);
    create.mutate(r.request);
  };

  // The props of an input of field: its name, its error's description.
  const bad = (field: FormField) => error?.field === field;
  const described = (field: FormField) => ({
    name: field,
    "aria-invalid": bad(field) || undefined,
    "aria-describedby": bad(field) ? `${heading}-${field}-error` : undefined,
  });
  const fieldError = (field: FormField) =>
    bad(field) && (
      <p id={`${heading}-${field}-error`} role="alert" className="error field-error">
        {error!.message}
      </p>
    );
  const id = (field: FormField) => `${heading}-${field}`;

  return (
    <section className="page-content schedule-editor" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>{schedule ? `Edit ${scheduleName(schedule)}` : "New schedule"}</h1>
      </header>
      <form ref={formRef} onSubmit={submit} aria-labelledby={heading} noValidate>
        <Field label="Name (optional)" id={id("name")} error={fieldError("name")}>
          <input id={id("name")} type="text" autoComplete="off" value={form.name} onChange={(e) => set("name", e.target.value)} {...described("name")} />
        </Field>

        <fieldset>
          <legend>Each firing</legend>
          <Choice name="target" value="agent" checked={form.target === "agent"} onChange={() => set("target", "agent")}>
            starts a new session of an agent
          </Choice>
          <Choice name="target" value="session" checked={form.target === "session"} onChange={() => set("target", "session")}>
            posts to a session
          </Choice>
          {form.target === "agent" ? (
            <Field label="Agent" id={id("agent")} error={fieldError("agent")}>
              <select id={id("agent")} value={form.agent} onChange={(e) => set("agent", e.target.value)} {...described("agent")}>
                <option value="">{agents.isPending ? "Loading the agents…" : "Pick an agent"}</option>
                {form.agent && !agents.data?.agents.some((a) => a.slug === form.agent) && <option value={form.agent}>{form.agent}</option>}
                {(agents.data?.agents ?? []).map((a) => (
                  <option key={a.slug} value={a.slug}>
                    {a.slug}
                  </option>
                ))}
              </select>
            </Field>
          ) : (
            <>
              <Field label="Session id" id={id("sessionId")} error={fieldError("sessionId")}>
                <input
                  id={id("sessionId")}
                  type="text"
                  autoComplete="off"
                  spellCheck={false}
                  value={form.sessionId}
                  onChange={(e) => set("sessionId", e.target.value)}
                  {...described("sessionId")}
                />
              </Field>
              <Field label="While the session is busy" id={id("overlap")} error={fieldError("overlap")}>
                <select id={id("overlap")} value={form.overlap} onChange={(e) => set("overlap", Number(e.target.value) as ScheduleOverlap)} {...described("overlap")}>
                  <option value={ScheduleOverlap.SKIP}>skip the firing</option>
                  <option value={ScheduleOverlap.QUEUE}>send the message as mail, for its run's next step</option>
                </select>
              </Field>
            </>
          )}
        </fieldset>

        <fieldset>
          <legend>When</legend>
          <Choice name="timing" value="every" checked={form.timing === "every"} onChange={() => set("timing", "every")}>
            at an interval
          </Choice>
          <Choice name="timing" value="cron" checked={form.timing === "cron"} onChange={() => set("timing", "cron")}>
            at the times of a cron expression
          </Choice>
          <Choice name="timing" value="at" checked={form.timing === "at"} onChange={() => set("timing", "at")}>
            once, at a time
          </Choice>
          {form.timing === "every" && (
            <Field label="Every" id={id("every")} hint="A duration such as 15m, 1h or 1h30m, at least 1s; the first firing is one interval from now." error={fieldError("every")}>
              <input id={id("every")} type="text" autoComplete="off" spellCheck={false} value={form.every} onChange={(e) => set("every", e.target.value)} {...described("every")} />
            </Field>
          )}
          {form.timing === "cron" && (
            <Field
              label="Cron expression"
              id={id("cron")}
              hint="Five fields, minute hour day-of-month month day-of-week: 0 7 * * 1-5 is weekdays at 7:00. Or @hourly, @daily, @weekly."
              error={fieldError("cron")}
            >
              <input id={id("cron")} type="text" autoComplete="off" spellCheck={false} value={form.cron} onChange={(e) => set("cron", e.target.value)} {...described("cron")} />
            </Field>
          )}
          {form.timing === "at" && (
            <Field label="Date and time" id={id("at")} error={fieldError("at")}>
              <input id={id("at")} type="datetime-local" value={form.at} onChange={(e) => set("at", e.target.value)} {...described("at")} />
            </Field>
          )}
          {form.timing !== "every" && (
            <Field label="Time zone" id={id("timezone")} hint={form.timing === "cron" ? "The expression's times are read here, summer time and all." : "The time above is read here."} error={fieldError("timezone")}>
              <select id={id("timezone")} value={form.timezone} onChange={(e) => set("timezone", e.target.value)} {...described("timezone")}>
                {zones.map((z) => (
                  <option key={z} value={z}>
                    {z}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <Field label="Missed times" id={id("missed")} hint="The times that pass while no server runs." error={fieldError("missed")}>
            <select id={id("missed")} value={form.missed} onChange={(e) => set("missed", Number(e.target.value) as ScheduleMissed)} {...described("missed")}>
              <option value={ScheduleMissed.SKIP}>skip them</option>
              <option value={ScheduleMissed.ONCE}>fire once for them all when a server is back</option>
            </select>
          </Field>
        </fieldset>

        <Field label="Message" id={id("text")} error={fieldError("text")}>
          <textarea id={id("text")} rows={4} value={form.text} onChange={(e) => set("text", e.target.value)} {...described("text")} />
        </Field>
        {!schedule && (
          <div className="field check">
            <input id={`${heading}-paused`} type="checkbox" checked={form.paused} onChange={(e) => set("paused", e.target.checked)} />
            <label htmlFor={`${heading}-paused`}>Create it paused</label>
          </div>
        )}
        {schedule && (
          <p className="muted">A changed timing or time zone counts the next firing from now. Pause and resume it from its page.</p>
        )}

        {error && !error.field && (
          <p role="alert" className="error">
            Could not {schedule ? "save" : "create"} the schedule: {error.message}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="button primary" disabled={pending}>
            {pending ? "Saving…" : schedule ? "Save the schedule" : "Create the schedule"}
          </button>
          <Link to={schedule ? schedulePath(schedule.id) : schedulesPath} className="button">
            Cancel
          </Link>
        </div>
      </form>
    </section>
  );
}

// shown is whether the form shows a field: the target's, the timing's
// and the time zone of a cron expression or a time.
function shown(f: ScheduleForm, field: FormField): boolean {
  switch (field) {
    case "agent":
      return f.target === "agent";
    case "sessionId":
    case "overlap":
      return f.target === "session";
    case "cron":
    case "every":
    case "at":
      return f.timing === field;
    case "timezone":
      return f.timing !== "every";
    default:
      return true;
  }
}

function Field({ label, id, hint, error, children }: { label: string; id: string; hint?: string; error: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && <p className="muted">{hint}</p>}
      {error}
    </div>
  );
}

function Choice({ name, value, checked, onChange, children }: { name: string; value: string; checked: boolean; onChange: () => void; children: ReactNode }) {
  const id = useId();
  return (
    <div className="field check">
      <input id={id} type="radio" name={name} value={value} checked={checked} onChange={onChange} />
      <label htmlFor={id}>{children}</label>
    </div>
  );
}
