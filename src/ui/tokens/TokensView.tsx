'use client';

import { KeyRound, ShieldAlert } from 'lucide-react';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';

import { tokenExpiryDaysSchema, userNameSchema } from '@/shared/users';
import { type RouterOutputs, trpc } from '@/ui/trpc';

import { ConfirmDialog } from '../ConfirmDialog';
import { Field } from '../Field';
import { OneTimeValue } from '../OneTimeValue';
import { takeHeadingFocus } from '../focus';
import { asSentence, problemOf } from '../problems';
import { queryFallback } from '../QueryFallback';
import { useSession } from '../session';
import { UserText } from '../UserText';
import { When } from '../When';
import { TokensTable } from './TokensTable';

type TokenRow = RouterOutputs['tokens']['list'][number];
type Issued = RouterOutputs['tokens']['create'];
type Role = TokenRow['role'];

/** The expiry field's text as days (empty: none), or the router's words for what is wrong with it. */
function expiryOf(text: string): { days: number | undefined } | { problem: string } {
  if (text.trim() === '') return { days: undefined };
  const result = tokenExpiryDaysSchema.safeParse(/^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN);
  return result.success ? { days: result.data } : { problem: result.error.issues[0]?.message ?? 'expiry is not valid' };
}

/** The router's user-name rule and its words, from the one schema both use. */
function userNameProblem(text: string): string | null {
  const result = userNameSchema.safeParse(text);
  return result.success ? null : (result.error.issues[0]?.message ?? 'user name is not valid');
}

export function TokensView() {
  const { user } = useSession();
  if (user?.role !== 'admin') {
    return (
      <section aria-labelledby="tokens-title">
        <h1 id="tokens-title">API tokens</h1>
        <p className="notice notice--info">Only admins manage tokens. Ask an admin if you need another token.</p>
      </section>
    );
  }
  return <TokensAdmin />;
}

function TokensAdmin() {
  const utils = trpc.useUtils();
  const tokens = trpc.tokens.list.useQuery();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const userRef = useRef<HTMLInputElement>(null);
  const roleId = useId();
  const usersListId = useId();

  const [userName, setUserName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [expiry, setExpiry] = useState('');
  const [expiryError, setExpiryError] = useState<string | null>(null);
  const expiryRef = useRef<HTMLInputElement>(null);
  const [userError, setUserError] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [revoking, setRevoking] = useState<TokenRow | null>(null);
  const [changingRole, setChangingRole] = useState<TokenRow | null>(null);
  /** What the last revoke or role change did, above the list. */
  const [revokeMessage, setRevokeMessage] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);

  const create = trpc.tokens.create.useMutation({
    onSuccess: async (result) => {
      setIssued(result);
      setUserName('');
      setExpiry('');
      setUserError(null);
      await utils.tokens.list.invalidate();
    },
    onError: (error) => {
      const problem = problemOf(error);
      if (problem.status === 401) return;
      if (problem.field === 'userName') {
        setUserError(asSentence(problem.message));
        userRef.current?.focus();
      } else if (problem.field === 'expiresInDays') {
        setExpiryError(asSentence(problem.message));
        expiryRef.current?.focus();
      } else setFormError(`The token was not created: ${problem.message}.`);
    },
  });

  useEffect(() => takeHeadingFocus(headingRef.current), []);

  const revoke = trpc.tokens.revoke.useMutation({
    onSuccess: (_, { id }) => {
      setRevokeMessage({ kind: 'info', text: `Token ${id} is revoked: it no longer works anywhere.` });
      // The one-time panel must not go on offering a token that no longer works.
      setIssued((shown) => (shown?.id === id ? null : shown));
    },
    onError: (error, { id }) => {
      const problem = problemOf(error);
      if (problem.status !== 401) setRevokeMessage({ kind: 'error', text: `Token ${id} was not revoked: ${problem.message}.` });
    },
    onSettled: () => utils.tokens.list.invalidate(),
  });

  const setUserRole = trpc.tokens.setRole.useMutation({
    onSuccess: (changed) =>
      setRevokeMessage({ kind: 'info', text: `${changed.userName} is ${changed.role === 'admin' ? 'an admin' : 'a member'} now, with every token of theirs.` }),
    onError: (error) => {
      const problem = problemOf(error);
      if (problem.status !== 401) setRevokeMessage({ kind: 'error', text: `The role was not changed: ${problem.message}.` });
    },
    onSettled: () => utils.tokens.list.invalidate(),
  });

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
    const expires = expiryOf(expiry);
    if ('problem' in expires) {
      setExpiryError(asSentence(expires.problem));
      expiryRef.current?.focus();
      return;
    }
    setExpiryError(null);
    create.mutate({ userName: userName.trim(), role, ...(expires.days === undefined ? {} : { expiresInDays: expires.days }) });
  }

  const lastAdminToken = tokens.data?.find((token) => token.lastAdminToken);
  return (
    <section className="tokens stack" aria-labelledby="tokens-title">
      <div className="view-head">
        <div>
          <h1 id="tokens-title" ref={headingRef} tabIndex={-1}>
            API tokens
          </h1>
          <p>A token acts for its user, on the REST API and on this page. Only admins see this.</p>
        </div>
      </div>

      <form className="card card--padded stack" onSubmit={onSubmit} noValidate aria-labelledby="token-form-title" aria-busy={create.isPending}>
        <h2 id="token-form-title">Create a token</h2>
        <div className="token-form">
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
          <Field
            id="token-expiry"
            label="Expires after (days)"
            hint="Empty: until revoked."
            inputMode="numeric"
            autoComplete="off"
            value={expiry}
            onChange={(event) => {
              setExpiry(event.target.value);
              setExpiryError(null);
            }}
            onBlur={() => {
              const expires = expiryOf(expiry);
              setExpiryError('problem' in expires ? asSentence(expires.problem) : null);
            }}
            error={expiryError}
            inputRef={expiryRef}
          />
          <button type="submit" className="button button--primary" aria-disabled={create.isPending}>
            {create.isPending ? <span className="spinner" aria-hidden="true" /> : <KeyRound className="icon" aria-hidden="true" />}
            {create.isPending ? 'Creating…' : 'Create token'}
          </button>
        </div>
        {existingRole && existingRole !== role ? (
          <p className="notice notice--warning" role="status">
            {userName.trim()} is now {existingRole === 'admin' ? 'an admin' : 'a member'}: this token makes them {role === 'admin' ? 'an admin' : 'a member'}, for
            all their tokens.
          </p>
        ) : null}
        {formError ? (
          <p className="notice notice--error" role="alert">
            {formError}
          </p>
        ) : null}
      </form>

      {issued ? (
        <div className="card card--padded issued stack" role="region" aria-labelledby="issued-title">
          <h2 id="issued-title">
            New token for <UserText>{issued.userName}</UserText> ({issued.role})
          </h2>
          {issued.expiresAt ? (
            <p>
              It works until <When date={issued.expiresAt} />.
            </p>
          ) : null}
          <p>Copy it now: it is shown only this once, and cannot be seen again.</p>
          <OneTimeValue
            key={issued.token}
            id="issued-token"
            label="The new token"
            value={issued.token}
            noun="token"
            onDone={() => {
              setIssued(null);
              userRef.current?.focus();
            }}
          />
        </div>
      ) : null}

      <div className="card">
        {revokeMessage ? (
          <p className={`notice notice--${revokeMessage.kind}`} role={revokeMessage.kind === 'error' ? 'alert' : 'status'}>
            {revokeMessage.text}
          </p>
        ) : null}
        {lastAdminToken ? (
          <div className="notice notice--info" role="note" data-testid="last-admin-explained">
            <ShieldAlert className="icon" aria-hidden="true" />
            <p>
              Token {lastAdminToken.id} (<code>{lastAdminToken.prefix}…</code>) of “<UserText>{lastAdminToken.userName}</UserText>” is the last working admin
              token, so it cannot be revoked: nobody could sign in to manage tokens then. Create another admin token first.
            </p>
          </div>
        ) : null}
        {queryFallback(tokens, 'tokens') ?? (
          <TokensTable
            tokens={tokens.data ?? []}
            busy={tokens.isFetching}
            onRevoke={(token) => {
              setRevokeMessage(null);
              setRevoking(token);
            }}
            onChangeRole={(token) => {
              setRevokeMessage(null);
              setChangingRole(token);
            }}
          />
        )}
      </div>

      {changingRole ? (
        <ConfirmDialog
          title={changingRole.role === 'admin' ? `Make ${changingRole.userName} a member?` : `Make ${changingRole.userName} an admin?`}
          confirmLabel={changingRole.role === 'admin' ? 'Make a member' : 'Make an admin'}
          onConfirm={() => {
            const token = changingRole;
            setChangingRole(null);
            setUserRole.mutate({ id: token.id, role: token.role === 'admin' ? 'member' : 'admin' });
          }}
          onCancel={() => setChangingRole(null)}
        >
          <p>
            A role is the user’s: every token of “<UserText>{changingRole.userName}</UserText>” changes with it, at once, on the REST API and on this page.{' '}
            {changingRole.role === 'admin'
              ? 'As a member they see only their own plants and no longer manage tokens or webhooks. The last admin with a working token stays an admin.'
              : 'As an admin they see every plant and manage tokens and webhooks.'}
          </p>
          {changingRole.current && changingRole.role === 'admin' ? <p className="notice notice--warning">This is you: this page then shows you a member’s view.</p> : null}
        </ConfirmDialog>
      ) : null}
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
            Token {revoking.id} (<code>{revoking.prefix}…</code>) of “<UserText>{revoking.userName}</UserText>” stops working at once, on the REST API and on
            this page. This cannot be undone.
          </p>
          {revoking.current ? <p className="notice notice--warning">This is the token you are signed in with: revoking it signs you out.</p> : null}
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
