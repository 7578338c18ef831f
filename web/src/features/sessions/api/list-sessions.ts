import type { MessageInitShape } from "@bufbuild/protobuf";
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

// listVisibleSessions lists every session the caller may see: every
// owner's for an admin, one's own for anyone else (the server refuses
// the wider listing to them, so it is not asked for).
export function listVisibleSessions(client: Pick<SessionClient, "listSessions">, admin: boolean, signal?: AbortSignal): Promise<SessionMeta[]> {
  return listAllSessions(client, admin ? { allOwners: true } : {}, signal);
}
