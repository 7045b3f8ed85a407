import { useEffect, useState } from "react";
import { diagnostics, errorMessage, setStartAtLogin, startAtLogin, type Diagnostics as Report } from "../ipc";

/** Versions, folders, and a doctor that says what servers need and how to fix what is missing. */
export default function Diagnostics() {
  const [report, setReport] = useState<Report | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const [atLogin, setAtLogin] = useState<boolean | null>(null);

  useEffect(() => {
    startAtLogin().then(
      (on) => setAtLogin(on ?? false),
      () => setAtLogin(null),
    );
  }, []);

  const check = () => {
    setRunning(true);
    setProblem(null);
    diagnostics()
      .then(setReport, (e) => setProblem(errorMessage(e)))
      .finally(() => setRunning(false));
  };

  return (
    <div className="panel narrow">
      <h2>Diagnostics</h2>
      {atLogin !== null && (
        <label className="row">
          <input
            type="checkbox"
            data-testid="start-at-login"
            checked={atLogin}
            onChange={(e) =>
              setStartAtLogin(e.target.checked).then(setAtLogin, (err) => setProblem(errorMessage(err)))
            }
          />
          Start Toolgate in the tray when I log in
        </label>
      )}
      <button type="button" data-testid="run-doctor" onClick={check} disabled={running}>
        {running ? "Checking…" : report ? "Check again" : "Check this computer"}
      </button>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {report && (
        <>
          <dl className="facts">
            <dt>Toolgate</dt>
            <dd>{report.version}</dd>
            <dt>Settings file</dt>
            <dd>
              <code>{report.settingsFile}</code>
            </dd>
            <dt>Data folder</dt>
            <dd>
              <code>{report.dataDir ?? "unknown"}</code>
            </dd>
            <dt>Logs</dt>
            <dd>
              <code>{report.logDir ?? "unknown"}</code>
            </dd>
          </dl>
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
        </>
      )}
    </div>
  );
}
