import type { LucideIcon } from "lucide-react";
import { ACTION_ICONS, ICON_SIZE, SCREEN_ICONS } from "./icons";
import { WithIcon } from "./components/WithIcon";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  approvalRules,
  errorMessage,
  getProvider,
  listModels,
  listServers,
  onApprovalsChanged,
  onServersChanged,
  onInstallLink,
  pendingInstallLink,
  type LinkOffer,
  openLogFolder,
  pendingApprovals,
  restartServer,
  setPaused,
  setProvider,
  startupNotices,
  toolCatalog,
  answerAll,
  type ProviderView,
  type ServerSnapshot,
  type ToolCatalogView,
} from "./ipc";
import ChatPanel, { type ChatHandle } from "./components/ChatPanel";
import ProviderPanel from "./components/ProviderPanel";
import ActivityPanel from "./components/ActivityPanel";
import ServersPanel from "./components/ServersPanel";
import ServerRequests from "./components/ServerRequests";
import SettingsPanel, { SECTIONS, type SectionId } from "./components/SettingsPanel";
import AddServerDialog, { type AddTab } from "./components/AddServerDialog";
import CommandPalette, { type PaletteCommand } from "./components/CommandPalette";
import Splitter from "./components/Splitter";
import { applyTheme, themeChoice } from "./theme";
import { dismiss, isDismissed, loadUiState, remember, remembered } from "./uiState";

export type Screen = "chat" | "servers" | "activity" | "provider" | "settings";
export const SCREENS: { id: Screen; label: string; key: string; icon: LucideIcon }[] = [
  { id: "chat", label: "Chat", key: "1", icon: SCREEN_ICONS.chat },
  { id: "servers", label: "Servers", key: "2", icon: SCREEN_ICONS.servers },
  { id: "activity", label: "Activity", key: "3", icon: SCREEN_ICONS.activity },
  { id: "provider", label: "Provider", key: "4", icon: SCREEN_ICONS.provider },
  { id: "settings", label: "Settings", key: "5", icon: SCREEN_ICONS.settings },
];

const SIDEBAR = { min: 180, max: 420, initial: 248 };
const isScreen = (s: unknown): s is Screen => SCREENS.some((t) => t.id === s);

/** "Ctrl" here, "⌘" on a Mac. */
const MOD = typeof navigator !== "undefined" && /Mac/.test(navigator.platform) ? "⌘" : "Ctrl+";

export default function App() {
  const [ready, setReady] = useState(false);
  const [screen, setScreenState] = useState<Screen>("chat");
  const [section, setSectionState] = useState<SectionId>("general");
  const [servers, setServers] = useState<ServerSnapshot[]>([]);
  const [catalog, setCatalog] = useState<ToolCatalogView | null>(null);
  const [provider, setProviderView] = useState<ProviderView | null>(null);
  // Bumped when the provider changes outside its screen (the chat's model picker, the first
  // run, the palette), so that screen's form shows the new one.
  const [providerChanges, setProviderChanges] = useState(0);
  const providerChanged = useCallback((view: ProviderView) => {
    setProviderView(view);
    setProviderChanges((n) => n + 1);
  }, []);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [notices, setNotices] = useState<string[]>([]);
  const [waiting, setWaiting] = useState(0);
  const [paused, setPausedState] = useState(false);
  const [palette, setPalette] = useState(false);
  const [adding, setAdding] = useState<AddTab | null>(null);
  // The server an install link holds, shown in the Add server dialog until it closes.
  const [linked, setLinked] = useState<LinkOffer | null>(null);
  const [selectedServer, setSelectedServer] = useState<string | null>(null);
  const [sidebarWidth, setSidebarWidth] = useState(SIDEBAR.initial);
  const [chatList, setChatList] = useState<HTMLElement | null>(null);
  const chat = useRef<ChatHandle>(null);

  const setScreen = useCallback((next: Screen) => {
    setScreenState(next);
    remember("screen", next);
  }, []);
  const openSection = useCallback(
    (next: SectionId) => {
      setSectionState(next);
      remember("settingsSection", next);
      setScreen("settings");
    },
    [setScreen],
  );

  const refreshServers = useCallback(() => {
    listServers().then(setServers, (e) => setLoadError(errorMessage(e)));
    toolCatalog().then(setCatalog, (e) => setLoadError(errorMessage(e)));
  }, []);
  const refreshWaiting = useCallback(() => {
    pendingApprovals().then(
      (all) => setWaiting(all?.length ?? 0),
      () => undefined,
    );
  }, []);

  useEffect(() => {
    // The last screen and panel sizes first, so the window opens as it was left.
    loadUiState().then((state) => {
      applyTheme(themeChoice());
      if (isScreen(state.screen)) setScreenState(state.screen);
      if (SECTIONS.some((s) => s.id === state.settingsSection)) setSectionState(state.settingsSection as SectionId);
      const width = state.panels?.sidebar;
      if (typeof width === "number") setSidebarWidth(Math.min(SIDEBAR.max, Math.max(SIDEBAR.min, width)));
      setReady(true);
    });
    refreshServers();
    refreshWaiting();
    getProvider().then(setProviderView, (e) => setLoadError(errorMessage(e)));
    startupNotices().then(setNotices, (e) => setLoadError(errorMessage(e)));
    approvalRules().then(
      (p) => setPausedState(p?.paused ?? false),
      () => undefined,
    );
    const servers = onServersChanged(refreshServers);
    const approvals = onApprovalsChanged(refreshWaiting);
    const openLink = (offer: LinkOffer | null) => {
      if (!offer) return;
      setLinked(offer);
      setAdding("json");
    };
    const links = onInstallLink(openLink);
    pendingInstallLink().then(openLink, () => undefined);
    return () => {
      servers.then((f) => f());
      approvals.then((f) => f());
      links.then((f) => f());
    };
  }, [refreshServers, refreshWaiting]);

  const failed = servers.filter((s) => s.status.state === "failed").length;

  const pause = useCallback(async (on: boolean) => {
    try {
      const policy = await setPaused(on);
      setPausedState(policy.paused);
    } catch (e) {
      setLoadError(errorMessage(e));
    }
  }, []);

  const addServer = useCallback(
    (tab: AddTab = "wellKnown") => {
      setScreen("servers");
      setAdding(tab);
    },
    [setScreen],
  );

  const commands = useMemo((): PaletteCommand[] => {
    const go = SCREENS.map((s) => ({
      id: `go-${s.id}`,
      group: "Go to",
      label: s.label,
      shortcut: `${MOD}${s.key}`,
      run: () => setScreen(s.id),
    }));
    const sections = SECTIONS.map((s) => ({
      id: `settings-${s.id}`,
      group: "Settings",
      label: s.label,
      run: () => openSection(s.id),
    }));
    const perServer = servers.flatMap((s) => [
      {
        id: `open-server-${s.id}`,
        group: "Server",
        label: `Open ${s.name}`,
        run: () => {
          setSelectedServer(s.id);
          setScreen("servers");
        },
      },
      {
        id: `restart-server-${s.id}`,
        group: "Server",
        label: `Restart ${s.name}`,
        run: () => void restartServer(s.id).catch((e: unknown) => setLoadError(errorMessage(e))),
      },
    ]);
    const model: PaletteCommand = {
      id: "switch-model",
      label: "Switch model",
      then: {
        title: "Switch model",
        placeholder: provider ? `Now ${provider.model}; type to filter or name another` : "Model",
        load: async () => {
          let models: string[];
          try {
            models = await listModels();
          } catch (e) {
            throw new Error(`The provider's models could not be listed (${errorMessage(e)}); type a name.`, {
              cause: e,
            });
          }
          return models.map((m) => modelCommand(m));
        },
        custom: (typed) => (typed ? modelCommand(typed) : null),
      },
    };
    function modelCommand(name: string): PaletteCommand {
      return {
        id: `model-${name}`,
        label: name === provider?.model ? `${name} (in use)` : `Use ${name}`,
        run: () => {
          if (!provider) return;
          setProvider({ kind: provider.kind, baseUrl: provider.baseUrl, model: name }).then(providerChanged, (e) =>
            setLoadError(errorMessage(e)),
          );
        },
      };
    }
    return [
      {
        id: "new-chat",
        label: "New chat",
        shortcut: `${MOD}N`,
        run: () => {
          setScreen("chat");
          chat.current?.newChat();
        },
      },
      model,
      paused
        ? { id: "resume", label: "Resume all tools", run: () => void pause(false) }
        : { id: "pause", label: "Pause all tools", run: () => void pause(true) },
      { id: "add-server", label: "Add server", run: () => addServer("wellKnown") },
      { id: "add-json", label: "Add servers from JSON or a file", run: () => addServer("json") },
      ...(waiting > 0
        ? [
            {
              id: "approve-all",
              label: `Approve all ${waiting} waiting requests`,
              run: () => void answerAll({ decision: "approve" }).catch(() => undefined),
            },
            {
              id: "deny-all",
              label: `Deny all ${waiting} waiting requests`,
              run: () => void answerAll({ decision: "deny", reason: null }).catch(() => undefined),
            },
          ]
        : []),
      ...go,
      ...sections,
      {
        id: "open-logs",
        label: "Open the log folder",
        run: () => void openLogFolder().catch((e: unknown) => setLoadError(errorMessage(e))),
      },
      ...perServer,
    ];
  }, [servers, provider, paused, waiting, setScreen, openSection, pause, addServer, providerChanged]);

  // Window-wide keys: the palette, the screens, a new chat. They work from any field.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey) return;
      const key = e.key.toLowerCase();
      const to = SCREENS.find((s) => s.key === key);
      if (key === "k") {
        e.preventDefault();
        setPalette((open) => !open);
      } else if (to && !e.shiftKey) {
        e.preventDefault();
        setScreen(to.id);
      } else if (key === "n" && !e.shiftKey) {
        e.preventDefault();
        setScreen("chat");
        chat.current?.newChat();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [setScreen]);

  const tabButtons = useRef<(HTMLButtonElement | null)[]>([]);
  // The sidebar is one stop for Tab; arrows, Home and End move between screens (and open them).
  const onTabKey = (e: React.KeyboardEvent, index: number) => {
    const last = SCREENS.length - 1;
    const next = e.key === "ArrowDown" || e.key === "ArrowRight";
    const previous = e.key === "ArrowUp" || e.key === "ArrowLeft";
    const to = next
      ? (index + 1) % SCREENS.length
      : previous
        ? (index + last) % SCREENS.length
        : e.key === "Home"
          ? 0
          : e.key === "End"
            ? last
            : null;
    if (to === null) return;
    e.preventDefault();
    setScreen(SCREENS[to].id);
    tabButtons.current[to]?.focus();
  };

  const count = (id: Screen) => {
    if (id === "activity" && waiting > 0) return { n: waiting, words: `${waiting} waiting`, kind: "waiting" };
    if (id === "servers" && failed > 0) return { n: failed, words: `${failed} failed`, kind: "failed" };
    return null;
  };

  const shownNotices = notices.filter((n) => !isDismissed(n));
  return (
    <div className="shell" style={{ gridTemplateColumns: `${sidebarWidth}px auto minmax(0, 1fr)` }}>
      <aside className="sidebar" aria-label="Toolgate">
        <div className="brand row spread">
          <h1>Toolgate</h1>
          <button
            type="button"
            className="palette-button"
            data-testid="open-palette"
            aria-keyshortcuts="Control+K"
            onClick={() => setPalette(true)}
          >
            Commands <kbd aria-hidden="true">{MOD}K</kbd>
          </button>
        </div>
        <nav role="tablist" aria-label="Sections" aria-orientation="vertical" className="nav">
          {SCREENS.map((t, i) => {
            const badge = count(t.id);
            return (
              <button
                key={t.id}
                role="tab"
                id={`tab-${t.id}`}
                ref={(el) => {
                  tabButtons.current[i] = el;
                }}
                data-testid={`tab-${t.id}`}
                aria-selected={screen === t.id}
                aria-controls={`panel-${t.id}`}
                aria-keyshortcuts={`Control+${t.key}`}
                tabIndex={screen === t.id ? 0 : -1}
                onClick={() => setScreen(t.id)}
                onKeyDown={(e) => onTabKey(e, i)}
              >
                <span className="nav-label">
                  <t.icon size={ICON_SIZE} aria-hidden="true" />
                  {t.label}
                </span>
                {badge && (
                  <span className={`count ${badge.kind}`} data-testid={`count-${t.id}`}>
                    <span aria-hidden="true">{badge.n}</span>
                    <span className="sr-only"> ({badge.words})</span>
                  </span>
                )}
              </button>
            );
          })}
        </nav>
        {paused && (
          <p className="paused-chip small" role="status" data-testid="paused-chip">
            All tools are paused.{" "}
            <button type="button" className="link" onClick={() => void pause(false)}>
              Resume
            </button>
          </p>
        )}
        <div className="sidebar-heading-row">
          <h2 className="sidebar-heading">Chats</h2>
          <button
            type="button"
            data-testid="sidebar-new-chat"
            aria-keyshortcuts="Control+N"
            onClick={() => {
              setScreen("chat");
              chat.current?.newChat();
            }}
          >
            <WithIcon icon={ACTION_ICONS.add}>New chat</WithIcon>
          </button>
        </div>
        {/* The chat's conversation list is rendered here by ChatPanel. */}
        <div className="sidebar-chats" ref={setChatList} data-testid="sidebar-chats" />
      </aside>
      <Splitter
        label="Resize the sidebar"
        width={sidebarWidth}
        min={SIDEBAR.min}
        max={SIDEBAR.max}
        onChange={(w) => {
          setSidebarWidth(w);
          remember("panels", { ...remembered().panels, sidebar: w });
        }}
        testId="sidebar-splitter"
      />
      <div className="main-column">
        {shownNotices.map((notice) => (
          <div key={notice} className="card notice" role="alert" data-testid="startup-notice">
            <p>{notice}</p>
            <button
              type="button"
              onClick={() => {
                dismiss(notice);
                setNotices((all) => all.filter((n) => n !== notice));
              }}
            >
              Dismiss
            </button>
          </div>
        ))}
        {loadError && (
          <p className="error banner" role="alert">
            {loadError}
          </p>
        )}
        {/* The Activity screen shows these in its own list. */}
        {screen !== "activity" && <ServerRequests />}
        {/* Rendered once the remembered state is read, so each screen starts as it was left. */}
        {ready && (
        <main>
          <section role="tabpanel" id="panel-chat" aria-labelledby="tab-chat" hidden={screen !== "chat"}>
            <ChatPanel
              ref={chat}
              provider={provider}
              servers={servers}
              listHost={chatList}
              onOpenProvider={() => setScreen("provider")}
              onShow={() => setScreen("chat")}
              onProvider={providerChanged}
              onImportFrom={() => addServer("json")}
            />
          </section>
          <section role="tabpanel" id="panel-servers" aria-labelledby="tab-servers" hidden={screen !== "servers"}>
            <ServersPanel
              servers={servers}
              catalog={catalog}
              selected={selectedServer}
              onSelect={setSelectedServer}
              onAdd={() => addServer("wellKnown")}
            />
          </section>
          <section role="tabpanel" id="panel-activity" aria-labelledby="tab-activity" hidden={screen !== "activity"}>
            <ActivityPanel
              visible={screen === "activity"}
              servers={servers}
              paused={paused}
              onPause={(on) => void pause(on)}
            />
          </section>
          <section role="tabpanel" id="panel-provider" aria-labelledby="tab-provider" hidden={screen !== "provider"}>
            {provider && <ProviderPanel key={providerChanges} provider={provider} onChange={setProviderView} />}
          </section>
          <section role="tabpanel" id="panel-settings" aria-labelledby="tab-settings" hidden={screen !== "settings"}>
            <SettingsPanel
              section={section}
              onSection={openSection}
              servers={servers}
              onAddFromJson={() => addServer("json")}
            />
          </section>
        </main>
        )}
      </div>
      {adding && (
        <AddServerDialog
          tab={adding}
          onTab={setAdding}
          link={linked}
          onClose={() => {
            setAdding(null);
            setLinked(null);
          }}
          onAdded={(id) => {
            if (id) setSelectedServer(id);
            refreshServers();
          }}
        />
      )}
      <CommandPalette open={palette} onClose={() => setPalette(false)} commands={commands} />
    </div>
  );
}
