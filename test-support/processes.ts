// Shared by the suites and the bench: ports for servers they start, and waiting for those servers to exit.
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A loopback port nobody listens on right now: the kernel picks it for a probe that closes at once. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port from listen(0)'));
      probe.close(() => resolve(address.port));
    });
  });
}

/** Resolves true once `child` has exited, or false after `timeoutMs`. */
export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
