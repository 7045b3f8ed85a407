// The TypeScript mirrors of the Rust types the backend's commands take and return (their
// camelCase JSON). Declarations only: ipc.ts re-exports them, and components import them
// from there, beside the functions that call the backend.

export type ServerStatus =
  | { state: "stopped" }
  | { state: "starting" }
  | { state: "ready" }
  | { state: "restarting"; attempt: number; retryInMs: number; reason: string }
  | { state: "failed"; reason: string }
  | { state: "signIn"; reason: string; again: boolean };

/** A remote server's sign-in as the window may see it: never a token. */
export interface SignedInInfo {
  issuer: string;
  /** Seconds since 1970 when the access token expires (renewed before then when renewable). */
  expiresAt: number | null;
  renewable: boolean;
  scopes: string[];
}

export interface ToolInfo {
  name: string;
  title: string | null;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown> | null;
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
}

export interface ResourceInfo {
  uri: string;
  name: string;
  description: string | null;
  mimeType: string | null;
}

export interface PromptInfo {
  name: string;
  description: string | null;
  arguments: string[];
  /** Each argument with what the server says of it, for the form that fills the prompt. */
  argumentInfo?: { name: string; description: string | null; required: boolean }[];
}

/** A resource template: an RFC 6570 URI template, filled in to read a resource. */
export interface ResourceTemplateInfo {
  uriTemplate: string;
  name: string;
  description: string | null;
  mimeType: string | null;
  /** The template's variables, in order. */
  variables: string[];
}

export interface ServerSnapshot {
  id: string;
  name: string;
  enabled: boolean;
  status: ServerStatus;
  implementation: string | null;
  protocolVersion: string | null;
  tools: ToolInfo[];
  resources: ResourceInfo[];
  resourceTemplates?: ResourceTemplateInfo[];
  prompts: PromptInfo[];
  /** The folders the server is offered as its roots. */
  roots: string[];
  /** A local server's sandbox: what it may change and reach, and what is not enforced. */
  sandbox?: SandboxReport | null;
  /** Its results bring text from outside into a chat (the user's mark, or what it is). */
  readsUntrusted?: boolean;
  /** Its calls can send data out of this computer. */
  sendsOut?: boolean;
  /** Tools whose results the user reviews before the model sees them ("*": every tool). */
  reviewResults?: string[];
  signedIn: SignedInInfo | null;
  /** The scopes a call was refused for; signing in again can grant them. */
  needsScope: string | null;
  /** Tools the server listed that Toolgate refuses, and why. */
  refusedTools: { name: string; reason: string }[];
}

/** How far a confined server reaches on the network. */
export type NetworkAccess = "none" | "loopback" | "any";

/** A local server's sandbox as it applies (or will, at its next start). */
export interface SandboxReport {
  enabled: boolean;
  network: NetworkAccess;
  /** Folders it may change: its roots, folders on its command line, its data folder, extras. */
  writable: string[];
  /** Folders beyond the system it may read: its program and runtime, its files, extras. */
  readable: string[];
  dataDir: string | null;
  /** What is not confined, in words: shown as a warning. */
  warnings: string[];
  /** The settings are the defaults for what the server is. */
  defaults: boolean;
  /** How it is confined, e.g. "Landlock and seccomp". */
  mechanism: string;
}

/** A local server's sandbox as the user sets it. */
export interface SandboxSettings {
  enabled: boolean;
  network: NetworkAccess;
  /** Extra folders it may read. */
  read?: string[];
  /** Extra folders it may change. */
  write?: string[];
}

/** What the gate should know of a server; an absent mark takes the default for what it is. */
export interface TrustMarks {
  readsUntrusted?: boolean | null;
  sendsOut?: boolean | null;
  reviewResults?: string[];
}

export type HiddenReason =
  | { kind: "serverDisabled" }
  | { kind: "disabledByUser" }
  | { kind: "notIncluded" }
  | { kind: "duplicateName" }
  | { kind: "excluded"; pattern: string };

export type ToolState =
  | { state: "visible"; modelName: string }
  | { state: "hidden"; reason: HiddenReason };

export interface ListedTool {
  serverId: string;
  serverName: string;
  tool: { name: string; title?: string; description: string };
  state: ToolState;
  /** Another server's id, when this tool's own name looks like that server's prefixed name. */
  imitates?: string;
}

export interface Budget {
  tools: number;
  limit: number;
  estimatedTokens: number;
}

/** Every tool of the ready servers, with the name the model sees or why it is hidden. */
export interface ToolCatalogView {
  tools: ListedTool[];
  budget: Budget | null;
  problem: string | null;
}

export interface ToolOutput {
  isError: boolean;
  text: string;
  raw: unknown;
}

export type ProviderKind = "anthropic" | "openai";

export interface ProviderSettings {
  kind: ProviderKind;
  baseUrl: string;
  model: string;
}

export interface ProviderView extends ProviderSettings {
  keySet: boolean;
  /** Where the key in use comes from: the OS keychain, or an environment variable. */
  keySource: "keychain" | "environment" | null;
  /** The key's last 4 characters ("…a1b2"), for telling keys apart; never more. */
  keyHint: string | null;
  /** The environment variable a key may also come from, e.g. ANTHROPIC_API_KEY. */
  keyEnvVar: string;
  keyError: string | null;
  /** Whether the provider refuses requests without a key; a local model server does not. */
  keyNeeded: boolean;
}

/** A secret the servers' env or headers name as `${secret:NAME}`; never its value. */
export interface SecretView {
  name: string;
  usedBy: string[];
  set: boolean;
  hint: string | null;
}

/**
 * What waits at the gate: a model's tool call, a server's own request, or a tool's result held
 * for review before the model sees it (its `arguments` are `{ text }`).
 */
export type RequestKind = "toolCall" | "sampling" | "elicitation" | "toolResult";

export interface PendingCall {
  id: string;
  /** A tool call, a server asking to use the model (sampling), or a server's question. */
  request: RequestKind;
  /** The server's question, for an elicitation. */
  message?: string;
  callId: string;
  serverId: string;
  serverName: string;
  tool: string;
  arguments: unknown;
  readOnly: boolean;
  destructive: boolean;
  /** The tool's input schema, for editing the arguments. */
  inputSchema?: unknown;
  /** Why the user is asked. */
  reason?: string;
  /** The connected client that asks (another host, through the gateway), e.g. `claude-code`. */
  client?: string;
  /**
   * A page the server asks the user to open (URL-mode elicitation). Approving opens it in the
   * browser, in the backend; the window never navigates to it.
   */
  link?: { url: string; domain: string };
}

/** An image from a tool's result, base64; the window shows PNG, JPEG, GIF and WebP only. */
export interface ShownImage {
  mimeType: string;
  data: string;
}

/** One model call's tokens, or a turn's summed. `inputTokens` leaves out the cached ones. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A tool `search_tools` found and loaded (when tool search is on). */
export interface FoundTool {
  name: string;
  serverId: string;
  serverName: string;
  tool: string;
}

export type TurnEvent =
  | { kind: "textDelta"; text: string }
  | { kind: "assistantText"; text: string }
  | ({ kind: "approvalRequested" } & PendingCall)
  | ({ kind: "decidedByRule"; allowed: boolean } & PendingCall)
  | ({ kind: "unattended" } & PendingCall)
  | { kind: "toolStarted"; callId: string }
  | {
      kind: "toolProgress";
      callId: string;
      progress: number;
      total: number | null;
      message: string | null;
      /** Set when the server runs the call as a task (polled until it ends; Stop cancels it). */
      task?: { id: string; status: string };
    }
  | { kind: "retrying"; attempt: number; delayMs: number; reason: string }
  | {
      kind: "toolFinished";
      callId: string;
      isError: boolean;
      output: string;
      images?: ShownImage[];
      /** The server's MCP App that shows this result, when the tool links one. */
      app?: ToolApp;
    }
  | { kind: "toolDenied"; callId: string; reason: string | null }
  | { kind: "toolsSearched"; callId: string; query: string; found: FoundTool[] }
  /** One model call's tokens and estimated cost (millionths of a dollar; null: price unknown). */
  | { kind: "usage"; usage: Usage; costMicroUsd: number | null }
  | { kind: "finished"; text: string; usage: Usage; costMicroUsd: number | null }
  | { kind: "failed"; message: string };

export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; mimeType: string; data: string }
  | { type: "toolReference"; toolName: string };

/** A message as the history keeps it (the Rust `Message`). */
export type Message =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls: ToolCall[] }
  | { role: "toolResult"; callId: string; content: ContentPart[]; isError: boolean };

export interface ConversationSummary {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** The estimated cost of the model calls whose price is known, in millionths of a dollar. */
  costMicroUsd: number;
  /** Model calls of no known price, left out of the cost. */
  unpricedCalls: number;
}

export type Reach = "tool" | "server";

export type Lasting = "conversation" | "always";

export type Decision =
  | { decision: "approve" }
  | { decision: "approveEdited"; arguments: unknown }
  | { decision: "allow"; reach: Reach; lasting: Lasting }
  | { decision: "deny"; reason: string | null }
  | { decision: "denyAlways"; reach: Reach };

/** How a condition compares the argument it points at. */
export type Matcher =
  | { kind: "glob"; value: string }
  | { kind: "prefix"; value: string }
  | { kind: "equals"; value: unknown };

/** One condition on a call's arguments: a JSON pointer (`/path`) and a matcher. */
export interface ArgCondition {
  pointer: string;
  matcher: Matcher;
}

export type RuleTarget =
  | { kind: "tool"; serverId: string; tool: string }
  | { kind: "server"; serverId: string }
  | { kind: "sampling"; serverId: string }
  | { kind: "elicitation"; serverId: string };

/** A rule's JSON, as `toolgate-policy` stores it. */
export interface Rule {
  id: string;
  effect: "allow" | "deny" | "ask";
  scope: { kind: "once" } | { kind: "conversation"; id: string } | { kind: "always" };
  target: RuleTarget;
  conditions?: ArgCondition[];
  /** What a grant was given to; kept by the backend, never edited in the window. */
  boundTo?: unknown;
  createdAt: number;
  expiresAt?: number | null;
  note?: string | null;
  /** Only calls from this connected client (e.g. `cursor`). */
  client?: string | null;
}

export interface PolicySettings {
  paused: boolean;
  autoAllowReadOnly: boolean;
  default: "ask" | "deny";
  approvalTimeoutSecs?: number;
  rules: Rule[];
}

export interface AuditRow {
  id: number;
  decidedAt: number;
  conversationId: string | null;
  serverId: string;
  tool: string;
  arguments: unknown;
  originalArguments: unknown;
  decision: "allowed" | "denied" | "timed_out" | "cancelled";
  decidedBy: "user" | "rule" | "default" | "pause" | "timeout" | "toolgate" | "unattended";
  /** The connected client that asked, for calls through the gateway. */
  client?: string | null;
  ruleId: string | null;
  reason: string | null;
  durationMs: number | null;
  resultBytes: number | null;
  isError: boolean;
  error: string | null;
}

export interface AuditFilter {
  serverId?: string;
  tool?: string;
  decision?: AuditRow["decision"];
  text?: string;
  limit?: number;
}

/** The error every command rejects with. */
export interface CommandError {
  kind: string;
  message: string;
}

/** Where servers to import come from; Claude Desktop's file is read by the backend. */
export type ImportSource =
  | { kind: "text"; text: string; name: string | null }
  | { kind: "claudeDesktop" }
  /** Another AI app's servers, copied; its config is only read. */
  | { kind: "host"; host: string };

export type SecretLocation = "env" | "header";

/** What an import would do (or did); never holds a secret's value. */
export interface ImportReport {
  format: "mcpServers" | "vsCode" | "serverMap" | "singleServer";
  /** `runs`: the command line or address, shown for the user to check before anything runs. */
  added: { id: string; name: string; transport: "stdio" | "http" | "sse"; enabled: boolean; runs: string }[];
  renamed: { name: string; wantedId: string; id: string; clash: "existingServer" | "importedServer" }[];
  skipped: {
    name: string;
    reason:
      | { kind: "identical"; id: string; existing: boolean }
      | { kind: "disabledDuplicate"; id: string; existing: boolean }
      | { kind: "unsafeEnv"; variable: string }
      | { kind: "unsupportedTransport"; transport: string };
  }[];
  rules: { serverId: string; tool: string }[];
  inputs: {
    id: string;
    description: string;
    password: boolean;
    secretName?: string | null;
    default?: string | null;
    options?: string[];
    usedBy: string[];
  }[];
  secretCandidates: { serverId: string; location: SecretLocation; name: string; suggestedSecret: string }[];
  warnings: { server?: string | null; message: string }[];
}

/** The user's answers: values for the inputs, and which values move to the keychain. */
export interface ImportChoices {
  inputs: Record<string, string>;
  moveSecrets: { serverId: string; location: SecretLocation; name: string; secretName?: string }[];
}

/** Another AI app (Claude Desktop, Claude Code, Cursor, VS Code, Goose, Zed) Toolgate can connect. */
export interface HostView {
  id: string;
  label: string;
  /** Where its config is, or would be. */
  path: string | null;
  /** Its config file exists. */
  found: boolean;
  /** Connected: where its original config is kept. */
  backup: string | null;
}

/** What connecting a host would change; nothing is written before `connectHost`. */
export interface HostPreview {
  id: string;
  label: string;
  path: string;
  /** The servers that move to Toolgate; null when it runs none. */
  report: ImportReport | null;
  /** Entries that stay in the host's config, and why. */
  kept: [string, string][];
  notes: string[];
  /** What the host will run instead. */
  command: string;
}

/** A server's settings, as the settings file holds them (secret-looking values hidden). */
export type ServerConfig = {
  id: string;
  name: string;
  enabled: boolean;
  startupTimeoutSecs: number;
  callTimeoutSecs: number;
  maxCallTimeoutSecs: number;
  autoRestart: boolean;
  roots?: string[];
  allowEnv?: string[];
  /** Pins the protocol era; absent or null: discover first, then initialize. */
  protocolVersion?: string | null;
  sandbox?: SandboxSettings | null;
  trust?: TrustMarks;
  /** What each tools/call tells this server in `_meta` (off when absent). Never a secret. */
  toolContext?: { conversationId?: boolean; meta?: Record<string, unknown> };
} & (
  | { transport: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd?: string | null }
  | { transport: "http"; url: string; headers: Record<string, string> }
);

export interface PresetView {
  id: string;
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  needsKey: boolean;
}

export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

export interface Diagnostics {
  version: string;
  settingsFile: string;
  dataDir: string | null;
  logDir: string | null;
  checks: DoctorCheck[];
  /** Toolgate, Tauri, the web view, the system. */
  versions?: { name: string; version: string }[];
}

/** When tool names carry their server's prefix (`<prefix>__<tool>`). */
export type NamingMode = "auto" | "always" | "none";

/** One server's tool choices; empty fields are left out. */
export interface ServerToolSettings {
  /** Used instead of the server id when its tools are prefixed. */
  prefix?: string;
  /** Glob patterns on the tool's own name; when any are given, a tool must match one. */
  include?: string[];
  /** Glob patterns on the tool's own name; a match hides the tool. */
  exclude?: string[];
  /** Tools switched off, by their own name. */
  disabledTools?: string[];
  /** Every tool of this server is offered even when tool search is on. */
  alwaysLoaded?: boolean;
  /** These tools (by their own name) are offered even when tool search is on. */
  alwaysLoadedTools?: string[];
}

/** When the model gets `search_tools` instead of every tool. */
export type SearchMode = "auto" | "always" | "never";

export interface ToolSearch {
  mode: SearchMode;
  /** In `auto`, search is on past this many tools… */
  maxTools: number;
  /** …or past this many estimated tokens of tool definitions. */
  maxTokens: number;
}

/** How tools are named and which are shown (the settings file's `tools`). */
export interface CatalogSettings {
  naming: NamingMode;
  /** By server id. */
  servers?: Record<string, ServerToolSettings>;
  /** Left out when it is the default. */
  search?: ToolSearch;
}

/** One part of a resource: text, or base64 bytes. */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string }
  | { uri: string; mimeType?: string; blob: string };

/** MCP's ReadResourceResult. */
export interface ReadResourceResult {
  contents: ResourceContents[];
}

/** A prompt's content, as MCP's GetPromptResult: the server's words, untrusted text. */
export interface PromptResult {
  description?: string;
  messages: { role: "user" | "assistant"; content: { type: string; text?: string; resource?: { uri: string; text?: string } } }[];
}

/** A tool result shown in its server's MCP App (a `ui://` resource). */
export interface ToolApp {
  serverId: string;
  resourceUri: string;
  arguments: unknown;
  /** The whole CallToolResult, for the app. */
  result: unknown;
}

/** An app document the backend serves (its id on the `mcpapp:` scheme). */
export interface AppView {
  id: string;
  prefersBorder: boolean;
}

/** A resource attached to a message: read by the backend when the message is sent. */
export interface Attachment {
  serverId: string;
  uri: string;
}

/** What a turn is sent with besides its text. */
export interface TurnInput {
  /** Servers switched off for this chat, whose tools the model is not offered. */
  serversOff?: string[];
  /** Resources attached to the message, read by the backend when it is sent. */
  attachments?: Attachment[];
}

/** A model server running on this computer (Ollama, LM Studio), found for the first run. */
export interface LocalServer {
  preset: string;
  name: string;
  /** The OpenAI-compatible base URL to configure. */
  baseUrl: string;
  models: string[];
}

/** Which recent requests (from the audit log) a rule would have matched. */
export interface RulePreview {
  checked: number;
  matched: AuditRow[];
}

/** What the window remembers between runs (not settings): kept by the backend's store. */
export interface UiState {
  /** The window's size and place, kept by the backend itself. */
  window?: { width: number; height: number; x: number; y: number; maximized?: boolean };
  screen?: string;
  settingsSection?: string;
  panels?: Record<string, number>;
  dismissed?: string[];
  /** Unsent text, by conversation id (`new` for a chat not yet saved). */
  drafts?: Record<string, string>;
  /** Servers switched off, by conversation id. */
  chatServers?: Record<string, string[]>;
}
