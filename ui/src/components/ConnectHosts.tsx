import { useCallback, useEffect, useState } from "react";
import { connectHost, errorMessage, listHosts, previewHost, undoHost, type HostPreview, type HostView } from "../ipc";
import { ImportDetails, useImportChoices } from "./ImportServers";

/**
 * Other AI apps on this computer, each connectable to Toolgate: their servers move here and they
 * run Toolgate instead, so every call they make waits for your approval. Nothing is written to
 * an app's config before its preview is shown and confirmed; undo puts the original back.
 */
export default function ConnectHosts() {
  const [hosts, setHosts] = useState<HostView[]>([]);
  const [preview, setPreview] = useState<HostPreview | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const picks = useImportChoices();

  const refresh = useCallback(() => {
    listHosts().then(setHosts, (e) => setProblem(errorMessage(e)));
  }, []);
  useEffect(refresh, [refresh]);

  const show = (host: HostView) => {
    setProblem(null);
    setDone(null);
    previewHost(host.id).then(
      (p) => {
        setPreview(p);
        picks.reset(p.report);
      },
      (e) => {
        setPreview(null);
        setProblem(errorMessage(e));
      },
    );
  };

  const connect = () => {
    if (!preview) return;
    const choices = preview.report ? picks.choices(preview.report) : { inputs: {}, moveSecrets: [] };
    connectHost(preview.id, choices).then(
      () => {
        setDone(`${preview.label} is connected. Restart it: its tool calls now wait for your approval here.`);
        setPreview(null);
        refresh();
      },
      (e) => setProblem(errorMessage(e)),
    );
  };

  const undo = (host: HostView) => {
    setProblem(null);
    undoHost(host.id).then(
      (path) => {
        setDone(`${host.label} has its own config back (${path}). Its servers stay in Toolgate.`);
        refresh();
      },
      (e) => setProblem(errorMessage(e)),
    );
  };

  return (
    <section className="card" aria-labelledby="hosts-heading" data-testid="hosts">
      <h3 id="hosts-heading">Connect other AI apps</h3>
      <p className="muted small">
        Their MCP servers move to Toolgate, and each app runs Toolgate instead: every tool call it makes waits for
        your approval here.
      </p>
      <ul className="plain">
        {hosts.map((h) => (
          <li key={h.id} className="row spread" data-testid={`host-${h.id}`}>
            <span>
              <strong>{h.label}</strong>{" "}
              <span className="muted small" data-testid="host-status">
                {h.backup ? "connected" : h.found ? h.path : "not found"}
              </span>
            </span>
            {h.backup ? (
              <button type="button" data-testid="host-undo" onClick={() => undo(h)}>
                Undo
              </button>
            ) : (
              <button type="button" data-testid="host-preview" disabled={!h.found} onClick={() => show(h)}>
                Connect…
              </button>
            )}
          </li>
        ))}
      </ul>
      {problem && (
        <p className="error small" role="alert" data-testid="hosts-problem">
          {problem}
        </p>
      )}
      {preview && (
        <div data-testid="host-plan" role="group" aria-label={`Connect ${preview.label}`}>
          <h4>Connect {preview.label}</h4>
          <p className="small">
            Its config: <code>{preview.path}</code>
          </p>
          {preview.report ? <ImportDetails report={preview.report} picks={picks} /> : <p>It runs no server of its own.</p>}
          {preview.kept.map(([name, why]) => (
            <p key={name} className="muted small">
              Stays in {preview.label}: {name} ({why})
            </p>
          ))}
          <p className="small">
            {preview.label} will then run one server: <code data-testid="host-command">{preview.command}</code>
          </p>
          {preview.notes.map((n) => (
            <p key={n} className="muted small">
              {n}
            </p>
          ))}
          <div className="row">
            <button type="button" data-testid="host-connect" onClick={connect}>
              Connect {preview.label}
            </button>
            <button type="button" onClick={() => setPreview(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {done && (
        <p role="status" className="ok small" data-testid="hosts-done">
          {done}
        </p>
      )}
    </section>
  );
}
