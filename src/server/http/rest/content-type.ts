import { refuse } from '../reply';

/**
 * A body's media type must be one the operation takes (application/json; PATCH also takes
 * application/merge-patch+json); a charset parameter may only say UTF-8 (RFC 8259).
 */
export function checkContentType(contentType: string | undefined, accepted: readonly string[]): void {
  const [mediaType, ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  if (!accepted.includes(mediaType!)) {
    const shown = contentType ? `, not ${contentType.slice(0, 100)}` : '';
    throw refuse('unsupportedMediaType', `the body must be sent with Content-Type: ${accepted.join(' or ')}${shown}`);
  }
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw refuse('unsupportedMediaType', `the body must be UTF-8, not ${charset.slice(0, 40)}`);
  }
}
