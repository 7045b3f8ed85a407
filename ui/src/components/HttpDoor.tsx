import { type FormEvent, useCallback, useEffect, useState } from "react";
import {
  addDoorToken,
  doorStatus,
  errorMessage,
  revokeDoorToken,
  setDoor,
  type DoorView,
  type IssuedToken,
} from "../ipc";

/**
 * The gateway's HTTP door, for hosts and containers that speak only HTTP: off unless switched
 * on, on this computer's loopback only. Each client needs a token, named after it; a token is
 * shown once, when it is issued, and can be revoked. The token's name is how the client is known
 * on approval cards and in the log, and picks its gateway profile.
 */
export default function HttpDoor() {
  const [door, setView] = useState<DoorView | null>(null);
  const [address, setAddress] = useState("");
  const [name, setName] = useState("");
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const show = useCallback((view: DoorView) => {
    setView(view);
    setAddress(view.address);
  }, []);
  useEffect(() => {
    doorStatus().then(show, (e) => setProblem(errorMessage(e)));
  }, [show]);

  const change = (enabled: boolean) => {
    setProblem(null);
    setDoor(enabled, address).then(show, (e) => setProblem(errorMessage(e)));
  };

  const issue = (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    addDoorToken(name.trim()).then(
      (token) => {
        setIssued(token);
        setName("");
        doorStatus().then(show, (e) => setProblem(errorMessage(e)));
      },
      (e) => setProblem(errorMessage(e)),
    );
  };

  const revoke = (client: string) => {
    setProblem(null);
    if (issued?.name === client) setIssued(null);
    revokeDoorToken(client).then(show, (e) => setProblem(errorMessage(e)));
  };

  return (
    <section className="card" aria-labelledby="door-heading" data-testid="door">
      <h3 id="door-heading">HTTP door</h3>
      <p className="muted small">
        For hosts and containers that speak only HTTP: MCP over Streamable HTTP on this computer only. Each client needs
        a token; its calls wait for your approval like any other host&apos;s.
      </p>
      {door && (
        <>
          <label className="row">
            <input
              type="checkbox"
              data-testid="door-enabled"
              checked={door.enabled}
              onChange={(e) => change(e.target.checked)}
            />
            Open the HTTP door
          </label>
          <div className="row">
            <label htmlFor="door-address">Address (loopback)</label>
            <input
              id="door-address"
              data-testid="door-address"
              value={address}
              spellCheck={false}
              onChange={(e) => setAddress(e.target.value)}
            />
            <button
              type="button"
              data-testid="door-save-address"
              disabled={address.trim() === door.address}
              onClick={() => change(door.enabled)}
            >
              Use this address
            </button>
          </div>
          <p className="small" role="status" data-testid="door-state">
            {door.listening ? (
              <>
                Listening at <code>{door.url}</code>
              </>
            ) : door.enabled ? (
              "Not listening."
            ) : (
              "Closed."
            )}
          </p>
          {door.problem && (
            <p className="error small" role="alert" data-testid="door-problem">
              {door.problem}
            </p>
          )}
          <h4>Clients</h4>
          {door.clients.length === 0 ? (
            <p className="muted small">No client holds a token.</p>
          ) : (
            <ul className="plain" aria-label="Clients holding a token">
              {door.clients.map((client) => (
                <li key={client} className="row spread" data-testid={`door-client-${client}`}>
                  <strong>{client}</strong>
                  <button type="button" aria-label={`Revoke the token of ${client}`} onClick={() => revoke(client)}>
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )}
          <form className="row" onSubmit={issue} aria-label="Issue a token">
            <label htmlFor="door-client-name">Client name</label>
            <input
              id="door-client-name"
              data-testid="door-client-name"
              value={name}
              placeholder="claude-web"
              spellCheck={false}
              onChange={(e) => setName(e.target.value)}
            />
            <button type="submit" data-testid="door-issue" disabled={name.trim() === ""}>
              Issue a token
            </button>
          </form>
          {issued && (
            <div role="group" aria-label={`The token of ${issued.name}`} data-testid="door-issued">
              <p className="small">
                Shown only now: give <strong>{issued.name}</strong> the address <code>{issued.url}</code> and the header{" "}
                <code>Authorization: Bearer</code> with this token.
              </p>
              <label htmlFor="door-token">Token</label>
              <input
                id="door-token"
                data-testid="door-token"
                readOnly
                value={issued.token}
                onFocus={(e) => e.target.select()}
              />
              <button type="button" onClick={() => setIssued(null)}>
                Done
              </button>
            </div>
          )}
        </>
      )}
      {problem && (
        <p className="error small" role="alert" data-testid="door-error">
          {problem}
        </p>
      )}
    </section>
  );
}
