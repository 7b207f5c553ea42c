/** Reading client frames off the socket (the wire encoders are in protocol/encode.ts). */
import type WebSocket from 'ws';

/** The text of a received WebSocket message. */
export function rawToString(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
