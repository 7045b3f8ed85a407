import { useCallback, useEffect, useState } from "react";
import {
  approvalRules,
  auditLog,
  errorMessage,
  exportAudit,
  revokeRule,
  setApprovalOptions,
  setPaused,
  type AuditFilter,
  type AuditRow,
  type PolicySettings,
  type Rule,
} from "../ipc";

/** Words for a rule: what it does, to what, for how long. */
export function ruleLabel(rule: Rule): string {
  const effect = { allow: "Allow", deny: "Deny", ask: "Ask before" }[rule.effect];
  const target =
    rule.target.kind === "tool"
      ? `${rule.target.tool} on ${rule.target.serverId}`
      : rule.target.kind === "server"
        ? `every tool of ${rule.target.serverId}`
        : `${rule.target.kind} requests from ${rule.target.serverId}`;
  const scope =
    rule.scope.kind === "always" ? "always" : rule.scope.kind === "conversation" ? "in one chat" : "once";
  const conditions = rule.conditions?.length ? `, when ${rule.conditions.length} condition(s) hold` : "";
  return `${effect} ${target} (${scope}${conditions})`;
}

/** Pause-all, the rules (each revocable), and the audit log with filters. */
export default function ApprovalsPanel({ visible }: { visible: boolean }) {
  const [policy, setPolicy] = useState<PolicySettings | null>(null);
  const [rows, setRows] = useState<AuditRow[]>([]);
  const [filter, setFilter] = useState<AuditFilter>({ limit: 200 });
  const [error, setError] = useState<string | null>(null);
  const [exported, setExported] = useState<string | null>(null);

  const refresh = useCallback(() => {
    approvalRules().then(setPolicy, (e) => setError(errorMessage(e)));
    auditLog(filter).then(setRows, (e) => setError(errorMessage(e)));
  }, [filter]);

  useEffect(() => {
    if (visible) refresh();
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
    <div className="panel approvals">
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <label className="row">
        <input
          type="checkbox"
          data-testid="pause-all"
          checked={policy?.paused ?? false}
          onChange={(e) => void act(setPaused(e.target.checked))}
        />
        Pause all tools (every call is denied until this is lifted)
      </label>

      <label className="row">
        <input
          type="checkbox"
          data-testid="auto-allow-read-only"
          checked={policy?.autoAllowReadOnly ?? false}
          onChange={(e) =>
            void act(setApprovalOptions(e.target.checked, policy?.approvalTimeoutSecs ?? 600))
          }
        />
        Allow tools their server marks read-only without asking (the mark is the server&apos;s claim)
      </label>
      <label className="row">
        Deny a call nobody answers after
        <input
          type="number"
          min={5}
          max={86400}
          aria-label="Seconds to wait for an answer"
          value={policy?.approvalTimeoutSecs ?? 600}
          onChange={(e) =>
            void act(setApprovalOptions(policy?.autoAllowReadOnly ?? false, Number(e.target.value) || 600))
          }
        />
        seconds
      </label>

      <h2>Rules</h2>
      {policy && policy.rules.length === 0 && <p className="muted">No rules yet: every call is asked.</p>}
      <ul data-testid="rules">
        {policy?.rules.map((r) => (
          <li key={r.id} className="row spread">
            <span data-testid="rule">{ruleLabel(r)}</span>
            <button type="button" aria-label={`Revoke: ${ruleLabel(r)}`} onClick={() => void act(revokeRule(r.id))}>
              Revoke
            </button>
          </li>
        ))}
      </ul>

      <h2>Audit log</h2>
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          refresh();
        }}
      >
        <input
          aria-label="Server"
          placeholder="Server"
          value={filter.serverId ?? ""}
          onChange={(e) => setFilter({ ...filter, serverId: e.target.value || undefined })}
        />
        <input
          aria-label="Tool"
          placeholder="Tool"
          value={filter.tool ?? ""}
          onChange={(e) => setFilter({ ...filter, tool: e.target.value || undefined })}
        />
        <select
          aria-label="Decision"
          value={filter.decision ?? ""}
          onChange={(e) =>
            setFilter({ ...filter, decision: (e.target.value || undefined) as AuditFilter["decision"] })
          }
        >
          <option value="">Any decision</option>
          <option value="allowed">Allowed</option>
          <option value="denied">Denied</option>
          <option value="timed_out">Timed out</option>
          <option value="cancelled">Cancelled</option>
        </select>
        <input
          aria-label="Text in arguments or reason"
          placeholder="Text"
          value={filter.text ?? ""}
          onChange={(e) => setFilter({ ...filter, text: e.target.value || undefined })}
        />
        <button type="submit">Filter</button>
        <button
          type="button"
          data-testid="export-audit"
          onClick={() =>
            exportAudit(filter).then(
              (path) => setExported(path),
              (e) => setError(errorMessage(e)),
            )
          }
        >
          Export JSON Lines
        </button>
      </form>
      {exported && (
        <p className="muted small" role="status" data-testid="exported">
          Exported to {exported}
        </p>
      )}
      <table className="audit" data-testid="audit-log">
        <thead>
          <tr>
            <th>Time</th>
            <th>Tool</th>
            <th>Decision</th>
            <th>By</th>
            <th>Arguments</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td>{new Date(r.decidedAt).toLocaleString()}</td>
              <td>
                {r.tool} <span className="muted">on {r.serverId}</span>
              </td>
              <td>{r.decision.replace("_", " ")}</td>
              <td>{r.decidedBy}</td>
              {/* Arguments are untrusted: text only. */}
              <td>
                <code>{JSON.stringify(r.arguments)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
