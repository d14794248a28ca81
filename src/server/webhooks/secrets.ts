import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Signing secrets. A receiver verifies a webhook with the secret, so the sender needs the secret itself
 * at every delivery: a hash (as tokens are stored) could not sign. So each secret is stored encrypted
 * with AES-256-GCM under WEBHOOKS_SECRET_KEY, a key that lives in the environment, never in the database:
 * someone who reads the database (a backup, a leaked dump, a read-only SQL account) cannot sign a
 * webhook. The endpoint's id is bound in as associated data, so a ciphertext copied onto another
 * endpoint's row does not decrypt.
 *
 * Secrets look like Standard Webhooks' `whsec_<base64 of 32 random bytes>`; the bytes are the HMAC key.
 */
export const SECRET_PREFIX = 'whsec_';
const VERSION = 'v1';

export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a `whsec_…` secret. */
export function secretKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

const associatedData = (endpointId: number) => Buffer.from(`plant-store webhook endpoint ${endpointId}`);

/** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function encryptSecret(secret: string, key: Buffer, endpointId: number): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedData(endpointId));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

export class SecretUnreadable extends Error {
  override readonly name = 'SecretUnreadable';
}

/** Throws SecretUnreadable when the key is not the one it was encrypted with, or the text was altered. */
export function decryptSecret(stored: string, key: Buffer, endpointId: number): string {
  const [version, iv, tag, ciphertext] = stored.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new SecretUnreadable('the stored signing secret is not in a known format');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(associatedData(endpointId));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnreadable('the signing secret cannot be decrypted with WEBHOOKS_SECRET_KEY (was the key changed?)');
  }
}

/** The secrets an attempt signs with now: the current one, and the previous one during its day of grace. */
export function signingSecrets(
  endpoint: { id: number; secret: string; previousSecret: string | null; previousSecretUntilMs: bigint | null },
  key: Buffer,
  now = Date.now(),
): string[] {
  const secrets = [decryptSecret(endpoint.secret, key, endpoint.id)];
  if (endpoint.previousSecret && endpoint.previousSecretUntilMs !== null && Number(endpoint.previousSecretUntilMs) > now) {
    try {
      secrets.push(decryptSecret(endpoint.previousSecret, key, endpoint.id));
    } catch {
      // A previous secret from before a key change signs nothing; the current one is what counts.
    }
  }
  return secrets;
}
