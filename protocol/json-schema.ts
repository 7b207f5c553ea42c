/** JSON Schema export of the wire protocol (for clients in other languages). */
import { z } from 'zod';
import { PROTOCOL_VERSION } from './limits.js';
import { ClientFrameSchema, ServerFrameSchema } from './frames.js';

/** Pretty-printed JSON Schema document of client and server frames, with trailing newline. */
export function buildJsonSchema(): string {
  const doc = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `agentd wire protocol v${PROTOCOL_VERSION}`,
    description:
      'client_frame: frames sent by clients (strict; byte limits on text are enforced by the server beyond maxLength). server_frame: frames sent by agentd.',
    protocol: PROTOCOL_VERSION,
    client_frame: z.toJSONSchema(ClientFrameSchema, { io: 'input', unrepresentable: 'any' }),
    server_frame: z.toJSONSchema(ServerFrameSchema, { io: 'output', unrepresentable: 'any' }),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}
