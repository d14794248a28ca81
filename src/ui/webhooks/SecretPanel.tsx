'use client';

import { Copy } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';

import { UserText } from '../UserText';
import { formatFullDate } from '../When';

/** A signing secret the server has just handed out: after creating an endpoint, or rotating its secret. */
export type ShownSecret = {
  endpointId: number;
  url: string;
  secret: string;
  /** Set after a rotation: until when the previous secret still signs too. */
  previousValidUntil?: string;
};

/**
 * The one-time panel, as the tokens view shows a new token: the secret is selected for copying, with Copy
 * and Done. The view closes it when the endpoint is deleted or its secret is replaced.
 */
export function SecretPanel({ shown, onDone }: { shown: ShownSecret; onDone: () => void }) {
  const inputRef = useRef<HTMLInputElement>(null);
  const [copyState, setCopyState] = useState<'idle' | 'copied' | 'failed'>('idle');

  // A new secret is shown once: put the cursor on it, ready to copy. (The view gives each secret a panel of
  // its own, keyed by the secret, so the copy state starts afresh too.)
  useEffect(() => {
    inputRef.current?.focus();
    inputRef.current?.select();
  }, [shown.secret]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(shown.secret);
      setCopyState('copied');
    } catch {
      inputRef.current?.select();
      setCopyState('failed');
    }
  }

  const rotated = shown.previousValidUntil !== undefined;
  return (
    <div className="card card--padded issued stack" role="region" aria-labelledby="secret-title" data-endpoint-id={shown.endpointId}>
      <h2 id="secret-title">
        {rotated ? 'New signing secret' : 'Signing secret'} for endpoint {shown.endpointId}
      </h2>
      <p className="issued__for">
        <UserText>{shown.url}</UserText>
      </p>
      <p>
        Copy it now: it is shown only this once, and cannot be seen again. The receiver checks each delivery’s <code>webhook-signature</code> with it
        (Standard Webhooks).
      </p>
      {rotated ? (
        <p className="notice notice--info">
          The previous secret keeps signing too until {formatFullDate(new Date(shown.previousValidUntil!))} (24 hours), so the receiver can switch over
          without rejecting a delivery.
        </p>
      ) : null}
      <div className="issued__row">
        <label htmlFor="issued-secret" className="sr-only">
          The signing secret
        </label>
        <input id="issued-secret" ref={inputRef} className="issued__token" readOnly value={shown.secret} spellCheck={false} />
        <button type="button" className="button button--primary" onClick={() => void copy()}>
          <Copy className="icon" aria-hidden="true" />
          Copy
        </button>
        <button type="button" className="button button--quiet" onClick={onDone}>
          Done
        </button>
      </div>
      <p className="form-status" role="status">
        {copyState === 'copied' ? 'Copied to the clipboard.' : copyState === 'failed' ? 'Copying was refused here: the secret is selected, copy it with Ctrl+C.' : ''}
      </p>
    </div>
  );
}
