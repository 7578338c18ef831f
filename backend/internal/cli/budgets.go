package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
)

// budgetFlags are the limits a command sets: --tokens and --cost-usd, or
// --none for no limit. prefix names them on commands where a bare
// --tokens would be unclear (run's --budget-tokens).
type budgetFlags struct {
	tokens     int64
	costUSD    float64
	none       bool
	autoResume bool
	cmd        *cobra.Command
	prefix     string
}

func (b *budgetFlags) add(cmd *cobra.Command, prefix, what string) {
	b.cmd, b.prefix = cmd, prefix
	f := cmd.Flags()
	f.Int64Var(&b.tokens, prefix+"tokens", 0, "most tokens (input + output) "+what+" may spend")
	f.Float64Var(&b.costUSD, costFlag(prefix), 0, "most US dollars "+what+" may spend (priced by the server's price table)")
}

// addAutoResume adds --auto-resume: the sessions the budget pauses
// resume by themselves when it is raised (and when, if it says).
func (b *budgetFlags) addAutoResume(when string) {
	b.cmd.Flags().BoolVar(&b.autoResume, "auto-resume", false, "resume the sessions the budget paused by themselves when it is raised"+when)
}

// addNone adds --none, which sets a budget without limits.
func (b *budgetFlags) addNone(what string) {
	b.cmd.Flags().BoolVar(&b.none, "none", false, "remove the limits of "+what)
}

func costFlag(prefix string) string {
	if prefix == "" {
		return "cost-usd"
	}
	return prefix + "usd"
}

// given says whether any limit flag was given.
func (b *budgetFlags) given() bool {
	f := b.cmd.Flags()
	return f.Changed(b.prefix+"tokens") || f.Changed(costFlag(b.prefix)) || b.none
}

// budget is the budget the flags set, nil when none was given.
func (b *budgetFlags) budget() (*agentsv1.Budget, error) {
	if !b.given() {
		if b.autoResume {
			// It is part of the budget, which a set replaces whole.
			return nil, errors.New("--auto-resume goes with --tokens, --cost-usd or --none")
		}
		return nil, nil
	}
	f := b.cmd.Flags()
	out := &agentsv1.Budget{AutoResume: b.autoResume}
	if f.Changed(b.prefix + "tokens") {
		if b.tokens < 0 {
			return nil, fmt.Errorf("--%stokens %d: want 0 or more", b.prefix, b.tokens)
		}
		out.Tokens = proto.Int64(b.tokens)
	}
	if f.Changed(costFlag(b.prefix)) {
		// The server refuses it too; refusing here names the flag.
		if session.CheckDollars(b.costUSD) != nil {
			return nil, fmt.Errorf("--%s %g: want a number of US dollars from 0 to %.0f", costFlag(b.prefix), b.costUSD, float64(session.MaxDollars))
		}
		out.CostUsd = proto.Float64(b.costUSD)
	}
	if b.none && (out.Tokens != nil || out.CostUsd != nil) {
		return nil, errors.New("--none removes the limits: give it without --tokens and --cost-usd")
	}
	return out, nil
}

// sessionsBudget is `agents sessions budget ID`.
func (a *app) sessionsBudget(cf *clientFlags) *cobra.Command {
	var (
		bf     budgetFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "budget ID [--tokens N] [--cost-usd X | --none]",
		Short: "Show or set the budget of a session's tree (ID may be a unique prefix)",
		Long: `Show the budget of a session's tree (the session and its helpers'
sessions spend one budget), what the tree spent and what is left; with
--tokens or --cost-usd, replace its limits (a limit not given is
removed), with --none remove them all. The budget is set on the tree's
root session. A run the budget stopped does not restart when it is
raised, unless --auto-resume is given: agents sessions resume continues
it, and the tree's helpers the budget stopped with it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			budget, err := bf.budget()
			if err != nil {
				return err
			}
			return a.onSession(cmd.Context(), *cf, args[0], func(ctx context.Context, c *client.Client, id string) error {
				var meta *agentsv1.SessionMeta
				if budget == nil {
					res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
					if err != nil {
						return describe(err)
					}
					meta = res.Msg.GetSession().GetMeta()
				} else {
					res, err := c.Sessions.UpdateSession(ctx, connect.NewRequest(&agentsv1.UpdateSessionRequest{SessionId: id, Budget: budget}))
					if err != nil {
						return budgetError(err)
					}
					meta = res.Msg.GetMeta()
				}
				if asJSON {
					return writeJSON(a.stdout, meta.GetBudget())
				}
				if meta.GetBudget() == nil {
					return errors.New("the server does not report budgets")
				}
				if r := meta.GetRootId(); r != "" && r != meta.GetId() {
					fmt.Fprintf(a.stdout, "tree      %s\n", r)
				}
				writeBudgetState(a.stdout, meta.GetBudget())
				return nil
			})
		},
	}
	bf.add(cmd, "", "the session's tree")
	bf.addNone("the session's tree")
	bf.addAutoResume(" or the owner's budget has room again (raised, or a new day or month)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the budget state as JSON")
	return cmd
}

// budgetError is describe for the calls of budgets, saying so when the
// server has none.
func budgetError(err error) error {
	if connect.CodeOf(err) == connect.CodeUnimplemented {
		return fmt.Errorf("%w (this server does not support budgets)", describe(err))
	}
	return describe(err)
}

// writeBudgetState prints a budget, what was spent against it and what
// is left, one line each.
func writeBudgetState(w io.Writer, b *agentsv1.BudgetState) {
	limit, spent, left := b.GetBudget(), b.GetSpent(), b.GetLeft()
	fmt.Fprintf(w, "budget    %s\n", budgetText(limit))
	fmt.Fprintf(w, "spent     %s\n", spendText(spent.GetTokens(), spent.GetCostUsd()))
	if hasLimit(limit) {
		fmt.Fprintf(w, "left      %s\n", budgetText(left))
	}
	if limit.GetAutoResume() {
		fmt.Fprintln(w, "resumes   by itself when the budget is raised")
	}
	if b.GetExceeded() {
		fmt.Fprintln(w, "exceeded  yes: no model call starts until the budget is raised")
	}
}

// budgetText is a budget's limits: "50000 tokens, $1.00", "no limit".
func budgetText(b *agentsv1.Budget) string {
	if !hasLimit(b) {
		return "no limit"
	}
	var parts []string
	if b.Tokens != nil {
		parts = append(parts, fmt.Sprintf("%d tokens", b.GetTokens()))
	}
	if b.CostUsd != nil {
		parts = append(parts, usd(b.GetCostUsd()))
	}
	return strings.Join(parts, ", ")
}

// hasLimit says whether b sets a limit.
func hasLimit(b *agentsv1.Budget) bool {
	return b != nil && (b.Tokens != nil || b.CostUsd != nil)
}

// spendText is what was spent: tokens, and dollars when any were.
func spendText(tokens int64, cost float64) string {
	if cost == 0 {
		return fmt.Sprintf("%d tokens", tokens)
	}
	return fmt.Sprintf("%d tokens, %s", tokens, usd(cost))
}

// usd prints dollars with their cents, and below a cent to the
// hundredth of one, so a cheap session does not read as free.
func usd(x float64) string {
	if x != 0 && x < 0.01 {
		return fmt.Sprintf("$%.4f", x)
	}
	return fmt.Sprintf("$%.2f", x)
}

// ownersCommand is `agents owners budget|usage`.
func (a *app) ownersCommand() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "owners",
		Short: "Show and set what owners may spend, and what they spent (locally or on --attach)",
		Args:  cobra.NoArgs,
	}
	a.addServerFlags(cmd, &cf)
	cmd.AddCommand(a.ownersBudget(&cf), a.ownersUsage(&cf))
	return cmd
}

func (a *app) ownersBudget(cf *clientFlags) *cobra.Command {
	var (
		bf     budgetFlags
		period string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "budget [OWNER] [--tokens N] [--cost-usd X] [--period day|month|total] | --none",
		Short: "Show or set an owner's budget (setting needs an admin token when attached with auth)",
		Long: `Show the budget in force for OWNER (default: the caller) and where it
comes from; with --tokens or --cost-usd, replace it (a limit not given
is removed) for the --period (default total); with --none, set a budget
without limits, which also overrides the server's default. Every
session of the owner stops at its budget.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			owner := ""
			if len(args) == 1 {
				owner = args[0]
			}
			budget, err := bf.budget()
			if err != nil {
				return err
			}
			p, err := parsePeriod(period)
			if err != nil {
				return err
			}
			if budget == nil && cmd.Flags().Changed("period") {
				return errors.New("--period goes with --tokens or --cost-usd")
			}
			if budget != nil && owner == "" {
				return errors.New("name the OWNER whose budget to set")
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				var ob *agentsv1.OwnerBudget
				if budget == nil {
					res, err := c.Owners.GetOwnerBudget(ctx, connect.NewRequest(&agentsv1.GetOwnerBudgetRequest{Owner: owner}))
					if err != nil {
						return budgetError(err)
					}
					ob = res.Msg.GetBudget()
				} else {
					res, err := c.Owners.SetOwnerBudget(ctx, connect.NewRequest(&agentsv1.SetOwnerBudgetRequest{
						Owner: owner, Tokens: budget.Tokens, CostUsd: budget.CostUsd, Period: p, AutoResume: budget.GetAutoResume(),
					}))
					if err != nil {
						return budgetError(err)
					}
					ob = res.Msg.GetBudget()
				}
				if asJSON {
					return writeJSON(a.stdout, ob)
				}
				writeOwnerBudget(a.stdout, ob)
				return nil
			})
		},
	}
	bf.add(cmd, "", "the owner's sessions together, per period,")
	bf.addNone("the owner")
	bf.addAutoResume(" and when its period ends")
	cmd.Flags().StringVar(&period, "period", "total", "what the limits cover: day, month (UTC calendar ones) or total")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the budget as JSON")
	return cmd
}

func (a *app) ownersUsage(cf *clientFlags) *cobra.Command {
	var (
		asJSON, allOwners    bool
		series, since, until string
	)
	cmd := &cobra.Command{
		Use:   "usage [OWNER]",
		Short: "Show what an owner spent in the budget's current period and in total, and over time with --series",
		Example: `  agents owners usage alice
  agents owners usage --series day                     # the last 30 UTC days, by agent and model
  agents owners usage --series hour --since 2026-03-01T08:00:00Z --until 2026-03-01T20:00:00Z
  agents owners usage --series day --since 7d --all-owners   # every owner's (an admin token)`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &agentsv1.GetOwnerUsageRequest{AllOwners: allOwners}
			if len(args) == 1 {
				req.Owner = args[0]
			}
			if err := seriesFlags(req, series, since, until, time.Now()); err != nil {
				return err
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Owners.GetOwnerUsage(ctx, connect.NewRequest(req))
				if err != nil {
					return budgetError(err)
				}
				u := res.Msg.GetUsage()
				if asJSON {
					return writeJSON(a.stdout, u)
				}
				writeOwnerBudget(a.stdout, u.GetBudget())
				if u.GetPeriodStart() != nil {
					fmt.Fprintf(a.stdout, "current   %s to %s\n", u.GetPeriodStart().AsTime().UTC().Format(time.DateTime),
						u.GetPeriodEnd().AsTime().UTC().Format(time.DateTime+" MST"))
				}
				cur := u.GetCurrent()
				fmt.Fprintf(a.stdout, "spent     %s\n", spendText(cur.GetSpent().GetTokens(), cur.GetSpent().GetCostUsd()))
				if hasLimit(cur.GetBudget()) {
					fmt.Fprintf(a.stdout, "left      %s\n", budgetText(cur.GetLeft()))
				}
				if cur.GetExceeded() {
					fmt.Fprintln(a.stdout, "exceeded  yes: no model call of the owner starts until the budget is raised or the period ends")
				}
				fmt.Fprintf(a.stdout, "total     %s\n", spendText(u.GetTotal().GetTokens(), u.GetTotal().GetCostUsd()))
				if s := u.GetSeries(); s != nil {
					fmt.Fprintln(a.stdout)
					writeUsageSeries(a.stdout, s, allOwners)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the usage as JSON")
	cmd.Flags().StringVar(&series, "series", "", "also print the usage over time, per UTC day or hour: day or hour")
	cmd.Flags().StringVar(&since, "since", "", "start of the series: an RFC 3339 time, a date (2026-03-01) or an age such as 7d or 12h (default: 30 days or 48 hours before --until)")
	cmd.Flags().StringVar(&until, "until", "", "end of the series, as --since (default: the end of the current day or hour)")
	cmd.Flags().BoolVar(&allOwners, "all-owners", false, "the series counts every owner's sessions, by owner (an admin token)")
	return cmd
}

// seriesFlags sets the usage series --series, --since and --until ask
// for on req; now is what ages count back from.
func seriesFlags(req *agentsv1.GetOwnerUsageRequest, series, since, until string, now time.Time) error {
	switch series {
	case "":
		if since != "" || until != "" || req.AllOwners {
			return errors.New("--since, --until and --all-owners shape the usage series: add --series day or --series hour")
		}
		return nil
	case "day":
		req.Bucket = agentsv1.UsageBucket_USAGE_BUCKET_DAY
	case "hour":
		req.Bucket = agentsv1.UsageBucket_USAGE_BUCKET_HOUR
	default:
		return fmt.Errorf("--series %q: want day or hour", series)
	}
	for _, f := range []struct {
		name, v string
		dst     **timestamppb.Timestamp
	}{{"since", since, &req.Since}, {"until", until, &req.Until}} {
		if f.v == "" {
			continue
		}
		t, err := parseWhen(f.v, now)
		if err != nil {
			return fmt.Errorf("--%s %q: want an RFC 3339 time, a date (2026-03-01) or an age such as 7d or 12h", f.name, f.v)
		}
		*f.dst = timestamppb.New(t)
	}
	return nil
}

// parseWhen reads a time as the usage flags take it: RFC 3339, a date
// (midnight UTC), or an age before now in days (7d) or as a Go duration
// (12h, 90m).
func parseWhen(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return time.Time{}, errors.New("bad age")
		}
		return now.AddDate(0, 0, -n), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return time.Time{}, errors.New("bad age")
	}
	return now.Add(-d), nil
}

// writeUsageSeries prints a usage series as a table, one row per bucket,
// (owner,) agent and model, and a total line.
func writeUsageSeries(w io.Writer, s *agentsv1.UsageSeries, byOwner bool) {
	layout, unit := time.DateOnly, "day"
	if s.GetBucket() == agentsv1.UsageBucket_USAGE_BUCKET_HOUR {
		layout, unit = "2006-01-02 15:04", "hour"
	}
	fmt.Fprintf(w, "usage per UTC %s, %s to %s\n", unit, s.GetSince().AsTime().UTC().Format(layout), s.GetUntil().AsTime().UTC().Format(layout))
	if len(s.GetPoints()) == 0 {
		fmt.Fprintln(w, "no model calls")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := strings.ToUpper(unit) + "\t"
	if byOwner {
		head += "OWNER\t"
	}
	fmt.Fprintln(tw, head+"AGENT\tMODEL\tCALLS\tIN\tOUT\tCOST")
	var calls, in, out int64
	var cost float64
	for _, p := range s.GetPoints() {
		fmt.Fprintf(tw, "%s\t", p.GetStart().AsTime().UTC().Format(layout))
		if byOwner {
			fmt.Fprintf(tw, "%s\t", p.GetOwner())
		}
		model := p.GetModel()
		if model == "" {
			model = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", p.GetAgent(), model, p.GetCalls(), p.GetPromptTokens(), p.GetCompletionTokens(), usd(p.GetCostUsd()))
		calls, in, out, cost = calls+p.GetCalls(), in+p.GetPromptTokens(), out+p.GetCompletionTokens(), cost+p.GetCostUsd()
	}
	fmt.Fprint(tw, "total\t")
	if byOwner {
		fmt.Fprint(tw, "\t")
	}
	fmt.Fprintf(tw, "\t\t%d\t%d\t%d\t%s\n", calls, in, out, usd(cost))
	tw.Flush()
}

func writeOwnerBudget(w io.Writer, ob *agentsv1.OwnerBudget) {
	fmt.Fprintf(w, "owner     %s\n", ob.GetOwner())
	switch ob.GetSource() {
	case agentsv1.BudgetSource_BUDGET_SOURCE_NONE:
		fmt.Fprintln(w, "budget    none")
		return
	case agentsv1.BudgetSource_BUDGET_SOURCE_DEFAULT:
		fmt.Fprintf(w, "budget    %s %s (the server's default)\n", budgetText(ob.GetBudget()), periodText(ob.GetPeriod()))
	default:
		fmt.Fprintf(w, "budget    %s %s\n", budgetText(ob.GetBudget()), periodText(ob.GetPeriod()))
	}
	if ob.GetBudget().GetAutoResume() {
		fmt.Fprintln(w, "resumes   by itself when the budget is raised or its period ends")
	}
}

// periodText says what span a budget covers: "per day", "in total".
func periodText(p agentsv1.BudgetPeriod) string {
	switch p {
	case agentsv1.BudgetPeriod_BUDGET_PERIOD_DAY:
		return "per day"
	case agentsv1.BudgetPeriod_BUDGET_PERIOD_MONTH:
		return "per month"
	}
	return "in total"
}

func parsePeriod(s string) (agentsv1.BudgetPeriod, error) {
	v, ok := agentsv1.BudgetPeriod_value["BUDGET_PERIOD_"+strings.ToUpper(s)]
	if !ok || v == 0 {
		return 0, fmt.Errorf("--period %q: want day, month or total", s)
	}
	return agentsv1.BudgetPeriod(v), nil
}

// writeTreeSpend prints, in a session's summary, its tree's budget and
// spend: one line, or nothing from a server without budgets.
func writeTreeSpend(w io.Writer, m *agentsv1.SessionMeta) {
	b := m.GetBudget()
	if b == nil {
		return
	}
	if r := m.GetRootId(); r != "" && r != m.GetId() {
		fmt.Fprintf(w, "tree     %s\n", r)
	}
	line := budgetText(b.GetBudget()) + " · tree spent " + spendText(b.GetSpent().GetTokens(), b.GetSpent().GetCostUsd())
	if hasLimit(b.GetBudget()) {
		line += " · left " + budgetText(b.GetLeft())
	}
	if b.GetExceeded() {
		line += " · exceeded"
	}
	fmt.Fprintf(w, "budget   %s\n", line)
}
