'use client';

import { type ReactNode, useEffect, useState } from 'react';

import type { WebhookDelivery } from '@/shared/webhooks';

import { Modal } from '../ConfirmDialog';
import { UserText } from '../UserText';
import { formatFullDate } from '../When';
import type { DeliveryState } from './url-state';

/** How much of a receiver's answer a table cell shows; the whole (at most 4 KiB) is in the delivery's dialog. */
const EXCERPT_LENGTH = 160;
/** Longer than this, or over several lines, an answer does not fit its cell's two lines: a link opens it whole. */
const FITS_CELL = 48;

export const STATE_LABEL: Record<DeliveryState, string> = { pending: 'pending', delivered: 'delivered', failed: 'failed' };
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });

/** The time, ticking every `intervalMs` while asked to (null: not ticking). */
export function useNow(intervalMs: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (intervalMs === null) return;
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/**
 * "in 12 sec.", "in 4 min.", or "due now" once the time has come; for a delivery held behind an older one of the
 * same endpoint (`behind`: that one's id; an endpoint gets its events in order), "after #12": its own time says
 * nothing then, as it goes once the older one has gone.
 */
export function NextTry({ at, now, behind = null }: { at: string | null; now: number; behind?: number | null }) {
  if (at === null) return <span className="muted">—</span>;
  if (behind !== null) {
    return (
      <span className="next-behind" title={`Waiting behind an earlier delivery, #${behind}: an endpoint gets its events in order`}>
        after #{behind}
      </span>
    );
  }
  const date = new Date(at);
  const seconds = Math.round((date.getTime() - now) / 1000);
  const text =
    seconds <= 0
      ? 'due now'
      : seconds < 90
        ? relative.format(seconds, 'second')
        : seconds < 90 * 60
          ? relative.format(Math.round(seconds / 60), 'minute')
          : seconds < 36 * 3600
            ? relative.format(Math.round(seconds / 3600), 'hour')
            : relative.format(Math.round(seconds / 86400), 'day');
  return (
    <time dateTime={at} title={formatFullDate(date)}>
      {text}
    </time>
  );
}

/** The error the server recorded, unless the HTTP status says it all ("answered 500"). */
function extraError(delivery: WebhookDelivery): string | null {
  if (!delivery.lastError) return null;
  return delivery.lastStatus !== null && delivery.lastError === `answered ${delivery.lastStatus}` ? null : delivery.lastError;
}

function excerptOf(text: string): string {
  const characters = [...text];
  return characters.length > EXCERPT_LENGTH ? `${characters.slice(0, EXCERPT_LENGTH).join('')}…` : text;
}

/** The last attempt: its HTTP status (or what went wrong), and the start of the receiver's answer. */
export function LastAttempt({ delivery, onShow }: { delivery: WebhookDelivery; onShow: () => void }) {
  if (delivery.attempts === 0) return <span className="muted">not tried yet</span>;
  const error = extraError(delivery);
  const ok = delivery.lastStatus !== null && delivery.lastStatus >= 200 && delivery.lastStatus < 300;
  return (
    <div className="attempt">
      {delivery.lastStatus !== null ? <span className={`badge ${ok ? 'badge--delivered' : 'badge--failed'}`}>HTTP {delivery.lastStatus}</span> : null}
      {error ? <UserText className="attempt__error">{error}</UserText> : null}
      {delivery.lastResponse ? (
        <span className="attempt__answer">
          <UserText clamp className="response-excerpt">
            {excerptOf(delivery.lastResponse)}
          </UserText>
          {[...delivery.lastResponse].length > FITS_CELL || /[\r\n]/.test(delivery.lastResponse) ? (
            <button type="button" className="link-button" onClick={onShow} aria-label={`The whole answer to delivery ${delivery.id}`}>
              Whole answer
            </button>
          ) : null}
        </span>
      ) : null}
    </div>
  );
}

function Detail({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Everything the log keeps of one delivery, the receiver's whole answer among it, as text. */
export function DeliveryDialog({ delivery, now, behind, onClose }: { delivery: WebhookDelivery; now: number; behind: number | null; onClose: () => void }) {
  const error = delivery.lastError;
  return (
    <Modal title={`Delivery ${delivery.id}`} onCancel={onClose} describedBy={false} className="dialog--wide">
      <dl className="details">
        <Detail term="Event">
          <code>{delivery.type}</code>
        </Detail>
        <Detail term="Event id (webhook-id)">
          <code className="break">{delivery.eventId}</code>
        </Detail>
        <Detail term="Plant">{delivery.plantId === null ? <span className="muted">—</span> : <code>{delivery.plantId.toString()}</code>}</Detail>
        <Detail term="State">
          <span className={`badge badge--${delivery.status}`}>{STATE_LABEL[delivery.status]}</span>
        </Detail>
        <Detail term="Created">{formatFullDate(new Date(delivery.createdAt))}</Detail>
        <Detail term="Attempts">{delivery.attempts}</Detail>
        <Detail term="Last attempt">{delivery.lastAttemptAt ? formatFullDate(new Date(delivery.lastAttemptAt)) : <span className="muted">none yet</span>}</Detail>
        <Detail term="Last status">{delivery.lastStatus === null ? <span className="muted">no answer</span> : `HTTP ${delivery.lastStatus}`}</Detail>
        {error ? (
          <Detail term="What went wrong">
            <UserText>{error}</UserText>
          </Detail>
        ) : null}
        {delivery.status === 'pending' ? (
          <Detail term="Next try">
            <NextTry at={delivery.nextAttemptAt} now={now} behind={behind} />
          </Detail>
        ) : null}
        {delivery.deliveredAt ? <Detail term="Delivered">{formatFullDate(new Date(delivery.deliveredAt))}</Detail> : null}
      </dl>
      <h3 className="details__heading">The receiver’s answer</h3>
      {delivery.lastResponse === null || delivery.lastResponse === '' ? (
        <p className="muted">{delivery.attempts === 0 ? 'Not tried yet.' : 'No body.'}</p>
      ) : (
        <>
          <p className="field__hint">As text, at most its first 4 KiB (the server reads no more).</p>
          <pre className="response-text" tabIndex={0} aria-label={`The answer to delivery ${delivery.id}`}>
            <UserText>{delivery.lastResponse}</UserText>
          </pre>
        </>
      )}
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}

