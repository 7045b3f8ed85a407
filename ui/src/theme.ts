// The window's light or dark look: the system's (the default, followed as it changes) or one the
// user chose in Settings → General, remembered with the window's state. styles.css keys its
// dark colours on `data-theme="dark"` on the root element, which only this module sets.
import { remember, remembered } from "./uiState";

export type ThemeChoice = "system" | "light" | "dark";
export const THEME_CHOICES: { id: ThemeChoice; label: string }[] = [
  { id: "system", label: "Match the system" },
  { id: "light", label: "Light" },
  { id: "dark", label: "Dark" },
];

const DARK = "(prefers-color-scheme: dark)";
let stopFollowing: (() => void) | null = null;

const systemIsDark = () => window.matchMedia?.(DARK).matches ?? false;

function paint(dark: boolean) {
  const root = document.documentElement;
  root.dataset.theme = dark ? "dark" : "light";
  root.style.colorScheme = dark ? "dark" : "light";
}

/** The remembered choice; anything else read back is the system's. */
export function themeChoice(): ThemeChoice {
  const saved = remembered().theme;
  return saved === "light" || saved === "dark" ? saved : "system";
}

/** Paints `choice` now; "system" also follows the system while it stays chosen. */
export function applyTheme(choice: ThemeChoice) {
  stopFollowing?.();
  stopFollowing = null;
  if (choice !== "system") {
    paint(choice === "dark");
    return;
  }
  paint(systemIsDark());
  const query = window.matchMedia?.(DARK);
  if (query) {
    const follow = (e: MediaQueryListEvent) => paint(e.matches);
    query.addEventListener("change", follow);
    stopFollowing = () => query.removeEventListener("change", follow);
  }
}

/** The user's choice: painted at once and remembered. */
export function chooseTheme(choice: ThemeChoice) {
  applyTheme(choice);
  remember("theme", choice === "system" ? undefined : choice);
}

/** Whether the window is dark now (for an MCP App's host context). */
export const isDark = () => document.documentElement.dataset.theme === "dark";
