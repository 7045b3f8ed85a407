// Activity: one live place for every request that passes the gate. What waits for an answer is
// on top with its full card (the chat's calls, servers' questions and requests to use the model,
// connected apps' calls); then the rules, editable with a preview of what they would have
// matched; then the log of every decision. It follows the gate as it changes.
import { useCallback, useEffect, useState } from "react";
import {
  answerApproval,
  approvalRules,
  errorMessage,
  onApprovalsChanged,
  pendingApprovals,
  revokeRule,
  type PendingCall,
  type PolicySettings,
  type Rule,
  type ServerSnapshot,
} from "../ipc";
import ApprovalCard from "./ApprovalCard";
import { toolDescription } from "../approval";
import { ApprovalOptions, AuditLog, ruleLabel } from "./ApprovalsPanel";
import { LockedNote, useManaged } from "./Managed";
import RuleEditor from "./RuleEditor";
import { ACTION_ICONS, SCREEN_ICONS } from "../icons";
import { ScreenHeading, WithIcon } from "./WithIcon";

interface Props {
  visible: boolean;
  servers: ServerSnapshot[];
  paused: boolean;
  onPause: (paused: boolean) => void;
}

/** How often the log is read again while Activity is shown: calls a rule decides change the
 *  log without anything waiting. */
export const LOG_REFRESH_MS = 2000;

/** Where a waiting request comes from, in words. */
export function askedBy(call: PendingCall): string {
  if (call.client) return `from ${call.client}`;
  if (call.request === "toolCall" || call.request === "toolResult") return "from the chat";
  return `from ${call.serverName}`;
}

export default function ActivityPanel({ visible, servers, paused, onPause }: Props) {
  const [waiting, setWaiting] = useState<PendingCall[]>([]);
  const [policy, setPolicy] = useState<PolicySettings | null>(null);
  const [editing, setEditing] = useState<Rule | "new" | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Bumped whenever the gate changes, so the log below follows it.
  const [changes, setChanges] = useState(0);
  const managed = useManaged(changes);

  const refresh = useCallback(() => {
    pendingApprovals().then(
      (all) => {
        setWaiting(all ?? []);
        setChanges((n) => n + 1);
      },
      (e) => setError(errorMessage(e)),
    );
    approvalRules().then(setPolicy, (e) => setError(errorMessage(e)));
  }, []);

  useEffect(() => {
    if (!visible) return;
    refresh();
    const unlisten = onApprovalsChanged(refresh);
    const timer = setInterval(() => setChanges((n) => n + 1), LOG_REFRESH_MS);
    return () => {
      clearInterval(timer);
      unlisten.then((f) => f());
    };
  }, [visible, refresh]);

  const act = (op: Promise<PolicySettings>) =>
    op.then(
      (p) => {
        setPolicy(p);
        setError(null);
      },
      (e) => setError(errorMessage(e)),
    );

  return (
    <div className="panel activity">
      <header className="screen-header row spread">
        <ScreenHeading icon={SCREEN_ICONS.activity}>Activity</ScreenHeading>
        <label className="row check">
          <input
            type="checkbox"
            data-testid="pause-all"
            checked={paused}
            onChange={(e) => onPause(e.target.checked)}
          />
          Pause all tools (every request is denied until this is lifted)
        </label>
      </header>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}

      <section aria-labelledby="waiting-heading" data-testid="activity-waiting">
        <h3 id="waiting-heading">Waiting for you ({waiting.length})</h3>
        {waiting.length === 0 && <p className="muted">Nothing is waiting. New requests appear here as they come.</p>}
        {waiting.map((call) => (
          <div key={call.id} className="waiting-item">
            <p className="muted small">{askedBy(call)}</p>
            <ApprovalCard
              call={call}
              state="waiting"
              description={call.description ?? toolDescription(servers, call)}
              deadline={call.deadline}
              onAnswer={async (decision) => {
                try {
                  await answerApproval(call.id, decision);
                } catch (e) {
                  throw new Error(errorMessage(e), { cause: e });
                }
              }}
            />
          </div>
        ))}
      </section>

      <section aria-labelledby="rules-heading">
        <div className="row spread">
          <h3 id="rules-heading">Rules</h3>
          <button type="button" data-testid="new-rule" onClick={() => setEditing("new")} disabled={editing !== null}>
            <WithIcon icon={ACTION_ICONS.add}>New rule</WithIcon>
          </button>
        </div>
        {policy && policy.rules.length === 0 && (
          <p className="muted">
            {managed?.rules.length
              ? "No rules of your own yet."
              : "No rules yet: every request is asked."}
          </p>
        )}
        {editing === "new" && (
          <RuleEditor
            rule={null}
            servers={servers}
            onSaved={(p) => {
              setPolicy(p);
              setEditing(null);
            }}
            onCancel={() => setEditing(null)}
          />
        )}
        {managed && managed.rules.length > 0 && (
          <ul data-testid="managed-rules" className="rules" aria-label="Your organisation's rules">
            {managed.rules.map((r) => (
              <li key={r.id} className="row spread">
                <span data-testid="managed-rule">
                  {r.note ? (
                    <>
                      <strong>{r.note}</strong> <span className="muted small">{ruleLabel(r, servers)}</span>
                    </>
                  ) : (
                    ruleLabel(r, servers)
                  )}
                </span>
                <LockedNote testId={`managed-rule-note-${r.id}`} />
              </li>
            ))}
          </ul>
        )}
        <ul data-testid="rules" className="rules">
          {policy?.rules.map((r) => (
            <li key={r.id}>
              <div className="row spread">
                <span data-testid="rule">
                  {r.note ? (
                    <>
                      <strong>{r.note}</strong> <span className="muted small">{ruleLabel(r, servers)}</span>
                    </>
                  ) : (
                    ruleLabel(r, servers)
                  )}
                </span>
                <span className="row">
                  <button
                    type="button"
                    data-testid={`edit-rule-${r.id}`}
                    aria-label={`Edit: ${ruleLabel(r, servers)}`}
                    disabled={editing !== null}
                    onClick={() => setEditing(r)}
                  >
                    Edit
                  </button>
                  <button type="button" aria-label={`Revoke: ${ruleLabel(r, servers)}`} onClick={() => void act(revokeRule(r.id))}>
                    Revoke
                  </button>
                </span>
              </div>
              {editing !== null && editing !== "new" && editing.id === r.id && (
                <RuleEditor
                  rule={r}
                  servers={servers}
                  onSaved={(p) => {
                    setPolicy(p);
                    setEditing(null);
                  }}
                  onCancel={() => setEditing(null)}
                />
              )}
            </li>
          ))}
        </ul>
      </section>

      <section aria-labelledby="asking-heading" data-testid="approval-settings">
        <h3 id="asking-heading">When nothing decides</h3>
        <ApprovalOptions policy={policy} onPolicy={(op) => void act(op)} locks={managed?.locks} />
      </section>

      <AuditLog refreshKey={changes} />
    </div>
  );
}
