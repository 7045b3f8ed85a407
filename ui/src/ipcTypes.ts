// The types the backend's commands take and return and its channels carry. Almost all are
// generated from the Rust types (generated/types.ts, by src-tauri/bindings.rs; a Rust test fails
// when they drift): this module re-exports them, names a few as the components know them, and
// declares by hand only what Rust does not type (MCP results it passes on as JSON, and the
// window's own remembered state). ipc.ts re-exports all of it, so components import from there.

import type { Attachment, Geometry, ProviderInput } from "./generated/types";

export type * from "./generated/types";

/** What `set_provider` takes; the same fields `ProviderView` carries. */
export type ProviderSettings = ProviderInput;

/**
 * MCP's own result types, which the backend passes on as the server sent them (JSON, typed
 * `JsonValue` in Rust's types): the shapes the spec gives, narrowed to what the window reads.
 * The server's words: untrusted text.
 */

/** One part of a resource: text, or base64 bytes. */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string }
  | { uri: string; mimeType?: string; blob: string };

/** MCP's ReadResourceResult. */
export interface ReadResourceResult {
  contents: ResourceContents[];
}

/** A prompt's content, as MCP's GetPromptResult. */
export interface PromptResult {
  description?: string;
  messages: { role: "user" | "assistant"; content: { type: string; text?: string; resource?: { uri: string; text?: string } } }[];
}

/** What a turn is sent with besides its text (the arguments of `send_message`). */
export interface TurnInput {
  /** Servers switched off for this chat, whose tools the model is not offered. */
  serversOff?: string[];
  /** Resources attached to the message, read by the backend when it is sent. */
  attachments?: Attachment[];
}

/**
 * What the window remembers between runs (not settings): the backend's store keeps each key's
 * JSON as the window wrote it (Rust sees a `JsonValue` per key), apart from `window`.
 */
export interface UiState {
  /** The window's size and place, kept by the backend itself. */
  window?: Geometry;
  screen?: string;
  settingsSection?: string;
  panels?: Record<string, number>;
  dismissed?: string[];
  /** Unsent text, by conversation id (`new` for a chat not yet saved). */
  drafts?: Record<string, string>;
  /** Servers switched off, by conversation id. */
  chatServers?: Record<string, string[]>;
  /** The look chosen in Settings → General; absent follows the system. */
  theme?: "light" | "dark";
}
