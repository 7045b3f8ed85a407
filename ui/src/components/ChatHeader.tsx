// The chat's header: the model it talks to (picked from the provider's list or typed), which
// servers' tools this chat offers the model, and the tokens the chat has used.
import { useEffect, useRef, useState } from "react";
import { errorMessage, listModels, setProvider, type ProviderView, type ServerSnapshot, type Usage } from "../ipc";
import { describeUsage } from "../usage";

interface Props {
  provider: ProviderView | null;
  servers: ServerSnapshot[];
  /** Servers switched off for this chat. */
  serversOff: string[];
  onServersOff: (off: string[]) => void;
  usage: Usage;
  /** The estimated cost in millionths of a dollar; null: the model's price is not known. */
  cost: number | null;
  /** Model calls of no known price, left out of the cost. */
  unpriced: number;
  busy: boolean;
  onProvider?: (view: ProviderView) => void;
  /** Opens the Provider screen (no provider is usable yet). */
  onSetUp?: () => void;
}

type MenuName = "model" | "servers";

/**
 * The header's menus as the OS's menus behave: one open at a time, closed by Escape (focus goes
 * back to the menu's button) and by a click anywhere outside it.
 */
function useMenus() {
  const [open, setOpen] = useState<MenuName | null>(null);
  const header = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!open) return;
    const outside = (e: Event) => {
      const menu = header.current?.querySelector(`[data-menu=${open}]`);
      if (menu && !(e.target instanceof Node && menu.contains(e.target))) setOpen(null);
    };
    document.addEventListener("pointerdown", outside);
    document.addEventListener("mousedown", outside);
    document.addEventListener("focusin", outside);
    return () => {
      document.removeEventListener("pointerdown", outside);
      document.removeEventListener("mousedown", outside);
      document.removeEventListener("focusin", outside);
    };
  }, [open]);
  /** What a `<details>` menu needs: its open state, kept in step with the others. */
  const menu = (name: MenuName) => ({
    "data-menu": name,
    open: open === name,
    onToggle: (e: React.SyntheticEvent<HTMLDetailsElement>) => {
      const isOpen = e.currentTarget.open;
      setOpen((current) => (isOpen ? name : current === name ? null : current));
    },
    onKeyDown: (e: React.KeyboardEvent<HTMLDetailsElement>) => {
      if (e.key !== "Escape" || open !== name) return;
      e.preventDefault();
      e.stopPropagation();
      setOpen(null);
      e.currentTarget.querySelector("summary")?.focus();
    },
  });
  return { header, menu, close: () => setOpen(null) };
}

export default function ChatHeader({
  provider,
  servers,
  serversOff,
  onServersOff,
  usage,
  cost,
  unpriced,
  busy,
  onProvider,
  onSetUp,
}: Props) {
  const on = servers.filter((s) => s.enabled && !serversOff.includes(s.id));
  const { header, menu, close } = useMenus();
  return (
    <header className="chat-header row spread" data-testid="chat-header" ref={header}>
      <div className="row">
        {provider && provider.keyNeeded && !provider.keySet ? (
          // A model name would claim a provider that cannot answer yet: say what is missing.
          <button type="button" className="secondary" data-testid="model-set-up" onClick={onSetUp}>
            Model: none yet · Set up a provider
          </button>
        ) : (
          provider && (
            <ModelPicker provider={provider} disabled={busy} onProvider={onProvider} menu={menu("model")} onClose={close} />
          )
        )}
        <details className="menu" data-testid="chat-servers" {...menu("servers")}>
          <summary>
            Servers: {on.length} of {servers.filter((s) => s.enabled).length} on
          </summary>
          <div className="menu-body">
            <p className="muted small">Tools this chat offers the model:</p>
            {servers.length === 0 && <p className="muted small">No servers yet.</p>}
            {servers.map((s) => (
              <label key={s.id} className="row check">
                <input
                  type="checkbox"
                  data-testid={`chat-server-${s.id}`}
                  disabled={!s.enabled || busy}
                  checked={s.enabled && !serversOff.includes(s.id)}
                  onChange={(e) =>
                    onServersOff(e.target.checked ? serversOff.filter((id) => id !== s.id) : [...serversOff, s.id])
                  }
                />
                {s.name}
                <span className="muted small">
                  {s.enabled ? `${s.tools.length} tools` : "switched off under Servers"}
                </span>
              </label>
            ))}
          </div>
        </details>
      </div>
      {(usage.inputTokens > 0 || usage.outputTokens > 0) && (
        <span className="muted small" data-testid="chat-usage">
          This chat: {describeUsage(usage, cost, unpriced)}
        </span>
      )}
    </header>
  );
}

function ModelPicker({
  provider,
  disabled,
  onProvider,
  menu,
  onClose,
}: {
  provider: ProviderView;
  disabled: boolean;
  onProvider?: (view: ProviderView) => void;
  menu: ReturnType<ReturnType<typeof useMenus>["menu"]>;
  onClose: () => void;
}) {
  const [models, setModels] = useState<string[] | null>(null);
  const [typed, setTyped] = useState("");
  const [problem, setProblem] = useState<string | null>(null);

  const load = () => {
    setProblem(null);
    listModels().then(
      (list) => setModels(list ?? []),
      (e) => {
        setModels([]);
        setProblem(`The models could not be listed: ${errorMessage(e)}`);
      },
    );
  };

  const choose = (model: string) => {
    const name = model.trim();
    if (!name) return;
    setProvider({ kind: provider.kind, baseUrl: provider.baseUrl, model: name }).then(
      (view) => {
        onProvider?.(view);
        setTyped("");
        onClose();
      },
      (e) => setProblem(errorMessage(e)),
    );
  };

  return (
    <details
      className="menu"
      data-testid="model-picker"
      {...menu}
      onToggle={(e) => {
        menu.onToggle(e);
        if (e.currentTarget.open && models === null) load();
      }}
    >
      <summary aria-label={`Model: ${provider.model}. Change the model`}>
        Model: <strong>{provider.model}</strong>
      </summary>
      <div className="menu-body">
        {models === null && <p className="muted small">Loading the provider&apos;s models…</p>}
        {problem && (
          <p className="error small" role="alert">
            {problem}
          </p>
        )}
        <ul className="plain model-list" aria-label="Models">
          {(models ?? []).map((m) => (
            <li key={m}>
              <button
                type="button"
                className="link"
                disabled={disabled}
                aria-current={m === provider.model}
                onClick={() => choose(m)}
              >
                {m}
              </button>
            </li>
          ))}
        </ul>
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            choose(typed);
          }}
        >
          <input
            aria-label="Another model by name"
            placeholder="Model name"
            spellCheck={false}
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
          />
          <button type="submit" disabled={disabled || !typed.trim()}>
            Use
          </button>
        </form>
      </div>
    </details>
  );
}
