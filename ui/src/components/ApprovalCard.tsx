import { useState } from "react";
import type { PendingCall } from "../ipc";

interface Props {
  call: PendingCall;
  state: "waiting" | "running" | "done" | "failed" | "denied";
  output?: string;
  /** The latest progress a running call reported. */
  progress?: string;
  onAnswer: (approve: boolean, reason: string | null) => void;
}

const STATE_LABEL = {
  waiting: "Waiting for your approval",
  running: "Running…",
  done: "Done",
  failed: "Failed",
  denied: "Denied",
};

/** A tool call held at the gate: what will run, where, with which arguments, and the answer. */
export default function ApprovalCard({ call, state, output, progress, onAnswer }: Props) {
  const [reason, setReason] = useState("");
  return (
    <div
      className={`tool-card ${state}`}
      data-testid="approval-card"
      onKeyDown={(e) => {
        if (state !== "waiting" || e.target instanceof HTMLInputElement) return;
        if (e.key === "a") onAnswer(true, null);
        if (e.key === "d") onAnswer(false, reason || null);
      }}
    >
      <header className="row spread">
        <span>
          <strong data-testid="approval-tool">{call.tool}</strong> on{" "}
          <span data-testid="approval-server">{call.serverName}</span>
          {call.readOnly && <span className="badge small">read-only</span>}
          {call.destructive && <span className="badge small danger">destructive</span>}
        </span>
        <span className="muted" data-testid="approval-state">
          {STATE_LABEL[state]}
        </span>
      </header>
      <pre data-testid="approval-arguments">{JSON.stringify(call.arguments, null, 2)}</pre>
      {state === "waiting" && (
        <div className="row">
          <button type="button" data-testid="approve" autoFocus onClick={() => onAnswer(true, null)}>
            Approve <kbd>A</kbd>
          </button>
          <input
            aria-label="Reason for denying (optional)"
            placeholder="Reason (optional)"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
          <button type="button" data-testid="deny" onClick={() => onAnswer(false, reason || null)}>
            Deny <kbd>D</kbd>
          </button>
        </div>
      )}
      {state === "running" && progress && (
        <p className="muted small" data-testid="tool-progress">
          {progress}
        </p>
      )}
      {output !== undefined && (
        // Tool output is untrusted: shown as text, never as HTML.
        <pre className="result" data-testid="tool-output">
          {output}
        </pre>
      )}
    </div>
  );
}
