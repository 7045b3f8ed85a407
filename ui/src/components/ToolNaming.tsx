// How tools are named for the model, and which each server shows: the naming mode, and per
// server a prefix and include/exclude patterns. The backend checks everything (a bad glob or
// prefix is refused with a message naming the field) and the catalog does the naming itself;
// this form only edits the settings.
import { useCallback, useEffect, useId, useRef, useState } from "react";
import {
  DEFAULT_TOOL_SEARCH,
  errorMessage,
  setToolSettings,
  toolSettings,
  type CatalogSettings,
  type NamingMode,
  type SearchMode,
  type ServerSnapshot,
  type ServerToolSettings,
  type ToolSearch,
} from "../ipc";
import { SECTION_ICONS } from "../icons";
import { ScreenHeading } from "./WithIcon";

const MODES: { mode: NamingMode; name: string; explained: string }[] = [
  {
    mode: "auto",
    name: "Automatic",
    explained:
      "A tool keeps its own name unless another offered tool has the same one; then each of those is named prefix__tool.",
  },
  {
    mode: "always",
    name: "Always prefixed",
    explained: "Every tool is named prefix__tool, so names never change when you add a server.",
  },
  {
    mode: "none",
    name: "Never prefixed",
    explained: "Tools keep their own names; two with the same name are a problem until you turn one off.",
  },
];

const SEARCH_MODES: { mode: SearchMode; name: string; explained: string }[] = [
  {
    mode: "auto",
    name: "When there are many tools",
    explained: "Past the numbers below, the model gets the always-loaded tools and a search that loads the others it needs.",
  },
  { mode: "always", name: "Always", explained: "The model always searches for tools, except the always-loaded ones." },
  { mode: "never", name: "Never", explained: "Every tool is sent with every request (up to the provider's limit)." },
];

/** A server's fields as typed. */
export interface Draft {
  prefix: string;
  include: string;
  exclude: string;
  /** Every tool of the server is offered even when tool search is on. */
  alwaysLoaded: boolean;
  /** Tool names offered even when tool search is on, separated like patterns. */
  pinned: string;
}

const EMPTY: Draft = { prefix: "", include: "", exclude: "", alwaysLoaded: false, pinned: "" };

/** Patterns separated by commas or new lines; a comma inside `{a,b}` belongs to its pattern. */
export function splitPatterns(text: string): string[] {
  const patterns: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "{") depth++;
    if (ch === "}" && depth > 0) depth--;
    if (ch === "\n" || (ch === "," && depth === 0)) {
      patterns.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  patterns.push(current);
  return patterns.map((p) => p.trim()).filter(Boolean);
}

function draftsOf(settings: CatalogSettings): Record<string, Draft> {
  const drafts: Record<string, Draft> = {};
  for (const [id, s] of Object.entries(settings?.servers ?? {})) {
    drafts[id] = {
      prefix: s.prefix ?? "",
      include: (s.include ?? []).join("\n"),
      exclude: (s.exclude ?? []).join("\n"),
      alwaysLoaded: s.alwaysLoaded ?? false,
      pinned: (s.alwaysLoadedTools ?? []).join("\n"),
    };
  }
  return drafts;
}

const sameDraft = (a: Draft, b: Draft) =>
  a.prefix === b.prefix &&
  a.include === b.include &&
  a.exclude === b.exclude &&
  a.alwaysLoaded === b.alwaysLoaded &&
  a.pinned === b.pinned;

/**
 * The settings to save: `current` (read just before saving, so tools switched off meanwhile
 * stay off) with the naming mode and the servers whose fields changed from what was loaded.
 */
export function withEdits(
  current: CatalogSettings,
  naming: NamingMode,
  drafts: Record<string, Draft>,
  loaded: Record<string, Draft>,
  search: ToolSearch = current.search ?? DEFAULT_TOOL_SEARCH,
): CatalogSettings {
  const servers: Record<string, ServerToolSettings> = { ...(current.servers ?? {}) };
  for (const [id, draft] of Object.entries(drafts)) {
    if (sameDraft(draft, loaded[id] ?? EMPTY)) continue;
    const entry: ServerToolSettings = { ...(servers[id] ?? {}) };
    delete entry.prefix;
    delete entry.include;
    delete entry.exclude;
    delete entry.alwaysLoaded;
    delete entry.alwaysLoadedTools;
    const prefix = draft.prefix.trim();
    const include = splitPatterns(draft.include);
    const exclude = splitPatterns(draft.exclude);
    const pinned = splitPatterns(draft.pinned);
    if (prefix) entry.prefix = prefix;
    if (include.length > 0) entry.include = include;
    if (exclude.length > 0) entry.exclude = exclude;
    if (draft.alwaysLoaded) entry.alwaysLoaded = true;
    if (pinned.length > 0) entry.alwaysLoadedTools = pinned;
    if (Object.keys(entry).length > 0) servers[id] = entry;
    else delete servers[id];
  }
  const settings: CatalogSettings = Object.keys(servers).length > 0 ? { naming, servers } : { naming };
  const isDefault =
    search.mode === DEFAULT_TOOL_SEARCH.mode &&
    search.maxTools === DEFAULT_TOOL_SEARCH.maxTools &&
    search.maxTokens === DEFAULT_TOOL_SEARCH.maxTokens;
  return isDefault ? settings : { ...settings, search };
}

export default function ToolNaming({ servers }: { servers: ServerSnapshot[] }) {
  const base = useId();
  const [naming, setNaming] = useState<NamingMode>("auto");
  const [search, setSearch] = useState<ToolSearch>(DEFAULT_TOOL_SEARCH);
  const [loaded, setLoaded] = useState<Record<string, Draft> | null>(null);
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  // Typed but not saved: a refresh from the backend must not overwrite it.
  const edited = useRef(false);

  const show = useCallback((settings: CatalogSettings) => {
    const d = draftsOf(settings);
    setNaming(settings?.naming ?? "auto");
    setSearch(settings?.search ?? DEFAULT_TOOL_SEARCH);
    setLoaded(d);
    setDrafts(d);
    edited.current = false;
  }, []);

  useEffect(() => {
    if (edited.current) return;
    toolSettings().then(
      (settings) => {
        if (!edited.current) show(settings);
      },
      (e) => setMessage({ text: errorMessage(e), error: true }),
    );
  }, [servers, show]);

  const edit = (change: () => void) => {
    edited.current = true;
    setMessage(null);
    change();
  };
  const setField = (id: string, field: keyof Draft, value: string | boolean) =>
    edit(() => setDrafts((all) => ({ ...all, [id]: { ...(all[id] ?? EMPTY), [field]: value } })));
  const setLimit = (field: "maxTools" | "maxTokens", text: string) => {
    const value = Number.parseInt(text, 10);
    edit(() => setSearch((s) => ({ ...s, [field]: Number.isFinite(value) && value >= 0 ? value : 0 })));
  };

  const save = async () => {
    if (!loaded) return;
    setBusy(true);
    setMessage(null);
    try {
      const current = await toolSettings();
      const saved = await setToolSettings(withEdits(current, naming, drafts, loaded, search));
      show(saved);
      setMessage({ text: "Tool settings saved.", error: false });
    } catch (e) {
      setMessage({ text: errorMessage(e), error: true });
    } finally {
      setBusy(false);
    }
  };

  // The configured servers, then any the settings name that are no longer configured.
  const known = new Set(servers.map((s) => s.id));
  const rows = [
    ...servers.map((s) => ({ id: s.id, name: s.name })),
    ...Object.keys(drafts)
      .filter((id) => !known.has(id))
      .map((id) => ({ id, name: id })),
  ];
  const customised = rows.filter((r) => !sameDraft(loaded?.[r.id] ?? EMPTY, EMPTY)).length;

  return (
    <section className="card tool-naming" aria-labelledby={`${base}-heading`} data-testid="tool-naming">
      <ScreenHeading icon={SECTION_ICONS.tools} id={`${base}-heading`}>
        Tool names
      </ScreenHeading>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <fieldset className="plain-fieldset">
          <legend>How the model sees tool names</legend>
          {MODES.map((m) => (
            <label key={m.mode} className="row small check">
              <input
                type="radio"
                name={`${base}-naming`}
                value={m.mode}
                checked={naming === m.mode}
                data-testid={`naming-${m.mode}`}
                onChange={() => edit(() => setNaming(m.mode))}
              />
              <span>
                <strong>{m.name}</strong>: {m.explained}
              </span>
            </label>
          ))}
        </fieldset>
        <fieldset className="plain-fieldset" data-testid="tool-search">
          <legend>Tool search</legend>
          {SEARCH_MODES.map((m) => (
            <label key={m.mode} className="row small check">
              <input
                type="radio"
                name={`${base}-search`}
                value={m.mode}
                checked={search.mode === m.mode}
                data-testid={`search-${m.mode}`}
                onChange={() => edit(() => setSearch((s) => ({ ...s, mode: m.mode })))}
              />
              <span>
                <strong>{m.name}</strong>: {m.explained}
              </span>
            </label>
          ))}
          <label htmlFor={`${base}-max-tools`}>Search when more tools than</label>
          <input
            id={`${base}-max-tools`}
            type="number"
            min={0}
            data-testid="search-max-tools"
            value={search.maxTools}
            disabled={search.mode !== "auto"}
            onChange={(e) => setLimit("maxTools", e.target.value)}
          />
          <label htmlFor={`${base}-max-tokens`}>or when their definitions take more tokens than</label>
          <input
            id={`${base}-max-tokens`}
            type="number"
            min={0}
            data-testid="search-max-tokens"
            value={search.maxTokens}
            disabled={search.mode !== "auto"}
            onChange={(e) => setLimit("maxTokens", e.target.value)}
          />
        </fieldset>
        {rows.length > 0 && (
          <details className="naming-servers">
            <summary>
              Prefixes and patterns per server{" "}
              <span className="muted small">
                (set for {customised} of {rows.length})
              </span>
            </summary>
            <p className="muted small">
              The prefix replaces the server id in prefix__tool names. Patterns are globs on a tool&apos;s own name
              (e.g. read_* or {"{get,list}_*"}), separated by commas or new lines. With include patterns, only
              matching tools are offered; a tool matching an exclude pattern is hidden.
            </p>
            {rows.map((row, i) => {
              const draft = drafts[row.id] ?? EMPTY;
              const id = `${base}-s${i}`;
              return (
                <fieldset key={row.id} className="naming-server" data-testid={`naming-server-${row.id}`}>
                  <legend>
                    {row.name}
                    {row.name !== row.id && (
                      <>
                        {" "}
                        <code className="muted small">{row.id}</code>
                      </>
                    )}
                    {!known.has(row.id) && <span className="muted small"> (not configured)</span>}
                  </legend>
                  <label htmlFor={`${id}-prefix`}>Prefix of {row.name}</label>
                  <input
                    id={`${id}-prefix`}
                    data-testid="naming-prefix"
                    placeholder={row.id}
                    value={draft.prefix}
                    onChange={(e) => setField(row.id, "prefix", e.target.value)}
                  />
                  <label htmlFor={`${id}-include`}>Only offer tools of {row.name} matching</label>
                  <textarea
                    id={`${id}-include`}
                    data-testid="naming-include"
                    rows={2}
                    placeholder="All tools"
                    value={draft.include}
                    onChange={(e) => setField(row.id, "include", e.target.value)}
                  />
                  <label htmlFor={`${id}-exclude`}>Hide tools of {row.name} matching</label>
                  <textarea
                    id={`${id}-exclude`}
                    data-testid="naming-exclude"
                    rows={2}
                    placeholder="None"
                    value={draft.exclude}
                    onChange={(e) => setField(row.id, "exclude", e.target.value)}
                  />
                  <label className="row small check">
                    <input
                      type="checkbox"
                      data-testid="naming-always-loaded"
                      checked={draft.alwaysLoaded}
                      onChange={(e) => setField(row.id, "alwaysLoaded", e.target.checked)}
                    />
                    <span>Always load every tool of {row.name}, even when tool search is on</span>
                  </label>
                  <label htmlFor={`${id}-pinned`}>Always load these tools of {row.name}</label>
                  <textarea
                    id={`${id}-pinned`}
                    data-testid="naming-pinned"
                    rows={2}
                    placeholder="None: they are found by search"
                    value={draft.pinned}
                    onChange={(e) => setField(row.id, "pinned", e.target.value)}
                  />
                </fieldset>
              );
            })}
          </details>
        )}
        <div className="row">
          <button type="submit" data-testid="naming-save" disabled={busy || !loaded}>
            {busy ? "Saving…" : "Save tool settings"}
          </button>
        </div>
        {message && (
          <p
            role={message.error ? "alert" : "status"}
            className={message.error ? "error small" : "ok small"}
            data-testid="naming-message"
          >
            {message.text}
          </p>
        )}
      </form>
    </section>
  );
}
