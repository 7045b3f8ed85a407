// A server's resources (readable on request) and prompts, folded away in its card. What a
// resource holds is the server's, untrusted: text is shown in a `<pre>` through React's escaping,
// images only as `data:` URLs of raster types, other bytes only by their size and type.
import { useState } from "react";
import {
  errorMessage,
  readResource,
  type PromptInfo,
  type ReadResourceResult,
  type ResourceContents,
  type ResourceInfo,
} from "../ipc";
import { base64Bytes, imageSource } from "./Images";

function Contents({ part, fallbackType, name }: { part: ResourceContents; fallbackType: string | null; name: string }) {
  const type = part.mimeType ?? fallbackType;
  if ("text" in part && typeof part.text === "string") {
    return (
      <pre className="result" data-testid="resource-text">
        {part.text}
      </pre>
    );
  }
  const blob = "blob" in part && typeof part.blob === "string" ? part.blob : "";
  const src = imageSource(type, blob);
  if (src) return <img src={src} alt={`Image from ${name}`} data-testid="resource-image" />;
  return (
    <p className="muted small" data-testid="resource-blob">
      {base64Bytes(blob).toLocaleString("en")} bytes of {type ?? "unknown type"}
    </p>
  );
}

function Resource({ serverId, resource }: { serverId: string; resource: ResourceInfo }) {
  const [result, setResult] = useState<ReadResourceResult | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const read = async () => {
    setProblem(null);
    setBusy(true);
    try {
      setResult(await readResource(serverId, resource.uri));
    } catch (e) {
      setResult(null);
      setProblem(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const contents = Array.isArray(result?.contents) ? result.contents : [];
  const label = resource.name || resource.uri;
  return (
    <li data-testid="resource">
      <div className="row">
        <strong>{label}</strong>
        <code className="small uri">{resource.uri}</code>
        {resource.mimeType && <span className="badge small">{resource.mimeType}</span>}
        <button type="button" aria-label={`Read ${label}`} onClick={read} disabled={busy}>
          {busy ? "Reading…" : "Read"}
        </button>
        {result && (
          <button type="button" aria-label={`Hide ${label}`} onClick={() => setResult(null)}>
            Hide
          </button>
        )}
      </div>
      {resource.description && <p className="muted small description-text">{resource.description}</p>}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      {result && (
        <div className="resource-contents" data-testid="resource-contents">
          {contents.length === 0 && <p className="muted small">The resource is empty.</p>}
          {contents.map((part, i) => (
            <div key={i}>
              {contents.length > 1 && part.uri && <code className="small uri">{part.uri}</code>}
              <Contents part={part} fallbackType={resource.mimeType} name={label} />
            </div>
          ))}
        </div>
      )}
    </li>
  );
}

export function Resources({ serverId, serverName, resources }: { serverId: string; serverName: string; resources: ResourceInfo[] }) {
  if (resources.length === 0) return null;
  return (
    <details className="server-contents" data-testid="resources">
      <summary>Resources ({resources.length})</summary>
      <ul className="plain" aria-label={`Resources of ${serverName}`}>
        {resources.map((r, i) => (
          <Resource key={`${i}:${r.uri}`} serverId={serverId} resource={r} />
        ))}
      </ul>
    </details>
  );
}

export function Prompts({ serverName, prompts }: { serverName: string; prompts: PromptInfo[] }) {
  if (prompts.length === 0) return null;
  return (
    <details className="server-contents" data-testid="prompts">
      <summary>Prompts ({prompts.length})</summary>
      <ul className="plain" aria-label={`Prompts of ${serverName}`}>
        {prompts.map((p, i) => (
          <li key={`${i}:${p.name}`} data-testid="prompt">
            <strong>{p.name}</strong>
            {p.description && <p className="muted small description-text">{p.description}</p>}
            <p className="small">
              {p.arguments.length > 0 ? (
                <>
                  Arguments:{" "}
                  {p.arguments.map((a, j) => (
                    <span key={j}>
                      {j > 0 && ", "}
                      <code>{a}</code>
                    </span>
                  ))}
                </>
              ) : (
                <span className="muted">No arguments</span>
              )}
            </p>
          </li>
        ))}
      </ul>
    </details>
  );
}
