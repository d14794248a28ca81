'use client';

import { useEffect, useRef, useState } from 'react';

import { IMPORT_MAX_BYTES } from '@/shared/limits';
import type { PlantImport } from '@/shared/plant-import';
import { trpc } from '@/ui/trpc';

import { problemOf } from '../../problems';
import { cutIntoParts } from './parts';

/**
 * An import from the page, start to end: the file read as UTF-8 and sent in parts (parts.ts), the server's
 * preview, the apply in the background with its progress, Stop, and going on after a Stop. Each call that the
 * token's rate limit holds back (429) is sent again once the server says (a part sent again is read once).
 * The import itself lives on the server: closing the dialog while it applies leaves it applying.
 */
export type ImportStep =
  | { kind: 'choosing' }
  | { kind: 'uploading'; file: string; sent: number; parts: number; rows: number }
  | { kind: 'preview'; file: string; import: PlantImport }
  | { kind: 'applying'; file: string; import: PlantImport }
  | { kind: 'finished'; file: string; import: PlantImport }
  | { kind: 'failed'; file: string | null; message: string; import?: PlantImport };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How often the dialog asks how far an apply got (each ask is one unit of the token's rate limit). */
const PROGRESS_EVERY_MS = 1_000;

/** The file's text, or why it cannot be imported (too large, or not UTF-8, which would garble every name). */
async function readFile(file: File): Promise<string> {
  if (file.size > IMPORT_MAX_BYTES) throw new Error(`the file is ${(file.size / 1024 / 1024).toFixed(1)} MiB; an import takes at most ${IMPORT_MAX_BYTES / 1024 / 1024} MiB`);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(await file.arrayBuffer());
  } catch {
    throw new Error('the file is not UTF-8 text: save it as "CSV UTF-8" and choose it again');
  }
}

export function useImport() {
  const utils = trpc.useUtils();
  const [step, setStep] = useState<ImportStep>({ kind: 'choosing' });
  // Whether the component still wants answers (its polling and retries stop when it goes).
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  /** A call, sent again after the wait a 429 names (the rate limit refills as the import goes). */
  async function call<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const problem = problemOf(error);
        if (problem.status !== 429 || attempt >= 60 || !alive.current) throw error;
        await sleep(1000 * Number(/in (\d+) s/.exec(problem.message)?.[1] ?? 1));
      }
    }
  }

  const failed = (file: string | null, error: unknown, plantImport?: PlantImport) =>
    setStep({ kind: 'failed', file, message: error instanceof Error && !('data' in error) ? error.message : problemOf(error).message, ...(plantImport ? { import: plantImport } : {}) });

  async function upload(file: File): Promise<void> {
    setStep({ kind: 'uploading', file: file.name, sent: 0, parts: 0, rows: 0 });
    let text: string;
    try {
      text = await readFile(file);
    } catch (error) {
      return failed(file.name, error);
    }
    const parts = cutIntoParts(text);
    try {
      const started = await call(() => utils.client.plants.imports.create.mutate({}));
      let rows = 0;
      for (const [index, csv] of parts.entries()) {
        if (!alive.current) return;
        setStep({ kind: 'uploading', file: file.name, sent: index, parts: parts.length, rows });
        rows = (await call(() => utils.client.plants.imports.part.mutate({ id: started.id, part: index + 1, csv }))).rows;
      }
      const ready = await call(() => utils.client.plants.imports.preview.mutate({ id: started.id }));
      if (alive.current) setStep({ kind: 'preview', file: file.name, import: ready });
    } catch (error) {
      failed(file.name, error);
    }
  }

  // Each apply followed has its number: a Stop, or another apply, ends the one followed before it.
  const following = useRef(0);

  /** Follows an apply until it is done or stopped; the table is read again as it ends. */
  async function follow(file: string, id: number): Promise<void> {
    const mine = ++following.current;
    for (;;) {
      await sleep(PROGRESS_EVERY_MS);
      if (!alive.current || following.current !== mine) return;
      let now: PlantImport;
      try {
        now = await call(() => utils.client.plants.imports.get.query({ id }));
      } catch (error) {
        return failed(file, error);
      }
      if (!alive.current) return;
      if (now.state === 'applying' && !now.interrupted) {
        setStep((current) => (current.kind === 'applying' ? { kind: 'applying', file, import: now } : current));
        continue;
      }
      setStep((current) => (current.kind === 'applying' ? { kind: 'finished', file, import: now } : current));
      await Promise.all([utils.plants.page.invalidate(), utils.plants.tags.invalidate()]);
      return;
    }
  }

  async function apply(): Promise<void> {
    if (step.kind !== 'preview' && step.kind !== 'finished') return;
    const { file } = step;
    try {
      const applying = await call(() => utils.client.plants.imports.run.mutate({ id: step.import.id }));
      setStep({ kind: 'applying', file, import: applying });
      await follow(file, applying.id);
    } catch (error) {
      failed(file, error, step.import);
    }
  }

  async function stop(): Promise<void> {
    if (step.kind !== 'applying') return;
    const { file } = step;
    following.current += 1;
    try {
      const stopped = await call(() => utils.client.plants.imports.stop.mutate({ id: step.import.id }));
      setStep({ kind: 'finished', file, import: stopped });
      await Promise.all([utils.plants.page.invalidate(), utils.plants.tags.invalidate()]);
    } catch (error) {
      failed(file, error, step.import);
    }
  }

  return { step, upload, apply, stop, reset: () => setStep({ kind: 'choosing' }) };
}
