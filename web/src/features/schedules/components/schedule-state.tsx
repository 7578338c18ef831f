import type { Schedule } from "../../../gen/agents/v1/schedule_pb";

// ScheduleState says whether a schedule fires (enabled) or is paused, in
// a word beside a mark, so it never depends on colour alone.
export function ScheduleState({ schedule }: { schedule: Schedule }) {
  const word = schedule.enabled ? "enabled" : "paused";
  return (
    <span className={`schedule-state state-${word}`}>
      <span className="schedule-state-dot" aria-hidden="true" />
      {word}
    </span>
  );
}
