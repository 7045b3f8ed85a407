import { useEffect, useRef, useState } from "react";
import {
  applyImport,
  errorMessage,
  exportServers,
  importSources,
  previewImport,
  type ImportChoices,
  type ImportReport,
  type ImportSource,
  type LinkOffer,
} from "../ipc";

type Candidate = ImportReport["secretCandidates"][number];
const candidateKey = (c: Candidate) => `${c.serverId}/${c.location}/${c.name}`;

/** A file's text, read in the web-view (no file system access is needed for a file the user picked). */
function readText(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result ?? ""));
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsText(file);
  });
}

/** The user's choices for a report: every secret-looking value moves unless unticked. */
export function useImportChoices() {
  const [moving, setMoving] = useState<Record<string, boolean>>({});
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const reset = (r: ImportReport | null) => {
    setMoving(Object.fromEntries((r?.secretCandidates ?? []).map((c) => [candidateKey(c), true])));
    setInputs(Object.fromEntries((r?.inputs ?? []).map((i) => [i.id, i.default ?? ""])));
  };
  const choices = (r: ImportReport): ImportChoices => ({
    inputs,
    moveSecrets: r.secretCandidates
      .filter((c) => moving[candidateKey(c)])
      .map((c) => ({ serverId: c.serverId, location: c.location, name: c.name })),
  });
  return { moving, setMoving, inputs, setInputs, reset, choices };
}

/** Why an entry is not added, in words (the form and the import both say it). */
export function skipLabel(reason: ImportReport["skipped"][number]["reason"]): string {
  switch (reason.kind) {
    case "identical":
      return reason.existing ? `the same server is already added, as ${reason.id}` : `the same as ${reason.id}`;
    case "disabledDuplicate":
      return `disabled, and ${reason.id} runs the same`;
    case "unsafeEnv":
      return `its env sets ${reason.variable}, which can make the program load other code`;
    case "unsupportedTransport":
      return `Toolgate does not speak the ${reason.transport} transport`;
  }
}

/**
 * Adds servers from a pasted `mcpServers` / VS Code snippet, a file (read into the same box, so
 * it is seen before anything runs) or Claude Desktop's file: preview first (what is added and
 * the command each runs, renamed, skipped, which values look like secrets), then import. Values
 * chosen for the keychain never reach the settings file.
 */
export default function ImportServers({
  onImported,
  link,
}: {
  onImported?: (ids: string[]) => void;
  /** An install link's server: filled in and previewed (its exact command shown), never added
   *  without the user's click. */
  link?: LinkOffer;
}) {
  const [text, setText] = useState(link?.link?.text ?? "");
  const [name, setName] = useState(link?.link?.name ?? "");
  const [claudeDesktop, setClaudeDesktop] = useState<string | null>(null);
  const [source, setSource] = useState<ImportSource | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const picks = useImportChoices();
  const [done, setDone] = useState<ImportReport | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    importSources().then((s) => setClaudeDesktop(s.claudeDesktop), () => setClaudeDesktop(null));
  }, []);

  const preview = (from: ImportSource) => {
    setProblem(null);
    setDone(null);
    previewImport(from).then(
      (r) => {
        setSource(from);
        setReport(r);
        picks.reset(r);
      },
      (e) => {
        setReport(null);
        setProblem(errorMessage(e));
      },
    );
  };

  const confirm = () => {
    if (!source || !report) return;
    applyImport(source, picks.choices(report)).then(
      (r) => {
        setDone(r);
        setReport(null);
        setText("");
        onImported?.(r.added.map((a) => a.id));
      },
      (e) => setProblem(errorMessage(e)),
    );
  };

  // A link's server is previewed at once, so its exact command is the first thing seen.
  const linked = link?.link;
  const previewedLink = useRef(false);
  useEffect(() => {
    if (!linked || previewedLink.current) return;
    previewedLink.current = true;
    const from: ImportSource = { kind: "text", text: linked.text, name: linked.name };
    previewImport(from).then(
      (r) => {
        setSource(from);
        setReport(r);
        picks.reset(r);
      },
      (e) => setProblem(errorMessage(e)),
    );
  }, [linked, picks]);

  return (
    <section className="card" aria-labelledby="import-heading" data-testid="import">
      <h3 id="import-heading">Add servers from JSON</h3>
      {linked && (
        <p role="status" data-testid="install-link-note">
          From {linked.form === "Toolgate" ? "an install link" : `a ${linked.form} install link`}: check the command
          below before you add <strong>{linked.name}</strong>. Nothing is added until you click Import.
        </p>
      )}
      {link?.problem && (
        <p className="error" role="alert" data-testid="install-link-problem">
          The install link could not be read: {link.problem}
        </p>
      )}
      <label htmlFor="import-text">
        Paste a server&apos;s configuration (<code>mcpServers</code> from its README, Cursor, Claude Code or VS Code{" "}
        <code>mcp.json</code>)
      </label>
      <textarea
        id="import-text"
        data-testid="import-text"
        rows={6}
        spellCheck={false}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <div className="row">
        <label htmlFor="import-file" className="small">
          Or open a file (it is shown above before anything is added)
        </label>
        <input
          id="import-file"
          type="file"
          accept=".json,.jsonc,application/json"
          data-testid="import-file"
          onChange={(e) => {
            const chosen = e.target.files?.[0];
            if (!chosen) return;
            setProblem(null);
            readText(chosen).then(
              (content) => {
                setText(content);
                setReport(null);
              },
              (err: unknown) => setProblem(`${chosen.name} could not be read: ${String(err)}`),
            );
          }}
        />
      </div>
      <div className="row wrap">
        <label htmlFor="import-name">Name (for a single server)</label>
        <input id="import-name" value={name} onChange={(e) => setName(e.target.value)} />
        <button
          type="button"
          data-testid="import-preview"
          disabled={!text.trim()}
          onClick={() => preview({ kind: "text", text, name: name.trim() || null })}
        >
          Preview
        </button>
        {claudeDesktop && (
          <button type="button" data-testid="import-claude" onClick={() => preview({ kind: "claudeDesktop" })}>
            Import from Claude Desktop
          </button>
        )}
      </div>
      {problem && (
        <p className="error small" role="alert" data-testid="import-problem">
          {problem}
        </p>
      )}
      {report && (
        <div data-testid="import-report">
          <ImportDetails report={report} picks={picks} />
          <button type="button" data-testid="import-confirm" disabled={report.added.length === 0} onClick={confirm}>
            Import {report.added.length} server{report.added.length === 1 ? "" : "s"}
          </button>
        </div>
      )}
      {done && (
        <p role="status" className="ok small" data-testid="import-done">
          Imported {done.added.map((a) => a.name).join(", ") || "nothing"}.
        </p>
      )}
    </section>
  );
}

/** The servers as Claude Desktop's `mcpServers` JSON, for another app; secrets stay references. */
export function ExportServers() {
  const [exported, setExported] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <section className="card" aria-labelledby="export-heading" data-testid="export">
      <h3 id="export-heading">Export</h3>
      <p className="muted small">
        Your servers in the <code>mcpServers</code> format other apps read. Secrets stay <code>${"{"}secret:…{"}"}</code>{" "}
        references.
      </p>
      <button
        type="button"
        data-testid="export-servers"
        onClick={() =>
          exportServers().then(
            (e) =>
              setExported(
                JSON.stringify(e.json, null, 2) +
                  e.leftOut.map((l) => `\n// left out ${l.id}: ${l.reason}`).join(""),
              ),
            (e) => setProblem(errorMessage(e)),
          )
        }
      >
        Show as Claude Desktop JSON
      </button>
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      {exported && (
        <pre data-testid="exported-servers" aria-label="Servers as Claude Desktop JSON">
          {exported}
        </pre>
      )}
    </section>
  );
}

/** What an import adds, skips and asks, with the choices: secrets to move, inputs to answer. */
export function ImportDetails({
  report,
  picks,
}: {
  report: ImportReport;
  picks: ReturnType<typeof useImportChoices>;
}) {
  const { moving, setMoving, inputs, setInputs } = picks;
  return (
    <>
      {report.added.length === 0 ? (
        <p>Nothing to add.</p>
      ) : (
        <ul>
          {report.added.map((a) => (
            <li key={a.id}>
              Add <strong>{a.name}</strong> as <code>{a.id}</code> ({a.transport}
              {a.enabled ? "" : ", switched off"})
              {report.renamed.some((r) => r.id === a.id) && " — renamed: that id was taken"}
              {a.runs && (
                <div className="small">
                  {a.transport === "stdio" ? "Runs" : "Connects to"}{" "}
                  <code className="runs" data-testid={`runs-${a.id}`}>
                    {a.runs}
                  </code>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {report.skipped.map((s) => (
        <p key={s.name} className="muted small">
          Skip {s.name}: {skipLabel(s.reason)}
        </p>
      ))}
      {report.rules.map((r) => (
        <p key={`${r.serverId}/${r.tool}`} className="small">
          Always allow {r.tool} on {r.serverId} (from the file&apos;s auto-approve list)
        </p>
      ))}
      {report.secretCandidates.length > 0 && (
        <fieldset>
          <legend>Move to the OS keychain</legend>
          {report.secretCandidates.map((c) => (
            <label key={candidateKey(c)} className="row">
              <input
                type="checkbox"
                data-testid={`move-${c.name}`}
                checked={moving[candidateKey(c)] ?? false}
                onChange={(e) => setMoving((m) => ({ ...m, [candidateKey(c)]: e.target.checked }))}
              />
              {c.location} {c.name} of {c.serverId} → <code>{`\${secret:${c.suggestedSecret}}`}</code>
            </label>
          ))}
        </fieldset>
      )}
      {report.inputs.map((i) => (
        <div key={i.id} className="row wrap">
          <label htmlFor={`import-input-${i.id}`}>{i.description || i.id}</label>
          <input
            id={`import-input-${i.id}`}
            type={i.password ? "password" : "text"}
            autoComplete="off"
            value={inputs[i.id] ?? ""}
            onChange={(e) => setInputs((v) => ({ ...v, [i.id]: e.target.value }))}
          />
        </div>
      ))}
      {report.warnings.map((w, n) => (
        <p key={n} className="muted small">
          {w.server ? `${w.server}: ` : ""}
          {w.message}
        </p>
      ))}
    </>
  );
}
