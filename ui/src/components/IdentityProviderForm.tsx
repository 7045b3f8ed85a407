// The organisation's identity provider, for servers signed in to by enterprise-managed
// authorization: set once here (or by the organisation's policy, which then locks it). The ID
// token and any client secret are keychain references, never typed here.
import { useEffect, useState } from "react";
import { errorMessage, identityProvider, setIdentityProvider, type IdentityProvider } from "../ipc";
import { LockedNote, useManaged } from "./Managed";

const EMPTY: IdentityProvider = { issuer: "", tokenEndpoint: "", clientId: "", clientSecret: null, idToken: "" };

export default function IdentityProviderForm() {
  const [form, setForm] = useState<IdentityProvider>(EMPTY);
  const [saved, setSaved] = useState<IdentityProvider | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const managed = useManaged(saved);
  const locked = managed?.identityProviderLocked ?? false;

  useEffect(() => {
    identityProvider().then(
      (idp) => {
        setSaved(idp);
        setForm(idp ?? EMPTY);
      },
      (e) => setProblem(errorMessage(e)),
    );
  }, []);

  const save = (next: IdentityProvider | null) => {
    setProblem(null);
    setSaid(null);
    setIdentityProvider(next).then(
      (idp) => {
        setSaved(idp);
        setForm(idp ?? EMPTY);
        setSaid(idp ? "Saved." : "Removed.");
      },
      (e) => setProblem(errorMessage(e)),
    );
  };
  const field = (key: "issuer" | "tokenEndpoint" | "clientId" | "idToken", label: string, placeholder: string) => (
    <>
      <label htmlFor={`idp-${key}`}>{label}</label>
      <input
        id={`idp-${key}`}
        spellCheck={false}
        disabled={locked}
        placeholder={placeholder}
        value={form[key]}
        onChange={(e) => setForm({ ...form, [key]: e.target.value })}
      />
    </>
  );
  return (
    <div className="form identity-provider" data-testid="identity-provider">
      <h3>Your organisation&apos;s identity provider</h3>
      <p className="muted small">
        Servers set to sign in &quot;through your organisation&apos;s identity provider&quot; use it instead of a consent
        screen each: it exchanges your ID token for a grant naming that server.
      </p>
      {locked && <LockedNote testId="idp-locked" />}
      {field("issuer", "Issuer", "https://idp.example.com")}
      {field("tokenEndpoint", "Token endpoint", "https://idp.example.com/oauth2/token")}
      {field("clientId", "Client id Toolgate has there", "toolgate")}
      <label htmlFor="idp-clientSecret">Client secret, as a keychain reference (empty for a public client)</label>
      <input
        id="idp-clientSecret"
        spellCheck={false}
        disabled={locked}
        placeholder="${secret:IDP_CLIENT_SECRET}"
        value={form.clientSecret ?? ""}
        onChange={(e) => setForm({ ...form, clientSecret: e.target.value.trim() ? e.target.value : null })}
      />
      {field("idToken", "Your ID token, as a keychain reference", "${secret:IDP_ID_TOKEN}")}
      {!locked && (
        <div className="row">
          <button type="button" data-testid="idp-save" onClick={() => save(form)}>
            Save
          </button>
          {saved && (
            <button type="button" data-testid="idp-remove" onClick={() => save(null)}>
              Remove
            </button>
          )}
        </div>
      )}
      {said && <p className="muted small">{said}</p>}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
