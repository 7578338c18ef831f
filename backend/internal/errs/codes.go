package errs

// The machine codes the server returns: an ErrorDetail's code over
// Connect, "reason" in a JSON error, and a failed session's code. They are
// a contract with clients: a value never changes once released. Every
// error the server returns names one of these; codes_test.go fails when a
// constructor is given a literal instead.

// Codes of bad input (KindInvalid), besides the not found ones below,
// which some operations report as invalid when the missing thing was
// named in the request.
const (
	// CodeInvalidArgument: a field or parameter is missing, malformed, of
	// the wrong type or out of range.
	CodeInvalidArgument = "invalid_argument"
	// CodeInvalidAgent: an agent's definition does not load (metadata
	// "field" names the offending field when there is one).
	CodeInvalidAgent = "invalid_agent"
	// CodeInvalidTurns: a store write whose turns do not follow the
	// session's (indexes, count, or a turn of no known kind).
	CodeInvalidTurns = "invalid_turns"
	// CodeInvalidMail: a store write of mail without an id.
	CodeInvalidMail = "invalid_mail"
	// CodeInvalidCall: a store write of a deferred call without a token or
	// of another session.
	CodeInvalidCall = "invalid_call"
	// CodeInvalidPageToken: a list's page token the server did not write.
	CodeInvalidPageToken = "invalid_page_token"
)

// Codes of things that do not exist (KindNotFound).
const (
	// CodeUnknownSession: no session with the id, or one of another owner.
	CodeUnknownSession = "unknown_session"
	// CodeUnknownAgent: no agent is loaded, or stored, under the slug; as a
	// failed session's code, its agent was no longer loaded when it ran.
	CodeUnknownAgent = "unknown_agent"
	// CodeUnknownVersion: a stored agent has no such version (invalid, not
	// not found, when a session is pinned to it).
	CodeUnknownVersion = "unknown_version"
	// CodeUnknownTurn: a fork at a turn the session does not have.
	CodeUnknownTurn = "unknown_turn"
	// CodeUnknownToken: no pending call has the continuation token, or its
	// call was settled without an answer.
	CodeUnknownToken = "unknown_token"
	// CodeUnknownMail: a session has no such mail (gone, or never sent).
	CodeUnknownMail = "unknown_mail"
	// CodeUnknownKey: the store holds no request under an idempotency key.
	CodeUnknownKey = "unknown_key"
	// CodeUnknownCommand: a command between servers sharing a database
	// that is not stored (not found), or of a kind the receiving server
	// does not know (invalid).
	CodeUnknownCommand = "unknown_command"
	// CodeUnknownWebhook: no webhook with the id, or one of another owner.
	CodeUnknownWebhook = "unknown_webhook"
	// CodeNoLease: no server holds a lease on the session.
	CodeNoLease = "no_lease"
	// CodeUnknownRoute: a JSON route that does not exist.
	CodeUnknownRoute = "unknown_route"
	// CodeUnknownSchedule: no schedule with the id, or one of another
	// owner.
	CodeUnknownSchedule = "unknown_schedule"
)

// Codes of a clash with what exists (KindConflict, and KindAborted for
// CodeVersionMismatch).
const (
	// CodeAlreadyExists: a store write of a row whose id is taken.
	CodeAlreadyExists = "already_exists"
	// CodeSessionExists: a session id is taken, or the session is in use
	// or being imported by another request.
	CodeSessionExists = "session_exists"
	// CodeSessionReloaded: the session was reloaded from the database
	// while the request waited; it may be sent again.
	CodeSessionReloaded = "session_reloaded"
	// CodeAgentExists: a stored agent's slug is taken, by a stored or a
	// file agent, or by one differing only in case.
	CodeAgentExists = "agent_exists"
	// CodeAgentReadOnly: the API may not change a file agent.
	CodeAgentReadOnly = "agent_read_only"
	// CodeTurnConflict: a step appends at a turn index the session has
	// moved past.
	CodeTurnConflict = "turn_conflict"
	// CodeLeaseHeld: another server runs the session (metadata "holder"
	// names it when known).
	CodeLeaseHeld = "lease_held"
	// CodeVersionMismatch: an expected_version that is no longer the
	// stored agent's (KindAborted): read again and retry.
	CodeVersionMismatch = "version_mismatch"
	// CodeFiringClaimed: a schedule's firing was claimed already, by this
	// server or another one sharing the database.
	CodeFiringClaimed = "firing_claimed"
)

// Codes of an operation the current state refuses
// (KindFailedPrecondition).
const (
	// CodeCallCompleted: a deferred call was answered, or approved and
	// run, already.
	CodeCallCompleted = "call_completed"
	// CodeCallNotDeferred: an answer to a call the server runs itself.
	CodeCallNotDeferred = "call_not_deferred"
	// CodeApprovalSettled: an approval was settled without an answer
	// (the run stopped, the session was deleted).
	CodeApprovalSettled = "approval_settled"
	// CodeCallsPending: a resume while deferred calls wait for answers.
	CodeCallsPending = "calls_pending"
	// CodeParamsRequired: the agent's required params are missing
	// (metadata "missing" lists them); as a failed session's code, a run
	// recovered after a restart lost them.
	CodeParamsRequired = "params_required"
	// CodeNothingToCompact: a compaction of a history of recent turns
	// only.
	CodeNothingToCompact = "nothing_to_compact"
	// CodeSessionHasChildren: a delete of a session that has child
	// sessions, without cascade.
	CodeSessionHasChildren = "session_has_children"
	// CodeMailDelivered: mail that was delivered already.
	CodeMailDelivered = "mail_delivered"
	// CodeLeaseLost: a write of a server whose lease on the session was
	// taken by another.
	CodeLeaseLost = "lease_lost"
	// CodeAgentDeleted: the stored agent a session ran was deleted (or
	// no longer loads); also a failed session's code.
	CodeAgentDeleted = "agent_deleted"
	// CodeAgentReplaced: the stored agent a session ran was deleted and
	// another created under its slug; also a failed session's code.
	CodeAgentReplaced = "agent_replaced"
	// CodeAgentInUse: a delete of an agent that other agents name as a
	// helper.
	CodeAgentInUse = "agent_in_use"
)

// Codes of a caller without the right (KindPermissionDenied,
// KindUnauthenticated).
const (
	// CodePermissionDenied: the operation needs an admin token.
	CodePermissionDenied = "permission_denied"
	// CodeHostNotAllowed: a Host header the server does not answer.
	CodeHostNotAllowed = "host_not_allowed"
	// CodeOriginNotAllowed: a browser's Origin not allowed by
	// --cors-origin.
	CodeOriginNotAllowed = "origin_not_allowed"
	// CodeTokenRequired: a request without a bearer token to a server
	// that has tokens.
	CodeTokenRequired = "token_required"
	// CodeInvalidToken: a bearer token the server does not know.
	CodeInvalidToken = "invalid_token"
)

// Codes of a limit (KindTooLarge, KindResourceExhausted,
// KindUnprocessable).
const (
	// CodeBodyTooLarge: a request body over its limit.
	CodeBodyTooLarge = "body_too_large"
	// CodeMessageTooLarge: a message's text over --max-message-bytes.
	CodeMessageTooLarge = "message_too_large"
	// CodeAttachmentTooLarge: an attachment over its limit.
	CodeAttachmentTooLarge = "attachment_too_large"
	// CodeDefinitionTooLarge: a stored agent's definition over its limit.
	CodeDefinitionTooLarge = "definition_too_large"
	// CodeNotificationTooLarge: a notification between servers over
	// PostgreSQL's payload limit.
	CodeNotificationTooLarge = "notification_too_large"
	// CodeTooManyRuns: the server's, or the owner's, limit of runs at once
	// is reached.
	CodeTooManyRuns = "too_many_runs"
	// CodeIdempotencyKeyReused: an idempotency key first used for another
	// request (KindUnprocessable).
	CodeIdempotencyKeyReused = "idempotency_key_reused"
)

// Codes of a server that cannot serve now (KindUnavailable), and of the
// outcomes that are no domain error.
const (
	// CodeShuttingDown: the server is shutting down.
	CodeShuttingDown = "shutting_down"
	// CodeStoreUnavailable: the database refused a write for now.
	CodeStoreUnavailable = "store_unavailable"
	// CodeCommandTimeout: the server running the session did not answer
	// in time; the request may still take effect.
	CodeCommandTimeout = "command_timeout"
	// CodeUnavailable: the server cut the request short (a deadline or a
	// shutdown of its own).
	CodeUnavailable = "unavailable"
	// CodeCanceled: the client canceled the request.
	CodeCanceled = "canceled"
	// CodeDeadlineExceeded: the deadline the client set passed.
	CodeDeadlineExceeded = "deadline_exceeded"
	// CodeMethodNotAllowed: a method a JSON route does not take.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeUnsupportedMediaType: a body in a Content-Type the route does
	// not read.
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeInternal: any error that is not classified; clients get no
	// details, the log gets them all.
	CodeInternal = "internal"
)

// Codes of a failed session (SessionFailed.code, the session's status
// reason beside it), besides the request codes a run can fail with.
const (
	// CodeModelError: the model's API failed or answered what cannot be
	// used.
	CodeModelError = "model_error"
	// CodeStoreError: the run's progress could not be stored.
	CodeStoreError = "store_error"
	// CodeBudgetUnavailable: the budgets could not be read.
	CodeBudgetUnavailable = "budget_unavailable"
	// CodeCompactionFailed: the summary call of a compaction failed or
	// wrote nothing.
	CodeCompactionFailed = "compaction_failed"
	// CodeContextLengthExceeded: the request does not fit in the model's
	// context window even after a compaction.
	CodeContextLengthExceeded = "context_length_exceeded"
	// CodeRecoveryFailed: a run could not be taken up after a restart.
	CodeRecoveryFailed = "recovery_failed"
)
