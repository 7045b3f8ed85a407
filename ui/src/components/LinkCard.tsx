import { useState } from "react";
import type { Decision, PendingCall } from "../ipc";

interface Props {
  call: PendingCall & { link: { url: string; domain: string } };
  onAnswer: (decision: Decision) => Promise<void>;
}

/**
 * A server asks the user to open a page (a sign-in, a payment): the domain the browser will
 * reach comes first and large, then the server's words and the whole address as text. Nothing
 * here is a link: only "Open in browser" opens it, in the system browser, from the backend.
 */
export default function LinkCard({ call, onAnswer }: Props) {
  const [problem, setProblem] = useState<string | null>(null);
  const answer = (decision: Decision) => {
    setProblem(null);
    onAnswer(decision).catch((e: unknown) => setProblem(e instanceof Error ? e.message : String(e)));
  };
  return (
    <div
      className="tool-card waiting link-card"
      data-testid="link-card"
      role="group"
      aria-label={`${call.serverName} asks you to open a page on ${call.link.domain}`}
    >
      <header className="row spread">
        <span>
          <strong data-testid="approval-server">{call.serverName}</strong> asks you to open a page on
        </span>
        <span className="muted">Waiting for you</span>
      </header>
      <p className="link-domain" data-testid="link-domain">
        {call.link.domain}
      </p>
      {call.message && (
        // The server's words: text, never HTML.
        <p className="question" data-testid="approval-message">
          {call.message}
        </p>
      )}
      <p className="muted small">The whole address:</p>
      <code className="link-url" data-testid="link-url">
        {call.link.url}
      </code>
      {call.reason && (
        <p className="muted small" data-testid="approval-reason">
          {call.reason}
        </p>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      <div className="row wrap">
        <button type="button" data-testid="link-open" onClick={() => answer({ decision: "approve" })}>
          Open in browser
        </button>
        <button
          type="button"
          className="secondary"
          data-testid="link-decline"
          onClick={() => answer({ decision: "deny", reason: null })}
        >
          Don&apos;t open
        </button>
      </div>
    </div>
  );
}
