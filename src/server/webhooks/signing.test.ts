import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';

import { decryptSecret, encryptSecret, newSigningSecret, SecretUnreadable } from './secrets';
import { retryDelayMs, retryWindowMs, disableAfterMs } from './delivery/retry-schedule';
import { webhookHeaders } from './signing';

const key = Buffer.alloc(32, 1);

describe('signatures, checked with the standardwebhooks package (not this project’s code)', () => {
  it('verify with the secret shown to the admin, and fail with another secret or an altered body', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = '{"type":"plant.created","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":9007199254740993,"name":"Fern"}}';
    const headers = webhookHeaders([secret], 'msg_abc', Math.floor(Date.now() / 1000), body);
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: 'plant.created' });
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow(/signature/i);
    expect(() => new Webhook(secret).verify(body.replace('Fern', 'Fem'), headers)).toThrow(/signature/i);
  });

  it('carry one signature per secret during a rotation, each verifying alone', () => {
    const [older, newer] = [newSigningSecret(), newSigningSecret()];
    const body = '{}';
    const headers = webhookHeaders([newer, older], 'msg_rot', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(newer).verify(body, headers)).toEqual({});
    expect(new Webhook(older).verify(body, headers)).toEqual({});
  });

  it('are refused by a receiver when the timestamp is old (replays)', () => {
    const secret = newSigningSecret();
    const headers = webhookHeaders([secret], 'msg_old', Math.floor(Date.now() / 1000) - 3600, '{}');
    expect(() => new Webhook(secret).verify('{}', headers)).toThrow(/timestamp/i);
  });
});

describe('stored secrets', () => {
  it('are encrypted: the ciphertext holds nothing of the secret and decrypts only with the key and its endpoint', () => {
    const secret = newSigningSecret();
    const stored = encryptSecret(secret, key, 7);
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain(secret.slice(6, 20));
    expect(encryptSecret(secret, key, 7)).not.toBe(stored);
    expect(decryptSecret(stored, key, 7)).toBe(secret);
    expect(() => decryptSecret(stored, Buffer.alloc(32, 2), 7)).toThrow(SecretUnreadable);
    expect(() => decryptSecret(stored, key, 8)).toThrow(SecretUnreadable);
    const [version, iv, tag, ciphertext] = stored.split('.');
    const flipped = Buffer.from(ciphertext!, 'base64url');
    flipped[0]! ^= 1;
    expect(() => decryptSecret([version, iv, tag, flipped.toString('base64url')].join('.'), key, 7)).toThrow(SecretUnreadable);
    expect(() => decryptSecret('plain', key, 7)).toThrow(SecretUnreadable);
  });
});

describe('the retry schedule', () => {
  it('doubles from the base up to 512 times it, within ±20 %', () => {
    const low = () => 0;
    const high = () => 0.999999;
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 1000, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(1, 1000, low)).toBe(800);
    expect(retryDelayMs(1, 1000, high)).toBe(1200);
    expect(retryDelayMs(10, 1000, () => 0.5)).toBe(512_000);
    expect(retryDelayMs(40, 1000, () => 0.5)).toBe(512_000);
  });

  it('retries for at least 24 hours and disables after 5 days at the default base of 30 s', () => {
    expect(retryWindowMs(30_000)).toBe(24 * 3600 * 1000);
    expect(disableAfterMs(30_000)).toBe(5 * 24 * 3600 * 1000);
    // The attempts at the default base, without jitter: the last wait is 4 h 16 min.
    let elapsed = 0;
    let attempts = 1;
    while (elapsed < retryWindowMs(30_000)) elapsed += retryDelayMs(attempts++, 30_000, () => 0.5);
    expect(attempts).toBeGreaterThanOrEqual(13);
    expect(attempts).toBeLessThanOrEqual(16);
  });
});
