import { useState } from "react";
import type { Decision, PendingCall } from "../ipc";

/**
 * A tool's result held for the user's review before the model (or a connected client) sees
 * it: pass it as it is, edit it (to take out what should not be seen; the model then gets the
 * edited text only), or withhold it.
 */
export default function ResultReview({
  call,
  waiting,
  onAnswer,
}: {
  call: PendingCall;
  waiting: boolean;
  onAnswer: (decision: Decision) => Promise<void>;
}) {
  const original = (call.arguments as { text?: string } | null)?.text ?? "";
  const [editing, setEditing] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const answer = (decision: Decision) => {
    setProblem(null);
    onAnswer(decision).catch((e: unknown) => setProblem(e instanceof Error ? e.message : String(e)));
  };
  const typing = (e: React.KeyboardEvent) =>
    e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
  const who = call.client ?? "the model";
  return (
    <div
      className={`tool-card ${waiting ? "waiting" : "done"}`}
      data-testid="result-review"
      role="group"
      aria-label={`Review the result of ${call.tool} on ${call.serverName} before ${who} sees it`}
      onKeyDown={(e) => {
        if (!waiting || typing(e)) return;
        if (e.key === "a") answer({ decision: "approve" });
        if (e.key === "d") answer({ decision: "deny", reason: reason || null });
        if (e.key === "e" && editing === null) setEditing(original);
      }}
    >
      <header className="row spread">
        <span>
          Result of <strong data-testid="approval-tool">{call.tool}</strong> on{" "}
          <span data-testid="approval-server">{call.serverName}</span>
          {call.client && <span className="muted"> for {call.client}</span>}
        </span>
        <span className="muted" data-testid="approval-state">
          {waiting ? `Waiting for your review before ${who} sees it` : "Reviewed"}
        </span>
      </header>
      {call.reason && (
        <p className="muted small" data-testid="approval-reason">
          {call.reason}
        </p>
      )}
      {call.message && <p className="muted small">{call.message}</p>}
      {editing === null ? (
        // The tool's output: text, never HTML.
        <pre className="result" data-testid="review-text">
          {original}
        </pre>
      ) : (
        <textarea
          aria-label="The result as the model will see it"
          data-testid="edit-result"
          rows={8}
          value={editing}
          onChange={(e) => setEditing(e.target.value)}
        />
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      {waiting && (
        <div className="row wrap">
          {editing === null ? (
            <>
              <button type="button" data-testid="pass-result" autoFocus aria-keyshortcuts="A" onClick={() => answer({ decision: "approve" })}>
                Pass it on <kbd aria-hidden="true">A</kbd>
              </button>
              <button type="button" data-testid="edit-result-button" aria-keyshortcuts="E" onClick={() => setEditing(original)}>
                Edit <kbd aria-hidden="true">E</kbd>
              </button>
            </>
          ) : (
            <>
              <button
                type="button"
                data-testid="pass-edited"
                onClick={() => answer({ decision: "approveEdited", arguments: { text: editing } })}
              >
                Pass the edited text
              </button>
              <button type="button" onClick={() => setEditing(null)}>
                Cancel edit
              </button>
            </>
          )}
          <input
            aria-label="Reason for withholding (optional)"
            placeholder="Reason (optional)"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
          <button
            type="button"
            data-testid="withhold-result"
            aria-keyshortcuts="D"
            onClick={() => answer({ decision: "deny", reason: reason || null })}
          >
            Withhold <kbd aria-hidden="true">D</kbd>
          </button>
        </div>
      )}
    </div>
  );
}
