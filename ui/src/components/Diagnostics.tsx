import { useCallback, useEffect, useState } from "react";
import { diagnostics, errorMessage, openLogFolder, type Diagnostics as Report, type ManagedView } from "../ipc";
import { useManaged } from "./Managed";
import { SECTION_ICONS } from "../icons";
import { ScreenHeading } from "./WithIcon";

/** Where the organisation's managed policy came from and what was refused, or that there is none. */
export function ManagedSummary({ view }: { view: ManagedView | null }) {
  if (!view) return null;
  return (
    <section data-testid="managed-summary" aria-label="Managed policy">
      <h3>Managed policy</h3>
      {view.active ? (
        <>
          <p>Your organisation's policy is in force, read from:</p>
          <ul>
            {view.origins.map((o) => (
              <li key={o.place}>
                <code>{o.place}</code>
                {o.modifiedMs != null && (
                  <span className="muted small"> (changed {new Date(o.modifiedMs).toLocaleString()})</span>
                )}
              </li>
            ))}
          </ul>
          {view.telemetryEndpoint && (
            <p data-testid="managed-telemetry">
              Every decision is sent to your organisation's collector at <code>{view.telemetryEndpoint}</code>.
            </p>
          )}
        </>
      ) : (
        <p className="muted">None: your own settings decide.</p>
      )}
      {view.warnings.map((w) => (
        <p key={w} className="error" role="alert">
          {w}
        </p>
      ))}
    </section>
  );
}

/**
 * Versions, folders, and a doctor that says what servers need (launchers, the PATH they get, the
 * keychain) and how to fix what is missing. It runs as soon as it is shown.
 */
export default function Diagnostics() {
  const [report, setReport] = useState<Report | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  // It starts checking as it opens.
  const [running, setRunning] = useState(true);
  const [opened, setOpened] = useState<string | null>(null);

  const run = useCallback(() => {
    diagnostics()
      .then(setReport, (e) => setProblem(errorMessage(e)))
      .finally(() => setRunning(false));
  }, []);
  useEffect(run, [run]);
  const check = () => {
    setRunning(true);
    setProblem(null);
    run();
  };

  const managed = useManaged();
  const failing = report?.checks.filter((c) => !c.ok).length ?? 0;
  return (
    <div className="diagnostics">
      <header className="row spread">
        <ScreenHeading icon={SECTION_ICONS.diagnostics}>Diagnostics</ScreenHeading>
        <button type="button" data-testid="run-doctor" onClick={check} disabled={running}>
          {running ? "Checking…" : report ? "Check again" : "Check this computer"}
        </button>
      </header>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ManagedSummary view={managed} />
      {running && !report && (
        <p className="muted" role="status">
          Checking this computer…
        </p>
      )}
      {report && (
        <>
          <p role="status" className={failing ? "error" : "ok"} data-testid="doctor-summary">
            {failing
              ? `${failing} ${failing === 1 ? "check needs" : "checks need"} attention.`
              : "Everything servers need is in place."}
          </p>
          <ul className="checks" data-testid="doctor">
            {report.checks.map((c) => (
              <li key={c.name} className={c.ok ? "ok" : "error"} data-testid={`check-${c.name}`}>
                <strong>
                  {c.ok ? "✓" : "✗"} {c.name}
                </strong>{" "}
                <span className="small">{c.detail}</span>
                {c.fix && <div className="small">How to fix: {c.fix}</div>}
              </li>
            ))}
          </ul>
          <h3>Versions</h3>
          <dl className="facts" data-testid="versions">
            {(report.versions ?? [{ name: "Toolgate", version: report.version }]).map((v) => (
              <div key={v.name}>
                <dt>{v.name}</dt>
                <dd>{v.version}</dd>
              </div>
            ))}
          </dl>
          <h3>Folders</h3>
          <dl className="facts">
            <dt>Settings file</dt>
            <dd>
              <code>{report.settingsFile}</code>
            </dd>
            <dt>Data folder</dt>
            <dd>
              <code>{report.dataDir ?? "unknown"}</code>
            </dd>
            <dt>Logs</dt>
            <dd className="row">
              <code data-testid="log-dir">{report.logDir ?? "unknown"}</code>
              <button
                type="button"
                data-testid="open-log-folder"
                disabled={!report.logDir}
                onClick={() =>
                  openLogFolder().then(
                    (path) => setOpened(`Opened ${path}.`),
                    (e) => setProblem(errorMessage(e)),
                  )
                }
              >
                Open the log folder
              </button>
            </dd>
          </dl>
          {opened && (
            <p className="muted small" role="status">
              {opened}
            </p>
          )}
        </>
      )}
    </div>
  );
}
