import { useEffect, useState } from "react";
import { errorMessage, serverConfig, updateServer, type JsonValue, type ServerConfig } from "../ipc";
import { parsePairs, splitCommand } from "./AddServer";
import { SignInForm, signInFields, signInSettings, type SignInFields } from "./SignInSettings";

/** The versions a server can be pinned to (`PROTOCOL_VERSIONS` in the settings crate). */
const PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

const quote = (part: string) => (/\s|"/.test(part) ? `'${part}'` : part);
const lines = (pairs: Record<string, string>, sep: string) =>
  Object.entries(pairs)
    .map(([k, v]) => `${k}${sep}${v}`)
    .join("\n");

/** Edits a server's launch settings; it restarts with them when saved. */
export default function EditServer({ serverId, onDone }: { serverId: string; onDone: () => void }) {
  const [config, setConfig] = useState<ServerConfig | null>(null);
  const [name, setName] = useState("");
  const [command, setCommand] = useState("");
  const [url, setUrl] = useState("");
  const [pairs, setPairs] = useState("");
  const [timeout, setTimeout_] = useState(60);
  const [protocol, setProtocol] = useState("");
  const [sendConversation, setSendConversation] = useState(false);
  const [contextKeys, setContextKeys] = useState("");
  const [signIn, setSignIn] = useState<SignInFields>(signInFields(null));
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    serverConfig(serverId).then(
      (c) => {
        setConfig(c);
        setName(c.name);
        setTimeout_(c.callTimeoutSecs);
        setProtocol(c.protocolVersion ?? "");
        setSendConversation(c.toolContext?.conversationId ?? false);
        const meta = c.toolContext?.meta ?? {};
        setContextKeys(Object.keys(meta).length > 0 ? JSON.stringify(meta, null, 2) : "");
        if (c.transport === "stdio") {
          setCommand([c.command, ...c.args].map(quote).join(" "));
          setPairs(lines(c.env, "="));
        } else {
          setUrl(c.url);
          setPairs(lines(c.headers, ": "));
          setSignIn(signInFields(c.oauth));
        }
      },
      (e) => setProblem(errorMessage(e)),
    );
  }, [serverId]);

  if (!config) return problem ? <p className="error small">{problem}</p> : null;
  const save = () => {
    setProblem(null);
    let next: ServerConfig;
    try {
      let meta: Record<string, JsonValue> = {};
      if (contextKeys.trim()) {
        try {
          meta = JSON.parse(contextKeys) as Record<string, JsonValue>;
        } catch {
          throw new Error('The tool context keys must be a JSON object, like {"example.com/tenant": "acme"}.');
        }
        if (typeof meta !== "object" || meta === null || Array.isArray(meta))
          throw new Error('The tool context keys must be a JSON object, like {"example.com/tenant": "acme"}.');
      }
      const base = {
        ...config,
        toolContext: { conversationId: sendConversation, meta },
        name: name.trim() || config.id,
        callTimeoutSecs: timeout,
        maxCallTimeoutSecs: Math.max(config.maxCallTimeoutSecs, timeout),
        protocolVersion: protocol || null,
      };
      if (config.transport === "stdio") {
        const [program, ...args] = splitCommand(command);
        if (!program) throw new Error("Type the command that starts the server.");
        next = { ...base, transport: "stdio", command: program, args, env: parsePairs(pairs, "variable"), cwd: config.cwd };
      } else {
        // "http" or "sse" (the older transport), kept as it was.
        next = {
          ...base,
          transport: config.transport,
          url: url.trim(),
          headers: parsePairs(pairs, "header"),
          oauth: signInSettings(signIn, config.oauth),
        };
      }
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
      return;
    }
    updateServer(serverId, next).then(onDone, (e) => setProblem(errorMessage(e)));
  };

  const id = (what: string) => `edit-${what}-${serverId}`;
  return (
    <div className="form edit-server" data-testid="edit-server">
      <label htmlFor={id("name")}>Name</label>
      <input id={id("name")} value={name} onChange={(e) => setName(e.target.value)} />
      {config.transport === "stdio" ? (
        <>
          <label htmlFor={id("command")}>Command and arguments</label>
          <input id={id("command")} spellCheck={false} value={command} onChange={(e) => setCommand(e.target.value)} />
        </>
      ) : (
        <>
          <label htmlFor={id("url")}>Address</label>
          <input id={id("url")} spellCheck={false} value={url} onChange={(e) => setUrl(e.target.value)} />
        </>
      )}
      <label htmlFor={id("pairs")}>
        {config.transport === "stdio" ? "Environment, one NAME=value per line" : "Headers, one Name: value per line"}
      </label>
      <textarea id={id("pairs")} rows={3} spellCheck={false} value={pairs} onChange={(e) => setPairs(e.target.value)} />
      <label htmlFor={id("timeout")}>Seconds a tool call may take (progress resets it)</label>
      <input
        id={id("timeout")}
        type="number"
        min={1}
        value={timeout}
        onChange={(e) => setTimeout_(Number(e.target.value))}
      />
      <label htmlFor={id("protocol")}>Protocol</label>
      <select id={id("protocol")} value={protocol} onChange={(e) => setProtocol(e.target.value)}>
        <option value="">Automatic: server/discover, then initialize</option>
        {PROTOCOL_VERSIONS.map((v) => (
          <option key={v} value={v}>
            {v} only ({v >= "2026-07-28" ? "server/discover" : "initialize"})
          </option>
        ))}
      </select>
      {config.transport !== "stdio" && <SignInForm id={id} fields={signIn} onChange={setSignIn} />}
      <fieldset className="tool-context">
        <legend>What each tool call tells this server (off unless set; never put a secret here)</legend>
        <label className="row">
          <input
            type="checkbox"
            id={id("conversation")}
            checked={sendConversation}
            onChange={(e) => setSendConversation(e.target.checked)}
          />
          Send the conversation&apos;s id
        </label>
        <label htmlFor={id("context")}>Other keys sent in _meta, as a JSON object</label>
        <textarea
          id={id("context")}
          rows={2}
          spellCheck={false}
          placeholder='{"example.com/tenant": "acme"}'
          value={contextKeys}
          onChange={(e) => setContextKeys(e.target.value)}
        />
      </fieldset>
      <div className="row">
        <button type="button" data-testid="save-server" onClick={save}>
          Save and restart
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
