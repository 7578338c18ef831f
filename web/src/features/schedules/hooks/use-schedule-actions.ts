import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { ScheduleService } from "../../../gen/agents/v1/schedule_pb";

// useRefreshSchedules is what makes every schedules query ask again:
// the list, a schedule, its firings.
export function useRefreshSchedules(): () => Promise<void> {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema: ScheduleService, cardinality: undefined }) });
}

// useScheduleActions pauses, resumes and fires a schedule; each, done,
// has every schedules query ask again (the next firings change with the
// state, a firing joins the history).
export function useScheduleActions() {
  const refresh = useRefreshSchedules();
  const onSuccess = () => void refresh();
  const pause = useMutation(ScheduleService.method.pauseSchedule, { onSuccess });
  const resume = useMutation(ScheduleService.method.resumeSchedule, { onSuccess });
  const fire = useMutation(ScheduleService.method.fireSchedule, { onSuccess });
  return { pause, resume, fire };
}
