// Helpers for the component tests: React renders into jsdom, against Tauri's IPC mock.
import { act, type ReactElement } from "react";
import { createRoot, type Root } from "react-dom/client";
import css from "./styles.css?raw";

// React's act() needs to know it runs in a test.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

export interface Mounted {
  host: HTMLElement;
  root: Root;
  unmount: () => void;
}

/** Renders `element` into a fresh element in the document, and lets its first effects run. */
export async function mount(element: ReactElement): Promise<Mounted> {
  const host = document.createElement("div");
  document.body.append(host);
  const root = createRoot(host);
  await act(async () => root.render(element));
  await settle();
  return {
    host,
    root,
    unmount: () => {
      act(() => root.unmount());
      host.remove();
    },
  };
}

/** Lets pending promises (mocked commands) and the renders they cause finish. */
export const settle = (ms = 0) => act(() => new Promise<void>((resolve) => setTimeout(resolve, ms)));

/** Sets a field's value the way typing does, so React's onChange sees it. */
export async function type(element: HTMLInputElement | HTMLTextAreaElement, value: string) {
  const proto = element instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  const setValue = Object.getOwnPropertyDescriptor(proto, "value")?.set;
  await act(async () => {
    setValue?.call(element, value);
    element.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

export async function click(element: Element | null) {
  if (!(element instanceof HTMLElement)) throw new Error("nothing to click");
  await act(async () => element.click());
}

export async function press(element: Element | null, key: string, modifiers: KeyboardEventInit = {}) {
  if (!(element instanceof HTMLElement)) throw new Error("nothing to press a key on");
  await act(async () => {
    element.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...modifiers }));
  });
}

/**
 * Puts the window's stylesheet in the document, so that getComputedStyle answers with its rules
 * (jsdom applies the declared values of matching rules; it does no layout and inherits nothing).
 * Returns what takes it away again.
 */
export function withStyles(): () => void {
  const style = document.createElement("style");
  style.textContent = css;
  document.head.append(style);
  return () => style.remove();
}
