package wire_test

import (
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/wire"
)

// A mail body that says too little is refused naming what it lacks, in
// the routes' spelling.
func TestMailBodyFromWireSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body *agentsv1.MailBody
		want string
	}{
		{&agentsv1.MailBody{}, "mail body is empty: set one of user_message, agent_message, control"},
		{&agentsv1.MailBody{Kind: &agentsv1.MailBody_Control{Control: &agentsv1.ControlMessage{}}}, "control mail needs its order: control is one of stop_run, cancel_calls, resume"},
	} {
		if _, err := wire.MailBodyFromWire(tc.body); err == nil || err.Error() != tc.want {
			t.Errorf("%v: got %v, want %s", tc.body, err, tc.want)
		}
	}
}
