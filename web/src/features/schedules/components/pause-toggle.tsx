import type { Schedule } from "../../../gen/agents/v1/schedule_pb";
import { errorText } from "../../../lib/error-text";
import { useScheduleActions } from "../hooks/use-schedule-actions";

// PauseToggle pauses an enabled schedule and resumes a paused one; a
// resumed schedule goes on from now, the times it was paused over do not
// fire. The server's refusal shows beside it.
export function PauseToggle({ schedule }: { schedule: Schedule }) {
  const { pause, resume } = useScheduleActions();
  const pending = pause.isPending || resume.isPending;
  const error = pause.error ?? resume.error;
  return (
    <>
      <button
        type="button"
        className="button"
        disabled={pending}
        title={schedule.enabled ? "Stop it firing until it is resumed" : "Let it fire again, from now on"}
        onClick={() => {
          pause.reset();
          resume.reset();
          if (schedule.enabled) pause.mutate({ scheduleId: schedule.id });
          else resume.mutate({ scheduleId: schedule.id });
        }}
      >
        {schedule.enabled ? "Pause" : "Resume"}
      </button>
      {error && (
        <span role="alert" className="error">
          {errorText(error)}
        </span>
      )}
    </>
  );
}
