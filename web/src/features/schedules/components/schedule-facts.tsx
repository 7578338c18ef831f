import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Link } from "react-router";
import { RelativeTime } from "../../../components/relative-time";
import { ScheduleMissed, ScheduleOverlap, type Schedule } from "../../../gen/agents/v1/schedule_pb";
import { agentPath, sessionPath } from "../../../lib/paths";
import { firingStatusText, timingText } from "../lib/spec";
import { NextFirings } from "./next-firings";

// ScheduleFacts are what a schedule does and when: its target (linked),
// its timing, its next firings, its last firing, and, in full, its
// message and its rules for missed times and a busy session.
export function ScheduleFacts({ schedule: s, full, maxNext }: { schedule: Schedule; full?: boolean; maxNext?: number }) {
  const last = s.lastFiring;
  return (
    <dl className="facts schedule-facts">
      <dt>Target</dt>
      <dd>
        {s.agent ? (
          <>
            starts a session of <Link to={agentPath(s.agent)}>{s.agent}</Link>
          </>
        ) : (
          <>
            posts to session <Link to={sessionPath(s.sessionId)}>{s.sessionId}</Link>
          </>
        )}
      </dd>
      <dt>When</dt>
      <dd>{timingText(s)}</dd>
      <dt>Next</dt>
      <dd>
        <NextFirings schedule={s} max={maxNext} />
      </dd>
      {last?.fireTime && (
        <>
          <dt>Last</dt>
          <dd>
            {firingStatusText(last)}, <RelativeTime ms={timestampDate(last.fireTime).getTime()} />
            {last.sessionId && (
              <>
                {" "}
                (<Link to={sessionPath(last.sessionId)}>session</Link>)
              </>
            )}
          </dd>
        </>
      )}
      {full && (
        <>
          <dt>Message</dt>
          <dd className="schedule-message">{s.message?.text}</dd>
          <dt>Missed times</dt>
          <dd>{s.missed === ScheduleMissed.ONCE ? "fire once, for all of them, when a server is back" : "skipped"}</dd>
          {s.sessionId && (
            <>
              <dt>Session busy</dt>
              <dd>{s.overlap === ScheduleOverlap.QUEUE ? "the message goes to it as mail" : "the firing is skipped"}</dd>
            </>
          )}
          {Object.keys(s.params).length > 0 && (
            <>
              <dt>Params</dt>
              <dd>
                {Object.entries(s.params)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(", ")}
              </dd>
            </>
          )}
          {s.owner && (
            <>
              <dt>Owner</dt>
              <dd>{s.owner}</dd>
            </>
          )}
        </>
      )}
    </dl>
  );
}
