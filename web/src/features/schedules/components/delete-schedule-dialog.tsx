import { useMutation } from "@connectrpc/connect-query";
import { Dialog } from "../../../components/dialog";
import { ScheduleService, type Schedule } from "../../../gen/agents/v1/schedule_pb";
import { errorText } from "../../../lib/error-text";
import { useRefreshSchedules } from "../hooks/use-schedule-actions";
import { scheduleName } from "../lib/spec";

interface Props {
  schedule: Schedule;
  onClose: () => void;
  onDeleted?: () => void;
}

// DeleteScheduleDialog confirms deleting a schedule: it and its firings
// go; the sessions its firings started stay.
export function DeleteScheduleDialog({ schedule, onClose, onDeleted }: Props) {
  const refresh = useRefreshSchedules();
  const del = useMutation(ScheduleService.method.deleteSchedule, {
    onSuccess: async () => {
      onDeleted?.();
      onClose();
      await refresh();
    },
  });
  return (
    <Dialog open onClose={onClose} title={`Delete the schedule ${scheduleName(schedule)}?`} className="confirm">
      <p>It stops firing and its firings are forgotten. The sessions its firings started stay, with their conversations.</p>
      {del.error && (
        <p role="alert" className="error">
          Could not delete the schedule: {errorText(del.error)}
        </p>
      )}
      <div className="actions">
        <button type="button" className="button" onClick={onClose} autoFocus>
          Cancel
        </button>
        <button type="button" className="button danger" disabled={del.isPending} onClick={() => del.mutate({ scheduleId: schedule.id })}>
          Delete the schedule
        </button>
      </div>
    </Dialog>
  );
}
