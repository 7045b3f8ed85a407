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
  /** A turn runs in the current chat: the others stay listed and usable, but opening one waits. */
  busy: boolean;
  /** The title of a new chat whose first turn runs, listed at once until it is stored. */
  pending?: string | null;
  onOpen: (id: string) => void;
  onDeleted: (id: string) => void;
}

/** How long typing must pause before the search goes to the backend. */
export const SEARCH_DELAY_MS = 200;

/** The stored conversations: search, open, rename, delete. */
export default function Conversations({ version, current, busy, pending, onOpen, onDeleted }: Props) {
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
  // Why a click did not open a chat (a turn still runs in this one).
  // Kept with the list's version it was said at: once the turn ends (and the list moves on), it goes.
  const [note, setNote] = useState<{ text: string; version: number } | null>(null);

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
      {busy && note?.version === version && (
        <p className="muted small" role="status" data-testid="conversation-note">
          {note.text}
        </p>
      )}
      <ul data-testid="conversation-list">
        {pending && !matched && !items.some((c) => c.id === current) && (
          <li className="current" data-testid="conversation-pending">
            <span className="conversation-title" aria-current="true">
              {pending}
            </span>
            <span className="muted small"> (new, answering…)</span>
          </li>
        )}
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
                className="conversation-title"
                aria-current={c.id === current}
                onClick={() => {
                  if (c.id === current) return;
                  // The running turn holds the chat; opening another waits for it to end.
                  if (busy)
                    setNote({
                      text: `Still answering in this chat: wait for it or stop it (Esc), then open “${c.title}”.`,
                      version,
                    });
                  else onOpen(c.id);
                }}
                data-testid="conversation"
              >
                {c.title}
              </button>
            )}
            <span className="row small">
              <button
                type="button"
                className="quiet"
                aria-label={`Rename “${c.title}”`}
                onClick={() => setRenaming({ id: c.id, title: c.title })}
              >
                Rename
              </button>
              <button
                type="button"
                className="quiet"
                disabled={busy && c.id === current}
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
