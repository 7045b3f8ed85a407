// Tools held since they changed (or appeared): what you accepted beside what the server says
// now, and Accept. Everything shown here is the server's own text: untrusted, shown as text.
import { useState } from "react";
import { acceptToolChanges, errorMessage, type ServerSnapshot, type ToolText } from "../ipc";

function Side({ label, text }: { label: string; text: ToolText | null }) {
  return (
    <div className="tool-text">
      <strong className="small">{label}</strong>
      {text ? (
        <>
          <pre className="small">{text.description}</pre>
          <p className="muted small">
            {[
              text.readOnly && "read-only",
              text.destructive && "destructive",
              text.idempotent && "idempotent",
              text.openWorld && "reaches outside",
            ]
              .filter(Boolean)
              .join(", ") || "no hints"}
          </p>
          <pre className="small">{JSON.stringify(text.inputSchema, null, 2)}</pre>
        </>
      ) : (
        <p className="muted small">A new tool: nothing was accepted before.</p>
      )}
    </div>
  );
}

/** The held tools on a server's card; nothing when none is held. */
export default function HeldTools({ server }: { server: ServerSnapshot }) {
  const [problem, setProblem] = useState<string | null>(null);
  const held = server.heldTools ?? [];
  if (held.length === 0) return null;
  const accept = (tools: string[] | null) => {
    setProblem(null);
    acceptToolChanges(server.id, tools).catch((e) => setProblem(errorMessage(e)));
  };
  return (
    <section className="held-tools" data-testid="held-tools" aria-label={`Tools of ${server.name} held since they changed`}>
      <p role="status">
        {held.length === 1 ? "1 tool is" : `${held.length} tools are`} held: {server.name} changed{" "}
        {held.length === 1 ? "it" : "them"} since you accepted its tools. Neither the model nor a connected app can use
        {held.length === 1 ? " it" : " them"} until you accept.
      </p>
      {held.map((change) => (
        <details key={change.name} open={held.length === 1}>
          <summary>
            <code>{change.name}</code> {change.before ? "changed" : "is new"}
          </summary>
          <div className="side-by-side">
            <Side label="Accepted" text={change.before} />
            <Side label="Now" text={change.after} />
          </div>
          <button type="button" data-testid={`accept-${change.name}`} onClick={() => accept([change.name])}>
            Accept {change.name}
          </button>
        </details>
      ))}
      {held.length > 1 && (
        <button type="button" data-testid="accept-all" onClick={() => accept(null)}>
          Accept all {held.length}
        </button>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </section>
  );
}
