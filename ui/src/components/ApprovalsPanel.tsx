// The parts of the Activity screen about decisions already made: the rules in words, the
// approval options, and the audit log with its filters and export.
import { useCallback, useEffect, useState } from "react";
import {
  type ArgCondition,
  auditLog,
  errorMessage,
  exportAudit,
  setApprovalOptions,
  type AuditFilter,
  type Locks,
  type AuditRow,
  type PolicySettings,
  type Rule,
} from "../ipc";
import { LockedNote } from "./Managed";

/** A condition on a call's arguments in words: `path matches “/tmp/**”`. */
export function conditionLabel(c: ArgCondition): string {
  // A JSON pointer names the argument; its top-level name reads best without the slash.
  const name = c.pointer.replace(/^\//, "").replace(/~1/g, "/").replace(/~0/g, "~") || "the arguments";
  const value = c.matcher.kind === "equals" ? JSON.stringify(c.matcher.value) : `“${String(c.matcher.value)}”`;
  const how = { glob: "matches", prefix: "starts with", equals: "is exactly" }[c.matcher.kind];
  return `${name} ${how} ${value}`;
}

/** Words for a rule: what it does, to what (servers by their names), for how long, when. */
export function ruleLabel(rule: Rule, servers: { id: string; name: string }[] = []): string {
  const effect = { allow: "Allow", deny: "Deny", ask: "Ask before" }[rule.effect];
  const server = servers.find((s) => s.id === rule.target.serverId)?.name ?? rule.target.serverId;
  const target =
    rule.target.kind === "tool"
      ? `${rule.target.tool} on ${server}`
      : rule.target.kind === "server"
        ? `every tool of ${server}`
        : `${rule.target.kind} requests from ${server}`;
  const scope =
    rule.scope.kind === "always" ? "always" : rule.scope.kind === "conversation" ? "in one chat" : "once";
  const conditions = rule.conditions?.length ? `, when ${rule.conditions.map(conditionLabel).join(" and ")}` : "";
  const client = rule.client ? `, for ${rule.client}` : "";
  return `${effect} ${target} (${scope}${conditions}${client})`;
}

/** What a request in the log was: a tool call, or a server's sampling request or question. */
export function requestKind(row: AuditRow): string {
  if (row.tool === "sampling/createMessage") return "Use of your model";
  if (row.tool === "elicitation/create") return "Question";
  return row.tool;
}

/** Who asked: a connected app, a chat, the server itself, or the command line. */
export function requestFrom(row: AuditRow): string {
  if (row.client) return row.client;
  if (row.tool === "sampling/createMessage" || row.tool === "elicitation/create") return "the server";
  return row.conversationId ? "chat" : "command line";
}

/** Read-only tools without asking, and how long a request waits for an answer. */
export function ApprovalOptions({
  policy,
  onPolicy,
  locks,
}: {
  policy: PolicySettings | null;
  onPolicy: (op: Promise<PolicySettings>) => void;
  /** What the organisation locks: those controls are disabled and say so. */
  locks?: Locks | null;
}) {
  const readOnlyLocked = locks?.autoAllowReadOnly != null;
  const timeoutLocked = locks?.approvalTimeoutSecs != null;
  return (
    <div className="approval-options">
      <label className="row check">
        <input
          type="checkbox"
          data-testid="auto-allow-read-only"
          checked={policy?.autoAllowReadOnly ?? false}
          disabled={readOnlyLocked}
          onChange={(e) => onPolicy(setApprovalOptions(e.target.checked, policy?.approvalTimeoutSecs ?? 600))}
        />
        Allow tools their server marks read-only without asking (the mark is the server&apos;s claim)
        {readOnlyLocked && <LockedNote testId="auto-allow-read-only-locked" />}
      </label>
      <label className="row check">
        Deny a request nobody answers after
        <input
          type="number"
          min={5}
          max={86400}
          aria-label="Seconds to wait for an answer"
          value={policy?.approvalTimeoutSecs ?? 600}
          disabled={timeoutLocked}
          onChange={(e) =>
            onPolicy(setApprovalOptions(policy?.autoAllowReadOnly ?? false, Number(e.target.value) || 600))
          }
        />
        seconds
        {timeoutLocked && <LockedNote testId="approval-timeout-locked" />}
      </label>
    </div>
  );
}

/** Every decision, newest first, with filters and an export as JSON Lines. */
export function AuditLog({ refreshKey }: { refreshKey: unknown }) {
  // None until the first answer, so an empty log is only said to be empty once it is.
  const [rows, setRows] = useState<AuditRow[] | null>(null);
  const [filter, setFilter] = useState<AuditFilter>({ limit: 200 });
  const [applied, setApplied] = useState<AuditFilter>({ limit: 200 });
  const [error, setError] = useState<string | null>(null);
  const [exported, setExported] = useState<string | null>(null);

  const refresh = useCallback(() => {
    auditLog(applied).then(
      (r) => {
        setRows(r ?? []);
        setError(null);
      },
      (e) => setError(errorMessage(e)),
    );
  }, [applied]);
  useEffect(refresh, [refresh, refreshKey]);

  return (
    <section aria-labelledby="audit-heading" className="audit-section">
      <h3 id="audit-heading">Log</h3>
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ ...filter });
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
          onChange={(e) => setFilter({ ...filter, decision: (e.target.value || undefined) as AuditFilter["decision"] })}
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
            exportAudit(applied).then(
              (path) => setExported(path),
              (e) => setError(errorMessage(e)),
            )
          }
        >
          Export JSON Lines
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {exported && (
        <p className="muted small" role="status" data-testid="exported">
          Exported to {exported}
        </p>
      )}
      {rows?.length === 0 && !error && <p className="muted">Nothing has been asked yet.</p>}
      <table className="audit" data-testid="audit-log">
        <thead>
          <tr>
            <th>Time</th>
            <th>Request</th>
            <th>From</th>
            <th>Decision</th>
            <th>By</th>
            <th>Reason</th>
            <th>Arguments</th>
          </tr>
        </thead>
        <tbody>
          {(rows ?? []).map((r) => (
            <tr key={r.id}>
              <td>{new Date(r.decidedAt).toLocaleString()}</td>
              <td>
                {requestKind(r)} <span className="muted">on {r.serverId}</span>
              </td>
              <td>{requestFrom(r)}</td>
              <td className={`decision ${r.decision}`}>{r.decision.replace("_", " ")}</td>
              <td>{r.decidedBy}</td>
              {/* The user's or the rule's words: text only. */}
              <td className="reason" data-testid="audit-reason">
                {r.reason ?? ""}
              </td>
              {/* Arguments are untrusted: text only. */}
              <td>
                <code>{JSON.stringify(r.arguments)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
