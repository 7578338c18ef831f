import { create } from "@bufbuild/protobuf";
import { AttachmentSchema, type Attachment } from "../../../gen/agents/v1/session_pb";

// readAttachment reads a file the user dropped, pasted or picked.
export async function readAttachment(file: File, fallbackName = "pasted"): Promise<Attachment> {
  const data = new Uint8Array(await file.arrayBuffer());
  const ext = file.type.split("/")[1] ?? "bin";
  return create(AttachmentSchema, {
    name: file.name || `${fallbackName}.${ext}`,
    mediaType: file.type || "application/octet-stream",
    data,
    size: BigInt(data.length),
  });
}

export function attachmentSize(a: Attachment): number {
  return a.data.length || Number(a.size);
}
