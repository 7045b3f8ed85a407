import { useEffect, useState } from "react";
import {
  errorMessage,
  serverConfig,
  setServerSandbox,
  setServerTrust,
  type NetworkAccess,
  type SandboxReport,
  type ServerSnapshot,
  type TrustMarks,
} from "../ipc";
import { LockedNote, beyondNetwork, useManaged } from "./Managed";

const NETWORK: { value: NetworkAccess; label: string }[] = [
  { value: "none", label: "None: no sockets at all" },
  { value: "loopback", label: "This computer only (127.0.0.1, ::1)" },
  { value: "hosts", label: "Only the hosts listed below (through Toolgate's proxy)" },
  { value: "any", label: "Any: the internet too" },
];

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

/** A short word for the card's header: how confined the server is. */
export function sandboxBadge(report: SandboxReport | null | undefined): { text: string; tone: string } | null {
  if (!report) return null;
  if (!report.enabled) return { text: "unconfined", tone: "danger" };
  if (report.warnings.length > 0) return { text: "sandbox: not fully enforced", tone: "warning" };
  return { text: `sandboxed · network ${report.network}`, tone: "ok" };
}

/**
 * A server's sandbox on its card: what it may change and read, how far it reaches, what is not
 * enforced (as an alert), and the controls to change it; then what the gate should know of it
 * (untrusted output, a way out, results to review).
 */
export default function SandboxPanel({ server }: { server: ServerSnapshot }) {
  const report = server.sandbox ?? null;
  const [problem, setProblem] = useState<string | null>(null);
  const managed = useManaged();
  const sandboxLocked = managed?.locks.sandbox === true;
  const [notice, setNotice] = useState<string | null>(null);
  const [enabled, setEnabled] = useState(report?.enabled ?? true);
  const [network, setNetwork] = useState<NetworkAccess>(report?.network ?? "none");
  const [read, setRead] = useState("");
  const [write, setWrite] = useState("");
  const [hosts, setHosts] = useState("");
  const [privateAddresses, setPrivateAddresses] = useState(false);
  const [stored, setStored] = useState<TrustMarks>({});
  const [untrusted, setUntrusted] = useState<boolean | null>(null);
  const [sendsOut, setSendsOut] = useState<boolean | null>(null);
  const [acceptChanges, setAcceptChanges] = useState<boolean | null>(null);
  const [scanSecrets, setScanSecrets] = useState<boolean | null>(null);
  const [review, setReview] = useState((server.reviewResults ?? []).filter((t) => t !== "*").join(", "));
  const [reviewAll, setReviewAll] = useState((server.reviewResults ?? []).includes("*"));
  const id = server.id;

  // The user's own extra folders and marks, as stored (the report mixes in what is derived),
  // read when the section is first opened rather than for every card on the tab.
  const [opened, setOpened] = useState(false);
  useEffect(() => {
    if (!opened) return;
    serverConfig(id).then(
      (config) => {
        if (!config) return;
        setRead((config.sandbox?.read ?? []).join("\n"));
        setWrite((config.sandbox?.write ?? []).join("\n"));
        setHosts((config.sandbox?.hosts ?? []).join("\n"));
        setPrivateAddresses(config.sandbox?.privateAddresses ?? false);
        setStored(config.trust ?? {});
      },
      () => undefined,
    );
  }, [id, opened]);

  const run = (op: () => Promise<string | null | void>) => {
    setProblem(null);
    setNotice(null);
    op().then(
      (said) => setNotice(typeof said === "string" ? said : "Saved."),
      (e: unknown) => setProblem(errorMessage(e)),
    );
  };

  const saveSandbox = () =>
    run(() =>
      setServerSandbox(id, {
        enabled,
        network,
        read: lines(read),
        write: lines(write),
        hosts: lines(hosts),
        privateAddresses,
      }),
    );

  const saveTrust = () => {
    const tools = review
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    // A mark the user did not touch keeps what it was (absent: the default for the server).
    const trust: TrustMarks = {
      readsUntrusted: untrusted ?? stored.readsUntrusted ?? null,
      sendsOut: sendsOut ?? stored.sendsOut ?? null,
      reviewResults: reviewAll ? ["*"] : tools,
      acceptToolChanges: acceptChanges ?? stored.acceptToolChanges ?? false,
      // Absent means on: only an explicit choice is saved.
      scanSecrets: scanSecrets ?? stored.scanSecrets ?? null,
    };
    run(() => setServerTrust(id, trust));
  };

  return (
    <>
      {/* Always on the card, not folded away: what this server can do that was not asked for. */}
      {report && report.warnings.length > 0 && (
        <ul
          className="error small sandbox-warnings"
          role="alert"
          data-testid="sandbox-warnings"
          aria-label={`Sandbox warnings for ${server.name}`}
        >
          {report.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
      <details className="sandbox" data-testid="sandbox" onToggle={(e) => e.currentTarget.open && setOpened(true)}>
        <summary>
          {report
            ? report.enabled
              ? report.warnings.length > 0
                ? `Sandbox: on, not fully enforced (${report.mechanism})`
                : `Sandbox: on (${report.mechanism})`
              : "Sandbox: off"
            : "What the gate knows of it"}
        </summary>
        {report && report.enabled && (
          <div className="small" data-testid="sandbox-report">
            <p>
              Network: <strong>{report.network}</strong>
              {report.defaults && <span className="muted"> (the defaults for this server)</span>}
            </p>
            <p>May change: {report.writable.length ? report.writable.join(", ") : "nothing but its temporary folder"}</p>
            <p className="muted">
              May read the system folders
              {report.readable.length ? `, and ${report.readable.join(", ")}` : ""}; nothing else of your home folder.
            </p>
          </div>
        )}
        {report && (
          <form
            className="sandbox-form"
            onSubmit={(e) => {
              e.preventDefault();
              saveSandbox();
            }}
          >
            <label className="row small">
              <input
                type="checkbox"
                data-testid="sandbox-enabled"
                checked={enabled}
                disabled={sandboxLocked && enabled}
                onChange={(e) => setEnabled(e.target.checked)}
              />
              Confine this server
              {sandboxLocked && <LockedNote testId="sandbox-locked" />}
            </label>
            <label htmlFor={`network-${id}`} className="small">
              Network
            </label>
            <select
              id={`network-${id}`}
              data-testid="sandbox-network"
              value={network}
              disabled={!enabled}
              onChange={(e) => setNetwork(e.target.value as NetworkAccess)}
            >
              {NETWORK.map((n) => (
                <option key={n.value} value={n.value} disabled={beyondNetwork(managed, n.value)}>
                  {n.label}
                  {beyondNetwork(managed, n.value) ? " (not allowed by your organisation)" : ""}
                </option>
              ))}
            </select>
            {network === "hosts" && (
              <>
                <label htmlFor={`sandbox-hosts-${id}`} className="small">
                  Hosts it may reach (one per line: api.github.com, or *.notion.so for every name under it)
                </label>
                <textarea
                  id={`sandbox-hosts-${id}`}
                  data-testid="sandbox-hosts"
                  rows={2}
                  value={hosts}
                  onChange={(e) => setHosts(e.target.value)}
                />
                <label className="row small">
                  <input
                    type="checkbox"
                    data-testid="sandbox-private"
                    checked={privateAddresses}
                    onChange={(e) => setPrivateAddresses(e.target.checked)}
                  />
                  A listed name may lead into your local network (private and loopback addresses)
                </label>
              </>
            )}
            <label htmlFor={`sandbox-read-${id}`} className="small">
              Other folders it may read (one per line)
            </label>
            <textarea id={`sandbox-read-${id}`} rows={2} value={read} onChange={(e) => setRead(e.target.value)} />
            <label htmlFor={`sandbox-write-${id}`} className="small">
              Other folders it may change (one per line; its roots always)
            </label>
            <textarea id={`sandbox-write-${id}`} rows={2} value={write} onChange={(e) => setWrite(e.target.value)} />
            <div className="row">
              <button type="submit" data-testid="save-sandbox">
                Save sandbox (restarts it)
              </button>
              <button type="button" data-testid="sandbox-defaults" onClick={() => run(() => setServerSandbox(id, null))}>
                Use the defaults
              </button>
            </div>
          </form>
        )}
        <fieldset className="trust">
          <legend className="small">What the approval gate should know</legend>
          <label className="row small">
            <input
              type="checkbox"
              data-testid="trust-untrusted"
              checked={untrusted ?? server.readsUntrusted ?? false}
              onChange={(e) => setUntrusted(e.target.checked)}
            />
            Its results can carry untrusted text (web pages, mail, issues)
          </label>
          <p className="muted small">
            Once a chat has read such a result, calls that can send data out are asked even where a rule allows them.
          </p>
          <label className="row small">
            <input
              type="checkbox"
              data-testid="trust-sends-out"
              checked={sendsOut ?? server.sendsOut ?? false}
              onChange={(e) => setSendsOut(e.target.checked)}
            />
            Its calls can send data out of this computer
          </label>
          <label className="row small">
            <input
              type="checkbox"
              data-testid="trust-scan-secrets"
              checked={scanSecrets ?? stored.scanSecrets ?? true}
              onChange={(e) => setScanSecrets(e.target.checked)}
            />
            Keep secrets out of its calls and results
          </label>
          <p className="muted small">
            On: a call whose arguments carry what looks like a key, token or private key is asked even where a rule
            allows it, and such values are removed from its results before the model sees them.
          </p>
          <label className="row small">
            <input
              type="checkbox"
              data-testid="trust-accept-changes"
              checked={acceptChanges ?? stored.acceptToolChanges ?? false}
              onChange={(e) => setAcceptChanges(e.target.checked)}
            />
            Accept its tools&apos; changes without showing them to me
          </label>
          <p className="muted small">
            Off: a tool whose description, inputs or hints change, or a new tool, waits on this card until you accept it.
          </p>
          <label className="row small">
            <input
              type="checkbox"
              data-testid="review-all"
              checked={reviewAll}
              onChange={(e) => setReviewAll(e.target.checked)}
            />
            Review every result before the model sees it
          </label>
          <label htmlFor={`review-${id}`} className="small">
            Or review the results of these tools (names, comma-separated)
          </label>
          <input
            id={`review-${id}`}
            data-testid="review-tools"
            value={review}
            disabled={reviewAll}
            onChange={(e) => setReview(e.target.value)}
          />
          <button type="button" data-testid="save-trust" onClick={saveTrust}>
            Save
          </button>
        </fieldset>
        {problem && (
          <p className="error small" role="alert">
            {problem}
          </p>
        )}
        {notice && (
          <p className="muted small" role="status" data-testid="sandbox-notice">
            {notice}
          </p>
        )}
      </details>
    </>
  );
}
