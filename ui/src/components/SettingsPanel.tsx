// Settings, one section at a time: general choices, how tools are named, the servers' secrets,
// importing and exporting (other AI apps included), and the diagnostics, which run when their
// section opens.
import { useEffect, useRef, useState } from "react";
import { errorMessage, setStartAtLogin, startAtLogin, type ServerSnapshot } from "../ipc";
import { chooseTheme, THEME_CHOICES, themeChoice, type ThemeChoice } from "../theme";
import ConnectHosts from "./ConnectHosts";
import HttpDoor from "./HttpDoor";
import IdentityProviderForm from "./IdentityProviderForm";
import Diagnostics from "./Diagnostics";
import { ExportServers } from "./ImportServers";
import Secrets from "./Secrets";
import ToolNaming from "./ToolNaming";
import { remember, remembered } from "../uiState";
import { SECTION_ICONS } from "../icons";
import { ScreenHeading, WithIcon } from "./WithIcon";

export type SectionId = "general" | "tools" | "secrets" | "import" | "diagnostics";
export const SECTIONS: { id: SectionId; label: string }[] = [
  { id: "general", label: "General" },
  { id: "tools", label: "Tool names" },
  { id: "secrets", label: "Secrets" },
  { id: "import", label: "Import and export" },
  { id: "diagnostics", label: "Diagnostics" },
];

interface Props {
  section: SectionId;
  onSection: (section: SectionId) => void;
  servers: ServerSnapshot[];
  onAddFromJson: () => void;
}

export default function SettingsPanel({ section, onSection, servers, onAddFromJson }: Props) {
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  const onKey = (e: React.KeyboardEvent, index: number) => {
    const last = SECTIONS.length - 1;
    const to =
      e.key === "ArrowDown"
        ? (index + 1) % SECTIONS.length
        : e.key === "ArrowUp"
          ? (index + last) % SECTIONS.length
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? last
              : null;
    if (to === null) return;
    e.preventDefault();
    onSection(SECTIONS[to].id);
    buttons.current[to]?.focus();
  };
  return (
    <div className="settings-screen">
      <nav role="tablist" aria-label="Settings sections" aria-orientation="vertical" className="subnav">
        {SECTIONS.map((s, i) => (
          <button
            key={s.id}
            ref={(el) => {
              buttons.current[i] = el;
            }}
            role="tab"
            id={`settings-tab-${s.id}`}
            data-testid={`settings-${s.id}`}
            aria-selected={section === s.id}
            aria-controls="settings-section"
            tabIndex={section === s.id ? 0 : -1}
            onClick={() => onSection(s.id)}
            onKeyDown={(e) => onKey(e, i)}
          >
            <WithIcon icon={SECTION_ICONS[s.id]}>{s.label}</WithIcon>
          </button>
        ))}
      </nav>
      {/* Only the open section is rendered: the diagnostics run each time theirs opens. */}
      <section
        role="tabpanel"
        id="settings-section"
        aria-labelledby={`settings-tab-${section}`}
        className="panel settings-section"
      >
        {section === "general" && <General />}
        {section === "tools" && <ToolNaming servers={servers} />}
        {section === "secrets" && (
          <>
            <ScreenHeading icon={SECTION_ICONS.secrets}>Secrets</ScreenHeading>
            <p className="muted small">
              Servers name a secret as <code>${"{"}secret:NAME{"}"}</code> in their environment or headers; its value
              lives in the OS keychain and reaches only the servers that name it.
            </p>
            <Secrets refreshKey={servers} emptyText="No server uses a secret yet." />
            <IdentityProviderForm />
          </>
        )}
        {section === "import" && (
          <>
            <ScreenHeading icon={SECTION_ICONS.import}>Import and export</ScreenHeading>
            <p>
              <button type="button" onClick={onAddFromJson}>
                Add servers from JSON or a file…
              </button>
            </p>
            <ConnectHosts />
            <HttpDoor />
            <ExportServers />
          </>
        )}
        {section === "diagnostics" && <Diagnostics />}
      </section>
    </div>
  );
}

function General() {
  const [atLogin, setAtLogin] = useState<boolean | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [dismissed, setDismissed] = useState(() => remembered().dismissed?.length ?? 0);
  const [theme, setTheme] = useState<ThemeChoice>(themeChoice);
  useEffect(() => {
    startAtLogin().then(
      (on) => setAtLogin(on ?? false),
      () => setAtLogin(null),
    );
  }, []);
  return (
    <>
      <ScreenHeading icon={SECTION_ICONS.general}>General</ScreenHeading>
      {atLogin !== null && (
        <label className="row check">
          <input
            type="checkbox"
            data-testid="start-at-login"
            checked={atLogin}
            onChange={(e) =>
              setStartAtLogin(e.target.checked).then(setAtLogin, (err) => setProblem(errorMessage(err)))
            }
          />
          Start Toolgate in the tray when I log in
        </label>
      )}
      <label className="row" htmlFor="theme-choice">
        Appearance
        <select
          id="theme-choice"
          data-testid="theme-choice"
          value={theme}
          onChange={(e) => {
            const choice = e.target.value as ThemeChoice;
            setTheme(choice);
            chooseTheme(choice);
          }}
        >
          {THEME_CHOICES.map((c) => (
            <option key={c.id} value={c.id}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <p className="muted small">Closing the window keeps Toolgate running in the tray.</p>
      {dismissed > 0 && (
        <p className="row">
          <span className="muted small">{dismissed} dismissed notices.</span>
          <button
            type="button"
            onClick={() => {
              remember("dismissed", []);
              setDismissed(0);
            }}
          >
            Show dismissed notices again
          </button>
        </p>
      )}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
    </>
  );
}
