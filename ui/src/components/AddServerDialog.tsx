// *Add server*, as a dialog: a well-known server (which fills the form for the user to check),
// a server from an MCP registry, the form, JSON pasted or read from a file, or an MCP bundle (.mcpb). Every way ends in the same preview, which shows
// the exact command or address before anything runs.
import { useEffect, useRef, useState } from "react";
import AddServer, { type AddServerDraft } from "./AddServer";
import BundleTab from "./BundleTab";
import ImportServers from "./ImportServers";
import RegistryTab from "./RegistryTab";
import { WELL_KNOWN } from "../wellKnown";
import type { LinkOffer } from "../ipc";

export type AddTab = "wellKnown" | "registry" | "form" | "json" | "bundle";

const TABS: { id: AddTab; label: string }[] = [
  { id: "wellKnown", label: "Well-known servers" },
  { id: "form", label: "Form" },
  { id: "json", label: "JSON or a file" },
  { id: "registry", label: "From a registry" },
  { id: "bundle", label: "MCP bundle (.mcpb)" },
];

interface Props {
  tab: AddTab;
  onTab: (tab: AddTab) => void;
  onClose: () => void;
  /** A server was added (its id when one was). */
  onAdded: (id: string | null) => void;
  /** The server an install link holds, filled into the JSON tab. */
  link?: LinkOffer | null;
}

const FOCUSABLE = "button, input, select, textarea, summary, [tabindex]:not([tabindex='-1'])";

/** Tab and Shift+Tab wrap around inside the dialog instead of leaving it for the window behind. */
function keepFocusInside(e: React.KeyboardEvent, dialog: HTMLElement | null) {
  const all = [...(dialog?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])].filter(
    (el) => !el.hasAttribute("disabled") && el.tabIndex >= 0,
  );
  if (all.length === 0) return;
  const [first, last] = [all[0], all[all.length - 1]];
  if (e.shiftKey && document.activeElement === first) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first.focus();
  }
}

export default function AddServerDialog({ tab, onTab, onClose, onAdded, link }: Props) {
  const [draft, setDraft] = useState<{ key: number; value: AddServerDraft | undefined }>({ key: 0, value: undefined });
  const dialog = useRef<HTMLDivElement>(null);
  const before = useRef<Element | null>(document.activeElement);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);

  useEffect(() => {
    dialog.current?.querySelector<HTMLElement>("[role=tab][aria-selected=true]")?.focus();
    const back = before.current;
    return () => {
      if (back instanceof HTMLElement && back.isConnected) back.focus();
    };
  }, []);

  const choose = (value: AddServerDraft) => {
    setDraft((d) => ({ key: d.key + 1, value }));
    onTab("form");
  };

  const onTabKey = (e: React.KeyboardEvent, index: number) => {
    const to =
      e.key === "ArrowRight"
        ? (index + 1) % TABS.length
        : e.key === "ArrowLeft"
          ? (index + TABS.length - 1) % TABS.length
          : null;
    if (to === null) return;
    e.preventDefault();
    onTab(TABS[to].id);
    tabs.current[to]?.focus();
  };

  const added = (ids: string[]) => onAdded(ids[0] ?? null);

  return (
    <div className="modal-backdrop" onMouseDown={onClose}>
      <div
        ref={dialog}
        className="modal"
        role="dialog"
        aria-modal="true"
        aria-labelledby="add-server-title"
        data-testid="add-server-dialog"
        onMouseDown={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            onClose();
          } else if (e.key === "Tab") {
            keepFocusInside(e, dialog.current);
          }
        }}
      >
        <header className="row spread">
          <h2 id="add-server-title">Add server</h2>
          <button type="button" aria-label="Close" data-testid="add-server-close" onClick={onClose}>
            Close
          </button>
        </header>
        <div role="tablist" aria-label="How to add it" className="subtabs">
          {TABS.map((t, i) => (
            <button
              key={t.id}
              ref={(el) => {
                tabs.current[i] = el;
              }}
              role="tab"
              id={`add-tab-${t.id}`}
              data-testid={`add-tab-${t.id}`}
              aria-selected={tab === t.id}
              aria-controls={`add-panel-${t.id}`}
              tabIndex={tab === t.id ? 0 : -1}
              onClick={() => onTab(t.id)}
              onKeyDown={(e) => onTabKey(e, i)}
            >
              {t.label}
            </button>
          ))}
        </div>
        <div role="tabpanel" id={`add-panel-${tab}`} aria-labelledby={`add-tab-${tab}`} className="modal-body">
          {tab === "wellKnown" && (
            <>
              <p className="muted small">
                Choosing one fills the form with the command its README gives. You check it, and see it again before it
                runs.
              </p>
              <ul className="plain well-known" aria-label="Well-known servers">
                {WELL_KNOWN.map((w) => (
                  <li key={w.id} data-testid={`well-known-${w.id}`}>
                    <div className="row spread">
                      <strong>{w.name}</strong>
                      <button type="button" data-testid={`use-${w.id}`} aria-label={`Use ${w.name}`} onClick={() => choose(w.draft)}>
                        Use…
                      </button>
                    </div>
                    <p className="small description-text">{w.description}</p>
                    <p className="muted small">
                      Needs: {w.needs}. From {w.source}.
                    </p>
                  </li>
                ))}
              </ul>
            </>
          )}
          {tab === "registry" && <RegistryTab onAdded={(id) => onAdded(id)} onOffline={() => onTab("wellKnown")} />}
          {tab === "form" && <AddServer key={draft.key} initial={draft.value} onAdded={added} onDone={onClose} />}
          {tab === "json" && <ImportServers onImported={added} link={link ?? undefined} />}
          {tab === "bundle" && <BundleTab onAdded={(id) => onAdded(id)} />}
        </div>
      </div>
    </div>
  );
}
