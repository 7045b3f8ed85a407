// The window's look: the system's by default, followed as it changes; a choice in Settings →
// General painted at once, remembered with the window's state, and the system's again when
// "Match the system" is chosen.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { applyTheme, isDark } from "./theme";
import SettingsPanel from "./components/SettingsPanel";
import { REMEMBER_DELAY_MS } from "./uiState";
import { mount, settle } from "./testing";

/** A system whose dark mode the test switches. */
function system(dark: boolean) {
  const listeners = new Set<(e: MediaQueryListEvent) => void>();
  const query = {
    get matches() {
      return dark;
    },
    addEventListener: (_: string, f: (e: MediaQueryListEvent) => void) => listeners.add(f),
    removeEventListener: (_: string, f: (e: MediaQueryListEvent) => void) => listeners.delete(f),
  };
  window.matchMedia = vi.fn(() => query as unknown as MediaQueryList);
  return {
    set(value: boolean) {
      dark = value;
      for (const f of listeners) f({ matches: value } as MediaQueryListEvent);
    },
    listening: () => listeners.size,
  };
}

const theme = () => document.documentElement.dataset.theme;

beforeEach(() => applyTheme("light"));
afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

describe("the window's look", () => {
  it("follows the system, also when it changes", () => {
    const os = system(true);
    applyTheme("system");
    expect(theme()).toBe("dark");
    expect(isDark()).toBe(true);
    expect(document.documentElement.style.colorScheme).toBe("dark");
    os.set(false);
    expect(theme()).toBe("light");
    // A choice of its own stops following the system.
    applyTheme("dark");
    expect(os.listening()).toBe(0);
    os.set(false);
    expect(theme()).toBe("dark");
  });

  it("is chosen in Settings → General, painted at once and remembered", async () => {
    const os = system(false);
    const saved: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "set_ui_state") saved.push(args);
      if (cmd === "start_at_login") return false;
      return null;
    });
    const app = await mount(
      createElement(SettingsPanel, { section: "general", onSection: () => undefined, servers: [], onAddFromJson: () => undefined }),
    );
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const select = app.host.querySelector("[data-testid=theme-choice]") as HTMLSelectElement;
      expect(select.labels?.[0]?.textContent).toContain("Appearance");
      expect(select.value).toBe("system");
      const choose = async (value: string) => {
        await act(async () => {
          select.value = value;
          select.dispatchEvent(new Event("change", { bubbles: true }));
        });
        await act(async () => vi.advanceTimersByTime(REMEMBER_DELAY_MS + 1));
      };
      await choose("dark");
      expect(theme()).toBe("dark");
      expect(saved.at(-1)).toEqual({ key: "theme", value: "dark" });
      // The system turning light changes nothing while dark is chosen.
      os.set(false);
      expect(theme()).toBe("dark");
      await choose("system");
      expect(theme()).toBe("light");
      expect(saved.at(-1)).toEqual({ key: "theme", value: null });
      os.set(true);
      expect(theme()).toBe("dark");
    } finally {
      vi.useRealTimers();
    }
    await settle();
    app.unmount();
  });
});
