// The one module that talks to the Rust backend. Components import these typed functions and
// never call `invoke` themselves, so every command name and argument is checked here. The types
// they take and return are generated from the Rust types (generated/types.ts, through
// ipcTypes.ts) and re-exported from here, so components import everything from this module.

import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type {
  AppView,
  BundlePreview,
  AuditFilter,
  AuditRow,
  CatalogSettings,
  CommandError,
  ConversationSummary,
  Decision,
  Diagnostics,
  DoorView,
  Export,
  HostPreview,
  HostView,
  ImportChoices,
  ImportReport,
  ImportSource,
  ImportSources,
  InstalledBundle,
  IssuedToken,
  LocalServer,
  ManagedView,
  Message,
  Page,
  Plan,
  PendingCall,
  PolicySettings,
  PresetView,
  PromptResult,
  ProviderKind,
  ProviderSettings,
  ProviderView,
  ReadResourceResult,
  Rule,
  RulePreview,
  SandboxSettings,
  SecretView,
  ServerConfig,
  ToolChange,
  HostAnswer,
  PackageView,
  LinkOffer,
  IdentityProvider,
  ServerSnapshot,
  SignedInInfo,
  TemplateRead,
  ToolCatalogView,
  ToolOutput,
  ToolSearch,
  TrustMarks,
  TurnEvent,
  TurnInput,
  UiState,
} from "./ipcTypes";

export type * from "./ipcTypes";

/** A readable message from whatever a command rejected with. */
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

export const listServers = () => invoke<ServerSnapshot[]>("list_servers");

export const toolCatalog = () => invoke<ToolCatalogView>("tool_catalog");

export const restartServer = (serverId: string) => invoke<void>("restart_server", { serverId });

/** Signs in to a remote server in the system browser; `onUrl` gets the address it opened. */
export function signInServer(
  serverId: string,
  extraScopes: string[],
  onUrl: (url: string) => void,
): Promise<SignedInInfo> {
  const channel = new Channel<string>();
  channel.onmessage = onUrl;
  return invoke<SignedInInfo>("sign_in_server", { serverId, extraScopes, onUrl: channel });
}

/** Signs out of a remote server; resolves to notes (a revocation the server did not confirm). */
export const signOutServer = (serverId: string) => invoke<string[]>("sign_out_server", { serverId });
/** Accepts tools held since they changed (those named, or all): offered from now on, audited. */
export const acceptToolChanges = (serverId: string, tools: string[] | null) =>
  invoke<ToolChange[]>("accept_tool_changes", { serverId, tools });

export const callTool = (serverId: string, tool: string, args: unknown) =>
  invoke<ToolOutput>("call_tool", { serverId, tool, arguments: args });

export const getProvider = () => invoke<ProviderView>("get_provider");

export const setProvider = (provider: ProviderSettings) =>
  invoke<ProviderView>("set_provider", { provider });

export const setApiKey = (key: string) => invoke<ProviderView>("set_api_key", { key });

export const clearApiKey = () => invoke<ProviderView>("clear_api_key");

export const importSources = () => invoke<ImportSources>("import_sources");

export const previewImport = (source: ImportSource) => invoke<ImportReport>("preview_import", { source });

export const applyImport = (source: ImportSource, choices: ImportChoices) =>
  invoke<ImportReport>("apply_import", { source, choices });

export const listHosts = () => invoke<HostView[]>("list_hosts");

export const previewHost = (host: string) => invoke<HostPreview>("preview_host", { host });

export const connectHost = (host: string, choices: ImportChoices) => invoke<void>("connect_host", { host, choices });

export const undoHost = (host: string) => invoke<string>("undo_host", { host });

/** The gateway's HTTP door: its switch, address, whether it listens, and its clients by name. */
export const doorStatus = () => invoke<DoorView>("door_status");

export const setDoor = (enabled: boolean, address: string) => invoke<DoorView>("set_door", { enabled, address });

/** A token for the client `name`, returned this once to be shown; afterwards only its name. */
export const addDoorToken = (name: string) => invoke<IssuedToken>("add_door_token", { name });

export const revokeDoorToken = (name: string) => invoke<DoorView>("revoke_door_token", { name });

/** The servers as Claude Desktop's `mcpServers` JSON; secrets stay `${secret:…}` references. */
export const exportServers = () => invoke<Export>("export_servers");

/** What the edit form shows for a value that looks like a secret; sent back, it keeps the value. */
export const HIDDEN_VALUE = "(hidden: kept as it is)";

export const serverConfig = (serverId: string) => invoke<ServerConfig>("server_config", { serverId });

/** Saves an edited server (same id) and restarts it. */
export const updateServer = (serverId: string, server: ServerConfig) =>
  invoke<void>("update_server", { serverId, server });

/** Switches a server on (it starts) or off (it stops); saved in the settings. */
export const setServerEnabled = (serverId: string, enabled: boolean) =>
  invoke<void>("set_server_enabled", { serverId, enabled });

/** Removes a server with its tool settings and approval rules. */
export const removeServer = (serverId: string) => invoke<void>("remove_server", { serverId });

/** The server's recent stderr lines, oldest first. */
export const serverLog = (serverId: string) => invoke<string[]>("server_log", { serverId });

/** Offers a tool to the model, or not. */
export const setToolEnabled = (serverId: string, tool: string, enabled: boolean) =>
  invoke<void>("set_tool_enabled", { serverId, tool, enabled });

/**
 * The folders the server may work in (absolute paths). Returns a notice when the server was
 * restarted to apply them to its sandbox.
 */
export const setServerRoots = (serverId: string, roots: string[]) =>
  invoke<string | null>("set_server_roots", { serverId, roots });

/** Saves a local server's sandbox (null: the defaults); returns a notice when it restarted. */
export const setServerSandbox = (serverId: string, sandbox: SandboxSettings | null) =>
  invoke<string | null>("set_server_sandbox", { serverId, sandbox });

/** A result's text before its secrets were removed (only when the user clicks Reveal); null once
 *  it is no longer kept. */
export const revealResult = (callId: string) => invoke<string | null>("reveal_result", { callId });

/** The version installed for an npx or uvx server and the newest its registry has (asks the
 *  registry: slow). */
export const packageVersion = (serverId: string) => invoke<PackageView | null>("package_version", { serverId });

/** Installs `version` beside the one the server runs and restarts it with it. */
export const updatePackage = (serverId: string, version: string) =>
  invoke<string>("update_package", { serverId, version });

/** The answer to "SERVER wants to reach HOST" (network "hosts"); applies at once. */
export const answerHost = (serverId: string, host: string, answer: HostAnswer) =>
  invoke<void>("answer_host", { serverId, host, answer });

/** Saves what the gate should know of a server; applies from its next call. */
export const setServerTrust = (serverId: string, trust: TrustMarks) =>
  invoke<void>("set_server_trust", { serverId, trust });

export const providerPresets = () => invoke<PresetView[]>("provider_presets");

/** The models the configured provider offers (needs its key). */
export const listModels = () => invoke<string[]>("list_models");

/** The models a provider not saved yet offers (the Provider form's format and address). */
export const listModelsFor = (provider: ProviderSettings) =>
  invoke<string[]>("list_models_for", { provider });

export const diagnostics = () => invoke<Diagnostics>("diagnostics");

/** Whether Toolgate starts, in the tray, when the user logs in. */
export const startAtLogin = () => invoke<boolean>("start_at_login");

export const setStartAtLogin = (enabled: boolean) => invoke<boolean>("set_start_at_login", { enabled });

export const listSecrets = () => invoke<SecretView[]>("list_secrets");
/** The organisation's identity provider for enterprise-managed sign-in, if one is set. */
export const identityProvider = () => invoke<IdentityProvider | null>("identity_provider");
/** Sets (or, with null, removes) the identity provider; refused whole if the settings refuse it. */
export const setIdentityProvider = (provider: IdentityProvider | null) =>
  invoke<IdentityProvider | null>("set_identity_provider", { provider });

/** Stores a server secret in the OS keychain; the servers using it restart to pick it up. */
export const setSecret = (name: string, value: string) => invoke<void>("set_secret", { name, value });

export const clearSecret = (name: string) => invoke<void>("clear_secret", { name });

export const DEFAULT_TOOL_SEARCH: ToolSearch = { mode: "auto", maxTools: 40, maxTokens: 10000 };

export const toolSettings = () => invoke<CatalogSettings>("tool_settings");

/** Saves the tool settings; rejects with a message naming the field (a bad pattern or prefix). */
export const setToolSettings = (tools: CatalogSettings) =>
  invoke<CatalogSettings>("set_tool_settings", { tools });

/** Reads one of a server's resources; the contents are the server's, untrusted. */
export const readResource = (serverId: string, uri: string) =>
  invoke<ReadResourceResult>("read_resource", { serverId, uri });

/** Fills a resource template with `values` and reads the resource; the URI it made too. The
 *  result is the server's ReadResourceResult, which Rust passes on as JSON. */
export const readResourceTemplate = (serverId: string, template: string, values: Record<string, string>) =>
  invoke<Omit<TemplateRead, "result"> & { result: ReadResourceResult }>("read_resource_template", { serverId, template, values });

/** Gets one of a server's prompts filled with `arguments`. */
export const getPrompt = (serverId: string, name: string, args: Record<string, string>) =>
  invoke<PromptResult>("get_prompt", { serverId, name, arguments: args });

/** Reads a tool's app and registers it to be served with the policy it declared. */
export const loadApp = (serverId: string, uri: string) => invoke<AppView>("load_app", { serverId, uri });

/** Forgets an app no longer on screen. */
export const closeApp = (id: string) => invoke<void>("close_app", { id });

/** A tool call the app makes: its own server only, through the gate. Returns a CallToolResult. */
export const appCallTool = (id: string, name: string, args: unknown) =>
  invoke<unknown>("app_call_tool", { id, name, arguments: args ?? {} });

/** A resource the app reads: its own server only. */
export const appReadResource = (id: string, uri: string) => invoke<unknown>("app_read_resource", { id, uri });

/** Runs one turn; `onEvent` sees progress and approval requests, the promise the final answer. */
export function sendMessage(text: string, onEvent: (event: TurnEvent) => void, input: TurnInput = {}): Promise<string> {
  const channel = new Channel<TurnEvent>();
  channel.onmessage = onEvent;
  return invoke<string>("send_message", {
    text,
    onEvent: channel,
    serversOff: input.serversOff ?? [],
    attachments: input.attachments ?? [],
  });
}

export const listConversations = (search: string | null) =>
  invoke<ConversationSummary[]>("list_conversations", { search });

/** Makes a stored conversation the one on screen; resolves to its messages. */
export const openConversation = (id: string) => invoke<Message[]>("open_conversation", { id });

export const renameConversation = (id: string, title: string) =>
  invoke<void>("rename_conversation", { id, title });

export const deleteConversation = (id: string) => invoke<void>("delete_conversation", { id });

/** The id of the conversation on screen, once it is stored. */
export const currentConversation = () => invoke<string | null>("current_conversation");

export const approvalRules = () => invoke<PolicySettings>("approval_rules");
/** One page of the MCP registry's servers whose name or description holds `search`. */
export const registrySearch = (search: string, cursor: string | null) =>
  invoke<Page>("registry_search", { search, cursor });
/** What adding a registry server would run, and the values it asks for. */
export const registryPlan = (name: string, version: string) => invoke<Plan>("registry_plan", { name, version });
/** Adds a registry server pinned to `version` (answers by each ask's key; secrets go to the keychain). */
export const addFromRegistry = (name: string, version: string, id: string, answers: Record<string, string>) =>
  invoke<void>("add_from_registry", { name, version, id, answers });
/** What installing the MCP bundle (.mcpb) at `path` would install, and what its signature says. */
export const inspectBundle = (path: string) => invoke<BundlePreview>("inspect_bundle", { path });
/** Installs the bundle at `path` as server `id` (values by field key, several for a field that takes
 *  several; secrets go to the keychain) and starts it. A tampered bundle is refused. */
export const installBundle = (path: string, id: string, values: Record<string, string[]>) =>
  invoke<InstalledBundle>("install_bundle", { path, id, values });
/** Calls `onDrop` with the paths of files dropped on the window (Tauri's drag-and-drop, which gives
 *  paths where the web-view's own drop would give only the files' contents). */
export const onFilesDropped = (onDrop: (paths: string[]) => void): Promise<UnlistenFn> =>
  listen<{ paths: string[] }>("tauri://drag-drop", (e) => onDrop(e.payload.paths));
/** What the organisation's managed policy locks and adds; shown as "Set by your organisation". */
export const managedPolicy = () => invoke<ManagedView>("managed_policy");

export const revokeRule = (id: string) => invoke<PolicySettings>("revoke_rule", { id });

export const setPaused = (paused: boolean) => invoke<PolicySettings>("set_paused", { paused });

/** Answers every waiting call the same way; resolves to how many were answered. */
export const answerAll = (decision: Decision) => invoke<number>("answer_all", { decision });

export const auditLog = (filter: AuditFilter) => invoke<AuditRow[]>("audit_log", { filter });

export const setApprovalOptions = (autoAllowReadOnly: boolean, approvalTimeoutSecs: number) =>
  invoke<PolicySettings>("set_approval_options", { autoAllowReadOnly, approvalTimeoutSecs });

/** Writes the filtered audit log as JSON Lines; resolves to the file's path. */
export const exportAudit = (filter: AuditFilter) => invoke<string>("export_audit", { filter });

/** Stops the running turn: the model call, the approvals it waits for, and its tool calls. */
export const stopTurn = () => invoke<void>("stop_turn");

export const answerApproval = (id: string, decision: Decision) =>
  invoke<void>("answer_approval", { id, decision });

export const pendingApprovals = () => invoke<PendingCall[]>("pending_approvals");

export const resetConversation = () => invoke<void>("reset_conversation");

/** What the user must be told about this start, e.g. a settings file that could not be read and
 *  where it was kept. Empty on a normal start. */
export const startupNotices = () => invoke<string[]>("startup_notices");

/** Calls `onChange` whenever a server's status or tool list changes. */
export const onServersChanged = (onChange: () => void): Promise<UnlistenFn> =>
  listen("servers-changed", () => onChange());

/** Calls `onChange` whenever a request starts or stops waiting for approval. */
/** A `toolgate://install` link handed to Toolgate: the server it holds, or why it is unreadable. */
export const onInstallLink = (onLink: (offer: LinkOffer) => void): Promise<UnlistenFn> =>
  listen<LinkOffer>("install-link", (e) => onLink(e.payload));

/** The install link that arrived before the window listened, taken once. */
export const pendingInstallLink = () => invoke<LinkOffer | null>("pending_install_link");

export const onApprovalsChanged = (onChange: () => void): Promise<UnlistenFn> =>
  listen("approvals-changed", () => onChange());

export const detectLocalModels = () => invoke<LocalServer[]>("detect_local_models");

/** Checks a rule as saving would, and lists the recent requests it would have matched. */
export const previewRule = (rule: Rule) => invoke<RulePreview>("preview_rule", { rule });

/** Saves a rule written or edited in the window (same id: replaced); resolves to the policy. */
export const saveRule = (rule: Rule) => invoke<PolicySettings>("save_rule", { rule });

/** Opens Toolgate's log folder in the file manager; resolves to its path. */
export const openLogFolder = () => invoke<string>("open_log_folder");

export const uiState = () => invoke<UiState | null>("ui_state");

/** Remembers one part of the UI state (`null` forgets it). */
export const setUiState = <K extends Exclude<keyof UiState, "window">>(key: K, value: UiState[K] | null) =>
  invoke<void>("set_ui_state", { key, value: value ?? null });
