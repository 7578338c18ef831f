import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  AgentDescriptorSchema,
  AgentLoadErrorSchema,
  AgentService,
  ModelDescriptorSchema,
  ToolDescriptorSchema,
} from "../../../gen/agents/v1/agent_pb";
import { createAgentClient } from "../../../lib/transport";
import { listAgents } from "./list-agents";

describe("listAgents", () => {
  it("maps descriptors and load problems to rows", async () => {
    const transport = createRouterTransport(({ service }) => {
      service(AgentService, {
        listAgents: () => ({
          agents: [
            create(AgentDescriptorSchema, {
              slug: "assistant",
              announce: "helps",
              model: create(ModelDescriptorSchema, { flavor: "OpenAIv1", name: "gpt-4o-mini" }),
              tools: [create(ToolDescriptorSchema, { name: "bash_clock" })],
              helpers: ["researcher"],
            }),
          ],
          errors: [create(AgentLoadErrorSchema, { file: "bad.json", field: "contents.flavor", reason: "unknown flavor" })],
        }),
      });
    });
    const { rows, problems } = await listAgents(createAgentClient(transport));
    expect(rows).toEqual([
      { slug: "assistant", announce: "helps", model: "OpenAIv1 gpt-4o-mini", tools: 1, helpers: ["researcher"] },
    ]);
    expect(problems).toEqual(["bad.json: contents.flavor: unknown flavor"]);
  });

  it("propagates server errors", async () => {
    const transport = createRouterTransport(({ service }) => {
      service(AgentService, {
        listAgents: () => {
          throw new ConnectError("down", Code.Unavailable);
        },
      });
    });
    await expect(listAgents(createAgentClient(transport))).rejects.toMatchObject({ code: Code.Unavailable });
  });
});
