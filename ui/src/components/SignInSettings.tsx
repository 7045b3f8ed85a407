// How Toolgate signs in to a remote server: a person in the browser (the default), a machine
// client, a workload's own token, or the organisation's identity provider; and DPoP. Secrets are
// never typed here: each field takes a keychain reference, ${secret:NAME}, whose value is set
// under Secrets (the backend refuses anything else and says so).
import type { OAuthGrant, OAuthSettings } from "../ipc";

/** The form's fields, as text. */
export interface SignInFields {
  grant: OAuthGrant;
  clientId: string;
  clientSecret: string;
  privateKey: string;
  assertion: string;
  assertionFile: string;
  scopes: string;
  dpop: "auto" | "on" | "off";
}

const GRANTS: { value: OAuthGrant; label: string }[] = [
  { value: "authorizationCode", label: "A person signs in, in the browser" },
  { value: "clientCredentials", label: "As a machine client (its own id and secret or key)" },
  { value: "jwtBearer", label: "As a workload (the token its platform issues)" },
  { value: "enterpriseManaged", label: "Through your organisation's identity provider" },
];

/** The fields for a server's current settings. */
export function signInFields(oauth: OAuthSettings | null | undefined): SignInFields {
  const o = oauth ?? {};
  return {
    grant: o.grant ?? "authorizationCode",
    clientId: o.clientId ?? "",
    clientSecret: o.clientSecret ?? "",
    privateKey: o.privateKey ?? "",
    assertion: o.assertion ?? "",
    assertionFile: o.assertionFile ?? "",
    scopes: (o.scopes ?? []).join(" "),
    dpop: o.dpop == null ? "auto" : o.dpop ? "on" : "off",
  };
}

/**
 * The settings the fields say, keeping what the form does not show (a client metadata document,
 * a callback port, a signing algorithm); `null` when nothing is set.
 */
export function signInSettings(fields: SignInFields, before: OAuthSettings | null | undefined): OAuthSettings | null {
  const text = (v: string) => (v.trim() ? v.trim() : null);
  const next: OAuthSettings = {
    ...(before ?? {}),
    grant: fields.grant,
    clientId: text(fields.clientId),
    clientSecret: text(fields.clientSecret),
    privateKey: fields.grant === "clientCredentials" ? text(fields.privateKey) : null,
    assertion: fields.grant === "jwtBearer" ? text(fields.assertion) : null,
    assertionFile: fields.grant === "jwtBearer" ? text(fields.assertionFile) : null,
    scopes: fields.scopes.split(/\s+/).filter(Boolean),
    dpop: fields.dpop === "auto" ? null : fields.dpop === "on",
  };
  const empty =
    next.grant === "authorizationCode" &&
    !next.clientId &&
    !next.clientSecret &&
    (next.scopes ?? []).length === 0 &&
    next.dpop == null &&
    !next.clientMetadataUrl &&
    next.callbackPort == null;
  return empty ? null : next;
}

/** The sign-in part of a remote server's edit form. */
export function SignInForm({
  id,
  fields,
  onChange,
}: {
  id: (what: string) => string;
  fields: SignInFields;
  onChange: (fields: SignInFields) => void;
}) {
  const set = (patch: Partial<SignInFields>) => onChange({ ...fields, ...patch });
  const input = (key: "clientId" | "clientSecret" | "privateKey" | "assertion" | "assertionFile" | "scopes", label: string, placeholder: string) => (
    <>
      <label htmlFor={id(key)}>{label}</label>
      <input
        id={id(key)}
        spellCheck={false}
        placeholder={placeholder}
        value={fields[key]}
        onChange={(e) => set({ [key]: e.target.value })}
      />
    </>
  );
  return (
    <fieldset className="sign-in-settings" data-testid="sign-in-settings">
      <legend>Signing in</legend>
      <label htmlFor={id("grant")}>How Toolgate signs in</label>
      <select id={id("grant")} value={fields.grant} onChange={(e) => set({ grant: e.target.value as OAuthGrant })}>
        {GRANTS.map((g) => (
          <option key={g.value} value={g.value}>
            {g.label}
          </option>
        ))}
      </select>
      {fields.grant === "enterpriseManaged" && (
        <p className="muted small">
          The identity provider is set once for every server, under Settings (or by your organisation).
        </p>
      )}
      {input(
        "clientId",
        fields.grant === "authorizationCode" ? "Client id (only if you registered an app yourself)" : "Client id",
        fields.grant === "jwtBearer" ? "my-workload" : "toolgate",
      )}
      {fields.grant !== "jwtBearer" && input("clientSecret", "Client secret, as a keychain reference", "${secret:NAME}")}
      {fields.grant === "clientCredentials" &&
        input("privateKey", "Or a private key (PEM), as a keychain reference", "${secret:NAME}")}
      {fields.grant === "jwtBearer" && (
        <>
          {input("assertionFile", "The file your platform writes the workload's token to", "/var/run/secrets/tokens/mcp")}
          {input("assertion", "Or the token, as a keychain reference", "${secret:NAME}")}
        </>
      )}
      {input("scopes", "Scopes to ask for, separated by spaces (empty: what the server names)", "")}
      <label htmlFor={id("dpop")}>Bind tokens to a key of this computer (DPoP)</label>
      <select id={id("dpop")} value={fields.dpop} onChange={(e) => set({ dpop: e.target.value as SignInFields["dpop"] })}>
        <option value="auto">When the server asks for it</option>
        <option value="on">Whenever the authorization server takes it</option>
        <option value="off">Never</option>
      </select>
    </fieldset>
  );
}
