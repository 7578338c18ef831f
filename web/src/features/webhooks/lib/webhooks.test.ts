import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../../../gen/agents/v1/error_pb";
import { DeliveryStatus, WebhookDeliverySchema, WebhookSchema, WebhookStatus } from "../../../gen/agents/v1/webhook_pb";
import { createRequest, dueText, emptyForm, outcomeText, refusalOf, stateOf, stateText, triedAt } from "./webhooks";

describe("the new-webhook form's request", () => {
  it("sends the URL trimmed and the events in the server's order", () => {
    const r = createRequest({ ...emptyForm(), url: " https://ops.example.com/agents ", events: ["agent.changed", "run.failed"], description: "  ops " });
    expect(r).toEqual({ request: { url: "https://ops.example.com/agents", events: ["run.failed", "agent.changed"], description: "ops" } });
  });

  it("asks for server-wide only when it is ticked", () => {
    const r = createRequest({ ...emptyForm(), url: "https://x.example", serverWide: true });
    expect("request" in r && r.request.serverWide).toBe(true);
    const plain = createRequest({ ...emptyForm(), url: "https://x.example" });
    expect("request" in plain && "serverWide" in plain.request).toBe(false);
  });

  it("names the first field to fill before anything is sent", () => {
    expect(createRequest({ ...emptyForm(), url: "  " })).toMatchObject({ error: { field: "url" } });
    expect(createRequest({ ...emptyForm(), url: "https://x.example", events: [] })).toMatchObject({ error: { field: "events" } });
  });
});

describe("a refusal's field", () => {
  it("is the one the server's message starts with", () => {
    const url = new ConnectError("url: 10.1.2.3 is a private address, which webhooks may not reach: the server's operator may allow such targets", Code.InvalidArgument);
    expect(refusalOf(url)).toEqual({ field: "url", message: url.rawMessage });
    expect(refusalOf(new ConnectError("events: name at least one of run.stopped", Code.InvalidArgument)).field).toBe("events");
    expect(refusalOf(new ConnectError("description is longer than 1024 bytes", Code.InvalidArgument)).field).toBe("description");
  });

  it("is the one an error detail names", () => {
    const e = new ConnectError("bad", Code.InvalidArgument, undefined, [
      { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { code: "invalid_argument", metadata: { field: "url" } }) },
    ]);
    expect(refusalOf(e).field).toBe("url");
  });

  it("is the server-wide box for a non-admin, and none for the rest", () => {
    expect(refusalOf(new ConnectError("a server-wide webhook needs an admin token", Code.PermissionDenied)).field).toBe("serverWide");
    expect(refusalOf(new ConnectError("secret must be whsec_ followed by …", Code.InvalidArgument)).field).toBeUndefined();
    expect(refusalOf(new ConnectError("url: bad", Code.Internal)).field).toBeUndefined();
  });
});

describe("a webhook's state", () => {
  it("says why it is disabled", () => {
    const on = create(WebhookSchema, { status: WebhookStatus.ENABLED });
    expect(stateOf(on)).toEqual({ word: "enabled", enabled: true });
    expect(stateText(on)).toBeUndefined();
    const off = create(WebhookSchema, { status: WebhookStatus.DISABLED });
    expect(stateOf(off)).toEqual({ word: "disabled", enabled: false });
    expect(stateText(off)).toMatch(/until it is enabled/);
    const failing = create(WebhookSchema, { status: WebhookStatus.FAILING, statusReason: "every attempt failed since 2026-12-01" });
    expect(stateOf(failing)).toEqual({ word: "failing", enabled: false });
    expect(stateText(failing)).toBe("Disabled by the server: every attempt failed since 2026-12-01. Enable it to start again.");
  });
});

describe("a delivery's outcome", () => {
  it("is the last answer's status and error, or that none was made", () => {
    expect(outcomeText(create(WebhookDeliverySchema, { status: DeliveryStatus.PENDING }))).toBe("not attempted yet");
    expect(outcomeText(create(WebhookDeliverySchema, { status: DeliveryStatus.DELIVERED, attempts: 1, lastStatusCode: 204 }))).toBe("HTTP 204");
    expect(outcomeText(create(WebhookDeliverySchema, { status: DeliveryStatus.PENDING, attempts: 2, lastStatusCode: 502, lastError: "reading the answer: connection reset" }))).toBe(
      "HTTP 502: reading the answer: connection reset",
    );
    expect(outcomeText(create(WebhookDeliverySchema, { status: DeliveryStatus.PENDING, attempts: 1, lastError: "connection refused" }))).toBe("connection refused");
    // An error that names the status says it once.
    expect(outcomeText(create(WebhookDeliverySchema, { status: DeliveryStatus.PENDING, attempts: 1, lastStatusCode: 500, lastError: "HTTP 500" }))).toBe("HTTP 500");
  });

  it("says when the next attempt is due, to the second under a minute", () => {
    const now = Date.UTC(2026, 11, 7, 12);
    expect(dueText(now - 1000, now)).toBe("due now");
    expect(dueText(now + 12_000, now)).toMatch(/12/);
    expect(dueText(now + 5 * 60_000, now)).toBeUndefined();
  });

  it("says when it was last tried, unless it was delivered then", () => {
    const at = Date.UTC(2026, 11, 7, 12);
    expect(triedAt(create(WebhookDeliverySchema, { status: DeliveryStatus.PENDING }))).toBeUndefined();
    expect(triedAt(create(WebhookDeliverySchema, { status: DeliveryStatus.PENDING, attempts: 3, lastAttempt: timestampFromMs(at) }))?.getTime()).toBe(at);
    expect(triedAt(create(WebhookDeliverySchema, { status: DeliveryStatus.FAILED, attempts: 9, lastAttempt: timestampFromMs(at) }))?.getTime()).toBe(at);
    // Tried before servers timed attempts.
    expect(triedAt(create(WebhookDeliverySchema, { status: DeliveryStatus.FAILED, attempts: 9 }))).toBeUndefined();
    // Its delivered time says it.
    expect(triedAt(create(WebhookDeliverySchema, { status: DeliveryStatus.DELIVERED, attempts: 1, lastAttempt: timestampFromMs(at), delivered: timestampFromMs(at) }))).toBeUndefined();
  });
});
