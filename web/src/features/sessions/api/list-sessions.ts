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

// listVisibleSessions is every session the caller may see: every owner's
// for an admin, one's own for anyone else (the server refuses the wider
// listing to them).
export async function listVisibleSessions(
  client: Pick<SessionClient, "listSessions">,
  signal?: AbortSignal,
): Promise<SessionMeta[]> {
  try {
    return await listAllSessions(client, { allOwners: true }, signal);
  } catch (err) {
    if (ConnectError.from(err).code !== Code.PermissionDenied) throw err;
    return listAllSessions(client, {}, signal);
  }
}
