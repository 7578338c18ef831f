package server

import (
	"context"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/webhooks"
	"github.com/agents-os/agents/backend/internal/wire"
)

// webhookService serves WebhookService over webhooks.Service.
type webhookService struct {
	s *Server
}

var _ agentsv1connect.WebhookServiceHandler = (*webhookService)(nil)

// ops is the webhooks' operations; a server built without a store has
// none.
func (h *webhookService) ops() (*webhooks.Service, error) {
	if h.s.webhooks == nil {
		return nil, errs.Unavailable(errs.CodeStoreUnavailable, "this server keeps no webhooks")
	}
	return h.s.webhooks, nil
}

func caller(ctx context.Context) webhooks.Caller {
	return webhooks.Caller{Owner: owner(ctx), Admin: isAdmin(ctx)}
}

func (h *webhookService) CreateWebhook(ctx context.Context, req *connect.Request[agentsv1.CreateWebhookRequest]) (*connect.Response[agentsv1.CreateWebhookResponse], error) {
	ops, err := h.ops()
	if err != nil {
		return nil, err
	}
	m := req.Msg
	w, secret, err := ops.Create(ctx, caller(ctx), webhooks.Create{
		URL: m.GetUrl(), Events: m.GetEvents(), Secret: m.GetSecret(), ServerWide: m.GetServerWide(), Description: m.GetDescription(),
		Key: m.GetIdempotencyKey(),
	})
	if err != nil {
		return nil, err
	}
	h.s.log.Info("webhook registered", "webhook", w.ID, "owner", w.Owner, "server_wide", w.ServerWide, "events", w.Events)
	return connect.NewResponse(&agentsv1.CreateWebhookResponse{Webhook: webhookMessage(w), Secret: secret}), nil
}

func (h *webhookService) ListWebhooks(ctx context.Context, req *connect.Request[agentsv1.ListWebhooksRequest]) (*connect.Response[agentsv1.ListWebhooksResponse], error) {
	ops, err := h.ops()
	if err != nil {
		return nil, err
	}
	ws, err := ops.List(ctx, caller(ctx), req.Msg.GetAllOwners())
	if err != nil {
		return nil, err
	}
	out := &agentsv1.ListWebhooksResponse{Webhooks: make([]*agentsv1.Webhook, len(ws))}
	for i, w := range ws {
		out.Webhooks[i] = webhookMessage(w)
	}
	return connect.NewResponse(out), nil
}

func (h *webhookService) GetWebhook(ctx context.Context, req *connect.Request[agentsv1.GetWebhookRequest]) (*connect.Response[agentsv1.GetWebhookResponse], error) {
	ops, err := h.ops()
	if err != nil {
		return nil, err
	}
	w, err := ops.Get(ctx, caller(ctx), req.Msg.GetWebhookId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.GetWebhookResponse{Webhook: webhookMessage(w)}), nil
}

func (h *webhookService) UpdateWebhook(ctx context.Context, req *connect.Request[agentsv1.UpdateWebhookRequest]) (*connect.Response[agentsv1.UpdateWebhookResponse], error) {
	ops, err := h.ops()
	if err != nil {
		return nil, err
	}
	m := req.Msg
	w, err := ops.Update(ctx, caller(ctx), m.GetWebhookId(), webhooks.Update{
		Enabled: m.Enabled, URL: m.Url, Events: m.GetEvents(), Description: m.Description,
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.UpdateWebhookResponse{Webhook: webhookMessage(w)}), nil
}

func (h *webhookService) DeleteWebhook(ctx context.Context, req *connect.Request[agentsv1.DeleteWebhookRequest]) (*connect.Response[agentsv1.DeleteWebhookResponse], error) {
	ops, err := h.ops()
	if err != nil {
		return nil, err
	}
	if err := ops.Delete(ctx, caller(ctx), req.Msg.GetWebhookId()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.DeleteWebhookResponse{}), nil
}

func (h *webhookService) ListWebhookDeliveries(ctx context.Context, req *connect.Request[agentsv1.ListWebhookDeliveriesRequest]) (*connect.Response[agentsv1.ListWebhookDeliveriesResponse], error) {
	ops, err := h.ops()
	if err != nil {
		return nil, err
	}
	m := req.Msg
	ds, err := ops.Deliveries(ctx, caller(ctx), m.GetWebhookId(), deliveryStatusName(m.GetStatus()), int(m.GetLimit()))
	if err != nil {
		return nil, err
	}
	out := &agentsv1.ListWebhookDeliveriesResponse{Deliveries: make([]*agentsv1.WebhookDelivery, len(ds))}
	for i, d := range ds {
		out.Deliveries[i] = deliveryMessage(d)
	}
	return connect.NewResponse(out), nil
}

// webhookMessage is a webhook on the wire, without its secret, with
// its last delivery when the store read one.
func webhookMessage(w store.Webhook) *agentsv1.Webhook {
	out := &agentsv1.Webhook{
		Id: w.ID, Owner: w.Owner, Url: w.URL, Events: w.Events, ServerWide: w.ServerWide,
		Description: w.Description, Created: wire.Timestamp(w.Created), Updated: wire.Timestamp(w.Updated),
		FailingSince: wire.Timestamp(w.FailingSince),
	}
	if w.Last != nil {
		out.LastDelivery = deliveryMessage(*w.Last)
	}
	switch {
	case w.Enabled:
		out.Status = agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED
	case w.DisabledReason != "":
		out.Status, out.StatusReason = agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING, w.DisabledReason
	default:
		out.Status = agentsv1.WebhookStatus_WEBHOOK_STATUS_DISABLED
	}
	return out
}

func deliveryMessage(d store.Delivery) *agentsv1.WebhookDelivery {
	out := &agentsv1.WebhookDelivery{
		Id: d.ID, WebhookId: d.WebhookID, Seq: d.Seq, Kind: d.Kind, SessionId: d.SessionID,
		Attempts: int32(d.Attempts), LastStatusCode: int32(d.LastStatusCode), LastError: d.LastError,
		LastAttempt: wire.Timestamp(d.LastAttempt), Created: wire.Timestamp(d.Created), Delivered: wire.Timestamp(d.Delivered),
	}
	switch d.Status {
	case store.DeliveryPending:
		out.Status, out.NextAttempt = agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING, wire.Timestamp(d.NextAttempt)
	case store.DeliveryDelivered:
		out.Status = agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED
	case store.DeliveryFailed:
		out.Status = agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED
	}
	return out
}

func deliveryStatusName(s agentsv1.DeliveryStatus) string {
	switch s {
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING:
		return store.DeliveryPending
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED:
		return store.DeliveryDelivered
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED:
		return store.DeliveryFailed
	}
	return ""
}
