package client

import (
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Every status has its word; one this client does not know, or none,
// still reads as a word.
func TestDeliveryStatusNameNamesEveryStatus(t *testing.T) {
	t.Parallel()
	for s, want := range map[agentsv1.DeliveryStatus]string{
		agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING:     "pending",
		agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED:   "delivered",
		agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED:      "failed",
		agentsv1.DeliveryStatus_DELIVERY_STATUS_UNSPECIFIED: "unknown",
		agentsv1.DeliveryStatus(99):                         "unknown",
	} {
		if got := DeliveryStatusName(s); got != want {
			t.Errorf("DeliveryStatusName(%v) = %q, want %q", s, got, want)
		}
	}
	for s := range agentsv1.DeliveryStatus_name {
		if s != 0 && DeliveryStatusName(agentsv1.DeliveryStatus(s)) == "unknown" {
			t.Errorf("DeliveryStatusName(%v) has no word", agentsv1.DeliveryStatus(s))
		}
	}
}
