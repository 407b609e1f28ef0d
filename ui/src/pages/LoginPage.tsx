import { useState } from "react";

/** Sign in with the token `npm start` printed (or open the link it printed, which does this). */
export function LoginPage(props: {
  problem?: string | undefined;
  signIn: (token: string) => Promise<void>;
  onSignedIn: () => void;
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
          props.signIn(token.trim()).then(props.onSignedIn, (err: Error) => {
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
        <p className="muted">
          Open the link <code>npm start</code> printed, or paste its token (<code>EBB_TOKEN</code>).
        </p>
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
        {error && (
          <div className="note note-bad" role="alert">
            {error}
          </div>
        )}
        <button type="submit" className="button button-primary" disabled={busy || token.trim() === ""}>
          Sign in
        </button>
      </form>
    </main>
  );
}
