package server

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/schedule"
)

// An update that gives two timings, or two targets, is refused: the one
// kept would be a choice the caller did not make.
func TestPatchScheduleRefusesTwoTimingsOrTargets(t *testing.T) {
	at := timestamppb.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name  string
		req   *agentsv1.UpdateScheduleRequest
		field string
	}{
		{"cron and every", &agentsv1.UpdateScheduleRequest{Cron: new("@daily"), Every: new("1h")}, "cron"},
		{"every and at", &agentsv1.UpdateScheduleRequest{Every: new("1h"), At: at}, "every"},
		{"cron and at", &agentsv1.UpdateScheduleRequest{Cron: new("@daily"), At: at}, "cron"},
		{"agent and session", &agentsv1.UpdateScheduleRequest{Agent: new("a"), SessionId: new("s")}, "agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := schedule.Spec{Agent: "a", Every: "2h", Text: "hi"}
			before := spec
			enabled := true
			err := patchSchedule(tc.req, &spec, &enabled)
			var e *errs.Error
			if !errors.As(err, &e) || e.Code != errs.CodeInvalidArgument || !strings.HasPrefix(e.Message, tc.field+": ") {
				t.Fatalf("patchSchedule = %v, want invalid_argument on %s", err, tc.field)
			}
			if spec.Cron != before.Cron || spec.Every != before.Every || spec.Agent != before.Agent || spec.SessionID != before.SessionID {
				t.Errorf("the refused update changed the spec: %+v", spec)
			}
		})
	}
}
