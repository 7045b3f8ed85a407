import { useCallback, useEffect, useRef, useState } from "react";
import {
  deleteConversation,
  errorMessage,
  listConversations,
  renameConversation,
  type ConversationSummary,
} from "../ipc";

interface Props {
  /** Changes whenever the list may have changed (a turn ended, a new chat began). */
  version: number;
  current: string | null;
  disabled: boolean;
  onOpen: (id: string) => void;
  onDeleted: (id: string) => void;
}

/** How long typing must pause before the search goes to the backend. */
export const SEARCH_DELAY_MS = 200;

/** The stored conversations: search, open, rename, delete. */
export default function Conversations({ version, current, disabled, onOpen, onDeleted }: Props) {
  const [items, setItems] = useState<ConversationSummary[]>([]);
  const [search, setSearch] = useState("");
  // What the list shows: the search once typing pauses, so a word is one query, not one per key.
  const [query, setQuery] = useState("");
  // Answers can arrive out of order; only the latest request's answer is shown.
  const latest = useRef(0);
  // The query the shown list answers (the status line counts its matches).
  const [matched, setMatched] = useState("");
  const [renaming, setRenaming] = useState<{ id: string; title: string } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const next = search.trim();
    if (next === query) return;
    const timer = setTimeout(() => setQuery(next), next ? SEARCH_DELAY_MS : 0);
    return () => clearTimeout(timer);
  }, [search, query]);

  const refresh = useCallback(() => {
    const ticket = ++latest.current;
    listConversations(query || null).then(
      (list) => {
        if (ticket !== latest.current) return;
        setItems(list);
        setMatched(query);
        setError(null);
      },
      (e) => {
        if (ticket === latest.current) setError(errorMessage(e));
      },
    );
  }, [query]);

  useEffect(refresh, [refresh, version]);

  const rename = async () => {
    if (!renaming) return;
    try {
      await renameConversation(renaming.id, renaming.title);
      setRenaming(null);
      refresh();
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const remove = async (c: ConversationSummary) => {
    if (!window.confirm(`Delete “${c.title}” and its messages?`)) return;
    try {
      await deleteConversation(c.id);
      onDeleted(c.id);
      refresh();
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  return (
    <aside className="conversations" aria-label="Conversations">
      <div role="search">
        <label htmlFor="conversation-search" className="small">
          Search conversations
        </label>
        <input
          id="conversation-search"
          type="search"
          placeholder="Titles and messages"
          aria-describedby="conversation-search-result"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape" && search) {
              e.preventDefault();
              setSearch("");
            }
          }}
        />
      </div>
      <p id="conversation-search-result" className="muted small" role="status" data-testid="conversation-search-result">
        {matched
          ? items.length === 0
            ? `No conversation matches “${matched}”.`
            : `${items.length} ${items.length === 1 ? "conversation matches" : "conversations match"} “${matched}”.`
          : ""}
      </p>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      <ul data-testid="conversation-list">
        {items.map((c) => (
          <li key={c.id} className={c.id === current ? "current" : undefined}>
            {renaming?.id === c.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void rename();
                }}
              >
                <input
                  aria-label="New title"
                  value={renaming.title}
                  autoFocus
                  onChange={(e) => setRenaming({ id: c.id, title: e.target.value })}
                  onKeyDown={(e) => e.key === "Escape" && setRenaming(null)}
                />
              </form>
            ) : (
              <button
                type="button"
                className="link"
                disabled={disabled}
                aria-current={c.id === current}
                onClick={() => onOpen(c.id)}
                data-testid="conversation"
              >
                {c.title}
              </button>
            )}
            <span className="row small">
              <button
                type="button"
                className="link"
                disabled={disabled}
                aria-label={`Rename “${c.title}”`}
                onClick={() => setRenaming({ id: c.id, title: c.title })}
              >
                Rename
              </button>
              <button
                type="button"
                className="link"
                disabled={disabled}
                aria-label={`Delete “${c.title}”`}
                onClick={() => void remove(c)}
              >
                Delete
              </button>
            </span>
          </li>
        ))}
      </ul>
    </aside>
  );
}
