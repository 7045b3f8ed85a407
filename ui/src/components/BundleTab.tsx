// *Add server → MCP bundle*: a .mcpb file dropped on the window (or its path typed) is checked by
// the backend and previewed: name, version, author, who signed it or plainly "Unsigned", and the
// values it asks for (secrets as password fields, kept in the keychain). Installing is one click
// once the required values are there; a tampered bundle shows why and offers no install.
import { useEffect, useState } from "react";
import {
  errorMessage,
  inspectBundle,
  installBundle,
  onFilesDropped,
  type BundlePreview,
  type ConfigField,
  type Signature,
} from "../ipc";

interface Props {
  onAdded: (id: string) => void;
}

/** The field's value as the form starts it: its default, else empty. */
function initial(field: ConfigField): string {
  const d = field.default;
  if (d === undefined || d === null) return field.type === "boolean" ? "false" : "";
  return Array.isArray(d) ? d.join("\n") : String(d);
}

function SignatureLine({ signature }: { signature: Signature }) {
  if (signature.status === "unsigned") {
    return (
      <p className="warning" data-testid="bundle-unsigned">
        <strong>Unsigned.</strong> Nothing says who made it; only its zip's checksums are checked.
      </p>
    );
  }
  if (signature.status === "tampered") {
    return (
      <p className="error" role="alert" data-testid="bundle-tampered">
        <strong>Tampered:</strong> {signature.reason}. It cannot be installed.
      </p>
    );
  }
  return (
    <div data-testid="bundle-signed">
      <p>
        <strong>Signed by {signature.name}</strong> <span className="muted small">({signature.subject})</span>, issued by{" "}
        {signature.issuer}.
      </p>
      {signature.selfSigned && (
        <p className="warning small" data-testid="bundle-self-signed">
          Self-signed: anyone can make a certificate with this name. It shows only that the bundle is unchanged since
          this key signed it.
        </p>
      )}
      {!signature.selfSigned && signature.trusted && (
        <p className="muted small">Its chain ends at an authority this computer trusts.</p>
      )}
      {signature.problem && <p className="warning small">{signature.problem}</p>}
      <p className="muted small">Certificate SHA-256 {signature.fingerprint}</p>
    </div>
  );
}

export default function BundleTab({ onAdded }: Props) {
  const [path, setPath] = useState("");
  const [preview, setPreview] = useState<BundlePreview | null>(null);
  const [id, setId] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const open = async (file: string) => {
    setPath(file);
    setPreview(null);
    setProblem(null);
    try {
      const shown = await inspectBundle(file);
      setPreview(shown);
      setId(shown.suggestedId);
      setValues(Object.fromEntries(shown.userConfig.map((f) => [f.key, initial(f)])));
    } catch (e) {
      setProblem(errorMessage(e));
    }
  };

  useEffect(() => {
    const stop = onFilesDropped((paths) => {
      const bundle = paths.find((p) => p.toLowerCase().endsWith(".mcpb") || p.toLowerCase().endsWith(".dxt"));
      if (bundle) void open(bundle);
      else if (paths.length > 0) setProblem("That is not an MCP bundle: drop a .mcpb file.");
    });
    return () => {
      void stop.then((unlisten) => unlisten());
    };
  }, []);

  const missing = (preview?.userConfig ?? []).filter((f) => f.required && !(values[f.key] ?? "").trim());
  const tampered = preview?.signature.status === "tampered";

  const install = async () => {
    if (!preview) return;
    setBusy(true);
    setProblem(null);
    try {
      const given: Record<string, string[]> = {};
      for (const field of preview.userConfig) {
        const raw = values[field.key] ?? "";
        const list = field.multiple ? raw.split("\n") : [raw];
        const kept = list.map((v) => v.trim()).filter((v) => v !== "");
        if (kept.length > 0) given[field.key] = kept;
      }
      await installBundle(path, id.trim(), given);
      onAdded(id.trim());
    } catch (e) {
      setProblem(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="bundle-tab">
      <div className="drop-zone" data-testid="bundle-drop-zone">
        <p>
          <strong>Drop a .mcpb file</strong> on this window, or give its path.
        </p>
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (path.trim()) void open(path.trim());
          }}
        >
          <label className="grow">
            <span className="sr-only">Bundle file</span>
            <input
              data-testid="bundle-path"
              value={path}
              placeholder="/home/me/Downloads/weather.mcpb"
              onChange={(e) => setPath(e.target.value)}
            />
          </label>
          <button type="submit" data-testid="bundle-open" disabled={!path.trim()}>
            Open
          </button>
        </form>
      </div>
      {problem && (
        <p className="error" role="alert" data-testid="bundle-problem">
          {problem}
        </p>
      )}
      {preview && (
        <section aria-label="Bundle" data-testid="bundle-preview">
          <h3>
            {preview.displayName} <span className="muted">{preview.version}</span>
          </h3>
          <p className="small">
            By {preview.author} · {preview.serverType} server · {preview.files} files
          </p>
          {preview.description && <p className="small description-text">{preview.description}</p>}
          <SignatureLine signature={preview.signature} />
          {preview.unsupported && (
            <p className="error" role="alert">
              {preview.unsupported}
            </p>
          )}
          {!tampered && !preview.unsupported && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void install();
              }}
            >
              <label>
                Server id
                <input data-testid="bundle-id" value={id} onChange={(e) => setId(e.target.value)} />
              </label>
              {preview.userConfig.map((field) => (
                <label key={field.key} data-testid={`bundle-field-${field.key}`}>
                  {field.title}
                  {field.required ? " *" : ""}
                  {field.type === "boolean" ? (
                    <input
                      type="checkbox"
                      checked={values[field.key] === "true"}
                      onChange={(e) => setValues({ ...values, [field.key]: e.target.checked ? "true" : "false" })}
                    />
                  ) : field.multiple ? (
                    <textarea
                      rows={3}
                      value={values[field.key] ?? ""}
                      placeholder="One a line"
                      onChange={(e) => setValues({ ...values, [field.key]: e.target.value })}
                    />
                  ) : (
                    <input
                      type={field.sensitive ? "password" : field.type === "number" ? "number" : "text"}
                      autoComplete="off"
                      value={values[field.key] ?? ""}
                      onChange={(e) => setValues({ ...values, [field.key]: e.target.value })}
                    />
                  )}
                  {field.description && <span className="muted small">{field.description}</span>}
                  {field.sensitive && <span className="muted small">Kept in the OS keychain, not in the settings.</span>}
                </label>
              ))}
              {missing.length > 0 && (
                <p className="muted small" data-testid="bundle-missing">
                  Still needed: {missing.map((f) => f.title).join(", ")}
                </p>
              )}
              <button type="submit" data-testid="bundle-install" disabled={busy || missing.length > 0 || !id.trim()}>
                {busy ? "Installing…" : "Install"}
              </button>
            </form>
          )}
        </section>
      )}
    </div>
  );
}
