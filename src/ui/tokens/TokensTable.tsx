'use client';

import { ShieldAlert, UserCog } from 'lucide-react';

import type { RouterOutputs } from '@/ui/trpc';

import { type ColumnSpec, useColumnFit } from '../table/fit';
import { UserText } from '../UserText';
import { formatFullDate, When } from '../When';

type TokenRow = RouterOutputs['tokens']['list'][number];

function stateOf(token: TokenRow, now: Date): 'active' | 'revoked' | 'expired' {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && token.expiresAt <= now) return 'expired';
  return 'active';
}

/** The user fills; dates are one line each (the full date in their title); expiry, then creation, leave first. */
const COLUMNS: ColumnSpec[] = [
  { id: 'token', width: 8.5, priority: 5 },
  { id: 'user', width: 'fill', min: 8, priority: 100, always: true },
  { id: 'created', width: 8.5, priority: 2 },
  { id: 'lastUsed', width: 8.5, priority: 3 },
  { id: 'expires', width: 8.5, priority: 1 },
  { id: 'state', width: 7, priority: 4 },
  { id: 'actions', width: 8, priority: 100, always: true },
];

/** Every token, one line each where the width allows; what a narrow window folds goes under the user. */
export function TokensTable({
  tokens,
  busy,
  onRevoke,
  onChangeRole,
}: {
  tokens: TokenRow[];
  busy: boolean;
  onRevoke: (token: TokenRow) => void;
  /** A role is the user's: offered on each of their working tokens' rows. */
  onChangeRole: (token: TokenRow) => void;
}) {
  const [fit, frameRef] = useColumnFit(COLUMNS);
  const shows = (column: string) => fit.shown.has(column);
  const now = new Date();
  return (
    <div className="table-wrap" ref={frameRef}>
      <table className="table table--compact tokens-table" aria-busy={busy} aria-labelledby="tokens-caption" data-fit-width={fit.width} data-columns={[...fit.shown].join(' ')}>
        <caption id="tokens-caption" className="sr-only">
          All tokens, oldest first
        </caption>
        <colgroup>
          {COLUMNS.filter((column) => shows(column.id)).map((column) => (
            <col key={column.id} className={`col-${column.id}`} />
          ))}
        </colgroup>
        <thead>
          <tr>
            {shows('token') ? <th scope="col">Token</th> : null}
            <th scope="col">User</th>
            {shows('created') ? <th scope="col">Created</th> : null}
            {shows('lastUsed') ? <th scope="col">Last used</th> : null}
            {shows('expires') ? <th scope="col">Expires</th> : null}
            {shows('state') ? <th scope="col">State</th> : null}
            <th scope="col" className="th-actions">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => {
            const state = stateOf(token, now);
            const badge = (
              <span className={`badge badge--${state}`} title={token.revokedAt ? `Revoked ${formatFullDate(token.revokedAt)}` : undefined}>
                {state}
              </span>
            );
            return (
              <tr key={token.id} data-token-id={token.id}>
                {shows('token') ? (
                  <td data-label="Token" className="nowrap">
                    <code>{token.prefix}…</code>
                    <span className="muted small"> #{token.id}</span>
                  </td>
                ) : null}
                <td data-label="User">
                  <span className="user-cell">
                    <UserText className="one-line">{token.userName}</UserText>
                    <span className={`badge badge--${token.role}`}>{token.role}</span>
                    {token.current ? <span className="muted small nowrap">(this session)</span> : null}
                  </span>
                  {fit.shown.size < COLUMNS.length ? (
                    <span className="folded">
                      {shows('token') ? null : (
                        <code>
                          {token.prefix}… #{token.id}
                        </code>
                      )}
                      {shows('state') ? null : badge}
                      {shows('lastUsed') ? null : (
                        <span>
                          used <When date={token.lastUsedAt} />
                        </span>
                      )}
                      {shows('created') ? null : (
                        <span>
                          created <When date={token.createdAt} />
                        </span>
                      )}
                      {shows('expires') || !token.expiresAt ? null : (
                        <span>
                          expires <When date={token.expiresAt} />
                        </span>
                      )}
                    </span>
                  ) : null}
                </td>
                {shows('created') ? (
                  <td data-label="Created" className="nowrap">
                    <When date={token.createdAt} />
                  </td>
                ) : null}
                {shows('lastUsed') ? (
                  <td data-label="Last used" className="nowrap">
                    <When date={token.lastUsedAt} />
                  </td>
                ) : null}
                {shows('expires') ? (
                  <td data-label="Expires" className="nowrap">
                    <When date={token.expiresAt} never="no expiry" />
                  </td>
                ) : null}
                {shows('state') ? (
                  <td data-label="State" className="nowrap">
                    {badge}
                  </td>
                ) : null}
                <td className="cell-actions">
                  {state === 'revoked' ? null : (
                    <div className="row-actions">
                      <button
                        type="button"
                        className="button button--small button--quiet icon-button"
                        aria-label={`${token.role === 'admin' ? 'Make a member' : 'Make an admin'}: ${token.userName} (token ${token.id})`}
                        title={token.role === 'admin' ? 'Make a member' : 'Make an admin'}
                        onClick={() => onChangeRole(token)}
                      >
                        <UserCog className="icon" aria-hidden="true" />
                      </button>
                      {token.lastAdminToken ? (
                        <span className="badge" data-testid="last-admin-note" title="The last working admin token cannot be revoked">
                          <ShieldAlert className="icon" aria-hidden="true" />
                          <span className="sr-only">The last working admin token: it cannot be revoked</span>
                        </span>
                      ) : (
                        <button
                          type="button"
                          className="button button--small button--danger-quiet"
                          aria-label={`Revoke token ${token.id} (${token.prefix}…) of ${token.userName}`}
                          onClick={() => onRevoke(token)}
                        >
                          Revoke
                        </button>
                      )}
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
