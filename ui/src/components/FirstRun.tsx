// The first run, shown in the chat until a model can be reached: a model server already running
// on this computer (Ollama, LM Studio) is offered as it is found; so are the servers other AI
// apps run, copied here after a preview; or a hosted provider with its key. Choosing a local
// model lands in a chat that works.
import { useCallback, useEffect, useState } from "react";
import {
  applyImport,
  detectLocalModels,
  errorMessage,
  listHosts,
  previewImport,
  setProvider,
  type HostView,
  type ImportReport,
  type LocalServer,
  type ProviderView,
} from "../ipc";
import { ImportDetails, useImportChoices } from "./ImportServers";

interface Props {
  toolCount: number;
  onOpenProvider: () => void;
  onProvider: (view: ProviderView) => void;
  onImportFrom?: () => void;
  /** Hides the welcome for good (the chat then says what is missing when a message is sent). */
  onDismiss?: () => void;
}

export default function FirstRun({ toolCount, onOpenProvider, onProvider, onImportFrom, onDismiss }: Props) {
  const [local, setLocal] = useState<LocalServer[] | null>(null);
  const [hosts, setHosts] = useState<HostView[]>([]);
  const [problem, setProblem] = useState<string | null>(null);

  const probe = useCallback(() => {
    detectLocalModels().then(
      (found) => setLocal(found ?? []),
      (e) => {
        setLocal([]);
        setProblem(errorMessage(e));
      },
    );
  }, []);

  const detect = () => {
    setLocal(null);
    probe();
  };

  useEffect(() => {
    probe();
    listHosts().then(
      (all) => setHosts((all ?? []).filter((h) => h.found && !h.backup)),
      () => setHosts([]),
    );
  }, [probe]);

  return (
    <section className="welcome" data-testid="first-run" aria-labelledby="first-run-heading">
      <div className="row spread">
        <h2 id="first-run-heading">Welcome to Toolgate</h2>
        {onDismiss && (
          <button type="button" data-testid="first-run-dismiss" onClick={onDismiss}>
            Not now
          </button>
        )}
      </div>
      <p>Pick the model to chat with. Every tool call it asks for waits for your approval.</p>

      <h3>A model on this computer</h3>
      {local === null ? (
        <p className="muted" role="status" data-testid="local-detecting">
          Looking for Ollama (port 11434) and LM Studio (port 1234)…
        </p>
      ) : local.length === 0 ? (
        <p className="muted" data-testid="local-none">
          No local model server answered (Ollama on port 11434, LM Studio on 1234).{" "}
          <button type="button" className="link" data-testid="local-again" onClick={detect}>
            Look again
          </button>
        </p>
      ) : (
        <ul className="plain">
          {local.map((server) => (
            <LocalChoice key={server.preset} server={server} onProvider={onProvider} onProblem={setProblem} />
          ))}
        </ul>
      )}

      <h3>Or a hosted provider</h3>
      <p>
        Or add a provider and its API key (Anthropic, OpenAI, OpenRouter…). The key is kept in your OS keychain,
        nowhere else.{" "}
        <button type="button" onClick={onOpenProvider} data-testid="open-provider">
          Add a provider key
        </button>
      </p>

      <h3>Your tools</h3>
      <p className="muted">
        {toolCount} tools are ready from your servers; you can call them by hand under Servers without any model.
      </p>
      {hosts.map((h) => (
        <HostServers key={h.id} host={h} />
      ))}
      {onImportFrom && (
        <p className="small">
          <button type="button" className="link" onClick={onImportFrom}>
            Add servers from a JSON snippet or a file
          </button>
        </p>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </section>
  );
}

function LocalChoice({
  server,
  onProvider,
  onProblem,
}: {
  server: LocalServer;
  onProvider: (view: ProviderView) => void;
  onProblem: (message: string) => void;
}) {
  const [model, setModel] = useState(server.models[0] ?? "");
  const id = `local-model-${server.preset}`;
  const use = () =>
    setProvider({ kind: "openai", baseUrl: server.baseUrl, model: model.trim() }).then(onProvider, (e) =>
      onProblem(errorMessage(e)),
    );
  return (
    <li className="row wrap" data-testid={`local-${server.preset}`}>
      <strong>{server.name}</strong>
      <span className="muted small">
        runs at <code>{server.baseUrl}</code>
      </span>
      {server.models.length > 0 ? (
        <>
          <label htmlFor={id} className="sr-only">
            Model of {server.name}
          </label>
          <select id={id} value={model} onChange={(e) => setModel(e.target.value)}>
            {server.models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </>
      ) : (
        <>
          <span className="muted small">
            It has no model yet (e.g. <code>ollama pull llama3.2</code>); name one:
          </span>
          <label htmlFor={id} className="sr-only">
            Model of {server.name}
          </label>
          <input id={id} value={model} onChange={(e) => setModel(e.target.value)} spellCheck={false} />
        </>
      )}
      <button
        type="button"
        className="primary"
        data-testid={`use-local-${server.preset}`}
        disabled={!model.trim()}
        onClick={use}
      >
        Use {server.name}
      </button>
    </li>
  );
}

/** Another app's servers, copied to Toolgate after a preview; the app's file is only read. */
function HostServers({ host }: { host: HostView }) {
  const [report, setReport] = useState<ImportReport | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const picks = useImportChoices();
  const source = { kind: "host" as const, host: host.id };
  return (
    <div className="row wrap" data-testid={`first-run-host-${host.id}`}>
      <span>
        {host.label} has an MCP config at <code>{host.path}</code>.
      </span>
      {!report && !done && (
        <button
          type="button"
          data-testid={`first-run-preview-${host.id}`}
          onClick={() =>
            previewImport(source).then(
              (r) => {
                setProblem(null);
                setReport(r);
                picks.reset(r);
              },
              (e) => setProblem(errorMessage(e)),
            )
          }
        >
          Use its servers here…
        </button>
      )}
      {report && (
        <div role="group" aria-label={`Servers of ${host.label}`} className="first-run-import">
          <ImportDetails report={report} picks={picks} />
          <div className="row">
            <button
              type="button"
              data-testid={`first-run-import-${host.id}`}
              disabled={report.added.length === 0}
              onClick={() =>
                applyImport(source, picks.choices(report)).then(
                  (r) => {
                    setReport(null);
                    setDone(`Added ${r.added.map((a) => a.name).join(", ")}; ${host.label} is unchanged.`);
                  },
                  (e) => setProblem(errorMessage(e)),
                )
              }
            >
              Add {report.added.length} server{report.added.length === 1 ? "" : "s"}
            </button>
            <button type="button" onClick={() => setReport(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {done && (
        <p className="ok small" role="status">
          {done}
        </p>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
