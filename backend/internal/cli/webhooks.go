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
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// webhooksCommand is `agents webhooks`.
func (a *app) webhooksCommand() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "Register HTTP endpoints that are sent chosen events, signed (locally or on --attach)",
		Long: `Webhooks POST chosen events to an HTTP endpoint as they happen: the
body is the event's JSON, as on the event stream, signed per the Standard
Webhooks specification with the webhook's secret (see docs/webhooks.md).
Events: run.stopped, run.failed, call.waiting, budget.exceeded,
session.idle, schedule.fired, agent.changed.`,
		Args: cobra.NoArgs,
	}
	a.addServerFlags(cmd, &cf)
	cmd.AddCommand(a.webhooksCreate(&cf), a.webhooksList(&cf), a.webhooksGet(&cf),
		a.webhooksEnable(&cf, true), a.webhooksEnable(&cf, false), a.webhooksRemove(&cf), a.webhooksDeliveries(&cf))
	return cmd
}

func (a *app) webhooksCreate(cf *clientFlags) *cobra.Command {
	var (
		events      []string
		secret      string
		serverWide  bool
		description string
		asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "create URL --event NAME… [--secret whsec_…] [--server-wide]",
		Short: "Register an endpoint; prints its secret, which is shown this once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Webhooks.CreateWebhook(ctx, connect.NewRequest(&agentsv1.CreateWebhookRequest{
					Url: args[0], Events: splitEvents(events), Secret: secret, ServerWide: serverWide, Description: description,
				}))
				if err != nil {
					return describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg)
				}
				w := res.Msg.GetWebhook()
				fmt.Fprintf(a.stdout, "created webhook %s\n", w.GetId())
				fmt.Fprintf(a.stdout, "secret %s\n", res.Msg.GetSecret())
				fmt.Fprintln(a.stdout, "(the secret is shown this once: keep it where the receiver reads it)")
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&events, "event", "e", nil, "an event to send (repeatable, or comma-separated)")
	f.StringVar(&secret, "secret", "", "the signing secret, whsec_ and base64 (default: the server makes one)")
	f.BoolVar(&serverWide, "server-wide", false, "send every owner's events (needs an admin token when attached with auth)")
	f.StringVar(&description, "description", "", "free text")
	f.BoolVar(&asJSON, "json", false, "print the webhook and its secret as JSON")
	_ = cmd.MarkFlagRequired("event")
	return cmd
}

// splitEvents accepts --event a,b as --event a --event b, spaces trimmed.
func splitEvents(in []string) []string {
	var out []string
	for _, e := range in {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func (a *app) webhooksList(cf *clientFlags) *cobra.Command {
	var (
		all    bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List webhooks",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Webhooks.ListWebhooks(ctx, connect.NewRequest(&agentsv1.ListWebhooksRequest{AllOwners: all}))
				if err != nil {
					return describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg)
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tLAST\tEVENTS\tURL")
				for _, w := range res.Msg.GetWebhooks() {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.GetId(), webhookStatus(w), lastOutcome(w.GetLastDelivery()), strings.Join(w.GetEvents(), ","), w.GetUrl())
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every owner's webhooks (admin only when attached with auth)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

func webhookStatus(w *agentsv1.Webhook) string {
	switch w.GetStatus() {
	case agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED:
		if w.GetFailingSince() != nil {
			return "failing"
		}
		return "enabled"
	case agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING:
		return "disabled (failing)"
	}
	return "disabled"
}

func (a *app) webhooksGet(cf *clientFlags) *cobra.Command {
	var asJSON bool
	cmd := a.idCommand(cf, "get ID", "Show a webhook", func(ctx context.Context, c *client.Client, id string) error {
		res, err := c.Webhooks.GetWebhook(ctx, connect.NewRequest(&agentsv1.GetWebhookRequest{WebhookId: id}))
		if err != nil {
			return describe(err)
		}
		if asJSON {
			return writeJSON(a.stdout, res.Msg.GetWebhook())
		}
		writeWebhook(a.stdout, res.Msg.GetWebhook())
		return nil
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the webhook as JSON")
	return cmd
}

func writeWebhook(out io.Writer, w *agentsv1.Webhook) {
	fmt.Fprintf(out, "id           %s\n", w.GetId())
	fmt.Fprintf(out, "owner        %s\n", w.GetOwner())
	fmt.Fprintf(out, "url          %s\n", w.GetUrl())
	fmt.Fprintf(out, "events       %s\n", strings.Join(w.GetEvents(), ", "))
	if w.GetServerWide() {
		fmt.Fprintf(out, "scope        every owner's events\n")
	}
	fmt.Fprintf(out, "status       %s\n", webhookStatus(w))
	if r := w.GetStatusReason(); r != "" {
		fmt.Fprintf(out, "reason       %s\n", r)
	}
	if f := w.GetFailingSince(); f != nil {
		fmt.Fprintf(out, "failing      since %s\n", stamp(f))
	}
	if d := w.GetDescription(); d != "" {
		fmt.Fprintf(out, "description  %s\n", d)
	}
	if d := w.GetLastDelivery(); d != nil {
		when := "queued " + stamp(d.GetCreated())
		if t := d.GetLastAttempt(); t != nil {
			when += ", last tried " + stamp(t)
		}
		fmt.Fprintf(out, "last         %s #%d %s, %s (%s)\n", d.GetKind(), d.GetSeq(), lastOutcome(d), attempts(d.GetAttempts()), when)
	} else {
		fmt.Fprintf(out, "last         none yet\n")
	}
	fmt.Fprintf(out, "created      %s\n", stamp(w.GetCreated()))
}

// lastOutcome is where a delivery stands and what its last attempt got:
// "delivered HTTP 204", "pending HTTP 503"; "-" for none.
func lastOutcome(d *agentsv1.WebhookDelivery) string {
	if d == nil {
		return "-"
	}
	if last := lastResult(d); last != "-" {
		return client.DeliveryStatusName(d.GetStatus()) + " " + last
	}
	return client.DeliveryStatusName(d.GetStatus())
}

func attempts(n int32) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

func stamp(t *timestamppb.Timestamp) string {
	if t == nil {
		return "-"
	}
	return t.AsTime().Local().Format(time.DateTime)
}

func (a *app) webhooksEnable(cf *clientFlags, enable bool) *cobra.Command {
	use, short, done := "enable ID", "Enable a webhook (one the server disabled for failing too)", "enabled"
	if !enable {
		use, short, done = "disable ID", "Disable a webhook: no event is sent to it until it is enabled", "disabled"
	}
	return a.idCommand(cf, use, short, func(ctx context.Context, c *client.Client, id string) error {
		if _, err := c.Webhooks.UpdateWebhook(ctx, connect.NewRequest(&agentsv1.UpdateWebhookRequest{WebhookId: id, Enabled: &enable})); err != nil {
			return describe(err)
		}
		fmt.Fprintf(a.stdout, "%s webhook %s\n", done, id)
		return nil
	})
}

func (a *app) webhooksRemove(cf *clientFlags) *cobra.Command {
	cmd := a.idCommand(cf, "rm ID", "Delete a webhook and its delivery log", func(ctx context.Context, c *client.Client, id string) error {
		if _, err := c.Webhooks.DeleteWebhook(ctx, connect.NewRequest(&agentsv1.DeleteWebhookRequest{WebhookId: id})); err != nil {
			return describe(err)
		}
		fmt.Fprintf(a.stdout, "deleted webhook %s\n", id)
		return nil
	})
	cmd.Aliases = []string{"delete"}
	return cmd
}

func (a *app) webhooksDeliveries(cf *clientFlags) *cobra.Command {
	var (
		status string
		limit  int32
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "deliveries ID [--status pending|delivered|failed] [--limit N]",
		Short: "Show a webhook's delivery log, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, ok := map[string]agentsv1.DeliveryStatus{
				"":          agentsv1.DeliveryStatus_DELIVERY_STATUS_UNSPECIFIED,
				"pending":   agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING,
				"delivered": agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED,
				"failed":    agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED,
			}[status]
			if !ok {
				return fmt.Errorf("--status %q: want pending, delivered or failed", status)
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Webhooks.ListWebhookDeliveries(ctx, connect.NewRequest(&agentsv1.ListWebhookDeliveriesRequest{WebhookId: args[0], Status: st, Limit: limit}))
				if err != nil {
					return describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg)
				}
				return writeDeliveries(a.stdout, res.Msg.GetDeliveries())
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only deliveries in this status: pending, delivered or failed")
	cmd.Flags().Int32Var(&limit, "limit", 0, "most deliveries to show (default 50, at most 500)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the deliveries as JSON")
	return cmd
}

// writeDeliveries is a delivery log as a table: each delivery's event,
// where it stands, its attempts, when the last was made (TRIED) and what
// it got (LAST), and when the next is due.
func writeDeliveries(out io.Writer, ds []*agentsv1.WebhookDelivery) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEVENT\tSTATUS\tATTEMPTS\tTRIED\tLAST\tNEXT")
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s #%d\t%s\t%d\t%s\t%s\t%s\n", d.GetId(), d.GetKind(), d.GetSeq(), client.DeliveryStatusName(d.GetStatus()),
			d.GetAttempts(), stamp(d.GetLastAttempt()), lastResult(d), stamp(d.GetNextAttempt()))
	}
	return tw.Flush()
}

// lastResult says how the last attempt went: its HTTP status or error.
func lastResult(d *agentsv1.WebhookDelivery) string {
	switch {
	case d.GetAttempts() == 0:
		return "-"
	case d.GetLastError() != "":
		e := d.GetLastError()
		if len(e) > 60 {
			e = e[:60] + "…"
		}
		return e
	case d.GetLastStatusCode() != 0:
		return fmt.Sprintf("HTTP %d", d.GetLastStatusCode())
	}
	return "-"
}
