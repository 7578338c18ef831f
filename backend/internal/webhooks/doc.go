// Package webhooks sends chosen events to HTTP endpoints that registered
// for them, signed per the Standard Webhooks specification
// (https://www.standardwebhooks.com): the body is the event's JSON as on
// the SSE stream, with the headers webhook-id, webhook-timestamp and
// webhook-signature (v1, the base64 HMAC-SHA256 of "id.timestamp.body").
//
// Service is the operations on webhooks (register, list, read, change,
// delete, read the delivery log), with their owner checks and
// validation; Dispatcher delivers. Both keep their state in the store
// (store.Webhooks): the event log is the durable source, the dispatcher
// fans each event out to one delivery row per matching endpoint and
// moves a cursor past it in one transaction, then claims due rows with
// an expiring claim, sends them off the run path with bounded
// concurrency per endpoint, and records each outcome under its claim.
// An event is delivered at least once, across restarts and the servers
// of one PostgreSQL database, and a delivery is counted successful once.
//
// Endpoints are public web servers: loopback, private, link-local and
// other special addresses are refused at registration and again at
// every connection, after the name is resolved (so a name that resolves
// elsewhere later cannot reach them), unless the operator's Policy
// allows them.
package webhooks
