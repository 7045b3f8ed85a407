import { useCallback, useEffect, useState } from "react";
import { clearSecret, errorMessage, listSecrets, setSecret, type SecretView } from "../ipc";

/**
 * The secrets servers refer to as `${secret:NAME}` in their env or headers. Values go straight
 * to the OS keychain; the window only ever learns whether one is set and its last 4 characters.
 */
export default function Secrets({ refreshKey, emptyText }: { refreshKey?: unknown; emptyText?: string }) {
  const [secrets, setSecrets] = useState<SecretView[]>([]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);

  const refresh = useCallback(() => {
    listSecrets().then(setSecrets, (e) => setMessage({ text: errorMessage(e), error: true }));
  }, []);
  useEffect(refresh, [refresh, refreshKey]);

  if (secrets.length === 0) return emptyText ? <p className="muted">{emptyText}</p> : null;
  const act = (op: () => Promise<void>, done: string) =>
    op().then(
      () => {
        setMessage({ text: done, error: false });
        refresh();
      },
      (e) => setMessage({ text: errorMessage(e), error: true }),
    );

  return (
    <section className="card" aria-labelledby="secrets-heading" data-testid="secrets">
      <h3 id="secrets-heading">Server secrets</h3>
      <p className="muted small">Kept in the OS keychain. Servers get them when they start.</p>
      {secrets.map((s) => (
        <form
          key={s.name}
          className="row wrap"
          data-testid={`secret-${s.name}`}
          onSubmit={(e) => {
            e.preventDefault();
            const value = values[s.name] ?? "";
            act(() => setSecret(s.name, value), `${s.name} saved to the keychain.`).then(() =>
              setValues((v) => ({ ...v, [s.name]: "" })),
            );
          }}
        >
          <label htmlFor={`secret-input-${s.name}`}>
            <code>{s.name}</code>{" "}
            <span className="muted small" data-testid="secret-state">
              {s.set ? `set ${s.hint ?? ""}` : "not set"} · used by {s.usedBy.join(", ")}
            </span>
          </label>
          <input
            id={`secret-input-${s.name}`}
            type="password"
            autoComplete="off"
            placeholder={s.set ? "Replace the value" : "Paste the value"}
            value={values[s.name] ?? ""}
            onChange={(e) => setValues((v) => ({ ...v, [s.name]: e.target.value }))}
          />
          <button type="submit" aria-label={`Save ${s.name}`} disabled={!(values[s.name] ?? "")}>
            Save
          </button>
          <button
            type="button"
            aria-label={`Clear ${s.name}`}
            disabled={!s.set}
            onClick={() => act(() => clearSecret(s.name), `${s.name} removed from the keychain.`)}
          >
            Clear
          </button>
        </form>
      ))}
      {message && (
        <p role="status" className={message.error ? "error small" : "ok small"}>
          {message.text}
        </p>
      )}
    </section>
  );
}
