import { memo, useCallback, useMemo, useRef, useState } from "react";
import EditServer from "./EditServer";
import HeldTools from "./HeldTools";
import InstalledVersion from "./InstalledVersion";
import WantedHosts from "./WantedHosts";
import SandboxPanel, { sandboxBadge } from "./SandboxPanel";
import { LockedNote, useManaged } from "./Managed";
import SignIn from "./SignIn";
import ServerLog from "./ServerLog";
import { Prompts, Resources } from "./ServerContents";
import { exampleValue, formFields, SchemaForm } from "./SchemaForm";
import Splitter from "./Splitter";
import { remember, remembered } from "../uiState";
import { ACTION_ICONS, SCREEN_ICONS } from "../icons";
import { ScreenHeading, WithIcon } from "./WithIcon";
import {
  callTool,
  errorMessage,
  removeServer,
  restartServer,
  setServerEnabled,
  setServerRoots,
  setToolEnabled,
  type ServerSnapshot,
  type ServerStatus,
  type ListedTool,
  type ToolCatalogView,
  type ToolInfo,
  type ToolOutput,
  type ToolState,
} from "../ipc";

/** How the model sees a tool: its name in the catalog, or why it is not offered. */
export function modelNameLabel(state: ToolState | undefined): string {
  if (!state) return "not offered (server not ready)";
  if (state.state === "visible") return `model sees: ${state.modelName}`;
  const reason = state.reason;
  switch (reason.kind) {
    case "serverDisabled":
      return "hidden: server disabled";
    case "disabledByUser":
      return "hidden: turned off";
    case "notIncluded":
      return "hidden: not in the include patterns";
    case "duplicateName":
      return "hidden: duplicate name on this server";
    case "excluded":
      return `hidden: excluded by ${reason.pattern}`;
  }
}

/** What a tool's line adds about its name: nothing when the model sees the tool's own name. */
export function modelNameNote(state: ToolState | undefined, tool: string): string | null {
  if (state?.state === "visible" && state.modelName === tool) return null;
  return modelNameLabel(state);
}

export function statusLabel(status: ServerStatus): string {
  switch (status.state) {
    case "failed":
      return `failed: ${status.reason}`;
    case "restarting":
      return `restarting (attempt ${status.attempt}) after: ${status.reason}`;
    case "signIn":
      return status.again ? "sign in again" : "sign in required";
    default:
      return status.state;
  }
}

/** Servers with more tools than this get a filter box above their list. */
const FILTER_FROM = 10;
/** Lists longer than this let the browser skip laying out the rows out of view. */
const LONG_LIST = 50;

/** A server's protocol era in a word: the 2026 `server/discover` one, or `initialize`. */
export function eraLabel(version: string | null): string | null {
  if (!version) return null;
  return version >= "2026-07-28" ? `${version} (discover)` : `${version} (initialize)`;
}

/** The server's last error in one line, if it has one. */
export function lastError(status: ServerStatus): string | null {
  const reason = status.state === "failed" || status.state === "restarting" ? status.reason : null;
  return reason ? (reason.split("\n").find((l) => l.trim()) ?? reason).trim() : null;
}

const LIST = { min: 200, max: 480, initial: 280 };

/** A server's state in a word or two, for its row in the list. */
const STATE_WORDS: Record<ServerStatus["state"], string> = {
  stopped: "stopped",
  starting: "starting",
  ready: "ready",
  restarting: "restarting",
  failed: "failed",
  signIn: "sign in required",
};

/**
 * Servers at a glance: a list (status, protocol era, tool count, last error) beside the
 * chosen server's card (its tools with switches and Try, resources, prompts, roots, log).
 */
export default function ServersPanel({
  servers,
  catalog,
  selected,
  onSelect,
  onAdd,
}: {
  servers: ServerSnapshot[];
  catalog: ToolCatalogView | null;
  /** The server shown in the detail pane; the first one when none is chosen. */
  selected?: string | null;
  onSelect?: (id: string) => void;
  onAdd?: () => void;
}) {
  const [chosen, setChosen] = useState<string | null>(null);
  const current = servers.find((s) => s.id === (selected ?? chosen)) ?? servers[0] ?? null;
  const [width, setWidth] = useState(() => remembered().panels?.servers ?? LIST.initial);
  const rows = useRef<(HTMLLIElement | null)[]>([]);
  const select = (id: string) => {
    setChosen(id);
    onSelect?.(id);
  };
  // The list is one stop for Tab; the arrows, Home and End choose another server.
  const onKey = (e: React.KeyboardEvent, index: number) => {
    const last = servers.length - 1;
    const to =
      e.key === "ArrowDown"
        ? Math.min(index + 1, last)
        : e.key === "ArrowUp"
          ? Math.max(index - 1, 0)
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? last
              : null;
    if (to === null) return;
    e.preventDefault();
    select(servers[to].id);
    rows.current[to]?.focus();
  };
  return (
    <div className="servers-screen">
      <header className="screen-header row spread">
        <ScreenHeading icon={SCREEN_ICONS.servers}>Servers</ScreenHeading>
        <div className="row">
          {catalog?.budget && (
            <span className="muted small" data-testid="tool-budget">
              {catalog.budget.tools} of {catalog.budget.limit} tools offered to the model, about{" "}
              {catalog.budget.estimatedTokens} tokens per request
            </span>
          )}
          <button type="button" className="primary" data-testid="add-server-button" onClick={onAdd}>
            <WithIcon icon={ACTION_ICONS.add}>Add server</WithIcon>
          </button>
        </div>
      </header>
      {catalog?.problem && (
        <p className="error" role="alert" data-testid="tool-problem">
          {catalog.problem}
        </p>
      )}
      {servers.length === 0 ? (
        <p className="muted empty">
          No MCP servers are configured.{" "}
          <button type="button" className="link" onClick={onAdd}>
            Add one
          </button>
        </p>
      ) : (
        <div className="master-detail" style={{ gridTemplateColumns: `${width}px auto minmax(0, 1fr)` }}>
          <ul role="listbox" aria-label="Servers" className="server-list" data-testid="server-list">
            {servers.map((s, i) => {
              const error = lastError(s.status);
              const era = eraLabel(s.protocolVersion);
              const isCurrent = s.id === current?.id;
              return (
                <li
                  key={s.id}
                  ref={(el) => {
                    rows.current[i] = el;
                  }}
                  role="option"
                  aria-selected={isCurrent}
                  tabIndex={isCurrent ? 0 : -1}
                  data-testid={`server-row-${s.id}`}
                  className="server-row"
                  onClick={() => select(s.id)}
                  onKeyDown={(e) => onKey(e, i)}
                >
                  <span className={`dot ${s.enabled ? s.status.state : "off"}`} aria-hidden="true" />
                  <span className="server-row-main">
                    <span className="row spread">
                      <strong>{s.name}</strong>
                      <span className="muted small">
                        {s.tools.length} {s.tools.length === 1 ? "tool" : "tools"}
                      </span>
                    </span>
                    <span className="muted small" data-testid="server-row-status">
                      {s.enabled ? STATE_WORDS[s.status.state] : "switched off"}
                      {era && ` · MCP ${era}`}
                    </span>
                    {error && (
                      <span className="error small one-line" title={error} data-testid="server-row-error">
                        {error}
                      </span>
                    )}
                  </span>
                </li>
              );
            })}
          </ul>
          <Splitter
            label="Resize the server list"
            width={width}
            min={LIST.min}
            max={LIST.max}
            onChange={(w) => {
              setWidth(w);
              remember("panels", { ...remembered().panels, servers: w });
            }}
          />
          <div className="server-detail">
            {/* Keyed by the server: another server starts with its own form state. */}
            {current && <ServerCard key={current.id} server={current} catalog={catalog} />}
          </div>
        </div>
      )}
    </div>
  );
}

function ServerCard({
  server,
  catalog,
}: {
  server: ServerSnapshot;
  catalog: ToolCatalogView | null;
}) {
  // One pass over the catalog, not one search per tool: a server may have a thousand tools.
  const states = useMemo(() => {
    const map = new Map<string, ListedTool>();
    for (const t of catalog?.tools ?? []) {
      if (t.serverId === server.id && !map.has(t.tool.name)) map.set(t.tool.name, t);
    }
    return map;
  }, [catalog, server.id]);
  const [tool, setTool] = useState<ToolInfo | null>(null);
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const shown = useMemo(
    () =>
      needle
        ? server.tools.filter(
            (t) =>
              t.name.toLowerCase().includes(needle) ||
              (t.title ?? "").toLowerCase().includes(needle) ||
              t.description.toLowerCase().includes(needle),
          )
        : server.tools,
    [server.tools, needle],
  );
  const filterId = `tool-filter-${server.id}`;
  const [showLog, setShowLog] = useState(false);
  const [editing, setEditing] = useState(false);
  const [removing, setRemoving] = useState(false);
  // The organisation's own servers cannot be removed or switched off here.
  const required = useManaged()?.requiredServers.includes(server.id) ?? false;
  const [problem, setProblem] = useState<string | null>(null);
  const [roots, setRoots] = useState(server.roots.join("\n"));
  const [rootsNotice, setRootsNotice] = useState<string | null>(null);
  const badge = sandboxBadge(server.sandbox);
  const act = (op: () => Promise<void>) => {
    setProblem(null);
    op().catch((e: unknown) => setProblem(errorMessage(e)));
  };
  const toggleTool = useCallback(
    (name: string, enabled: boolean) =>
      setToolEnabled(server.id, name, enabled).catch((e: unknown) => setProblem(errorMessage(e))),
    [server.id],
  );
  return (
    <article className="card" data-testid={`server-${server.id}`}>
      <header className="row spread">
        <h3>{server.name}</h3>
        <span className="row">
          {badge && (
            <span className={`badge small ${badge.tone}`} data-testid="sandbox-badge">
              {badge.text}
            </span>
          )}
          <span className={`badge ${server.status.state}`} data-testid="server-status">
            {statusLabel(server.status)}
          </span>
        </span>
      </header>
      <div className="row">
        <span className="muted">{server.tools.length} tools</span>
        {server.protocolVersion && (
          <span
            className="muted small"
            data-testid="server-era"
            title={server.protocolVersion >= "2026-07-28" ? "server/discover" : "initialize"}
          >
            MCP {server.protocolVersion}
          </span>
        )}
        <label className="row small">
          <input
            type="checkbox"
            data-testid="server-enabled"
            checked={server.enabled}
            disabled={required}
            onChange={(e) => act(() => setServerEnabled(server.id, e.target.checked))}
          />
          Enabled
        </label>
        <button type="button" aria-label={`Restart ${server.name}`} onClick={() => act(() => restartServer(server.id))}>
          <WithIcon icon={ACTION_ICONS.restart}>Restart</WithIcon>
        </button>
        <button
          type="button"
          data-testid="edit-server-button"
          aria-expanded={editing}
          aria-label={`Edit ${server.name}`}
          onClick={() => setEditing(!editing)}
        >
          Edit
        </button>
        <button
          type="button"
          aria-expanded={showLog}
          data-testid="show-log"
          aria-label={`${showLog ? "Hide" : "Show"} the log of ${server.name}`}
          onClick={() => setShowLog(!showLog)}
        >
          {showLog ? "Hide log" : "Log"}
        </button>
        {required ? (
          <LockedNote testId="server-required" />
        ) : removing ? (
          <>
            <button
              type="button"
              className="danger"
              data-testid="confirm-remove"
              aria-label={`Really remove ${server.name}`}
              onClick={() => act(() => removeServer(server.id))}
            >
              Remove {server.name} and its rules
            </button>
            <button type="button" onClick={() => setRemoving(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" aria-label={`Remove ${server.name}`} onClick={() => setRemoving(true)}>
            Remove
          </button>
        )}
      </div>
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      {/* Slot: a local server's sandbox (issue 16) is shown here too, between the server's
          actions and its contents, beside the sign-in state. */}
      <SignIn server={server} />
      {server.refusedTools.length > 0 && (
        <ul className="small" data-testid="refused-tools" aria-label={`Tools of ${server.name} that Toolgate refuses`}>
          {server.refusedTools.map((t) => (
            <li key={t.name}>
              <code>{t.name}</code> refused: {t.reason}
            </li>
          ))}
        </ul>
      )}
      <InstalledVersion server={server} />
      <HeldTools server={server} />
      <WantedHosts server={server} />
      {editing && <EditServer serverId={server.id} onDone={() => setEditing(false)} />}
      {showLog && <ServerLog serverId={server.id} />}
      <SandboxPanel server={server} />
      <details className="roots">
        <summary>Folders it may work in ({server.roots.length})</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const list = roots
              .split("\n")
              .map((r) => r.trim())
              .filter(Boolean);
            setProblem(null);
            setRootsNotice(null);
            setServerRoots(server.id, list).then(setRootsNotice, (e: unknown) => setProblem(errorMessage(e)));
          }}
        >
          <label htmlFor={`roots-${server.id}`}>One absolute folder per line (offered as the server&apos;s roots)</label>
          <textarea id={`roots-${server.id}`} rows={3} value={roots} onChange={(e) => setRoots(e.target.value)} />
          <button type="submit">Save folders</button>
          {rootsNotice && (
            <p className="muted small" role="status" data-testid="roots-notice">
              {rootsNotice}
            </p>
          )}
        </form>
      </details>
      {server.tools.length > FILTER_FROM && (
        <div className="row tool-filter" role="search">
          <label htmlFor={filterId} className="small">
            Filter tools
          </label>
          <input
            id={filterId}
            type="search"
            data-testid="tool-filter"
            placeholder="Name or description"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
          />
          {needle && (
            <span className="muted small" role="status">
              {shown.length} of {server.tools.length}
            </span>
          )}
        </div>
      )}
      {/* Containment only pays off for long lists (see styles.css). */}
      <ul className={shown.length > LONG_LIST ? "tools long" : "tools"} aria-label={`Tools of ${server.name}`}>
        {shown.map((t, i) => (
          <ToolRow
            key={`${i}:${t.name}`}
            tool={t}
            state={states.get(t.name)?.state}
            imitates={states.get(t.name)?.imitates}
            chosen={tool?.name === t.name}
            onChoose={setTool}
            onToggle={toggleTool}
          />
        ))}
      </ul>
      <Resources serverId={server.id} serverName={server.name} resources={server.resources ?? []} />
      <Prompts serverName={server.name} prompts={server.prompts ?? []} />
      {/* Keyed by the tool: choosing another tool starts from its own example arguments. */}
      {tool && <TryTool key={tool.name} serverId={server.id} tool={tool} />}
    </article>
  );
}


/** One tool in a server's list; only the rows whose props change render again. */
const ToolRow = memo(function ToolRow({
  tool,
  state,
  chosen,
  onChoose,
  onToggle,
  imitates,
}: {
  tool: ToolInfo;
  state: ToolState | undefined;
  imitates?: string;
  chosen: boolean;
  onChoose: (tool: ToolInfo) => void;
  onToggle: (name: string, enabled: boolean) => void;
}) {
  const turnedOff = state?.state === "hidden" && state.reason.kind === "disabledByUser";
  return (
    <li>
      <input
        type="checkbox"
        data-testid={`tool-toggle-${tool.name}`}
        aria-label={`Offer ${tool.name} to the model`}
        checked={!turnedOff}
        onChange={(e) => onToggle(tool.name, e.target.checked)}
      />
      <button
        type="button"
        className="link"
        data-testid={`tool-${tool.name}`}
        aria-pressed={chosen}
        onClick={() => onChoose(tool)}
      >
        {tool.name}
      </button>
      {tool.readOnly && <span className="badge small">read-only</span>}
      {tool.destructive && <span className="badge small danger">destructive</span>}
      {modelNameNote(state, tool.name) && (
        <span className="muted" data-testid={`model-name-${tool.name}`}>
          ({modelNameNote(state, tool.name)})
        </span>
      )}
      {imitates && (
        <span className="badge small danger" data-testid={`imitates-${tool.name}`}>
          named like a tool of server {imitates}
        </span>
      )}
      <span className="muted description"> {tool.description}</span>
    </li>
  );
});

/** Arguments to start from: each property's default, first example, first choice, or an empty value. */
function exampleArguments(tool: ToolInfo): string {
  const schema = tool.inputSchema;
  const props = schema && typeof schema === "object" && !Array.isArray(schema) ? schema.properties : undefined;
  const example: Record<string, unknown> = {};
  if (props && typeof props === "object" && !Array.isArray(props)) {
    for (const [name, schema] of Object.entries(props)) example[name] = exampleValue(schema);
  }
  return JSON.stringify(example, null, 2);
}

function TryTool({ serverId, tool }: { serverId: string; tool: ToolInfo }) {
  const [args, setArgs] = useState(() => exampleArguments(tool));
  // Fields for flat schemas; the JSON below stays what is sent, and editing either updates the other.
  const fields = useMemo(() => formFields(tool.inputSchema), [tool.inputSchema]);
  const [output, setOutput] = useState<ToolOutput | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    setError(null);
    setOutput(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch (e) {
      setError(`The arguments are not valid JSON: ${errorMessage(e)}`);
      return;
    }
    setBusy(true);
    try {
      setOutput(await callTool(serverId, tool.name, parsed));
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="try">
      {tool.description && (
        <p className="muted small tool-description" data-testid="try-description">
          {tool.description}
        </p>
      )}
      {fields === null ? (
        <p className="muted small" data-testid="try-json-only">
          These arguments are nested or too rich for simple fields; type them as JSON.
        </p>
      ) : (
        fields.length > 0 && (
          <SchemaForm fields={fields} text={args} onText={setArgs} legend={`Arguments for ${tool.name}`} />
        )
      )}
      <label htmlFor={`args-${serverId}`}>Arguments for {tool.name} (JSON)</label>
      <textarea
        id={`args-${serverId}`}
        data-testid="try-arguments"
        value={args}
        rows={5}
        spellCheck={false}
        onChange={(e) => setArgs(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) run();
        }}
      />
      <button type="button" data-testid="try-call" onClick={run} disabled={busy}>
        {busy ? "Calling…" : "Call tool"}
      </button>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {output && (
        // Tool output is untrusted: shown as text, never as HTML.
        <pre data-testid="try-result" className={output.isError ? "result error" : "result"}>
          {output.text}
        </pre>
      )}
    </div>
  );
}
