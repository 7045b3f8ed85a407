// Writes or edits one approval rule: what it does (allow, ask, deny), to what (a tool, a whole
// server, a server's sampling or questions), for whom (every caller or one connected app), and on
// which arguments. While it is edited, the backend checks it and lists the recent requests it
// would have matched; saving goes through the backend too, which binds a grant to the server and
// tool as they run now. The window decides nothing here.
import { useEffect, useMemo, useState } from "react";
import {
  errorMessage,
  previewRule,
  saveRule,
  type ArgCondition,
  type AuditRow,
  type JsonValue,
  type PolicySettings,
  type Rule,
  type RulePreview,
  type ServerSnapshot,
} from "../ipc";

/** How long editing must pause before the preview is asked for again. */
export const PREVIEW_DELAY_MS = 350;

type TargetKind = Rule["target"]["kind"];
type MatcherKind = ArgCondition["matcher"]["kind"];

interface ConditionRow {
  pointer: string;
  kind: MatcherKind;
  /** Text for glob and prefix; JSON (or plain text, taken as a string) for equals. */
  value: string;
}

const TARGETS: { kind: TargetKind; label: string }[] = [
  { kind: "tool", label: "One tool" },
  { kind: "server", label: "Every tool of a server" },
  { kind: "sampling", label: "A server's requests to use your model" },
  { kind: "elicitation", label: "A server's questions" },
];

const MATCHERS: { kind: MatcherKind; label: string }[] = [
  { kind: "glob", label: "matches the pattern" },
  { kind: "prefix", label: "starts with" },
  { kind: "equals", label: "is exactly (JSON)" },
];

/** The backend names the rule by its place in a list of one; the field is what matters here. */
export const fieldProblem = (message: string) => message.replace(/^rule \d+ \("[^"]*"\), /, "");

/** The backend's `conditions[0].matcher: must not be empty` as a sentence a person reads. */
export function humanProblem(message: string): string {
  const problem = fieldProblem(message);
  const condition = /^conditions\[(\d+)\]\.(\w+): (.*)$/s.exec(problem);
  if (condition) {
    const [, index, field, what] = condition;
    const n = Number(index) + 1;
    if (field === "matcher" && what === "must not be empty")
      return `Condition ${n} needs a value to compare with: type one, or remove the condition.`;
    if (field === "pointer" && what === "must not be empty")
      return `Condition ${n} needs the argument it looks at, such as /path.`;
    const part = field === "pointer" ? "argument" : "value";
    return `Condition ${n}: the ${part} ${what}.`;
  }
  const target = /^target\.(\w+): (.*)$/s.exec(problem);
  if (target) {
    const [, field, what] = target;
    if (what === "must not be empty") return `Choose the ${field === "serverId" ? "server" : field} this rule is for.`;
    return `The ${field === "serverId" ? "server" : field} ${what}.`;
  }
  const field = /^[\w.[\]]+: (.*)$/s.exec(problem);
  const text = field ? field[1] : problem;
  return `This rule cannot be saved as it is: ${text}.`.replace(/\.\.$/, ".");
}

/** A condition still being written: no argument, or nothing to compare with yet. */
const unfinished = (row: ConditionRow) => row.pointer.trim() === "" || row.value.trim() === "";

function rowsOf(rule: Rule | null): ConditionRow[] {
  return (rule?.conditions ?? []).map((c) => ({
    pointer: c.pointer,
    kind: c.matcher.kind,
    value: c.matcher.kind === "equals" ? JSON.stringify(c.matcher.value) : String(c.matcher.value),
  }));
}

function conditionOf(row: ConditionRow): ArgCondition {
  if (row.kind !== "equals") return { pointer: row.pointer.trim(), matcher: { kind: row.kind, value: row.value } };
  let value: JsonValue = row.value;
  try {
    value = JSON.parse(row.value);
  } catch {
    // Not JSON: compared as the text typed.
  }
  return { pointer: row.pointer.trim(), matcher: { kind: "equals", value } };
}

/** The JSON pointers of a tool's top-level arguments (`/path`), to suggest. */
function pointersOf(server: ServerSnapshot | undefined, tool: string): string[] {
  const schema = server?.tools.find((t) => t.name === tool)?.inputSchema;
  const props = schema && typeof schema === "object" && !Array.isArray(schema) ? schema.properties : undefined;
  return props && typeof props === "object" ? Object.keys(props).map((p) => `/${p.replace(/~/g, "~0").replace(/\//g, "~1")}`) : [];
}

const newId = () =>
  typeof crypto !== "undefined" && "randomUUID" in crypto
    ? crypto.randomUUID()
    : `rule-${Date.now()}-${Math.random().toString(36).slice(2)}`;

interface Props {
  /** The rule to edit; `null` writes a new one. */
  rule: Rule | null;
  servers: ServerSnapshot[];
  onSaved: (policy: PolicySettings) => void;
  onCancel: () => void;
}

export default function RuleEditor({ rule, servers, onSaved, onCancel }: Props) {
  const [id] = useState(() => rule?.id ?? newId());
  const [createdAt] = useState(() => rule?.createdAt ?? Date.now());
  const [effect, setEffect] = useState<Rule["effect"]>(rule?.effect ?? "ask");
  const [kind, setKind] = useState<TargetKind>(rule?.target.kind ?? "tool");
  const [serverId, setServerId] = useState(rule?.target.serverId ?? servers[0]?.id ?? "");
  const [tool, setTool] = useState(rule?.target.kind === "tool" ? rule.target.tool : "");
  const [client, setClient] = useState(rule?.client ?? "");
  const [note, setNote] = useState(rule?.note ?? "");
  const [rows, setRows] = useState<ConditionRow[]>(() => rowsOf(rule));
  const [preview, setPreview] = useState<RulePreview | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const server = servers.find((s) => s.id === serverId);
  const draft = useMemo((): Rule => {
    const target: Rule["target"] =
      kind === "tool" ? { kind, serverId, tool: tool.trim() } : { kind, serverId };
    return {
      id,
      effect,
      scope: rule?.scope ?? { kind: "always" },
      target,
      conditions: kind === "tool" || kind === "server" ? rows.map(conditionOf) : [],
      ...(rule?.boundTo ? { boundTo: rule.boundTo } : {}),
      createdAt,
      expiresAt: rule?.expiresAt ?? null,
      note: note.trim() || null,
      client: client.trim() || null,
    };
  }, [id, createdAt, effect, kind, serverId, tool, rows, note, client, rule]);

  // The preview leaves out a condition still being written (a new one is empty), so adding one
  // does not turn the preview into an error; saving still checks the whole rule.
  const tried = useMemo(
    (): Rule => ({
      ...draft,
      conditions: (draft.conditions ?? []).filter((_, i) => rows[i] && !unfinished(rows[i])),
    }),
    [draft, rows],
  );
  const pending = rows.flatMap((r, i) => (unfinished(r) ? [i + 1] : []));

  // The preview follows the edit, once typing pauses; only the latest answer is shown.
  useEffect(() => {
    let current = true;
    const timer = setTimeout(() => {
      previewRule(tried).then(
        (p) => {
          if (!current) return;
          setPreview(p);
          setProblem(null);
        },
        (e) => {
          if (!current) return;
          // The last preview stays: the problem is said beside it, not instead of it.
          setProblem(humanProblem(errorMessage(e)));
        },
      );
    }, PREVIEW_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [tried]);

  const save = () => {
    setSaving(true);
    saveRule(draft)
      .then(onSaved, (e) => setProblem(humanProblem(errorMessage(e))))
      .finally(() => setSaving(false));
  };

  const pointers = pointersOf(server, tool);
  const setRow = (i: number, change: Partial<ConditionRow>) =>
    setRows((all) => all.map((r, j) => (j === i ? { ...r, ...change } : r)));
  const withArguments = kind === "tool" || kind === "server";

  return (
    <form
      className="card rule-editor"
      data-testid="rule-editor"
      aria-label={rule ? "Edit rule" : "New rule"}
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <h3>{rule ? "Edit rule" : "New rule"}</h3>
      <div className="rule-grid">
        <label htmlFor="rule-effect">Do</label>
        <select id="rule-effect" data-testid="rule-effect" value={effect} onChange={(e) => setEffect(e.target.value as Rule["effect"])}>
          <option value="allow">Allow without asking</option>
          <option value="ask">Always ask</option>
          <option value="deny">Deny</option>
        </select>
        <label htmlFor="rule-target">For</label>
        <select id="rule-target" data-testid="rule-target" value={kind} onChange={(e) => setKind(e.target.value as TargetKind)}>
          {TARGETS.map((t) => (
            <option key={t.kind} value={t.kind}>
              {t.label}
            </option>
          ))}
        </select>
        <label htmlFor="rule-server">Server</label>
        <select id="rule-server" data-testid="rule-server" value={serverId} onChange={(e) => setServerId(e.target.value)}>
          {!servers.some((s) => s.id === serverId) && <option value={serverId}>{serverId || "Choose a server"}</option>}
          {servers.map((s) => (
            <option key={s.id} value={s.id}>
              {/* The name once; the id only tells apart two servers of the same name. */}
              {servers.some((o) => o.id !== s.id && o.name === s.name) ? `${s.name} (${s.id})` : s.name}
            </option>
          ))}
        </select>
        {kind === "tool" && (
          <>
            <label htmlFor="rule-tool">Tool</label>
            <input
              id="rule-tool"
              data-testid="rule-tool"
              list="rule-tools"
              spellCheck={false}
              value={tool}
              onChange={(e) => setTool(e.target.value)}
            />
            <datalist id="rule-tools">
              {(server?.tools ?? []).map((t) => (
                <option key={t.name} value={t.name} />
              ))}
            </datalist>
          </>
        )}
        <label htmlFor="rule-client">Only for calls from</label>
        <input
          id="rule-client"
          data-testid="rule-client"
          placeholder="every caller (or an app, e.g. cursor)"
          spellCheck={false}
          value={client}
          onChange={(e) => setClient(e.target.value)}
        />
        <label htmlFor="rule-note">Name (optional)</label>
        <input id="rule-note" data-testid="rule-note" value={note} onChange={(e) => setNote(e.target.value)} />
      </div>
      {rule?.scope.kind === "conversation" && (
        <p className="muted small">This rule holds in one chat only, as it was made.</p>
      )}
      {withArguments && (
        <fieldset className="conditions">
          <legend>When the arguments…</legend>
          {rows.length === 0 && <p className="muted small">No conditions: every call it targets.</p>}
          <datalist id="rule-pointers">
            {pointers.map((p) => (
              <option key={p} value={p} />
            ))}
          </datalist>
          {rows.map((row, i) => (
            <div className="row wrap" key={i} data-testid={`rule-condition-${i}`}>
              <input
                aria-label={`Condition ${i + 1}: argument (JSON pointer)`}
                data-testid={`rule-pointer-${i}`}
                list="rule-pointers"
                placeholder="/path"
                spellCheck={false}
                value={row.pointer}
                onChange={(e) => setRow(i, { pointer: e.target.value })}
              />
              <select
                aria-label={`Condition ${i + 1}: how it compares`}
                data-testid={`rule-matcher-${i}`}
                value={row.kind}
                onChange={(e) => setRow(i, { kind: e.target.value as MatcherKind })}
              >
                {MATCHERS.map((m) => (
                  <option key={m.kind} value={m.kind}>
                    {m.label}
                  </option>
                ))}
              </select>
              <input
                aria-label={`Condition ${i + 1}: value`}
                data-testid={`rule-value-${i}`}
                placeholder={row.kind === "glob" ? "/home/me/notes/**" : row.kind === "prefix" ? "git status" : "true"}
                spellCheck={false}
                value={row.value}
                onChange={(e) => setRow(i, { value: e.target.value })}
              />
              <button
                type="button"
                aria-label={`Remove condition ${i + 1}`}
                onClick={() => setRows((all) => all.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            data-testid="add-condition"
            onClick={() => setRows((all) => [...all, { pointer: pointers[0] ?? "", kind: "glob", value: "" }])}
          >
            Add a condition
          </button>
        </fieldset>
      )}
      {problem && (
        <p className="error small" role="alert" data-testid="rule-problem">
          {problem}
        </p>
      )}
      {pending.length > 0 && (
        <p className="muted small" data-testid="rule-unfinished">
          {pending.length === 1 ? `Condition ${pending[0]} is` : `Conditions ${pending.join(", ")} are`} not finished: the
          preview leaves {pending.length === 1 ? "it" : "them"} out until {pending.length === 1 ? "it has" : "they have"}{" "}
          an argument and a value.
        </p>
      )}
      <RulePreviewList preview={preview} />
      <div className="row">
        <button type="submit" data-testid="rule-save" disabled={saving}>
          Save rule
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function RulePreviewList({ preview }: { preview: RulePreview | null }) {
  if (!preview) return null;
  const { checked, matched } = preview;
  return (
    <div className="rule-preview" data-testid="rule-preview">
      <p role="status" className="small">
        {checked === 0
          ? "No requests yet to try it on."
          : `It would have matched ${matched.length} of the last ${checked} ${checked === 1 ? "request" : "requests"}${
              matched.length ? ":" : "."
            }`}
      </p>
      {matched.length > 0 && (
        <ul className="plain small" aria-label="Requests it would have matched">
          {matched.slice(0, 20).map((row) => (
            <PreviewRow key={row.id} row={row} />
          ))}
        </ul>
      )}
    </div>
  );
}

function PreviewRow({ row }: { row: AuditRow }) {
  return (
    <li data-testid="rule-preview-row">
      <span className="muted">{new Date(row.decidedAt).toLocaleString()}</span> {row.tool}{" "}
      <span className="muted">on {row.serverId}</span> ({row.decision.replace("_", " ")}){" "}
      {/* Arguments are untrusted: text only. */}
      <code>{JSON.stringify(row.arguments)}</code>
    </li>
  );
}
