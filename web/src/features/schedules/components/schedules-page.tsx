import { useQuery } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { Link } from "react-router";
import { ScheduleService, type Schedule } from "../../../gen/agents/v1/schedule_pb";
import { errorText } from "../../../lib/error-text";
import { newSchedulePath, schedulePath } from "../../../lib/paths";
import { scheduleName } from "../lib/spec";
import { DeleteScheduleDialog } from "./delete-schedule-dialog";
import { PauseToggle } from "./pause-toggle";
import { ScheduleFacts } from "./schedule-facts";
import { ScheduleState } from "./schedule-state";
import "./schedules.css";

// How often the list is read again on its own, so next times that passed
// move on even when no firing was reported (a firing's event makes it
// read again at once).
const refreshMs = 60_000;

// SchedulesPage lists the caller's schedules (an admin's: everyone's),
// oldest first: what each fires at, its next times and its state, with
// pause or resume, its history and delete; New schedule makes another.
export function SchedulesPage() {
  const q = useQuery(ScheduleService.method.listSchedules, {}, { refetchInterval: refreshMs });
  const heading = useId();
  const [deleting, setDeleting] = useState<Schedule>();
  const schedules = q.data?.schedules ?? [];
  return (
    <section className="page-content schedules-page" aria-labelledby={heading}>
      <header className="page-header">
        <h1 id={heading}>Schedules</h1>
        <Link to={newSchedulePath} className="button primary">
          New schedule
        </Link>
      </header>
      {q.isPending ? (
        <p>Loading schedules…</p>
      ) : q.error ? (
        <p role="alert" className="error">
          Could not load the schedules: {errorText(q.error)}
        </p>
      ) : schedules.length === 0 ? (
        <p>No schedules yet: a schedule starts a session of an agent, or posts to a session, at the times you give it.</p>
      ) : (
        <ul className="schedule-list" aria-label="Schedules">
          {schedules.map((s) => (
            <ScheduleItem key={s.id} schedule={s} onDelete={() => setDeleting(s)} />
          ))}
        </ul>
      )}
      {deleting && <DeleteScheduleDialog schedule={deleting} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

function ScheduleItem({ schedule: s, onDelete }: { schedule: Schedule; onDelete: () => void }) {
  const name = useId();
  return (
    <li aria-labelledby={name}>
      <div className="schedule-head">
        <Link id={name} to={schedulePath(s.id)} className="schedule-name">
          {scheduleName(s)}
        </Link>
        <ScheduleState schedule={s} />
      </div>
      <ScheduleFacts schedule={s} maxNext={3} />
      <div className="page-actions schedule-actions">
        <PauseToggle schedule={s} />
        <Link to={schedulePath(s.id)} className="button">
          History
        </Link>
        <button type="button" className="button danger" onClick={onDelete}>
          Delete
        </button>
      </div>
    </li>
  );
}
