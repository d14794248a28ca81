'use client';

import { Copy } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';

/**
 * A value the server shows only once (a new token, a signing secret): selected for copying as soon as it
 * appears, with Copy and Done. Where the clipboard is refused, the value stays selected for Ctrl+C. Give it
 * a `key` per value, so a new value starts with a fresh copy state.
 */
export function OneTimeValue({ id, label, value, noun, onDone }: { id: string; label: string; value: string; noun: string; onDone: () => void }) {
  const inputRef = useRef<HTMLInputElement>(null);
  const [copyState, setCopyState] = useState<'idle' | 'copied' | 'failed'>('idle');

  useEffect(() => {
    inputRef.current?.focus();
    inputRef.current?.select();
  }, [value]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopyState('copied');
    } catch {
      inputRef.current?.select();
      setCopyState('failed');
    }
  }

  return (
    <>
      <div className="issued__row">
        <label htmlFor={id} className="sr-only">
          {label}
        </label>
        <input id={id} ref={inputRef} className="issued__token" readOnly value={value} spellCheck={false} />
        <button type="button" className="button button--primary" onClick={() => void copy()}>
          <Copy className="icon" aria-hidden="true" />
          Copy
        </button>
        <button type="button" className="button button--quiet" onClick={onDone}>
          Done
        </button>
      </div>
      <p className="form-status" role="status">
        {copyState === 'copied' ? 'Copied to the clipboard.' : copyState === 'failed' ? `Copying was refused here: the ${noun} is selected, copy it with Ctrl+C.` : ''}
      </p>
    </>
  );
}
