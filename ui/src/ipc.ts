// The one module components import to talk to the Rust backend. Each command's function is made
// from its Rust signature (generated/commands.ts, by src-tauri/command_list.rs) and re-exported
// here; this module adds only what a signature cannot say (a channel's callback, a result's shape
// the backend passes on as JSON) and the events. The types
// they take and return are generated from the Rust types (generated/types.ts, through
// ipcTypes.ts) and re-exported from here, so components import everything from this module.

import { Channel } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type {
  CommandError,
  PromptResult,
  ProviderKind,
  ReadResourceResult,
  LinkOffer,
  SignedInInfo,
  TemplateRead,
  ToolSearch,
  TurnEvent,
  TurnInput,
  UiState,
} from "./ipcTypes";

export type * from "./ipcTypes";
export * from "./generated/commands";
import * as commands from "./generated/commands";

// The backend passes these results on as the server's JSON; their MCP shapes are in ipcTypes.ts.

/** Reads one of a server's resources; the contents are the server's, untrusted. */
export const readResource = (serverId: string, uri: string) =>
  commands.readResource(serverId, uri) as Promise<unknown> as Promise<ReadResourceResult>;

/** Fills a resource template with `values` and reads the resource; the URI it made too. */
export const readResourceTemplate = (serverId: string, template: string, values: Record<string, string>) =>
  commands.readResourceTemplate(serverId, template, values) as Promise<unknown> as Promise<
    Omit<TemplateRead, "result"> & { result: ReadResourceResult }
  >;

/** Gets one of a server's prompts filled with `arguments`. */
export const getPrompt = (serverId: string, name: string, args: Record<string, string>) =>
  commands.getPrompt(serverId, name, args) as Promise<unknown> as Promise<PromptResult>;

/** A tool call the app makes: its own server only, through the gate. Returns a CallToolResult. */
export const appCallTool = (id: string, name: string, args: unknown): Promise<unknown> =>
  commands.appCallTool(id, name, args ?? {});

/** Everything the window remembered (`ui-state.json`), or nothing on a first start. */
export const uiState = () => commands.uiState() as Promise<unknown> as Promise<UiState | null>;

/** A readable message from whatever a command rejected with. */
/** Whether a command ended because the user stopped it (the backend's kind "stopped"). */
export function wasStopped(e: unknown): boolean {
  return !!e && typeof e === "object" && "kind" in e && (e as CommandError).kind === "stopped";
}

export function errorMessage(e: unknown): string {
  if (e && typeof e === "object" && "message" in e) return String((e as CommandError).message);
  return String(e);
}

export const DEFAULT_BASE_URLS: Record<ProviderKind, string> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
};

/** Each format's default model, as the backend's `ProviderKind::default_model` has it. */
export const DEFAULT_MODELS: Record<ProviderKind, string> = {
  anthropic: "claude-sonnet-4-5",
  openai: "gpt-4.1",
};




/** Signs in to a remote server in the system browser; `onUrl` gets the address it opened. */
export function signInServer(
  serverId: string,
  extraScopes: string[],
  onUrl: (url: string) => void,
): Promise<SignedInInfo> {
  const channel = new Channel<string>();
  channel.onmessage = onUrl;
  return commands.signInServer(serverId, extraScopes, channel);
}



















/** What the edit form shows for a value that looks like a secret; sent back, it keeps the value. */
export const HIDDEN_VALUE = "(hidden: kept as it is)";























export const DEFAULT_TOOL_SEARCH: ToolSearch = { mode: "auto", maxTools: 40, maxTokens: 10000 };










/** Runs one turn; `onEvent` sees progress and approval requests, the promise the final answer. */
export function sendMessage(text: string, onEvent: (event: TurnEvent) => void, input: TurnInput = {}): Promise<string> {
  const channel = new Channel<TurnEvent>();
  channel.onmessage = onEvent;
  return commands.sendMessage(text, input.attachments ?? [], channel, input.serversOff ?? []);
}






/** Calls `onDrop` with the paths of files dropped on the window (Tauri's drag-and-drop, which gives
 *  paths where the web-view's own drop would give only the files' contents). */
export const onFilesDropped = (onDrop: (paths: string[]) => void): Promise<UnlistenFn> =>
  listen<{ paths: string[] }>("tauri://drag-drop", (e) => onDrop(e.payload.paths));












/** Calls `onChange` whenever a server's status or tool list changes. */
export const onServersChanged = (onChange: () => void): Promise<UnlistenFn> =>
  listen("servers-changed", () => onChange());

/** Calls `onChange` whenever a request starts or stops waiting for approval. */
/** A `toolgate://install` link handed to Toolgate: the server it holds, or why it is unreadable. */
export const onInstallLink = (onLink: (offer: LinkOffer) => void): Promise<UnlistenFn> =>
  listen<LinkOffer>("install-link", (e) => onLink(e.payload));


export const onApprovalsChanged = (onChange: () => void): Promise<UnlistenFn> =>
  listen("approvals-changed", () => onChange());






/** Remembers one part of the UI state (`null` forgets it). */
export const setUiState = <K extends Exclude<keyof UiState, "window">>(key: K, value: UiState[K] | null) =>
  commands.setUiState(key, value ?? null);
