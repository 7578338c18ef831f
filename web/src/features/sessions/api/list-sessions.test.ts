import { createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionService } from "../../../gen/agents/v1/session_service_pb";
import { createSessionClient } from "../../../lib/transport";
import { listAllSessions } from "./list-sessions";

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
