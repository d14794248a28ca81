'use client';

import { type FormEvent, useEffect, useId, useRef, useState } from 'react';

import { userNameSchema } from '@/shared/users';
import { type RouterOutputs, trpc } from '@/ui/trpc';

import { ConfirmDialog } from './ConfirmDialog';
import { Field } from './Field';
import { asSentence, problemOf } from './problems';
import { queryFallback } from './QueryFallback';

type TokenRow = RouterOutputs['tokens']['list'][number];
type Issued = RouterOutputs['tokens']['create'];
type Role = TokenRow['role'];

/** The router's user-name rule and its words, from the one schema both use. */
function userNameProblem(text: string): string | null {
  const result = userNameSchema.safeParse(text);
  return result.success ? null : (result.error.issues[0]?.message ?? 'user name is not valid');
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function When({ date, never = 'never' }: { date: Date | null; never?: string }) {
  if (!date) return <span className="muted">{never}</span>;
  return <time dateTime={date.toISOString()}>{dateFormat.format(date)}</time>;
}

function stateOf(token: TokenRow, now: Date): 'active' | 'revoked' | 'expired' {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && token.expiresAt <= now) return 'expired';
  return 'active';
}

export function TokensSection() {
  const utils = trpc.useUtils();
  const tokens = trpc.tokens.list.useQuery();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const userRef = useRef<HTMLInputElement>(null);
  const issuedRef = useRef<HTMLInputElement>(null);
  const roleId = useId();
  const usersListId = useId();

  const [userName, setUserName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [userError, setUserError] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [copyState, setCopyState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const [revoking, setRevoking] = useState<TokenRow | null>(null);
  const [revokeMessage, setRevokeMessage] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);

  const create = trpc.tokens.create.useMutation({
    onSuccess: async (result) => {
      setIssued(result);
      setCopyState('idle');
      setUserName('');
      setUserError(null);
      await utils.tokens.list.invalidate();
    },
    onError: (error) => {
      const problem = problemOf(error);
      if (problem.status === 401) return;
      if (problem.field === 'userName') {
        setUserError(asSentence(problem.message));
        userRef.current?.focus();
      } else setFormError(`The token was not created: ${problem.message}.`);
    },
  });

  const revoke = trpc.tokens.revoke.useMutation({
    onSuccess: (_, { id }) => setRevokeMessage({ kind: 'info', text: `Token ${id} is revoked: it no longer works anywhere.` }),
    onError: (error, { id }) => {
      const problem = problemOf(error);
      if (problem.status !== 401) setRevokeMessage({ kind: 'error', text: `Token ${id} was not revoked: ${problem.message}.` });
    },
    onSettled: () => utils.tokens.list.invalidate(),
  });

  // The new token is shown once: put the cursor on it, ready to copy.
  useEffect(() => {
    if (issued) {
      issuedRef.current?.focus();
      issuedRef.current?.select();
    }
  }, [issued]);

  const users = new Map<string, Role>();
  for (const token of tokens.data ?? []) users.set(token.userName, token.role);
  const existingRole = users.get(userName.trim());

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    setFormError(null);
    const problem = userNameProblem(userName);
    if (problem) {
      setUserError(asSentence(problem));
      userRef.current?.focus();
      return;
    }
    setUserError(null);
    create.mutate({ userName: userName.trim(), role });
  }

  async function copy() {
    if (!issued) return;
    try {
      await navigator.clipboard.writeText(issued.token);
      setCopyState('copied');
    } catch {
      issuedRef.current?.select();
      setCopyState('failed');
    }
  }

  const now = new Date();
  return (
    <section className="tokens" aria-labelledby="tokens-title">
      <div className="section-head">
        <h2 id="tokens-title" ref={headingRef} tabIndex={-1}>
          API tokens
        </h2>
        <p className="muted">Admins only. A token acts for its user, on the REST API and on this page.</p>
      </div>

      <form className="card token-form" onSubmit={onSubmit} noValidate aria-labelledby="token-form-title" aria-busy={create.isPending}>
        <h3 id="token-form-title">Create a token</h3>
        <div className="token-form__fields">
          <Field
            id="token-user"
            label="User name"
            hint="A new user is created when the name is not taken yet."
            list={usersListId}
            autoComplete="off"
            spellCheck={false}
            value={userName}
            onChange={(event) => {
              setUserName(event.target.value);
              setUserError(null);
              setFormError(null);
            }}
            onBlur={() => {
              if (userName !== '') setUserError(userNameProblem(userName) ? asSentence(userNameProblem(userName)!) : null);
            }}
            error={userError}
            inputRef={userRef}
            required
          />
          <datalist id={usersListId}>
            {[...users.keys()].map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          <div className="field">
            <label htmlFor={roleId}>Role</label>
            <p className="field__hint" id={`${roleId}-hint`}>
              A member sees their own plants; an admin sees all, and manages tokens.
            </p>
            <select id={roleId} value={role} aria-describedby={`${roleId}-hint`} onChange={(event) => setRole(event.target.value as Role)}>
              <option value="member">member</option>
              <option value="admin">admin</option>
            </select>
          </div>
        </div>
        {existingRole && existingRole !== role ? (
          <p className="notice notice--warning" role="status">
            {userName.trim()} is now {existingRole === 'admin' ? 'an admin' : 'a member'}: this token makes them {role === 'admin' ? 'an admin' : 'a member'}, for
            all their tokens.
          </p>
        ) : null}
        <div className="form-actions">
          <button type="submit" className="button button--primary" aria-disabled={create.isPending}>
            {create.isPending ? (
              <>
                <span className="spinner" aria-hidden="true" /> Creating…
              </>
            ) : (
              'Create token'
            )}
          </button>
        </div>
        {formError ? (
          <p className="notice notice--error" role="alert">
            {formError}
          </p>
        ) : null}
      </form>

      {issued ? (
        <div className="card issued" role="region" aria-labelledby="issued-title">
          <h3 id="issued-title">
            New token for {issued.userName} ({issued.role})
          </h3>
          <p>Copy it now: it is shown only this once, and cannot be seen again.</p>
          <div className="issued__row">
            <label htmlFor="issued-token" className="sr-only">
              The new token
            </label>
            <input id="issued-token" ref={issuedRef} className="issued__token" readOnly value={issued.token} spellCheck={false} />
            <button type="button" className="button button--primary" onClick={() => void copy()}>
              Copy
            </button>
            <button
              type="button"
              className="button button--quiet"
              onClick={() => {
                setIssued(null);
                userRef.current?.focus();
              }}
            >
              Done
            </button>
          </div>
          <p className="form-status" role="status">
            {copyState === 'copied' ? 'Copied to the clipboard.' : copyState === 'failed' ? 'Copying was refused here: the token is selected, copy it with Ctrl+C.' : ''}
          </p>
        </div>
      ) : null}

      <div className="card">
        {revokeMessage ? (
          <p className={`notice notice--${revokeMessage.kind}`} role={revokeMessage.kind === 'error' ? 'alert' : 'status'}>
            {revokeMessage.text}
          </p>
        ) : null}
        {queryFallback(tokens, 'tokens') ?? (
          <div className="table-wrap" role="region" aria-labelledby="tokens-caption" tabIndex={0}>
            <table className="table table--tokens" aria-busy={tokens.isFetching}>
              <caption id="tokens-caption">All tokens, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col" className="num">
                    Id
                  </th>
                  <th scope="col">Token</th>
                  <th scope="col">User</th>
                  <th scope="col">Role</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">State</th>
                  <th scope="col" className="actions">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {(tokens.data ?? []).map((token) => {
                  const state = stateOf(token, now);
                  return (
                    <tr key={token.id} data-token-id={token.id}>
                      <td className="num">{token.id}</td>
                      <td>
                        <code>{token.prefix}…</code>
                      </td>
                      <td>{token.userName}</td>
                      <td>{token.role}</td>
                      <td>
                        <When date={token.createdAt} />
                      </td>
                      <td>
                        <When date={token.lastUsedAt} />
                      </td>
                      <td>
                        <When date={token.expiresAt} never="no expiry" />
                      </td>
                      <td>
                        <span className={`badge badge--${state}`}>{state}</span>
                        {token.current ? <span className="muted small"> (this session)</span> : null}
                        {token.revokedAt ? (
                          <span className="muted small">
                            {' '}
                            <When date={token.revokedAt} />
                          </span>
                        ) : null}
                      </td>
                      <td className="actions">
                        {state === 'revoked' ? null : (
                          <button
                            type="button"
                            className="button button--small button--danger-quiet"
                            aria-label={`Revoke token ${token.id} (${token.prefix}…) of ${token.userName}`}
                            onClick={() => {
                              setRevokeMessage(null);
                              setRevoking(token);
                            }}
                          >
                            Revoke
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </div>

      {revoking ? (
        <ConfirmDialog
          title="Revoke this token?"
          confirmLabel="Revoke token"
          onConfirm={() => {
            const token = revoking;
            setRevoking(null);
            revoke.mutate({ id: token.id });
            // The row loses its button: the cursor goes to the section's heading, not to nowhere.
            headingRef.current?.focus();
          }}
          onCancel={() => setRevoking(null)}
        >
          <p>
            Token {revoking.id} (<code>{revoking.prefix}…</code>) of {revoking.userName} stops working at once, on the REST API and on this page. This
            cannot be undone.
          </p>
          {revoking.current ? <p className="notice notice--warning">This is the token you are signed in with: revoking it signs you out.</p> : null}
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
