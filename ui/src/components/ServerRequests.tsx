import { useCallback, useEffect, useState } from "react";
import { answerApproval, errorMessage, onApprovalsChanged, pendingApprovals, type PendingCall } from "../ipc";
import ApprovalCard from "./ApprovalCard";

/**
 * Requests servers make of the user (to use the model, or to answer a question), shown above
 * every tab: they can arrive at any time, not only during a chat turn. Tool calls are answered
 * in the chat, on the turn's own cards.
 */
export default function ServerRequests() {
  const [waiting, setWaiting] = useState<PendingCall[]>([]);
  const [problem, setProblem] = useState<string | null>(null);

  const refresh = useCallback(() => {
    pendingApprovals().then(
      (all) => {
        setWaiting(all.filter((c) => c.request !== "toolCall"));
        setProblem(null);
      },
      (e) => setProblem(errorMessage(e)),
    );
  }, []);

  useEffect(() => {
    refresh();
    const unlisten = onApprovalsChanged(refresh);
    return () => {
      unlisten.then((f) => f());
    };
  }, [refresh]);

  if (waiting.length === 0 && !problem) return null;
  return (
    <section className="server-requests" aria-label="Requests from servers" data-testid="server-requests">
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      {waiting.map((call) => (
        <ApprovalCard
          key={call.id}
          call={call}
          state="waiting"
          onAnswer={async (decision) => {
            try {
              await answerApproval(call.id, decision);
            } catch (e) {
              throw new Error(errorMessage(e), { cause: e });
            }
          }}
        />
      ))}
    </section>
  );
}
