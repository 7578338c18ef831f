// Package openapitool offers the operations of HTTP APIs as tools: an
// agent file's openApiToolboxes (an OpenAPI 3.x or Swagger 2.0
// description, one tool per operation) and postgrestToolboxes (a
// PostgREST server's description, one tool per table and method), named
// and shaped as agents-exe names and shapes them, so that prompts written
// for it still hold.
//
// The description is read when the agent is built (Load): fetched over
// HTTP or read from a file, parsed by libopenapi, its $refs resolved into
// each tool's JSON Schema. A call builds the request (path parameters
// substituted and escaped, the query encoded, a JSON body, the toolbox's
// headers, token and secrets), sends it with a timeout and answers with
// the status and the body, cut as a bash tool's output is; an error
// status is a tool error the model reads. Secret values are never logged
// and are blotted out of every answer and error.
package openapitool
