import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { createSessionClient } from "../../../lib/transport";
import { listAllSessions, VisibleSessions } from "./list-sessions";

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

describe("VisibleSessions", () => {
  // A server where root is an admin and alice is not: it records which
  // scope each listing asked for, with whose token.
  function server() {
    let token: string | undefined = "alice";
    const asked: string[] = [];
    const transport = createRouterTransport(({ service }) => {
      service(SessionService, {
        listSessions(req) {
          asked.push(`${token} ${req.allOwners ? "all" : "own"}`);
          if (req.allOwners && token !== "root") throw new ConnectError("admins only", Code.PermissionDenied);
          return { sessions: [{ id: `${token}-${req.allOwners ? "all" : "own"}` }] };
        },
      });
    });
    const lister = new VisibleSessions(createSessionClient(transport), () => token);
    return { lister, asked, signIn: (t: string) => (token = t) };
  }

  it("asks a non-admin's own scope at once once every owner's was refused", async () => {
    const { lister, asked } = server();
    expect((await lister.list()).map((s) => s.id)).toEqual(["alice-own"]);
    expect((await lister.list()).map((s) => s.id)).toEqual(["alice-own"]);
    expect(asked).toEqual(["alice all", "alice own", "alice own"]);
  });

  it("asks every owner's again after a sign-in with another token", async () => {
    const { lister, asked, signIn } = server();
    await lister.list();
    signIn("root");
    expect((await lister.list()).map((s) => s.id)).toEqual(["root-all"]);
    signIn("alice");
    await lister.list();
    expect(asked).toEqual(["alice all", "alice own", "root all", "alice all", "alice own"]);
  });
});
