import { Eye, ShieldAlert, TriangleAlert } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { errorMessage, revealResult, type Decision, type JsonValue, type PendingCall, type ShownImage } from "../ipc";
import { timeLeft } from "../approval";
import { BADGE_ICON_SIZE, ICON_SIZE } from "../icons";
import { ResultImages } from "./Images";
import ResultReview from "./ResultReview";
import { formFields, SchemaForm } from "./SchemaForm";

interface Props {
  call: PendingCall;
  state: "waiting" | "running" | "done" | "failed" | "denied";
  output?: string;
  /** The result's images. */
  images?: ShownImage[];
  /** The latest progress a running call reported. */
  progress?: string;
  /** Answers the call; rejects with a message (e.g. edited arguments that do not fit). */
  onAnswer: (decision: Decision) => Promise<void>;
  /** Who asks, in words ("this chat's model, claude-sonnet-4-5"); a connected app is `call.client`. */
  asker?: string;
  /** What the tool does, as its server describes it (shown as text). */
  description?: string | null;
  /** When the gate denies the call if nobody answers (Unix milliseconds). */
  deadline?: number | null;
  /** What happened once it was decided ("Approved by you", "Rule created: …", "Timed out …"). */
  outcome?: string;
}

/** How long is left before the gate denies the call, ticking every second. */
function Countdown({ deadline }: { deadline: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = deadline - now;
  return (
    // A timer is not read out on every tick (role=timer is not live by default).
    <span className={`muted small${left < 60_000 ? " soon" : ""}`} role="timer" data-testid="approval-deadline">
      {left > 0 ? `Denied in ${timeLeft(left)} if not answered` : "Timed out: denied"}
    </span>
  );
}

const STATE_LABEL = {
  waiting: "Waiting for your approval",
  running: "Running…",
  done: "Done",
  failed: "Failed",
  denied: "Denied",
};

/** A tool call held at the gate: what will run, where, with which arguments, and the answer. */
const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** A request held at the gate; a result held for review has a card of its own. */
export default function ApprovalCard(props: Props) {
  if (props.call.request === "toolResult") {
    return <ResultReview call={props.call} waiting={props.state === "waiting"} onAnswer={props.onAnswer} />;
  }
  return <CallCard {...props} />;
}

function CallCard({ call, state, output, images, progress, onAnswer, asker, description, deadline, outcome }: Props) {
  const kind = call.request ?? "toolCall";
  // A server's question is answered by typing: its answer is open for editing from the start.
  const question = kind === "elicitation";
  const [reason, setReason] = useState("");
  const [editing, setEditing] = useState<string | null>(question ? pretty(call.arguments) : null);
  const [problem, setProblem] = useState<string | null>(null);
  // A question's fields, generated from its schema; the JSON answer below stays what is sent.
  const fields = useMemo(() => (question ? formFields(call.inputSchema) : null), [question, call.inputSchema]);

  const answer = (decision: Decision) => {
    setProblem(null);
    onAnswer(decision).catch((e: unknown) => setProblem(e instanceof Error ? e.message : String(e)));
  };

  const approveEdited = () => {
    if (editing === null) return;
    let parsed: JsonValue;
    try {
      parsed = JSON.parse(editing);
    } catch {
      setProblem("The arguments are not valid JSON.");
      return;
    }
    answer({ decision: "approveEdited", arguments: parsed });
  };

  const typing = (e: React.KeyboardEvent) =>
    e.target instanceof HTMLInputElement ||
    e.target instanceof HTMLTextAreaElement ||
    e.target instanceof HTMLSelectElement;

  return (
    <div
      className={`tool-card ${state}`}
      data-testid="approval-card"
      role="group"
      aria-label={
        kind === "toolCall"
          ? `${call.client ? `${call.client} wants to run ` : ""}${call.tool} on ${call.serverName || "a server"}`
          : `${call.serverName} ${kind === "sampling" ? "wants to use your model" : "asks you"}`
      }
      onKeyDown={(e) => {
        if (state !== "waiting" || typing(e)) return;
        if (e.key === "a" && !question) answer({ decision: "approve" });
        if (e.key === "d") answer({ decision: "deny", reason: reason || null });
        // Only opens the editor: it never throws away what is being typed.
        if (e.key === "e" && editing === null) setEditing(pretty(call.arguments));
      }}
    >
      <header className="row spread">
        <span>
          {kind === "toolCall" ? (
            <>
              {call.client && (
                <>
                  <strong data-testid="approval-client">{call.client}</strong> wants to run{" "}
                </>
              )}
              <strong data-testid="approval-tool">{call.tool}</strong> on{" "}
              <span data-testid="approval-server">{call.serverName}</span>
            </>
          ) : (
            <>
              <strong data-testid="approval-server">{call.serverName}</strong>{" "}
              {kind === "sampling" ? "wants to use your model" : "asks you"}
            </>
          )}
          {call.readOnly && (
            <span className="badge small with-icon">
              <Eye size={BADGE_ICON_SIZE} aria-hidden="true" />
              read-only
            </span>
          )}
          {call.destructive && (
            <span className="badge small danger with-icon">
              <TriangleAlert size={BADGE_ICON_SIZE} aria-hidden="true" />
              destructive
            </span>
          )}
        </span>
        <span className="muted" data-testid="approval-state">
          {STATE_LABEL[state]}
        </span>
      </header>
      {(asker || call.client || call.chat) && kind === "toolCall" && (
        <p className="muted small" data-testid="approval-asker">
          Asked by{" "}
          {call.client ? `the connected app ${call.client}` : (asker ?? `the chat “${call.chat}”`)}
        </p>
      )}
      {description && kind === "toolCall" && (
        // The server's words about its tool: text, never HTML.
        <p className="small tool-description" data-testid="approval-description">
          {description}
        </p>
      )}
      {outcome ? (
        <p className="small" data-testid="approval-outcome">
          {outcome}
        </p>
      ) : (
        call.reason && (
          <p className="muted small" data-testid="approval-reason">
            {call.reason.charAt(0).toUpperCase() + call.reason.slice(1)}
          </p>
        )
      )}
      {call.beyondRules && kind === "toolCall" && state === "waiting" && (
        <p className="small beyond-rules with-icon" data-testid="approval-beyond-rules">
          <ShieldAlert size={ICON_SIZE} aria-hidden="true" />
          No rule can let this run without asking: only your answer does. Approve runs it this once.
        </p>
      )}
      {call.message && (
        // The server's words: shown as text, never as HTML.
        <p className="question" data-testid="approval-message">
          {call.message}
        </p>
      )}
      {question && editing !== null && fields && fields.length > 0 && (
        <>
          <SchemaForm fields={fields} text={editing} onText={setEditing} legend="Your answer" />
          <p className="muted small json-caption">The same answer as JSON, which is what is sent:</p>
        </>
      )}
      {editing === null ? (
        <pre data-testid="approval-arguments">{pretty(call.arguments)}</pre>
      ) : (
        <textarea
          aria-label={question ? "Your answer (JSON)" : "Arguments (JSON)"}
          data-testid="edit-arguments"
          rows={6}
          value={editing}
          onChange={(e) => setEditing(e.target.value)}
        />
      )}
      {problem && (
        <p className="error small" role="alert" data-testid="approval-problem">
          {problem}
        </p>
      )}
      {state === "waiting" && (
        // One row: the ways to allow on the left, the ways to refuse on the right; the reason a
        // denial gives the model sits under them, never between two buttons.
        <div className="approval-actions" data-testid="approval-actions">
          <div className="row">
            {editing === null ? (
              <button
                type="button"
                className="primary"
                data-testid="approve"
                autoFocus
                aria-keyshortcuts="A"
                onClick={() => answer({ decision: "approve" })}
              >
                Approve <kbd aria-hidden="true">A</kbd>
              </button>
            ) : (
              <button type="button" className="primary" data-testid="approve-edited" onClick={approveEdited}>
                {question ? "Send answer" : "Approve edited"}
              </button>
            )}
            {/* A rule would not change the outcome of a call held for what it carries. */}
            {kind === "toolCall" && !call.client && !call.beyondRules && (
              <button
                type="button"
                data-testid="allow-conversation"
                onClick={() => answer({ decision: "allow", reach: "tool", lasting: "conversation" })}
              >
                Allow in this chat
              </button>
            )}
            {!question && !call.beyondRules && (
              <button
                type="button"
                data-testid="always-allow"
                onClick={() =>
                  answer({ decision: "allow", reach: kind === "toolCall" ? "tool" : "server", lasting: "always" })
                }
              >
                {call.client ? `Always allow for ${call.client}` : "Always allow"}
              </button>
            )}
            {editing === null ? (
              <button
                type="button"
                data-testid="edit"
                aria-keyshortcuts="E"
                onClick={() => setEditing(pretty(call.arguments))}
              >
                Edit <kbd aria-hidden="true">E</kbd>
              </button>
            ) : (
              !question && (
                <button type="button" onClick={() => setEditing(null)}>
                  Cancel edit
                </button>
              )
            )}
            <span className="actions-gap" aria-hidden="true" />
            <button
              type="button"
              className="danger"
              data-testid="deny"
              aria-keyshortcuts="D"
              onClick={() => answer({ decision: "deny", reason: reason || null })}
            >
              {question ? "Decline" : "Deny"} <kbd aria-hidden="true">D</kbd>
            </button>
            <button
              type="button"
              data-testid="always-deny"
              onClick={() => answer({ decision: "denyAlways", reach: kind === "toolCall" ? "tool" : "server" })}
            >
              {question ? "Never ask again" : "Always deny"}
            </button>
          </div>
          <div className="row deny-reason">
            <input
              aria-label="Reason for denying (optional)"
              placeholder={question ? "Why you decline (optional)" : "Why you deny, for the model (optional)"}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
            />
            {deadline != null && <Countdown deadline={deadline} />}
          </div>
          {!question && (
            <p className="muted small" data-testid="approval-scope">
              {ruleScope(call)}
            </p>
          )}
        </div>
      )}
      {state === "running" && progress && (
        <p className="muted small" data-testid="tool-progress">
          {progress}
        </p>
      )}
      {output !== undefined && (
        <ToolResult
          text={output}
          label={state === "denied" ? "Reason" : "Result"}
          callId={state === "denied" ? undefined : call.callId}
        />
      )}
      {images && <ResultImages images={images} tool={call.tool} />}
    </div>
  );
}

/** What the buttons that save a rule would save, before one is pressed. */
export function ruleScope(call: PendingCall): string {
  const who = call.client ? ` when ${call.client} asks` : " in every chat and for every connected app";
  if (call.request === "sampling") {
    return `Always allow saves a rule letting ${call.serverName} use your model without asking${who}; Always deny saves one refusing it. Rules are listed in Activity.`;
  }
  const what = `${call.tool} on ${call.serverName}`;
  if (call.beyondRules) {
    return `Always deny saves a rule refusing ${what}${who}. Rules are listed in Activity.`;
  }
  const chat = call.client ? "" : ` Allow in this chat lets it run without asking until this chat ends.`;
  return `Always allow saves a rule: ${what} runs without asking${who}, with any arguments; Always deny saves one refusing it.${chat} Rules are listed in Activity.`;
}

/** Results longer than this (in lines or characters) start collapsed. */
export const LONG_LINES = 30;
export const LONG_CHARS = 3000;

export function isLong(text: string): boolean {
  if (text.length > LONG_CHARS) return true;
  let lines = 1;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) {
    if (++lines > LONG_LINES) return true;
  }
  return false;
}

/**
 * A call's result, which can be folded away: long ones start folded. A `<details>` is a native
 * disclosure (a button for keyboards and screen readers, Enter or Space toggles it), and the
 * `<pre>` always holds the whole text, folded or not.
 */
/** The marker Toolgate puts where it removed a secret from a result. */
export const REMOVED = "[secret removed: ";

export function ToolResult({ text, label, callId }: { text: string; label: string; callId?: string }) {
  const [open, setOpen] = useState(() => !isLong(text));
  // The text with its secrets, shown only after the user asked (never sent to the model).
  const [revealed, setRevealed] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const shown = revealed ?? text;
  const lines = shown === "" ? 0 : shown.split("\n").length;
  const reveal = () => {
    if (!callId) return;
    setProblem(null);
    revealResult(callId).then(
      (original) =>
        original === null ? setProblem("It is no longer kept: only the last results are.") : setRevealed(original),
      (e: unknown) => setProblem(errorMessage(e)),
    );
  };
  return (
    <details
      className="result-box"
      open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)}
      data-testid="tool-result"
    >
      <summary>
        {label}{" "}
        <span className="muted small">
          ({lines} {lines === 1 ? "line" : "lines"}, {shown.length.toLocaleString("en")} characters)
        </span>
      </summary>
      {callId && text.includes(REMOVED) && (
        <p className="row small" data-testid="secrets-removed">
          {revealed === null
            ? "Toolgate removed what looks like a secret before the model saw this result."
            : "Shown with its secrets, to you only: the model saw it without them."}
          {revealed === null ? (
            <button type="button" data-testid="reveal-result" onClick={reveal}>
              Reveal for this result
            </button>
          ) : (
            <button type="button" data-testid="hide-result" onClick={() => setRevealed(null)}>
              Hide again
            </button>
          )}
        </p>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      {/* Tool output is untrusted: shown as text, never as HTML. */}
      <pre className="result" data-testid="tool-output">
        {shown}
      </pre>
    </details>
  );
}
