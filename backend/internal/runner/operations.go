package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/placement"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Operations: every request that changes a session must run where the
// session lives, on the server that holds it. Each is one type, its
// body: the type names the operation, carries what the request says,
// and applies it on the server holding the session. The public method
// builds the body and hands it to onHolder; forwarding encodes the body
// as a command, and the holder finds the operation by its name in
// operations, decodes the body and applies it the same way. A new
// operation is a type with name and apply, and one line in operations
// (TestEveryOperationIsRegistered fails without it).

// operation is a request of answer A on one session.
type operation[A any] interface {
	// name is the kind of the operation's commands. Commands are stored
	// and cross servers of different versions: a name never changes.
	name() string
	// apply does the operation on this server, which holds the session
	// or takes it.
	apply(ctx context.Context, r *Runner, at target) (A, error)
}

// target is what an operation applies to: the session, the owner the
// request acts for, and, for a request another server accepted, the id
// of the command that carried it.
type target struct {
	session, owner string
	command        string
}

// forwarded says another server accepted the request and forwarded it.
func (t target) forwarded() bool { return t.command != "" }

// commandKey is the idempotency key of a forwarded request whose client
// gave none: a command applied by a holder that died before finishing
// it, and applied again by the next, is answered from what the first
// one did.
func (t target) commandKey() string { return "cmd:" + t.command }

// none is the answer of an operation that answers nothing but its error.
type none struct{}

// onHolder runs the operation o on session id for owner, on the server
// that holds the session: here when this server holds it or can take
// it, and otherwise through a command to its holder, whose answer it
// returns; forwarded says which.
func onHolder[A any, O operation[A]](ctx context.Context, r *Runner, owner, id string, o O) (ans A, forwarded bool, err error) {
	var local A
	cmd := placement.Command{SessionID: id, Owner: owner, Kind: o.name(), Body: o}
	forwarded, err = r.place.Run(ctx, cmd, func() error {
		var err error
		local, err = o.apply(ctx, r, target{session: id, owner: owner})
		return err
	}, &ans)
	if !forwarded {
		ans = local
	}
	return ans, forwarded, err
}

// receiver is an operation as the holder of a session finds it, by
// name, to apply a command another server forwarded.
type receiver interface {
	name() string
	// decode reads a command's body.
	decode(body string) (any, error)
	// receive applies a forwarded command and returns its answer.
	receive(ctx context.Context, r *Runner, c store.Command) (any, error)
}

// registered is the receiving side of the operation O.
type registered[O operation[A], A any] struct{}

func (registered[O, A]) name() string {
	var o O
	return o.name()
}

func (registered[O, A]) decode(body string) (any, error) {
	var o O
	err := json.Unmarshal([]byte(body), &o)
	return o, err
}

func (registered[O, A]) receive(ctx context.Context, r *Runner, c store.Command) (any, error) {
	var o O
	if err := json.Unmarshal([]byte(c.Body), &o); err != nil {
		return nil, fmt.Errorf("decode %s command %s: %w", c.Kind, c.ID, err)
	}
	ans, err := o.apply(ctx, r, target{session: c.SessionID, owner: c.Owner, command: c.ID})
	if _, empty := any(ans).(none); empty {
		return nil, err
	}
	return ans, err
}

// operationList is every operation; operations finds them by name.
var operationList = []receiver{
	registered[postCommand, postAnswer]{},
	registered[mailCommand, session.Mail]{},
	registered[cancelCommand, session.Meta]{},
	registered[cancelAttachedCommand, cancelledAnswer]{},
	registered[pauseCommand, session.Meta]{},
	registered[resumeCommand, session.Meta]{},
	registered[completeCommand, completeAnswer]{},
	registered[deleteCommand, none]{},
	registered[watchCommand, session.Watch]{},
	registered[unwatchCommand, none]{},
	registered[forkCommand, forkAnswer]{},
	registered[renameCommand, session.Meta]{},
	registered[updateCommand, session.Meta]{},
	registered[compactCommand, Compacted]{},
	registered[importTurnsCommand, session.Meta]{},
	registered[fireCommand, store.Firing]{},
}

// operations are the operations by name; never written after start.
var operations = func() map[string]receiver {
	m := make(map[string]receiver, len(operationList))
	for _, o := range operationList {
		m[o.name()] = o
	}
	return m
}()

// dispatch applies a command another server forwarded, with its
// operation's apply.
func (r *Runner) dispatch(ctx context.Context, c store.Command) (any, error) {
	o, ok := operations[c.Kind]
	if !ok {
		return nil, errs.Invalid(errs.CodeUnknownCommand, "unknown command kind %q", c.Kind)
	}
	return o.receive(ctx, r, c)
}
