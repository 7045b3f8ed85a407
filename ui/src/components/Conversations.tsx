import { useCallback, useEffect, useState } from "react";
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

/** The stored conversations: search, open, rename, delete. */
export default function Conversations({ version, current, disabled, onOpen, onDeleted }: Props) {
  const [items, setItems] = useState<ConversationSummary[]>([]);
  const [search, setSearch] = useState("");
  const [renaming, setRenaming] = useState<{ id: string; title: string } | null>(null);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(() => {
    listConversations(search.trim() || null).then(
      (list) => {
        setItems(list);
        setError(null);
      },
      (e) => setError(errorMessage(e)),
    );
  }, [search]);

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
      <label htmlFor="conversation-search" className="sr-only">
        Search conversations
      </label>
      <input
        id="conversation-search"
        type="search"
        placeholder="Search conversations"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
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
                onClick={() => setRenaming({ id: c.id, title: c.title })}
              >
                Rename
              </button>
              <button type="button" className="link" disabled={disabled} onClick={() => void remove(c)}>
                Delete
              </button>
            </span>
          </li>
        ))}
      </ul>
    </aside>
  );
}
