import { useState } from "react";
import {
  type Attachment,
  errorMessage,
  getPrompt,
  type PromptResult,
  readResourceTemplate,
  type ServerSnapshot,
} from "../ipc";

/** What the composer's extras hand back: a resource to attach, or a prompt's text to insert. */
interface Props {
  servers: ServerSnapshot[];
  onAttach: (attachment: Attachment & { label: string }) => void;
  onInsert: (text: string) => void;
}

type Open = null | "resource" | "prompt";

/**
 * Beside the message box: attach one of a server's resources (listed, or made from a template
 * whose variables are filled here and read to check it), or pick a server's prompt, fill its
 * arguments and insert its messages into the message box to edit before sending. Everything a
 * server returns is shown as text.
 */
export default function ChatExtras({ servers, onAttach, onInsert }: Props) {
  const [open, setOpen] = useState<Open>(null);
  const ready = servers.filter((s) => s.status.state === "ready");
  const withResources = ready.filter((s) => s.resources.length > 0 || (s.resourceTemplates ?? []).length > 0);
  const withPrompts = ready.filter((s) => s.prompts.length > 0);
  if (withResources.length === 0 && withPrompts.length === 0) return null;
  return (
    <div className="chat-extras">
      <div className="row">
        {withResources.length > 0 && (
          <button
            type="button"
            className="secondary"
            aria-expanded={open === "resource"}
            data-testid="attach-resource"
            onClick={() => setOpen(open === "resource" ? null : "resource")}
          >
            Attach a resource
          </button>
        )}
        {withPrompts.length > 0 && (
          <button
            type="button"
            className="secondary"
            aria-expanded={open === "prompt"}
            data-testid="use-prompt"
            onClick={() => setOpen(open === "prompt" ? null : "prompt")}
          >
            Use a prompt
          </button>
        )}
      </div>
      {open === "resource" && (
        <ResourcePicker
          servers={withResources}
          onAttach={(a) => {
            onAttach(a);
            setOpen(null);
          }}
        />
      )}
      {open === "prompt" && (
        <PromptPicker
          servers={withPrompts}
          onInsert={(text) => {
            onInsert(text);
            setOpen(null);
          }}
        />
      )}
    </div>
  );
}

function ResourcePicker({
  servers,
  onAttach,
}: {
  servers: ServerSnapshot[];
  onAttach: (attachment: Attachment & { label: string }) => void;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [preview, setPreview] = useState<{ key: string; uri: string; text: string } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const read = async (serverId: string, template: string, variables: string[]) => {
    setProblem(null);
    const filled: Record<string, string> = {};
    for (const v of variables) {
      const value = values[`${serverId}|${template}|${v}`];
      if (value) filled[v] = value;
    }
    try {
      const { uri, result } = await readResourceTemplate(serverId, template, filled);
      const text = result.contents
        .map((c) => ("text" in c ? c.text : `[${c.mimeType ?? "binary"} content]`))
        .join("\n");
      setPreview({ key: `${serverId}|${template}`, uri, text });
    } catch (e) {
      setProblem(errorMessage(e));
    }
  };

  return (
    <div className="picker" role="group" aria-label="Attach a resource" data-testid="resource-picker">
      {servers.map((s) => (
        <div key={s.id}>
          <h4>{s.name}</h4>
          <ul className="plain">
            {s.resources.map((r) => (
              <li key={r.uri} className="row spread">
                <span>
                  {r.name} <code className="muted small">{r.uri}</code>
                </span>
                <button
                  type="button"
                  aria-label={`Attach ${r.name}`}
                  onClick={() => onAttach({ serverId: s.id, uri: r.uri, label: r.name })}
                >
                  Attach
                </button>
              </li>
            ))}
            {(s.resourceTemplates ?? []).map((t) => {
              const key = `${s.id}|${t.uriTemplate}`;
              return (
                <li key={t.uriTemplate} data-testid="template">
                  <div>
                    {t.name} <code className="muted small">{t.uriTemplate}</code>
                  </div>
                  {t.description && <p className="muted small">{t.description}</p>}
                  <div className="row wrap">
                    {t.variables.map((v) => (
                      <label key={v} className="small">
                        {v}{" "}
                        <input
                          aria-label={`${t.name}: ${v}`}
                          value={values[`${key}|${v}`] ?? ""}
                          onChange={(e) => setValues((all) => ({ ...all, [`${key}|${v}`]: e.target.value }))}
                        />
                      </label>
                    ))}
                    <button
                      type="button"
                      aria-label={`Read ${t.name}`}
                      onClick={() => void read(s.id, t.uriTemplate, t.variables)}
                    >
                      Read
                    </button>
                  </div>
                  {preview?.key === key && (
                    <div data-testid="template-preview">
                      <p className="muted small">
                        <code>{preview.uri}</code>
                      </p>
                      <pre>{preview.text}</pre>
                      <button
                        type="button"
                        aria-label={`Attach ${preview.uri}`}
                        onClick={() => onAttach({ serverId: s.id, uri: preview.uri, label: preview.uri })}
                      >
                        Attach
                      </button>
                    </div>
                  )}
                </li>
              );
            })}
          </ul>
        </div>
      ))}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

/** A prompt's messages as text for the message box; another speaker's turns are labelled. */
export function promptText(result: PromptResult): string {
  return result.messages
    .map((m) => {
      const c = m.content;
      const text = c.type === "text" ? (c.text ?? "") : c.resource?.text ?? `[${c.type} content]`;
      return m.role === "assistant" ? `Assistant: ${text}` : text;
    })
    .join("\n\n");
}

function PromptPicker({ servers, onInsert }: { servers: ServerSnapshot[]; onInsert: (text: string) => void }) {
  const prompts = servers.flatMap((s) => s.prompts.map((p) => ({ server: s, prompt: p })));
  const [chosen, setChosen] = useState(0);
  const [args, setArgs] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const current = prompts[chosen];
  if (!current) return null;
  const info =
    current.prompt.argumentInfo ??
    current.prompt.arguments.map((name) => ({ name, description: null, required: false }));
  const missing = info.filter((a) => a.required && !args[a.name]?.trim()).map((a) => a.name);

  const insert = async () => {
    setProblem(null);
    const filled = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== ""));
    try {
      onInsert(promptText(await getPrompt(current.server.id, current.prompt.name, filled)));
    } catch (e) {
      setProblem(errorMessage(e));
    }
  };

  return (
    <div className="picker" role="group" aria-label="Use a prompt" data-testid="prompt-picker">
      <label>
        Prompt{" "}
        <select
          value={chosen}
          onChange={(e) => {
            setChosen(Number(e.target.value));
            setArgs({});
          }}
        >
          {prompts.map((p, i) => (
            <option key={`${p.server.id}/${p.prompt.name}`} value={i}>
              {p.prompt.name} ({p.server.name})
            </option>
          ))}
        </select>
      </label>
      {current.prompt.description && <p className="muted small">{current.prompt.description}</p>}
      {info.map((a) => (
        <label key={a.name} className="field">
          {a.name}
          {a.required ? " (required)" : ""}
          <input
            aria-label={a.name}
            aria-required={a.required}
            value={args[a.name] ?? ""}
            onChange={(e) => setArgs((all) => ({ ...all, [a.name]: e.target.value }))}
          />
          {a.description && <span className="muted small">{a.description}</span>}
        </label>
      ))}
      <button type="button" data-testid="insert-prompt" disabled={missing.length > 0} onClick={() => void insert()}>
        Insert into the message
      </button>
      {missing.length > 0 && <p className="muted small">Fill in: {missing.join(", ")}</p>}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
