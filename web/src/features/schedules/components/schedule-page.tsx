import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { RelativeTime, useNow } from "../../../components/relative-time";
import { FiringStatus, ScheduleService, type Schedule, type ScheduleFiring } from "../../../gen/agents/v1/schedule_pb";
import { errorText } from "../../../lib/error-text";
import { schedulePath, schedulesPath, sessionPath } from "../../../lib/paths";
import { useScheduleActions } from "../hooks/use-schedule-actions";
import { absoluteTime, firingStatusText, firingTags, outcomeText, scheduleName, timingOf } from "../lib/spec";
import { DeleteScheduleDialog } from "./delete-schedule-dialog";
import { PauseToggle } from "./pause-toggle";
import { ScheduleFacts } from "./schedule-facts";
import { ScheduleState } from "./schedule-state";
import "./schedules.css";

// How many firings the history shows, newest first.
const historyLimit = 100;

// SchedulePage is one schedule: what it does and when, its next five
// times, pause or resume, edit, fire now and delete, and its firings: when
// each stood for, what it did, the session it started or posted to, and
// how that session's run ended.
export function SchedulePage() {
  const { id = "" } = useParams();
  const navigate = useNavigate();
  const heading = useId();
  // Once deleted, the schedule is not read again: it is gone.
  const [gone, setGone] = useState(false);
  const q = useQuery(ScheduleService.method.getSchedule, { scheduleId: id }, { enabled: !gone, refetchInterval: 60_000 });
  const [deleting, setDeleting] = useState(false);
  const s = q.data?.schedule;
  return (
    <article className="page-content schedule-page" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>{s ? scheduleName(s) : "Schedule"}</h1>
        {s && <ScheduleState schedule={s} />}
      </header>
      <p>
        <Link to={schedulesPath}>All schedules</Link>
      </p>
      {q.isPending ? (
        <p>Loading…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the schedule: {errorText(q.error)}
        </p>
      ) : s ? (
        <>
          <Actions schedule={s} onDelete={() => setDeleting(true)} />
          <ScheduleFacts schedule={s} full />
          <Firings schedule={s} enabled={!gone} />
        </>
      ) : null}
      {deleting && s && (
        <DeleteScheduleDialog
          schedule={s}
          onClose={() => setDeleting(false)}
          onDeleted={() => {
            setGone(true);
            navigate(schedulesPath);
          }}
        />
      )}
    </article>
  );
}

function Actions({ schedule: s, onDelete }: { schedule: Schedule; onDelete: () => void }) {
  const { fire } = useScheduleActions();
  return (
    <div className="page-actions" role="toolbar" aria-label="Schedule actions">
      <PauseToggle schedule={s} />
      <Link to={schedulePath(s.id, "edit")} className="button">
        Edit
      </Link>
      <button
        type="button"
        className="button"
        disabled={fire.isPending}
        title="Fire once now, paused or not; its regular times stay as they are"
        onClick={() => fire.mutate({ scheduleId: s.id })}
      >
        Fire now
      </button>
      <button type="button" className="button danger" onClick={onDelete}>
        Delete
      </button>
      {fire.error && (
        <span role="alert" className="error">
          Could not fire it: {errorText(fire.error)}
        </span>
      )}
    </div>
  );
}

// Firings is a schedule's history, newest first.
function Firings({ schedule, enabled }: { schedule: Schedule; enabled: boolean }) {
  const heading = useId();
  // While a run a firing started goes on, its outcome is asked for often;
  // otherwise a firing's event has the history read again.
  const q = useQuery(
    ScheduleService.method.listFirings,
    { scheduleId: schedule.id, limit: historyLimit },
    { enabled, refetchInterval: (query) => ((query.state.data?.firings ?? []).some(running) ? 5_000 : 60_000) },
  );
  const now = useNow();
  const zone = timingOf(schedule).zone;
  const firings = q.data?.firings ?? [];
  return (
    <section aria-labelledby={heading}>
      <h2 id={heading}>Firings</h2>
      {q.isPending ? (
        <p>Loading…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the firings: {errorText(q.error)}
        </p>
      ) : firings.length === 0 ? (
        <p className="muted">It has not fired yet.</p>
      ) : (
        <div className="table-scroll">
          <table className="firings-table" aria-labelledby={heading}>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">What it did</th>
                <th scope="col">Session</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {firings.map((f) => (
                <FiringRow key={`${f.fireTime?.seconds}.${f.fireTime?.nanos}`} firing={f} zone={zone} now={now} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

// running is whether a firing's run has not stopped yet.
function running(f: ScheduleFiring): boolean {
  return !!f.sessionId && !f.finished && (f.status === FiringStatus.STARTED || f.status === FiringStatus.POSTED);
}

function FiringRow({ firing: f, zone, now }: { firing: ScheduleFiring; zone?: string; now: number }) {
  const at = f.fireTime ? timestampDate(f.fireTime) : undefined;
  const fired = f.fired ? timestampDate(f.fired) : undefined;
  const finished = f.finished ? timestampDate(f.finished) : undefined;
  const tags = firingTags(f);
  const bad = f.status === FiringStatus.FAILED;
  return (
    <tr>
      <td>
        {at && (
          <>
            <time dateTime={at.toISOString()}>{absoluteTime(at, zone)}</time>
            <br />
            <span className="muted">
              <RelativeTime ms={at.getTime()} now={now} />
              {fired && Math.abs(fired.getTime() - at.getTime()) >= 60_000 && <>, fired {absoluteTime(fired, zone)}</>}
            </span>
          </>
        )}
      </td>
      <td>
        <span className={bad ? "error" : undefined}>{firingStatusText(f)}</span>
        {tags.map((t) => (
          <span key={t} className="kind">
            {t}
          </span>
        ))}
        {f.reason && <div className="muted">{f.reason}</div>}
      </td>
      <td>{f.sessionId ? <Link to={sessionPath(f.sessionId)}>{f.sessionId}</Link> : <span className="muted">none</span>}</td>
      <td>
        {outcomeText(f)}
        {finished && (
          <div className="muted">
            finished <RelativeTime ms={finished.getTime()} now={now} />
          </div>
        )}
      </td>
    </tr>
  );
}
