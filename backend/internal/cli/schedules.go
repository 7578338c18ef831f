package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// schedulesCommand is `agents schedules`.
func (a *app) schedulesCommand() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "Create, list and change schedules, which start sessions or post messages at set times (locally or on --attach)",
		Args:  cobra.NoArgs,
	}
	a.addServerFlags(cmd, &cf)
	cmd.AddCommand(a.schedulesCreate(&cf), a.schedulesList(&cf), a.schedulesGet(&cf), a.schedulesUpdate(&cf),
		a.schedulesSetEnabled(&cf, false), a.schedulesSetEnabled(&cf, true), a.schedulesRemove(&cf),
		a.schedulesFire(&cf), a.schedulesFirings(&cf))
	return cmd
}

// scheduleFlags are what create and update set.
type scheduleFlags struct {
	name, agent, sessionID    string
	cron, every, at, timezone string
	text, overlap, missed     string
	params                    []string
	paused                    bool
	budget                    budgetFlags
	cmd                       *cobra.Command
}

func (sf *scheduleFlags) add(cmd *cobra.Command) {
	sf.cmd = cmd
	f := cmd.Flags()
	f.StringVar(&sf.name, "name", "", "a name for the schedule")
	f.StringVar(&sf.agent, "to-agent", "", "start a new session of this agent at each firing")
	f.StringVar(&sf.sessionID, "to-session", "", "post to this session at each firing")
	f.StringVar(&sf.cron, "cron", "", `cron expression of five fields, such as "0 7 * * 1-5" (weekdays at 7:00)`)
	f.StringVar(&sf.every, "every", "", "interval, such as 15m or 1h30m (at least 1s)")
	f.StringVar(&sf.at, "at", "", "one time, RFC 3339 (2026-12-24T18:00:00+01:00)")
	f.StringVar(&sf.timezone, "timezone", "", "IANA time zone of --cron, such as Europe/Paris (default UTC)")
	f.StringVarP(&sf.text, "message", "m", "", "the message each firing sends")
	f.StringVar(&sf.overlap, "overlap", "", "while the session is busy: skip (default) or queue (as mail)")
	f.StringVar(&sf.missed, "missed", "", "times missed while no server ran: skip (default) or once (one catch-up)")
	f.StringArrayVar(&sf.params, "param", nil, "param NAME=VALUE given with each firing (repeatable; stored, not secret)")
	sf.budget.add(cmd, "budget-", "each session started")
}

func (sf *scheduleFlags) changed(name string) bool { return sf.cmd.Flags().Changed(name) }

func (sf *scheduleFlags) paramMap() (map[string]string, error) {
	out := map[string]string{}
	for _, p := range sf.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--param %q: want NAME=VALUE", p)
		}
		out[k] = v
	}
	return out, nil
}

func (sf *scheduleFlags) atTime() (*timestamppb.Timestamp, error) {
	t, err := time.Parse(time.RFC3339, sf.at)
	if err != nil {
		return nil, fmt.Errorf("--at %q: want an RFC 3339 time such as 2026-12-24T18:00:00+01:00", sf.at)
	}
	return timestamppb.New(t), nil
}

func overlapFlag(v string) (agentsv1.ScheduleOverlap, error) {
	switch v {
	case "":
		return agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_UNSPECIFIED, nil
	case "skip":
		return agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_SKIP, nil
	case "queue":
		return agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE, nil
	}
	return 0, fmt.Errorf("--overlap %q: want skip or queue", v)
}

func missedFlag(v string) (agentsv1.ScheduleMissed, error) {
	switch v {
	case "":
		return agentsv1.ScheduleMissed_SCHEDULE_MISSED_UNSPECIFIED, nil
	case "skip":
		return agentsv1.ScheduleMissed_SCHEDULE_MISSED_SKIP, nil
	case "once":
		return agentsv1.ScheduleMissed_SCHEDULE_MISSED_ONCE, nil
	}
	return 0, fmt.Errorf("--missed %q: want skip or once", v)
}

func (a *app) schedulesCreate(cf *clientFlags) *cobra.Command {
	var (
		sf     scheduleFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "create (--to-agent SLUG | --to-session ID) (--cron EXPR | --every DURATION | --at TIME) -m TEXT",
		Short: "Create a schedule and show its next firing times",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req := &agentsv1.CreateScheduleRequest{Name: sf.name, Agent: sf.agent, SessionId: sf.sessionID, Cron: sf.cron, Every: sf.every,
				Timezone: sf.timezone, Message: &agentsv1.Message{Text: sf.text}}
			var err error
			if sf.at != "" {
				if req.At, err = sf.atTime(); err != nil {
					return err
				}
			}
			if req.Params, err = sf.paramMap(); err != nil {
				return err
			}
			if req.Budget, err = sf.budget.budget(); err != nil {
				return err
			}
			if req.Overlap, err = overlapFlag(sf.overlap); err != nil {
				return err
			}
			if req.Missed, err = missedFlag(sf.missed); err != nil {
				return err
			}
			if sf.paused {
				req.Enabled = proto.Bool(false)
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Schedules.CreateSchedule(ctx, connect.NewRequest(req))
				if err != nil {
					return describe(err)
				}
				return a.showSchedule(res.Msg.GetSchedule(), asJSON)
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().BoolVar(&sf.paused, "paused", false, "create it paused")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the schedule as JSON")
	return cmd
}

func (a *app) schedulesUpdate(cf *clientFlags) *cobra.Command {
	var (
		sf     scheduleFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change what the flags give of a schedule (a new timing or target replaces the old one)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &agentsv1.UpdateScheduleRequest{ScheduleId: args[0]}
			set := func(flag string, v string, dst **string) {
				if sf.changed(flag) {
					*dst = proto.String(v)
				}
			}
			set("name", sf.name, &req.Name)
			set("to-agent", sf.agent, &req.Agent)
			set("to-session", sf.sessionID, &req.SessionId)
			set("cron", sf.cron, &req.Cron)
			set("every", sf.every, &req.Every)
			set("timezone", sf.timezone, &req.Timezone)
			var err error
			if sf.changed("at") {
				if req.At, err = sf.atTime(); err != nil {
					return err
				}
			}
			if sf.changed("message") {
				req.Message = &agentsv1.Message{Text: sf.text}
			}
			if sf.changed("param") {
				if req.Params, err = sf.paramMap(); err != nil {
					return err
				}
				req.UpdateParams = true
			}
			if req.Budget, err = sf.budget.budget(); err != nil {
				return err
			}
			if req.Overlap, err = overlapFlag(sf.overlap); err != nil {
				return err
			}
			if req.Missed, err = missedFlag(sf.missed); err != nil {
				return err
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Schedules.UpdateSchedule(ctx, connect.NewRequest(req))
				if err != nil {
					return describe(err)
				}
				return a.showSchedule(res.Msg.GetSchedule(), asJSON)
			})
		},
	}
	sf.add(cmd)
	sf.budget.addNone("each session started")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the schedule as JSON")
	return cmd
}

func (a *app) schedulesList(cf *clientFlags) *cobra.Command {
	var (
		agent, sessionID string
		asJSON           bool
	)
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the schedules with their next firing",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Schedules.ListSchedules(ctx, connect.NewRequest(&agentsv1.ListSchedulesRequest{Agent: agent, SessionId: sessionID}))
				if err != nil {
					return describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg)
				}
				writeSchedules(a.stdout, res.Msg.GetSchedules())
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&agent, "to-agent", "", "only the schedules of this agent")
	cmd.Flags().StringVar(&sessionID, "to-session", "", "only the schedules of this session")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the schedules as JSON")
	return cmd
}

func (a *app) schedulesGet(cf *clientFlags) *cobra.Command {
	var asJSON bool
	cmd := a.idCommand(cf, "get ID", "Show a schedule, its next firing times and its last firing", func(ctx context.Context, c *client.Client, id string) error {
		res, err := c.Schedules.GetSchedule(ctx, connect.NewRequest(&agentsv1.GetScheduleRequest{ScheduleId: id}))
		if err != nil {
			return describe(err)
		}
		return a.showSchedule(res.Msg.GetSchedule(), asJSON)
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the schedule as JSON")
	return cmd
}

// schedulesSetEnabled is `agents schedules pause` or `resume`.
func (a *app) schedulesSetEnabled(cf *clientFlags, on bool) *cobra.Command {
	if on {
		return a.idCommand(cf, "resume ID", "Let a paused schedule fire again, from now on", func(ctx context.Context, c *client.Client, id string) error {
			res, err := c.Schedules.ResumeSchedule(ctx, connect.NewRequest(&agentsv1.ResumeScheduleRequest{ScheduleId: id}))
			if err != nil {
				return describe(err)
			}
			return a.showSchedule(res.Msg.GetSchedule(), false)
		})
	}
	return a.idCommand(cf, "pause ID", "Stop a schedule firing until it is resumed", func(ctx context.Context, c *client.Client, id string) error {
		res, err := c.Schedules.PauseSchedule(ctx, connect.NewRequest(&agentsv1.PauseScheduleRequest{ScheduleId: id}))
		if err != nil {
			return describe(err)
		}
		return a.showSchedule(res.Msg.GetSchedule(), false)
	})
}

func (a *app) schedulesRemove(cf *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID…",
		Aliases: []string{"delete"},
		Short:   "Delete schedules and their firings (the sessions they started stay)",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				for _, id := range args {
					if _, err := c.Schedules.DeleteSchedule(ctx, connect.NewRequest(&agentsv1.DeleteScheduleRequest{ScheduleId: id})); err != nil {
						return describe(err)
					}
					fmt.Fprintf(a.stdout, "deleted %s\n", id)
				}
				return nil
			})
		},
	}
}

func (a *app) schedulesFire(cf *clientFlags) *cobra.Command {
	var asJSON bool
	cmd := a.idCommand(cf, "fire ID", "Fire a schedule now, once (its times are unchanged)", func(ctx context.Context, c *client.Client, id string) error {
		res, err := c.Schedules.FireSchedule(ctx, connect.NewRequest(&agentsv1.FireScheduleRequest{ScheduleId: id}))
		if err != nil {
			return describe(err)
		}
		if asJSON {
			return writeJSON(a.stdout, res.Msg.GetFiring())
		}
		writeFirings(a.stdout, []*agentsv1.ScheduleFiring{res.Msg.GetFiring()})
		return nil
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the firing as JSON")
	return cmd
}

func (a *app) schedulesFirings(cf *clientFlags) *cobra.Command {
	var (
		limit  int32
		asJSON bool
	)
	cmd := a.idCommand(cf, "firings ID", "List a schedule's firings, newest first, with the session each started and its outcome", func(ctx context.Context, c *client.Client, id string) error {
		res, err := c.Schedules.ListFirings(ctx, connect.NewRequest(&agentsv1.ListFiringsRequest{ScheduleId: id, Limit: limit}))
		if err != nil {
			return describe(err)
		}
		if asJSON {
			return writeJSON(a.stdout, res.Msg)
		}
		writeFirings(a.stdout, res.Msg.GetFirings())
		return nil
	})
	cmd.Flags().Int32Var(&limit, "limit", 0, "most firings to show (default 50, at most 500)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the firings as JSON")
	return cmd
}

func (a *app) showSchedule(sc *agentsv1.Schedule, asJSON bool) error {
	if asJSON {
		return writeJSON(a.stdout, sc)
	}
	writeSchedule(a.stdout, sc)
	return nil
}

// when is a schedule's timing in words.
func when(sc *agentsv1.Schedule) string {
	switch {
	case sc.GetCron() != "":
		tz := sc.GetTimezone()
		if tz == "" {
			tz = "UTC"
		}
		return fmt.Sprintf("cron %q %s", sc.GetCron(), tz)
	case sc.GetEvery() != "":
		return "every " + sc.GetEvery()
	}
	return "at " + stamp(sc.GetAt())
}

func target(sc *agentsv1.Schedule) string {
	if sc.GetAgent() != "" {
		return "agent " + sc.GetAgent()
	}
	return "session " + sc.GetSessionId()
}

func writeSchedule(w io.Writer, sc *agentsv1.Schedule) {
	state := "enabled"
	if !sc.GetEnabled() {
		state = "paused"
	}
	fmt.Fprintf(w, "schedule  %s\n", sc.GetId())
	if sc.GetName() != "" {
		fmt.Fprintf(w, "name      %s\n", sc.GetName())
	}
	fmt.Fprintf(w, "owner     %s\ntarget    %s\nwhen      %s\nstate     %s\n", sc.GetOwner(), target(sc), when(sc), state)
	fmt.Fprintf(w, "overlap   %s\nmissed    %s\n",
		strings.ToLower(strings.TrimPrefix(sc.GetOverlap().String(), "SCHEDULE_OVERLAP_")),
		strings.ToLower(strings.TrimPrefix(sc.GetMissed().String(), "SCHEDULE_MISSED_")))
	fmt.Fprintf(w, "message   %s\n", oneLine(sc.GetMessage().GetText(), 100))
	for i, t := range sc.GetNextFirings() {
		label := "          "
		if i == 0 {
			label = "next      "
		}
		fmt.Fprintf(w, "%s%s\n", label, stamp(t))
	}
	if f := sc.GetLastFiring(); f != nil {
		fmt.Fprintf(w, "last      %s %s\n", stamp(f.GetFireTime()), firingSummary(f))
	}
}

func writeSchedules(w io.Writer, list []*agentsv1.Schedule) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOWNER\tTARGET\tWHEN\tSTATE\tNEXT\tNAME")
	for _, sc := range list {
		state, next := "enabled", "-"
		if !sc.GetEnabled() {
			state = "paused"
		}
		if n := sc.GetNextFirings(); len(n) > 0 {
			next = stamp(n[0])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sc.GetId(), sc.GetOwner(), target(sc), when(sc), state, next, sc.GetName())
	}
	_ = tw.Flush()
}

func firingSummary(f *agentsv1.ScheduleFiring) string {
	s := strings.ToLower(strings.TrimPrefix(f.GetStatus().String(), "FIRING_STATUS_"))
	if f.GetSessionId() != "" {
		s += " " + f.GetSessionId()
	}
	if f.GetReason() != "" {
		s += " (" + f.GetReason() + ")"
	}
	if f.GetOutcome() != agentsv1.SessionStatus_SESSION_STATUS_UNSPECIFIED {
		s += " → " + statusName(f.GetOutcome())
		if f.GetOutcomeReason() != "" {
			s += " (" + f.GetOutcomeReason() + ")"
		}
	}
	return s
}

func writeFirings(w io.Writer, list []*agentsv1.ScheduleFiring) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSTATUS\tSESSION\tOUTCOME\tNOTE")
	for _, f := range list {
		status := strings.ToLower(strings.TrimPrefix(f.GetStatus().String(), "FIRING_STATUS_"))
		outcome := "-"
		if f.GetOutcome() != agentsv1.SessionStatus_SESSION_STATUS_UNSPECIFIED {
			outcome = statusName(f.GetOutcome())
			if r := f.GetOutcomeReason(); r != "" {
				outcome += " (" + r + ")"
			}
		}
		var note []string
		if f.GetCatchUp() {
			note = append(note, "catch-up")
		}
		if f.GetManual() {
			note = append(note, "fired by hand")
		}
		if f.GetReason() != "" {
			note = append(note, f.GetReason())
		}
		session := f.GetSessionId()
		if session == "" {
			session = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", stamp(f.GetFireTime()), status, session, outcome, strings.Join(note, "; "))
	}
	_ = tw.Flush()
}
