package cli

import (
	"errors"
	"fmt"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
)

// errorReason is the machine code and metadata a server error carries in
// its ErrorDetail ("session_has_children", "params_required", …); "" for
// other errors.
func errorReason(err error) (string, map[string]string) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return "", nil
	}
	for _, d := range ce.Details() {
		if m, derr := d.Value(); derr == nil {
			if detail, ok := m.(*agentsv1.ErrorDetail); ok {
				return detail.GetCode(), detail.GetMetadata()
			}
		}
	}
	return "", nil
}

// describe is client.Describe with what to do about the error on this
// command line: the server speaks of its API, the user needs the flag.
func describe(err error) error {
	if err == nil {
		return nil
	}
	out := client.Describe(err)
	if code, _ := errorReason(err); code == errs.CodeParamsRequired {
		return fmt.Errorf("%w (give them with --params-file FILE, a JSON object name → value)", out)
	}
	return out
}
