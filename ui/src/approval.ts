// What the approval card says about a held call that the call itself does not carry: what an
// answer did, the time left, the tool's description (from the server's tool list the window
// already has), and how a call nobody answered ended.
import type { Decision, PendingCall, ServerSnapshot } from "./ipc";

/** What an answer did, in words, for the card after the decision. */
export function outcomeOf(decision: Decision, client?: string): string {
  switch (decision.decision) {
    case "approve":
      return "Approved by you, this once.";
    case "approveEdited":
      return "Approved by you, with your edited arguments.";
    case "allow":
      return decision.lasting === "conversation"
        ? "Approved by you, and allowed for the rest of this chat."
        : `Approved by you. Rule created: always allow ${decision.reach === "server" ? "every tool of this server" : "this tool"}${client ? ` for ${client}` : ""}.`;
    case "deny":
      return decision.reason ? `Denied by you: ${decision.reason}` : "Denied by you.";
    case "denyAlways":
      return `Denied by you. Rule created: always deny ${decision.reach === "server" ? "this server's requests" : "this tool"}.`;
  }
}

/** Time left as minutes and seconds: 9:05, or 45 s under a minute. */
export function timeLeft(ms: number): string {
  const secs = Math.max(0, Math.ceil(ms / 1000));
  if (secs < 60) return `${secs} s`;
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = String(secs % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** The gate's wait for an answer, as the policy settings give it (seconds; 10 minutes if unset). */
export const approvalWaitSecs = (secs: number | null | undefined) => Math.min(Math.max(secs ?? 600, 5), 86_400);

/** What a call denied without the user's answer says happened. */
export function unansweredOutcome(reason: string | null): string {
  if (reason && /nobody answered/i.test(reason)) return `Timed out: ${reason}, so it was denied.`;
  if (reason && /stopped the turn/i.test(reason)) return "Stopped: you stopped the turn, so it did not run.";
  return reason ? `Denied: ${reason}.` : "Denied.";
}

/** What the tool does, from the server's tool list the window already has. */
export function toolDescription(servers: ServerSnapshot[], call: PendingCall): string | null {
  if (call.request !== "toolCall") return null;
  const tool = servers.find((s) => s.id === call.serverId)?.tools.find((t) => t.name === call.tool);
  return tool?.description ?? null;
}
