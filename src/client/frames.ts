/** Reading server frames: validated, but a known frame that fails validation is still used. */
import { ServerFrameSchema, parseServerFrame, type ServerFrame } from '../../protocol/index.js';

/** Every `type` of a server frame, from the protocol's schema. */
const KNOWN_SERVER_TYPES: ReadonlySet<string> = new Set(ServerFrameSchema.options.map((o) => o.shape.type.value));

/** Parse a server frame; frames of a known type that fail validation are kept, with a warning. */
export function parseServerFrameLenient(text: string): { frame: ServerFrame | null; warning?: string } {
  try {
    return { frame: parseServerFrame(text) };
  } catch (err) {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return { frame: null, warning: 'server sent a frame that is not JSON' };
    }
    const type = (raw as { type?: unknown } | null)?.type;
    const why = err instanceof Error ? err.message : String(err);
    if (typeof raw === 'object' && raw !== null && typeof type === 'string' && KNOWN_SERVER_TYPES.has(type)) {
      return { frame: raw as ServerFrame, warning: `${type} frame: ${why}` };
    }
    return { frame: null, warning: why };
  }
}
