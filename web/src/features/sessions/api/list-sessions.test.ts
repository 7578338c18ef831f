import { createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { createSessionClient } from "../../../lib/transport";
import { listAllSessions, listVisibleSessions } from "./list-sessions";

describe("listAllSessions", () => {
  it("follows next_page_token to the last page", async () => {
    const tokens: string[] = [];
    const transport = createRouterTransport(({ service }) => {
      service(SessionService, {
        listSessions(req) {
          tokens.push(req.pageToken);
          const page = req.pageToken === "" ? 0 : Number(req.pageToken);
          return {
            sessions: [{ id: `s${page * 2}` }, { id: `s${page * 2 + 1}` }],
            nextPageToken: page < 2 ? String(page + 1) : "",
          };
        },
      });
    });
    const got = await listAllSessions(createSessionClient(transport));
    expect(got.map((s) => s.id)).toEqual(["s0", "s1", "s2", "s3", "s4", "s5"]);
    expect(tokens).toEqual(["", "1", "2"]);
  });
});

describe("listVisibleSessions", () => {
  // A server where only an admin may list every owner's sessions: it
  // records which listing each call asked for.
  function server() {
    const asked: string[] = [];
    const transport = createRouterTransport(({ service }) => {
      service(SessionService, {
        listSessions(req) {
          asked.push(req.allOwners ? "all" : "own");
          return { sessions: [{ id: req.allOwners ? "all" : "own" }] };
        },
      });
    });
    return { client: createSessionClient(transport), asked };
  }

  it("asks a non-admin's own sessions only, never every owner's (the server would refuse it)", async () => {
    const { client, asked } = server();
    expect((await listVisibleSessions(client, false)).map((s) => s.id)).toEqual(["own"]);
    expect(asked).toEqual(["own"]);
  });

  it("asks an admin's every owner's sessions", async () => {
    const { client, asked } = server();
    expect((await listVisibleSessions(client, true)).map((s) => s.id)).toEqual(["all"]);
    expect(asked).toEqual(["all"]);
  });
});
