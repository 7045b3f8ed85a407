import { useCallback, useEffect, useState } from "react";
import {
  answerApproval,
  errorMessage,
  onApprovalsChanged,
  pendingApprovals,
  type Decision,
  type PendingCall,
} from "../ipc";
import ApprovalCard from "./ApprovalCard";
import LinkCard from "./LinkCard";

/**
 * Requests that arrive outside a chat turn, shown above every tab: servers asking to use the
 * model or asking a question, and tool calls from other hosts connected through the gateway
 * ("claude-code wants to run write_file on Files"). The chat's own tool calls are answered in
 * the chat, on the turn's cards.
 */
export default function ServerRequests() {
  const [waiting, setWaiting] = useState<PendingCall[]>([]);
  const [problem, setProblem] = useState<string | null>(null);

  const refresh = useCallback(() => {
    pendingApprovals().then(
      (all) => {
        // A chat's own calls and results are answered on its cards; a client's, here.
        setWaiting(all.filter((c) => (c.request === "toolCall" || c.request === "toolResult" ? !!c.client : true)));
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
    <section className="server-requests" aria-label="Requests from servers and connected hosts" data-testid="server-requests">
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      {waiting.map((call) => {
        const onAnswer = async (decision: Decision) => {
          try {
            await answerApproval(call.id, decision);
          } catch (e) {
            throw new Error(errorMessage(e), { cause: e });
          }
        };
        const link = call.link;
        return link ? (
          <LinkCard key={call.id} call={{ ...call, link }} onAnswer={onAnswer} />
        ) : (
          <ApprovalCard
            key={call.id}
            call={call}
            state="waiting"
            description={call.description}
            deadline={call.deadline}
            onAnswer={onAnswer}
          />
        );
      })}
    </section>
  );
}
