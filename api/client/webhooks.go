package client

import agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

// DeliveryStatusName is where a webhook delivery stands, in the word the
// CLI, the terminal UI and the web app show it by (and the JSON routes
// and the CLI's --status take): pending, delivered or failed; "unknown"
// for a status this client does not know, such as one a newer server
// added, rather than nothing, so that a line still reads.
func DeliveryStatusName(s agentsv1.DeliveryStatus) string {
	switch s {
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING:
		return "pending"
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED:
		return "delivered"
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED:
		return "failed"
	}
	return "unknown"
}
