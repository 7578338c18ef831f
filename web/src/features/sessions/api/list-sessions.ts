import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ListSessionsRequestSchema } from "../../../gen/agents/v1/session_service_pb";
import type { SessionMeta } from "../../../gen/agents/v1/session_pb";
import type { SessionClient } from "../../../lib/transport";

// A bound on the pages read, so a server that keeps answering with a
// token cannot hold the list forever.
const maxPages = 100;

// listAllSessions reads every page of ListSessions.
export async function listAllSessions(
  client: Pick<SessionClient, "listSessions">,
  req: MessageInitShape<typeof ListSessionsRequestSchema> = {},
  signal?: AbortSignal,
): Promise<SessionMeta[]> {
  const all: SessionMeta[] = [];
  let pageToken = "";
  for (let i = 0; i < maxPages; i++) {
    const res = await client.listSessions({ pageSize: 500, ...req, pageToken }, { signal });
    all.push(...res.sessions);
    if (!res.nextPageToken || res.nextPageToken === pageToken) break;
    pageToken = res.nextPageToken;
  }
  return all;
}

// VisibleSessions lists every session the caller may see: every owner's
// for an admin, one's own for anyone else (the server refuses the wider
// listing to them). The refusal is remembered, so later listings ask for
// one's own at once, until the token changes: another token (a sign-in)
// is asked for every owner's again.
export class VisibleSessions {
  // notAdmin is learnt from the server: every owner's listing was
  // refused to lastToken.
  private notAdmin = false;
  private lastToken: string | undefined;

  constructor(
    private readonly client: Pick<SessionClient, "listSessions">,
    // token is the one the transport sends, read at each listing.
    private readonly token: () => string | undefined,
  ) {}

  async list(signal?: AbortSignal): Promise<SessionMeta[]> {
    const token = this.token();
    if (token !== this.lastToken) {
      this.lastToken = token;
      this.notAdmin = false;
    }
    if (!this.notAdmin) {
      try {
        return await listAllSessions(this.client, { allOwners: true }, signal);
      } catch (err) {
        if (ConnectError.from(err).code !== Code.PermissionDenied) throw err;
        this.notAdmin = true;
      }
    }
    return listAllSessions(this.client, {}, signal);
  }
}
