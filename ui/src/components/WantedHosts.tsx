// Hosts a server in network "hosts" tried to reach and was refused: one question each, "allow
// once / always / deny". The host name comes from the server's own request: shown as text.
import { useState } from "react";
import { answerHost, errorMessage, type HostAnswer, type ServerSnapshot } from "../ipc";

/** The card's questions about hosts; nothing when none is waiting. */
export default function WantedHosts({ server }: { server: ServerSnapshot }) {
  const [problem, setProblem] = useState<string | null>(null);
  const wanted = server.wantedHosts ?? [];
  if (wanted.length === 0) return null;
  const answer = (host: string, choice: HostAnswer) => {
    setProblem(null);
    answerHost(server.id, host, choice).catch((e) => setProblem(errorMessage(e)));
  };
  return (
    <section className="wanted-hosts" data-testid="wanted-hosts" aria-label={`Hosts ${server.name} wants to reach`}>
      {wanted.map((host) => (
        <div key={host} className="row" role="group" aria-label={`${server.name} wants to reach ${host}`}>
          <p role="status" className="small">
            {server.name} wants to reach <strong>{host}</strong>; it was refused.
          </p>
          <button type="button" data-testid={`host-once-${host}`} onClick={() => answer(host, "once")}>
            Allow once
          </button>
          <button type="button" data-testid={`host-always-${host}`} onClick={() => answer(host, "always")}>
            Always
          </button>
          <button type="button" data-testid={`host-deny-${host}`} onClick={() => answer(host, "deny")}>
            Deny
          </button>
        </div>
      ))}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </section>
  );
}
