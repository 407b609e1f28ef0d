import { useState } from "react";

/**
 * Sign in with the token `npm start` printed (or open the link it printed, which does this); on AWS
 * (`hostedSignIn`), with the Ebb account through Cognito's hosted sign-in page.
 */
export function LoginPage(props: {
  problem?: string | undefined;
  signIn: (token: string) => Promise<void>;
  onSignedIn: () => void;
  /** Leaves for the hosted sign-in page (which comes back to the app signed in). */
  hostedSignIn?: (() => Promise<void>) | undefined;
}) {
  const [token, setToken] = useState("");
  const [error, setError] = useState(props.problem);
  const [busy, setBusy] = useState(false);
  return (
    <main className="login">
      <form
        className="login-card"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          const signingIn = props.hostedSignIn
            ? props.hostedSignIn()
            : props.signIn(token.trim()).then(props.onSignedIn);
          signingIn.catch((err: Error) => {
            setError(err.message);
            setBusy(false);
          });
        }}
      >
        <h1>
          <span className="brand-mark" aria-hidden="true">
            ≈
          </span>{" "}
          Ebb
        </h1>
        {props.hostedSignIn ? (
          <p className="muted">
            Sign in with your Ebb account (an administrator creates it in the stack's user pool).
          </p>
        ) : (
          <p className="muted">
            Open the link <code>npm start</code> printed, or paste its token (<code>EBB_TOKEN</code>).
          </p>
        )}
        {!props.hostedSignIn && (
          <label className="field">
            <span>Token</span>
            <input
              type="password"
              autoComplete="off"
              value={token}
              onChange={(e) => setToken(e.target.value)}
              autoFocus
              required
            />
          </label>
        )}
        {error && (
          <div className="note note-bad" role="alert">
            {error}
          </div>
        )}
        <button
          type="submit"
          className="button button-primary"
          disabled={busy || (!props.hostedSignIn && token.trim() === "")}
        >
          Sign in
        </button>
      </form>
    </main>
  );
}
