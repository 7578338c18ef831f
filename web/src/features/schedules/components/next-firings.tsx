import { useNow } from "../../../components/relative-time";
import type { Schedule } from "../../../gen/agents/v1/schedule_pb";
import { upcoming } from "../lib/spec";

// NextFirings are a schedule's next times as the server counted them,
// each how far off and when (in the zone its timing is read in); or why
// there are none. max limits how many are shown.
export function NextFirings({ schedule, max }: { schedule: Schedule; max?: number }) {
  const now = useNow();
  const u = upcoming(schedule, now);
  if (u.firings.length === 0) return <span className="muted">{u.note}</span>;
  return (
    <ol className="next-firings" aria-label="Next firings">
      {u.firings.slice(0, max).map((f) => (
        <li key={f.iso}>
          <time dateTime={f.iso}>
            <strong>{f.relative}</strong> <span className="muted">{f.absolute}</span>
          </time>
        </li>
      ))}
    </ol>
  );
}
