import { useCallback, useEffect, useRef, useState } from "react";
import {
  errorMessage,
  getProvider,
  listServers,
  toolCatalog,
  type ToolCatalogView,
  onServersChanged,
  startupNotices,
  type ProviderView,
  type ServerSnapshot,
} from "./ipc";
import ChatPanel from "./components/ChatPanel";
import ProviderPanel from "./components/ProviderPanel";
import ApprovalsPanel from "./components/ApprovalsPanel";
import ServersPanel from "./components/ServersPanel";
import ServerRequests from "./components/ServerRequests";
import Diagnostics from "./components/Diagnostics";

type Tab = "chat" | "servers" | "approvals" | "provider" | "diagnostics";
const TABS: { id: Tab; label: string }[] = [
  { id: "chat", label: "Chat" },
  { id: "servers", label: "Servers & tools" },
  { id: "approvals", label: "Approvals" },
  { id: "provider", label: "Provider" },
  { id: "diagnostics", label: "Diagnostics" },
];

export default function App() {
  const [tab, setTab] = useState<Tab>("chat");
  const [servers, setServers] = useState<ServerSnapshot[]>([]);
  const [catalog, setCatalog] = useState<ToolCatalogView | null>(null);
  const [provider, setProviderView] = useState<ProviderView | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [notices, setNotices] = useState<string[]>([]);

  const refreshServers = useCallback(() => {
    listServers().then(setServers, (e) => setLoadError(errorMessage(e)));
    toolCatalog().then(setCatalog, (e) => setLoadError(errorMessage(e)));
  }, []);

  useEffect(() => {
    refreshServers();
    getProvider().then(setProviderView, (e) => setLoadError(errorMessage(e)));
    startupNotices().then(setNotices, (e) => setLoadError(errorMessage(e)));
    const unlisten = onServersChanged(refreshServers);
    return () => {
      unlisten.then((f) => f());
    };
  }, [refreshServers]);

  const tabButtons = useRef<(HTMLButtonElement | null)[]>([]);

  // The tab bar is one stop for Tab; arrows, Home and End move between tabs (and open them).
  const onTabKey = (e: React.KeyboardEvent, index: number) => {
    const last = TABS.length - 1;
    const to =
      e.key === "ArrowRight"
        ? (index + 1) % TABS.length
        : e.key === "ArrowLeft"
          ? (index + last) % TABS.length
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? last
              : null;
    if (to === null) return;
    e.preventDefault();
    setTab(TABS[to].id);
    tabButtons.current[to]?.focus();
  };

  return (
    <div className="app">
      <header className="topbar">
        <h1>Toolgate</h1>
        <nav role="tablist" aria-label="Sections" aria-orientation="horizontal">
          {TABS.map((t, i) => (
            <button
              key={t.id}
              role="tab"
              id={`tab-${t.id}`}
              ref={(el) => {
                tabButtons.current[i] = el;
              }}
              data-testid={`tab-${t.id}`}
              aria-selected={tab === t.id}
              aria-controls={`panel-${t.id}`}
              tabIndex={tab === t.id ? 0 : -1}
              onClick={() => setTab(t.id)}
              onKeyDown={(e) => onTabKey(e, i)}
            >
              {t.label}
            </button>
          ))}
        </nav>
      </header>
      {notices.map((notice, i) => (
        <div key={notice} className="card notice" role="alert" data-testid="startup-notice">
          <p>{notice}</p>
          <button type="button" onClick={() => setNotices((all) => all.filter((_, j) => j !== i))}>
            Dismiss
          </button>
        </div>
      ))}
      {loadError && (
        <p className="error" role="alert">
          {loadError}
        </p>
      )}
      <ServerRequests />
      <main>
        <section role="tabpanel" id="panel-chat" aria-labelledby="tab-chat" hidden={tab !== "chat"}>
          <ChatPanel provider={provider} servers={servers} onOpenProvider={() => setTab("provider")} />
        </section>
        <section role="tabpanel" id="panel-servers" aria-labelledby="tab-servers" hidden={tab !== "servers"}>
          <ServersPanel servers={servers} catalog={catalog} />
        </section>
        <section role="tabpanel" id="panel-approvals" aria-labelledby="tab-approvals" hidden={tab !== "approvals"}>
          <ApprovalsPanel visible={tab === "approvals"} />
        </section>
        <section role="tabpanel" id="panel-provider" aria-labelledby="tab-provider" hidden={tab !== "provider"}>
          {provider && <ProviderPanel provider={provider} onChange={setProviderView} />}
        </section>
        <section role="tabpanel" id="panel-diagnostics" aria-labelledby="tab-diagnostics" hidden={tab !== "diagnostics"}>
          <Diagnostics />
        </section>
      </main>
    </div>
  );
}
