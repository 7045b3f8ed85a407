// *Add server → From a registry*: search the MCP registry (the organisation's, or the one in the
// settings, or the official one), page through what it lists, and add one server pinned to its
// version. What it will run is shown before it is added; each value it needs is asked, the
// secret ones as passwords (they go to the keychain, never to the settings).
import { useState } from "react";
import { addFromRegistry, errorMessage, registryPlan, registrySearch, type Listing, type Plan } from "../ipc";

export default function RegistryTab({
  onAdded,
  onOffline,
}: {
  onAdded: (id: string) => void;
  /** Shows the well-known servers instead (they need no registry), offered when a search fails. */
  onOffline?: () => void;
}) {
  const [query, setQuery] = useState("");
  const [searchFailed, setSearchFailed] = useState(false);
  const [results, setResults] = useState<Listing[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [plan, setPlan] = useState<Plan | null>(null);
  const [id, setId] = useState("");
  const [answers, setAnswers] = useState<Record<string, string>>({});

  const search = async (more: boolean) => {
    setBusy(true);
    setProblem(null);
    setSearchFailed(false);
    try {
      const page = await registrySearch(query, more ? cursor : null);
      setResults((r) => (more && r ? [...r, ...page.servers] : page.servers));
      setCursor(page.nextCursor ?? null);
    } catch (e) {
      setProblem(errorMessage(e));
      setSearchFailed(true);
    } finally {
      setBusy(false);
    }
  };

  const choose = async (listing: Listing) => {
    setProblem(null);
    try {
      const p = await registryPlan(listing.name, listing.version);
      setPlan(p);
      setId(p.suggestedId);
      setAnswers(Object.fromEntries(p.asks.filter((a) => a.default != null).map((a) => [a.key, a.default ?? ""])));
    } catch (e) {
      setProblem(errorMessage(e));
    }
  };

  const add = async () => {
    if (!plan) return;
    setBusy(true);
    setProblem(null);
    try {
      await addFromRegistry(plan.name, plan.version, id.trim(), answers);
      onAdded(id.trim());
    } catch (e) {
      setProblem(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="registry-tab">
      <form
        className="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void search(false);
        }}
      >
        <input
          type="search"
          data-testid="registry-query"
          aria-label="Search the registry by name or description"
          placeholder="Name or description"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit" data-testid="registry-search" disabled={busy}>
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      {problem && (
        <p className="error" role="alert" data-testid="registry-problem">
          {problem}
        </p>
      )}
      {searchFailed && onOffline && (
        <p className="small">
          The well-known servers need no registry.{" "}
          <button type="button" data-testid="registry-offline" onClick={onOffline}>
            Show the well-known servers
          </button>
        </p>
      )}
      {results && results.length === 0 && <p className="muted">No server matches.</p>}
      {plan ? (
        <section data-testid="registry-plan" aria-label={`Add ${plan.name}`}>
          <h3>
            {plan.name} <span className="muted small">{plan.version}</span>
          </h3>
          {plan.warning && (
            <p className="warning" role="status">
              {plan.warning}
            </p>
          )}
          <p className="small">
            Runs: <code data-testid="registry-runs">{plan.runs}</code> (pinned to this version)
          </p>
          <label className="small" htmlFor="registry-id">
            Id in your settings
          </label>
          <input id="registry-id" data-testid="registry-id" value={id} onChange={(e) => setId(e.target.value)} />
          {plan.asks.map((a) => (
            <div key={a.key} className="registry-ask">
              <label className="small" htmlFor={`ask-${a.key}`}>
                {a.label}
                {a.required ? " (required)" : ""}
                {a.secret ? " — kept in the keychain" : ""}
              </label>
              {a.description && <p className="muted small">{a.description}</p>}
              {a.choices.length > 0 ? (
                <select
                  id={`ask-${a.key}`}
                  data-testid={`ask-${a.key}`}
                  value={answers[a.key] ?? ""}
                  onChange={(e) => setAnswers({ ...answers, [a.key]: e.target.value })}
                >
                  {!a.required && <option value="">—</option>}
                  {a.choices.map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id={`ask-${a.key}`}
                  data-testid={`ask-${a.key}`}
                  type={a.secret ? "password" : "text"}
                  autoComplete="off"
                  value={answers[a.key] ?? ""}
                  onChange={(e) => setAnswers({ ...answers, [a.key]: e.target.value })}
                />
              )}
            </div>
          ))}
          <div className="row">
            <button type="button" data-testid="registry-add" disabled={busy || !id.trim()} onClick={() => void add()}>
              Add {id.trim() || "it"}
            </button>
            <button type="button" onClick={() => setPlan(null)}>
              Back to the results
            </button>
          </div>
        </section>
      ) : (
        <ul className="plain" aria-label="Registry servers" data-testid="registry-results">
          {results?.map((r) => (
            <li key={`${r.name}@${r.version}`} data-testid="registry-result">
              <div className="row spread">
                <strong>{r.title ?? r.name}</strong>
                <button type="button" aria-label={`Add ${r.name}`} onClick={() => void choose(r)}>
                  Add…
                </button>
              </div>
              <p className="muted small">
                {r.name} {r.version} · {r.kinds.join(", ")}
              </p>
              <p className="small description-text">{r.description}</p>
              {r.deprecated && <p className="warning small">Deprecated: {r.deprecated}</p>}
            </li>
          ))}
        </ul>
      )}
      {!plan && cursor && (
        <button type="button" data-testid="registry-more" disabled={busy} onClick={() => void search(true)}>
          More
        </button>
      )}
    </div>
  );
}
