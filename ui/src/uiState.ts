// What the window remembers between runs (the last screen, panel sizes, dismissed notices,
// unsent drafts, each chat's servers), read once at start and written back a moment after each
// change. The backend keeps it with tauri-plugin-store; settings are not kept here.
import { setUiState, uiState, type UiState } from "./ipc";

type Key = Exclude<keyof UiState, "window">;

let state: UiState = {};
let loading: Promise<UiState> | null = null;
const timers = new Map<Key, ReturnType<typeof setTimeout>>();

/** How long a value waits before it is written, so typing is one write, not one per key. */
export const REMEMBER_DELAY_MS = 300;

/** Reads the remembered state once; later calls share the first answer. Never rejects. */
export function loadUiState(): Promise<UiState> {
  loading ??= uiState().then(
    (found) => (state = found ?? {}),
    () => state,
  );
  return loading;
}

/** The state as loaded and changed since. */
export function remembered(): UiState {
  return state;
}

/** Changes one part now, and writes it shortly after (a later change of it replaces this one). */
export function remember<K extends Key>(key: K, value: UiState[K]) {
  state = { ...state, [key]: value };
  clearTimeout(timers.get(key));
  timers.set(
    key,
    setTimeout(() => {
      timers.delete(key);
      setUiState(key, value ?? null).catch(() => undefined);
    }, REMEMBER_DELAY_MS),
  );
}

/** Whether a notice was dismissed for good. */
export const isDismissed = (notice: string) => (state.dismissed ?? []).includes(notice);

export function dismiss(notice: string) {
  if (!isDismissed(notice)) remember("dismissed", [...(state.dismissed ?? []), notice]);
}

/** For tests: forget everything loaded, so the next load asks the backend again. */
export function resetUiState() {
  for (const timer of timers.values()) clearTimeout(timer);
  timers.clear();
  state = {};
  loading = null;
}
