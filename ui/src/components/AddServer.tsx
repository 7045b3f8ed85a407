import { useEffect, useState } from "react";
import {
  applyImport,
  errorMessage,
  listServers,
  previewImport,
  type ImportChoices,
  type ImportReport,
  type ImportSource,
} from "../ipc";
import { ACTION_ICONS } from "../icons";
import { skipLabel } from "./ImportServers";
import { WithIcon } from "./WithIcon";

/** "KEY=value" lines into an object; blank lines and lines without "=" are reported. */
export function parsePairs(text: string, what: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(what === "header" ? ":" : "=");
    if (at <= 0) throw new Error(`"${line}" is not a ${what}: write it as ${what === "header" ? "Name: value" : "NAME=value"}`);
    pairs[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return pairs;
}

/** A command line split like a shell would for simple cases: spaces, and "quoted parts". */
export function splitCommand(line: string): string[] {
  const parts: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line)) !== null) parts.push(m[1] ?? m[2] ?? m[3]);
  return parts;
}

/** What the form starts with, e.g. a well-known server's entry for the user to check. */
export interface AddServerDraft {
  name: string;
  kind: "stdio" | "http";
  command: string;
  url: string;
  pairs: string;
}

/** A part still to be filled in, such as `<folder>`. */
const PLACEHOLDER = /<[^<>\s]+>/;

/** What adding is doing now: the command it waits on runs the server's first start. */
interface Adding {
  name: string;
  since: number;
}

/** The spinner and the step, in place while the server is added and started. */
function AddProgress({ adding, http }: { adding: Adding; http: boolean }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const secs = Math.max(0, Math.floor((now - adding.since) / 1000));
  return (
    <p className="progress row" role="status" data-testid="add-progress">
      <span className="spinner" aria-hidden="true" />
      <span>
        {http ? `Adding ${adding.name} and connecting to it…` : `Adding ${adding.name} and starting it…`}{" "}
        {!http && "A first start may install its package (npx, uvx), which can take a minute."}{" "}
        {secs > 0 && <span className="muted">({secs} s)</span>}
      </span>
    </p>
  );
}

/**
 * Adds one server from a form. It goes through the same import as a pasted snippet, so values
 * that look like secrets are offered for the keychain before anything is saved, and the exact
 * command (or address) is shown for the user to confirm before anything runs.
 */
export default function AddServer({
  onAdded,
  onDone,
  initial,
}: {
  /** Servers were added (whether or not they started). */
  onAdded?: (ids: string[]) => void;
  /** Everything added started (or connected): the form's work is done. */
  onDone?: () => void;
  initial?: AddServerDraft;
}) {
  const [name, setName] = useState(initial?.name ?? "");
  const [kind, setKind] = useState<"stdio" | "http">(initial?.kind ?? "stdio");
  const [command, setCommand] = useState(initial?.command ?? "");
  const [url, setUrl] = useState(initial?.url ?? "");
  const [pairs, setPairs] = useState(initial?.pairs ?? "");
  const [source, setSource] = useState<ImportSource | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const [moving, setMoving] = useState<Record<string, boolean>>({});
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [adding, setAdding] = useState<Adding | null>(null);

  const check = () => {
    setMessage(null);
    let entry: Record<string, unknown>;
    try {
      const unfilled = (kind === "stdio" ? command : `${url}\n${pairs}`).match(PLACEHOLDER) ?? pairs.match(PLACEHOLDER);
      if (unfilled) throw new Error(`Replace ${unfilled[0]} with your own value first.`);
      if (kind === "stdio") {
        const [program, ...args] = splitCommand(command);
        if (!program) throw new Error("Type the command that starts the server, e.g. npx -y @modelcontextprotocol/server-filesystem ~/notes");
        entry = { command: program, args, env: parsePairs(pairs, "variable") };
      } else {
        entry = { type: "http", url: url.trim(), headers: parsePairs(pairs, "header") };
      }
    } catch (e) {
      setMessage({ text: e instanceof Error ? e.message : String(e), error: true });
      return;
    }
    const from: ImportSource = { kind: "text", text: JSON.stringify(entry), name: name.trim() || null };
    previewImport(from).then(
      (r) => {
        setSource(from);
        setReport(r);
        setMoving(Object.fromEntries(r.secretCandidates.map((c) => [c.name, true])));
      },
      (e) => setMessage({ text: errorMessage(e), error: true }),
    );
  };

  const add = () => {
    if (!source || !report) return;
    const choices: ImportChoices = {
      inputs: {},
      moveSecrets: report.secretCandidates
        .filter((c) => moving[c.name])
        .map((c) => ({ serverId: c.serverId, location: c.location, name: c.name })),
    };
    setMessage(null);
    setAdding({ name: report.added.map((a) => a.name).join(", ") || "the server", since: Date.now() });
    // The command returns once the first start is over: ready, or failed.
    applyImport(source, choices)
      .then(async (r) => {
        const ids = r.added.map((a) => a.id);
        const now = await listServers().catch(() => null);
        const broken = (Array.isArray(now) ? now : []).filter(
          (s) => ids.includes(s.id) && (s.status.state === "failed" || s.status.state === "restarting"),
        );
        setReport(null);
        onAdded?.(ids);
        if (broken.length > 0) {
          // Added, but not working: said as the failure it is, with the server's own reason.
          setMessage({
            text: broken
              .map((s) => {
                const reason = "reason" in s.status ? `: ${s.status.reason}` : "";
                return `${s.name} was added but did not start${reason}. It is under Servers, where you can change its command or remove it.`;
              })
              .join(" "),
            error: true,
          });
          return;
        }
        setMessage({ text: `Added ${r.added.map((a) => a.name).join(", ") || "nothing"}.`, error: false });
        setCommand("");
        setUrl("");
        setPairs("");
        setName("");
        onDone?.();
      })
      .catch((e: unknown) => setMessage({ text: errorMessage(e), error: true }))
      .finally(() => setAdding(null));
  };

  return (
    <section className="add-server" data-testid="add-server" aria-label="Add a server with a form">
      <div className="form">
        <label htmlFor="add-name">Name</label>
        <input
          id="add-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="A name of your choice (optional)"
        />
        <label htmlFor="add-kind">How Toolgate reaches it</label>
        <select id="add-kind" value={kind} onChange={(e) => setKind(e.target.value as "stdio" | "http")}>
          <option value="stdio">A command on this computer (stdio)</option>
          <option value="http">A web address (Streamable HTTP)</option>
        </select>
        {kind === "stdio" ? (
          <>
            <label htmlFor="add-command">Command and arguments</label>
            <input
              id="add-command"
              spellCheck={false}
              value={command}
              onChange={(e) => setCommand(e.target.value)}
              placeholder="The program and its arguments, as the server's README gives them"
            />
          </>
        ) : (
          <>
            <label htmlFor="add-url">Address</label>
            <input id="add-url" spellCheck={false} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="The server's address, as its provider gives it" />
          </>
        )}
        <label htmlFor="add-pairs">
          {kind === "stdio" ? "Environment, one NAME=value per line" : "Headers, one Name: value per line"} (values may be
          ${"{"}secret:NAME{"}"})
        </label>
        <textarea id="add-pairs" rows={3} spellCheck={false} value={pairs} onChange={(e) => setPairs(e.target.value)} />
        <button type="button" data-testid="add-check" onClick={check}>
          Check
        </button>
        {report && (
          <div data-testid="add-report">
            {report.added.map((a) => (
              <div key={a.id}>
                <p>
                  Adds <strong>{a.name}</strong> as <code>{a.id}</code>.
                </p>
                {a.runs && (
                  <p className="confirm-command">
                    {a.transport === "stdio" ? "Toolgate will run this on your computer" : "Toolgate will connect to"}:{" "}
                    <code className="runs" data-testid="add-runs">
                      {a.runs}
                    </code>
                  </p>
                )}
              </div>
            ))}
            {report.skipped.map((s) => (
              <p key={s.name} className="error small">
                Not added: {skipLabel(s.reason)}
              </p>
            ))}
            {report.secretCandidates.map((c) => (
              <label key={c.name} className="row">
                <input
                  type="checkbox"
                  checked={moving[c.name] ?? false}
                  onChange={(e) => setMoving((m) => ({ ...m, [c.name]: e.target.checked }))}
                />
                Keep {c.name} in the OS keychain as <code>{`\${secret:${c.suggestedSecret}}`}</code>
              </label>
            ))}
            <div className="row">
              <button
                type="button"
                className="primary"
                data-testid="add-confirm"
                disabled={report.added.length === 0 || adding !== null}
                aria-busy={adding !== null}
                onClick={add}
              >
                <WithIcon icon={ACTION_ICONS.add}>{kind === "http" ? "Add and connect" : "Add and run it"}</WithIcon>
              </button>
              <button type="button" disabled={adding !== null} onClick={() => setReport(null)}>
                Change it
              </button>
            </div>
          </div>
        )}
        {adding && <AddProgress adding={adding} http={kind === "http"} />}
        {message && (
          <p role={message.error ? "alert" : "status"} className={message.error ? "error small" : "ok small"}>
            {message.text}
          </p>
        )}
      </div>
    </section>
  );
}
