'use client';

import { LogIn } from 'lucide-react';
import { type FormEvent, useEffect, useRef, useState } from 'react';

import { Field } from './Field';
import { focusViewHeadingNext, forgetHeadingFocus } from './focus';
import { useSession } from './session';

export function SignIn() {
  const { status, notice, signIn } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const checking = status === 'checking';

  // After a refused token or a sign-out, the cursor is back where the next token goes.
  useEffect(() => {
    if (!notice) return;
    forgetHeadingFocus();
    inputRef.current?.focus();
  }, [notice]);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (checking) return;
    const candidate = token.trim();
    if (!candidate) {
      setError('Enter your API token.');
      inputRef.current?.focus();
      return;
    }
    setError(null);
    // Once signed in, the view that appears starts the cursor at its heading.
    focusViewHeadingNext();
    signIn(candidate);
  }

  const refused = notice?.kind === 'error' ? notice.text : null;
  return (
    <section className="card signin" aria-labelledby="signin-title">
      <h1 id="signin-title">Sign in</h1>
      <p className="muted">Sign in with your API token. It is kept in this browser tab only, until you sign out or close the tab.</p>
      {notice?.kind === 'info' ? (
        <p className="notice notice--info" role="status">
          {notice.text}
        </p>
      ) : null}
      <form onSubmit={onSubmit} noValidate aria-busy={checking}>
        <Field
          id="signin-token"
          label="API token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          placeholder="pst_…"
          value={token}
          onChange={(event) => {
            setToken(event.target.value);
            setError(null);
          }}
          inputRef={inputRef}
          error={error ?? refused}
          required
        />
        <button type="submit" className="button button--primary" aria-disabled={checking}>
          {checking ? <span className="spinner" aria-hidden="true" /> : <LogIn className="icon" aria-hidden="true" />}
          {checking ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <details>
        <summary>Where do I get a token?</summary>
        <p>Ask an admin of this Plant Store for one. Admins create tokens under API tokens once signed in; the person who runs the server can make one with its token command.</p>
      </details>
    </section>
  );
}
