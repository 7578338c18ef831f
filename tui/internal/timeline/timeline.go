// Package timeline is the compact text form of a session's waterfall
// (the web app's Timeline tab): its runs, each step's model call and
// tool calls, with when they ran, how long, their tokens and cost, drawn
// as bars on one time axis per run.
//
// It reads the facts the session's turns keep, which are the ones its
// events carry: an answer is stored as its model call ends (its
// create_time) with the call's duration, so the call began that long
// before; a tool call starts when the answer that asked for it is stored
// and its result carries its duration; a helper call names its child
// session. A user turn with text or mail starts a run. What has begun and
// not ended (the model answering, a tool running, a call waiting for its
// answer) runs to now. Nest puts the helpers' own runs under their calls.
package timeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/badge"
	"github.com/agents-os/agents/tui/internal/units"
)

// Kind is what a bar stands for.
type Kind int

const (
	Run Kind = iota
	Model
	Tool
	Helper
	Summary
)

// Bar is one span of the waterfall. End is zero while it runs.
type Bar struct {
	Kind       Kind
	Label      string
	Start, End time.Time
	In, Out    int64
	// Cost in dollars; nil when no call under it had a price.
	Cost *float64
	// Failed says a tool call ended in an error or was cancelled.
	Failed bool
	// Child is a helper call's session; CallID is a tool or helper
	// call's id.
	Child    string
	CallID   string
	Children []*Bar
}

// Running reports whether the bar has not ended.
func (b *Bar) Running() bool { return b.End.IsZero() }

func (b *Bar) spend(u *agentsv1.Usage) {
	if u == nil {
		return
	}
	b.In += u.GetPromptTokens()
	b.Out += u.GetCompletionTokens()
	if u.CostUsd != nil {
		c := u.GetCostUsd()
		if b.Cost != nil {
			c += *b.Cost
		}
		b.Cost = &c
	}
}

// Of derives the runs of a session from its turns, in index order;
// running says the session is running now, so the model is answering
// when nothing else is under way.
func Of(turns []*agentsv1.Turn, running bool) []*Bar {
	var runs []*Bar
	var run *Bar
	open := map[string]*Bar{} // tool calls without a result yet
	newRun := func(at time.Time) *Bar {
		run = &Bar{Kind: Run, Label: fmt.Sprintf("run %d", len(runs)+1), Start: at}
		runs = append(runs, run)
		return run
	}
	var last time.Time // when the last turn was stored
	// answered says the last turn was an answer that asked for no tool:
	// the run ended there, and what comes next starts another.
	answered := false
	for _, t := range turns {
		at := t.GetCreateTime().AsTime()
		switch k := t.GetKind().(type) {
		case *agentsv1.Turn_User:
			u := k.User
			for _, r := range u.GetToolResults() {
				if c := open[r.GetCallId()]; c != nil {
					c.End = at
					if d := r.GetDuration(); d != nil && d.AsDuration() > 0 {
						c.End = c.Start.Add(d.AsDuration())
					}
					c.Failed = r.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK
					if id := r.GetChildSessionId(); id != "" {
						c.Kind, c.Child = Helper, id
					}
					delete(open, r.GetCallId())
				}
			}
			if u.GetText() != "" || len(u.GetMail()) > 0 || len(u.GetAttachments()) > 0 || run == nil {
				newRun(at)
			}
		case *agentsv1.Turn_Llm:
			l := k.Llm
			if run == nil {
				newRun(at)
			}
			start := last
			if d := l.GetDuration(); d != nil {
				start = at.Add(-d.AsDuration())
			}
			if start.IsZero() || start.After(at) {
				start = at
			}
			name := l.GetModel()
			if name == "" {
				name = "model call"
			}
			step := &Bar{Kind: Model, Label: name, Start: start, End: at, Failed: l.GetInterrupted()}
			step.spend(l.GetUsage())
			for _, c := range l.GetToolCalls() {
				kind := Tool
				if c.GetKind() == agentsv1.ToolKind_TOOL_KIND_HELPER {
					kind = Helper
				}
				call := &Bar{Kind: kind, Label: c.GetName(), Start: at, CallID: c.GetId()}
				step.Children = append(step.Children, call)
				open[c.GetId()] = call
			}
			run.Children = append(run.Children, step)
		case *agentsv1.Turn_Compaction:
			// One asked for while the session was idle runs on its own, as
			// the server runs it; one before a model call is that call's.
			if run == nil || answered {
				newRun(at)
			}
			s := &Bar{Kind: Summary, Label: "summary", Start: at, End: at}
			s.spend(k.Compaction.GetUsage())
			run.Children = append(run.Children, s)
		}
		last = at
		answered = t.GetLlm() != nil && len(t.GetLlm().GetToolCalls()) == 0
	}
	if running && run != nil && len(open) == 0 {
		// Nothing runs but the model: it is answering.
		run.Children = append(run.Children, &Bar{Kind: Model, Label: "model call", Start: last})
	}
	for _, r := range runs {
		settle(r, running && r == run)
	}
	return runs
}

// maxNesting bounds how deep helpers' runs are nested under their calls.
const maxNesting = 4

// Nest puts under each helper call the steps of the runs its helper
// session made, deepest first, and counts the helper's tokens and cost
// in the call's, and in its run's, as the web app's timeline does.
// childOf names the session of a helper call whose turns do not yet (the
// call still runs), "" when unknown; runsOf derives a helper session's
// runs, nil while they are not known. A helper met twice (a loop in the
// tree) is nested once.
func Nest(runs []*Bar, childOf func(callID string) string, runsOf func(session string) []*Bar) {
	seen := map[string]bool{}
	var nest func(bars []*Bar, depth int)
	nest = func(bars []*Bar, depth int) {
		for _, b := range bars {
			if b.Kind == Helper && b.Child == "" && childOf != nil {
				b.Child = childOf(b.CallID)
			}
			if b.Kind == Helper && b.Child != "" && !seen[b.Child] && depth < maxNesting {
				seen[b.Child] = true
				child := runsOf(b.Child)
				nest(child, depth+1)
				for _, r := range child {
					addHelpers(r)
					b.Children = append(b.Children, r.Children...)
					b.add(r)
				}
				continue
			}
			nest(b.Children, depth)
		}
	}
	nest(runs, 0)
	for _, r := range runs {
		addHelpers(r)
	}
}

// addHelpers counts in a run the spend of the helper calls of its steps.
func addHelpers(r *Bar) {
	for _, step := range r.Children {
		for _, c := range step.Children {
			if c.Kind == Helper {
				r.add(c)
			}
		}
	}
}

// add counts o's tokens and cost in b's.
func (b *Bar) add(o *Bar) {
	b.In, b.Out = b.In+o.In, b.Out+o.Out
	if o.Cost != nil {
		c := *o.Cost
		if b.Cost != nil {
			c += *b.Cost
		}
		b.Cost = &c
	}
}

// settle ends a run with the last of its bars (or leaves it running, the
// last run of a running session) and sums its tokens and cost.
func settle(r *Bar, live bool) {
	var end time.Time
	var walk func(b *Bar)
	walk = func(b *Bar) {
		if b.End.After(end) {
			end = b.End
		}
		if b.Running() {
			live = true
		}
		for _, c := range b.Children {
			walk(c)
		}
	}
	for _, s := range r.Children {
		walk(s)
		r.add(s)
	}
	if !live {
		r.End = end
		if r.End.Before(r.Start) {
			r.End = r.Start
		}
	}
}

// Render draws the runs in width columns, the newest last: per run a
// heading line, then a line per model call and per tool call with its
// bar on the run's time axis, its duration, tokens and cost. now ends
// what runs; runs start at clock times of loc.
func Render(runs []*Bar, width int, now time.Time, loc *time.Location) []string {
	if len(runs) == 0 {
		return []string{"no runs yet: the timeline shows each run once the session has one"}
	}
	// A line of the waterfall: a run's heading alone, or a call's label,
	// bar (from, to on its run's span) and facts.
	type row struct {
		head, label, facts string
		from, to, span     time.Duration
	}
	var rows []row
	widest := 0
	for _, r := range runs {
		end := r.End
		if r.Running() {
			end = now
		}
		rows = append(rows, row{head: fmt.Sprintf("%s · %s · %s%s", r.Label, r.Start.In(loc).Format("15:04:05"), dur(end.Sub(r.Start), r.Running()), spendText(r))})
		span := max(end.Sub(r.Start), time.Millisecond)
		var line func(b *Bar, depth int)
		line = func(b *Bar, depth int) {
			e := b.End
			if b.Running() {
				e = now
			}
			facts := dur(e.Sub(b.Start), b.Running())
			if b.Kind == Helper && b.Child != "" {
				// The helper's session, which o opens from the transcript.
				facts += " · ↳" + badge.ShortID(b.Child)
			}
			facts += spendText(b)
			if b.Failed {
				facts += " · failed"
			}
			widest = max(widest, ansi.StringWidth(facts))
			rows = append(rows, row{label: strings.Repeat("  ", depth) + b.Label, facts: facts, from: b.Start.Sub(r.Start), to: e.Sub(r.Start), span: span})
			for _, c := range b.Children {
				line(c, depth+1)
			}
		}
		for _, s := range r.Children {
			line(s, 1)
		}
	}
	// The facts take the room they need when the bars keep a quarter of
	// the width; on a narrow screen they are cut instead.
	labelW := min(22, max(width/4, 8))
	factsW := max(24, min(widest, width-labelW-2-max(width/4, 4)))
	barW := max(width-labelW-factsW-2, 4)
	out := make([]string, 0, len(rows))
	for _, x := range rows {
		if x.head != "" {
			out = append(out, ansi.Truncate(x.head, width, "…"))
			continue
		}
		out = append(out, fit(x.label, labelW)+" "+bar(x.from, x.to, x.span, barW)+" "+ansi.Truncate(x.facts, factsW, "…"))
	}
	return out
}

// bar draws [from, to) of span in w cells: dots before, a block for the
// span (at least one cell), spaces after.
func bar(from, to, span time.Duration, w int) string {
	a := int(int64(from) * int64(w) / int64(span))
	b := int((int64(to)*int64(w) + int64(span) - 1) / int64(span))
	a = min(max(a, 0), w-1)
	b = min(max(b, a+1), w)
	return strings.Repeat("·", a) + strings.Repeat("█", b-a) + strings.Repeat(" ", w-b)
}

// fit cuts or pads s to w cells.
func fit(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
}

// dur words a duration: 850ms, 1.2s, 3m4s; a running one ends in "…".
func dur(d time.Duration, running bool) string {
	var s string
	switch {
	case d < time.Second:
		s = fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		s = fmt.Sprintf("%.1fs", d.Seconds())
	default:
		s = d.Round(time.Second).String()
	}
	if running {
		s += "…"
	}
	return s
}

func spendText(b *Bar) string {
	var s string
	if t := b.In + b.Out; t > 0 {
		s += " · " + units.Tokens(t) + " tok"
	}
	if b.Cost != nil {
		s += " · " + units.USD(*b.Cost)
	}
	return s
}
