package wire

import (
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

var firingStatusToWire = map[string]agentsv1.FiringStatus{
	store.FiringStarted: agentsv1.FiringStatus_FIRING_STATUS_STARTED,
	store.FiringPosted:  agentsv1.FiringStatus_FIRING_STATUS_POSTED,
	store.FiringQueued:  agentsv1.FiringStatus_FIRING_STATUS_QUEUED,
	store.FiringSkipped: agentsv1.FiringStatus_FIRING_STATUS_SKIPPED,
	store.FiringFailed:  agentsv1.FiringStatus_FIRING_STATUS_FAILED,
}

// Firing converts a schedule's firing.
func Firing(f store.Firing) *agentsv1.ScheduleFiring {
	return &agentsv1.ScheduleFiring{
		ScheduleId:    f.ScheduleID,
		FireTime:      Timestamp(f.FireTime),
		Fired:         Timestamp(f.Fired),
		Status:        firingStatusToWire[f.Status],
		SessionId:     f.SessionID,
		Reason:        f.Reason,
		CatchUp:       f.CatchUp,
		Manual:        f.Manual,
		Outcome:       Status(session.Status(f.Outcome)),
		OutcomeReason: f.OutcomeReason,
		Finished:      Timestamp(f.Finished),
	}
}
