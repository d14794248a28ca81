'use client';

import { OneTimeValue } from '../OneTimeValue';
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
      <OneTimeValue key={shown.secret} id="issued-secret" label="The signing secret" value={shown.secret} noun="secret" onDone={onDone} />
    </div>
  );
}
