import { useState } from "react";
import { errorMessage, signInServer, signOutServer, type ServerSnapshot, type SignedInInfo } from "../ipc";
import { ACTION_ICONS } from "../icons";
import { WithIcon } from "./WithIcon";

/** "expires 14:05" for an access token's expiry. */
export function expiryLabel(info: SignedInInfo, now: number = Date.now()): string {
  if (info.expiresAt === null) return "no expiry given";
  const at = new Date(info.expiresAt * 1000);
  const when =
    info.expiresAt * 1000 <= now
      ? "expired"
      : `expires ${at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })}`;
  return info.renewable ? `${when}, renewed without asking` : when;
}

/**
 * A remote server's sign-in on its card: "Sign in required" / "Sign in again" with a button,
 * "Signed in (expires …)" with Sign out, and a request for more access after a call needed it
 * (the user grants it by clicking, never without).
 */
export default function SignIn({ server }: { server: ServerSnapshot }) {
  const [busy, setBusy] = useState(false);
  const [url, setUrl] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [notes, setNotes] = useState<string[]>([]);
  const needs = server.status.state === "signIn" ? server.status : null;
  if (!needs && !server.signedIn && !server.needsScope) return null;

  const signIn = (extra: string[]) => {
    setBusy(true);
    setProblem(null);
    setNotes([]);
    signInServer(server.id, extra, setUrl)
      .catch((e: unknown) => setProblem(errorMessage(e)))
      .finally(() => {
        setBusy(false);
        setUrl(null);
      });
  };
  const signOut = () => {
    setProblem(null);
    signOutServer(server.id)
      .then(setNotes)
      .catch((e: unknown) => setProblem(errorMessage(e)));
  };

  return (
    <div className="sign-in" data-testid="sign-in">
      {needs && (
        <p className="row" data-testid="sign-in-state">
          <strong>{needs.again ? "Sign in again" : "Sign in required"}</strong>
          <span className="muted small">{needs.reason}</span>
        </p>
      )}
      {!needs && server.signedIn && (
        <p className="row" data-testid="sign-in-state">
          <strong>Signed in</strong>
          <span className="muted small">
            ({expiryLabel(server.signedIn)}) with {server.signedIn.issuer}
            {server.signedIn.scopes.length > 0 && ` · ${server.signedIn.scopes.join(" ")}`}
          </span>
        </p>
      )}
      <div className="row">
        {needs && (
          <button type="button" data-testid="sign-in-button" disabled={busy} onClick={() => signIn([])}>
            <WithIcon icon={ACTION_ICONS.signIn}>
              {needs.again ? `Sign in to ${server.name} again` : `Sign in to ${server.name}`}
            </WithIcon>
          </button>
        )}
        {server.needsScope && (
          <button
            type="button"
            data-testid="grant-scope-button"
            disabled={busy}
            onClick={() => signIn(server.needsScope?.split(" ") ?? [])}
          >
            Grant more access ({server.needsScope})
          </button>
        )}
        {!needs && server.signedIn && (
          <button type="button" data-testid="sign-out-button" aria-label={`Sign out of ${server.name}`} onClick={signOut}>
            Sign out
          </button>
        )}
      </div>
      {server.needsScope && (
        <p className="muted small">
          A call needed more access than {server.name} was granted ({server.needsScope}). Granting it opens the
          sign-in again in your browser.
        </p>
      )}
      {busy && (
        <p className="small" role="status" data-testid="sign-in-waiting">
          Finish signing in in your browser…
          {url && (
            <>
              {" "}
              If no browser opened, open this address: <code className="url">{url}</code>
            </>
          )}
        </p>
      )}
      {notes.map((n) => (
        <p key={n} className="muted small">
          {n}
        </p>
      ))}
      {problem && (
        <p className="error small" role="alert" data-testid="sign-in-problem">
          {problem}
        </p>
      )}
    </div>
  );
}
