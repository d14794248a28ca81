import type { ServerResponse } from 'node:http';

import type { Problem } from '@/server/problems';
import { errorCatalog, type ErrorKind } from '@/shared/errors';

/** An answer before it goes on the wire: the doors build these; `writeReply` sends them. */
export type Reply = { status: number; headers: Record<string, string>; body: string | Buffer | null };

/**
 * A refusal raised by a guard or a door: what went wrong, and headers that belong to it (`Allow`,
 * `Retry-After`, `WWW-Authenticate`). Each door renders it in its own wire format.
 */
export class Refusal extends Error {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.message);
  }
}

export const refuse = (kind: ErrorKind, message: string, headers?: Record<string, string>) => new Refusal({ kind, message }, headers);

/** 404 for a path nothing serves; the path is shown cut short, as the client sent it. */
export const noSuchPath = (pathname: string) => refuse('routeNotFound', `no such path: ${pathname.length > 200 ? `${pathname.slice(0, 200)}…` : pathname}`);

export function jsonReply(status: number, body: string | null, headers: Record<string, string> = {}): Reply {
  return { status, headers: { ...(body === null ? {} : { 'Content-Type': 'application/json' }), ...headers }, body };
}

/**
 * The longest `message` an error body carries, in characters (code points). A message may quote what the
 * client sent (an unknown field's name), so it is cut here, once for every failure, as the document says.
 */
export const MESSAGE_MAX_LENGTH = 1000;

function bounded(message: string): string {
  if (message.length <= MESSAGE_MAX_LENGTH) return message;
  const characters = [...message];
  return characters.length <= MESSAGE_MAX_LENGTH ? message : `${characters.slice(0, MESSAGE_MAX_LENGTH - 1).join('')}…`;
}

/** The contract's error body, `{"error": <int32>, "message": <string>}`, with the status of its kind. */
export function problemReply({ kind, message }: Problem, headers: Record<string, string> = {}): Reply {
  const { status, value } = errorCatalog[kind];
  return jsonReply(status, JSON.stringify({ error: value, message: bounded(message) }), headers);
}

export function writeReply(response: ServerResponse, reply: Reply, options: { head?: boolean } = {}): void {
  response.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers)) response.setHeader(name, value);
  if (reply.body !== null) response.setHeader('Content-Length', Buffer.byteLength(reply.body));
  response.end(options.head ? undefined : (reply.body ?? undefined));
}
