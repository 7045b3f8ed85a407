// Made by src-tauri/command_list.rs from the #[tauri::command] functions in
// src-tauri/commands/; do not edit (TOOLGATE_WRITE_TYPES=1 cargo test -p toolgate --lib
// command_list writes it). ui/src/ipc.ts re-exports these; components import from there.

import { Channel, invoke } from "@tauri-apps/api/core";
import type { AppView, Attachment, AuditFilter, AuditRow, BundlePreview, CatalogSettings, ConversationSummary, Decision, Diagnostics, DoorView, Export, HostAnswer, HostPreview, HostView, IdentityProvider, ImportChoices, ImportReport, ImportSource, ImportSources, InstalledBundle, IssuedToken, JsonValue, LinkOffer, LocalServer, ManagedView, Message, PackageView, Page, PendingCall, Plan, PolicySettings, PresetView, ProviderInput, ProviderView, Rule, RulePreview, SandboxSettings, SecretView, ServerConfig, ServerSnapshot, SignedInInfo, TemplateRead, ToolCatalogView, ToolChange, ToolOutput, TrustMarks, TurnEvent } from "./types";

export const answerApproval = (id: string, decision: Decision): Promise<void> =>
  invoke("answer_approval", { id, decision });

export const pendingApprovals = (): Promise<PendingCall[]> =>
  invoke("pending_approvals");

/** Answers every waiting call the same way (approve all / deny all); returns how many. */
export const answerAll = (decision: Decision): Promise<number> =>
  invoke("answer_all", { decision });

/** What the organisation's managed policy sets: its locks, servers and rules, and where from. */
export const managedPolicy = (): Promise<ManagedView> =>
  invoke("managed_policy");

/** The approval settings: pause-all, the defaults, and every rule. */
export const approvalRules = (): Promise<PolicySettings> =>
  invoke("approval_rules");

export const revokeRule = (id: string): Promise<PolicySettings> =>
  invoke("revoke_rule", { id });

/** Pauses every tool (waiting calls are denied at once) or lifts the pause. */
export const setPaused = (paused: boolean): Promise<PolicySettings> =>
  invoke("set_paused", { paused });

/** The approval options: read-only tools allowed without asking, and how long a call waits. */
export const setApprovalOptions = (autoAllowReadOnly: boolean, approvalTimeoutSecs: number): Promise<PolicySettings> =>
  invoke("set_approval_options", { autoAllowReadOnly, approvalTimeoutSecs });

/** The approval audit log, newest first, filtered. */
export const auditLog = (filter: AuditFilter): Promise<AuditRow[]> =>
  invoke("audit_log", { filter });

/** Writes the audit log (filtered) as JSON Lines into the app's data folder; returns the file. */
export const exportAudit = (filter: AuditFilter): Promise<string> =>
  invoke("export_audit", { filter });

/** Which of the recent requests in the audit log `rule` would have matched; the rule is checked as saving would check it. */
export const previewRule = (rule: Rule): Promise<RulePreview> =>
  invoke("preview_rule", { rule });

/** Saves a rule written or edited by hand (replacing the rule with its id); returns the policy. */
export const saveRule = (rule: Rule): Promise<PolicySettings> =>
  invoke("save_rule", { rule });

/** Reads a tool's app document from its server and registers it to be served. */
export const loadApp = (serverId: string, uri: string): Promise<AppView> =>
  invoke("load_app", { serverId, uri });

/** Forgets an app the window no longer shows. */
export const closeApp = (id: string): Promise<void> =>
  invoke("close_app", { id });

/** A `tools/call` the app makes: its own server's tool, through the gate, rules and audit as a model's call would be, the card naming the app. A refusal is an error result, as MCP has it. */
export const appCallTool = (id: string, name: string, args: unknown): Promise<JsonValue> =>
  invoke("app_call_tool", { id, name, arguments: args });

/** A `resources/read` the app makes: its own server's resources only. */
export const appReadResource = (id: string, uri: string): Promise<JsonValue> =>
  invoke("app_read_resource", { id, uri });

/** Runs one turn of the conversation. Progress, approval requests and the answer arrive on `on_event`; the command returns the final answer. */
export const sendMessage = (text: string, attachments: Attachment[] | null, onEvent: Channel<TurnEvent>, serversOff: string[] | null): Promise<string> =>
  invoke("send_message", { text, attachments, onEvent, serversOff });

/** Stops the running turn: the model call, the approvals it waits for, its tool calls. A result's text before its secrets were removed, for the user who clicked *Reveal*. */
export const revealResult = (callId: string): Promise<string | null> =>
  invoke("reveal_result", { callId });

export const stopTurn = (): Promise<void> =>
  invoke("stop_turn");

/** Starts a new conversation; the one on screen stays in the history. */
export const resetConversation = (): Promise<void> =>
  invoke("reset_conversation");

/** The id of the conversation on screen in the history, once it has one. */
export const currentConversation = (): Promise<string | null> =>
  invoke("current_conversation");

export const listConversations = (search: string | null): Promise<ConversationSummary[]> =>
  invoke("list_conversations", { search });

/** Makes a stored conversation the one on screen, and returns its messages to show. */
export const openConversation = (id: string): Promise<Message[]> =>
  invoke("open_conversation", { id });

export const renameConversation = (id: string, title: string): Promise<void> =>
  invoke("rename_conversation", { id, title });

/** Deletes a saved conversation; the window starts a new one if it was on screen. */
export const deleteConversation = (id: string): Promise<void> =>
  invoke("delete_conversation", { id });

/** Saves a local server's sandbox (`null`: the defaults for what it is); the server starts again with it. Returns the notice to show when it was restarted. */
export const setServerSandbox = (serverId: string, sandbox: SandboxSettings | null): Promise<string | null> =>
  invoke("set_server_sandbox", { serverId, sandbox });

/** The user's answer to "SERVER wants to reach HOST" on its card (network "hosts"). */
export const answerHost = (serverId: string, host: string, answer: HostAnswer): Promise<void> =>
  invoke("answer_host", { serverId, host, answer });

/** Saves what the gate should know of a server: untrusted output, a way out, results to review. Applies from the next call. */
export const setServerTrust = (serverId: string, trust: TrustMarks): Promise<void> =>
  invoke("set_server_trust", { serverId, trust });

/** Fills one of a server's resource templates and reads the resource. */
export const readResourceTemplate = (serverId: string, template: string, values: Record<string, string>): Promise<TemplateRead> =>
  invoke("read_resource_template", { serverId, template, values });

/** One of a server's prompts, filled with `arguments`: its description and messages. */
export const getPrompt = (serverId: string, name: string, args: Record<string, JsonValue>): Promise<JsonValue> =>
  invoke("get_prompt", { serverId, name, arguments: args });

/** The door: switched on or not, where, whether it listens, and its clients by name. */
export const doorStatus = (): Promise<DoorView> =>
  invoke("door_status");

/** Switches the door on or off at `address` (loopback only), saved in the settings, and opens or closes it now. */
export const setDoor = (enabled: boolean, address: string): Promise<DoorView> =>
  invoke("set_door", { enabled, address });

/** Issues a token for the client `name`: returned this once to be shown, never again. */
export const addDoorToken = (name: string): Promise<IssuedToken> =>
  invoke("add_door_token", { name });

/** Revokes `name`'s token: the door refuses it from its next request on. */
export const revokeDoorToken = (name: string): Promise<DoorView> =>
  invoke("revoke_door_token", { name });

export const listHosts = (): Promise<HostView[]> =>
  invoke("list_hosts");

/** What connecting a host would change; nothing is written until `connect_host`. The host will run this program's `connect` (see `crate::connect`). */
export const previewHost = (host: string): Promise<HostPreview> =>
  invoke("preview_host", { host });

/** Connects the host last previewed: imports its servers (secrets to the keychain as chosen), starts them, then rewrites the host's config, only if it is unchanged since the preview. */
export const connectHost = (host: string, choices: ImportChoices): Promise<void> =>
  invoke("connect_host", { host, choices });

/** Gives the host its own config back (its later writes kept); returns where. */
export const undoHost = (host: string): Promise<string> =>
  invoke("undo_host", { host });

/** Files the import can offer to read, where they exist. */
export const importSources = (): Promise<ImportSources> =>
  invoke("import_sources");

/** What importing would add, rename, skip and ask for; changes nothing. */
export const previewImport = (source: ImportSource): Promise<ImportReport> =>
  invoke("preview_import", { source });

/** Imports: the chosen secrets go to the keychain first, then the settings are saved with references to them, then the new servers start. */
export const applyImport = (source: ImportSource, choices: ImportChoices): Promise<ImportReport> =>
  invoke("apply_import", { source, choices });

/** The servers in Claude Desktop's `mcpServers` format, secrets left as `${secret:…}`. */
export const exportServers = (): Promise<Export> =>
  invoke("export_servers");

/** The link waiting for the window, taken (so it opens one dialog once). */
export const pendingInstallLink = (): Promise<LinkOffer | null> =>
  invoke("pending_install_link");

export const getProvider = (): Promise<ProviderView> =>
  invoke("get_provider");

export const setProvider = (provider: ProviderInput): Promise<ProviderView> =>
  invoke("set_provider", { provider });

/** Stores the key of the current provider in the OS keychain; the key goes nowhere else. */
export const setApiKey = (key: string): Promise<ProviderView> =>
  invoke("set_api_key", { key });

export const clearApiKey = (): Promise<ProviderView> =>
  invoke("clear_api_key");

export const providerPresets = (): Promise<PresetView[]> =>
  invoke("provider_presets");

/** The models the user's provider offers, for the model picker. */
export const listModels = (): Promise<string[]> =>
  invoke("list_models");

/** The models the Provider screen's form would get once saved: its format and address, asked before saving (the saved provider may be another one entirely). */
export const listModelsFor = (provider: ProviderInput): Promise<string[]> =>
  invoke("list_models_for", { provider });

/** Model servers running on this computer (Ollama, LM Studio), with their models. */
export const detectLocalModels = (): Promise<LocalServer[]> =>
  invoke("detect_local_models");

/** Every secret the settings refer to, with its state in the keychain. */
export const listSecrets = (): Promise<SecretView[]> =>
  invoke("list_secrets");

/** Stores a server secret in the keychain, then restarts the servers that use it. */
export const setSecret = (name: string, value: string): Promise<void> =>
  invoke("set_secret", { name, value });

export const clearSecret = (name: string): Promise<void> =>
  invoke("clear_secret", { name });

/** The identity provider enterprise-managed servers sign in through (the organisation's, when its policy sets one). */
export const identityProvider = (): Promise<IdentityProvider | null> =>
  invoke("identity_provider");

/** Sets or removes the identity provider; refused whole (naming the key) when it is invalid or the organisation's policy sets it. */
export const setIdentityProvider = (provider: IdentityProvider | null): Promise<IdentityProvider | null> =>
  invoke("set_identity_provider", { provider });

export const listServers = (): Promise<ServerSnapshot[]> =>
  invoke("list_servers");

/** Accepts the tools of `server_id` held since they changed (`tools`, or all of them): they are offered from now on, and each acceptance is written to the audit log. */
export const acceptToolChanges = (serverId: string, tools: string[] | null): Promise<ToolChange[]> =>
  invoke("accept_tool_changes", { serverId, tools });

/** The version Toolgate installed for an npx or uvx server and the newest its registry has (asked now: slow, and offline it says so). */
export const packageVersion = (serverId: string): Promise<PackageView | null> =>
  invoke("package_version", { serverId });

/** Installs `version` of a server's package beside the one it runs, and restarts it with the new one (its changed tools are then held until accepted). */
export const updatePackage = (serverId: string, version: string): Promise<string> =>
  invoke("update_package", { serverId, version });

export const restartServer = (serverId: string): Promise<void> =>
  invoke("restart_server", { serverId });

/** A call the user makes by hand from the window: the user is the one asking, so it needs no approval. */
export const callTool = (serverId: string, tool: string, args: unknown): Promise<ToolOutput> =>
  invoke("call_tool", { serverId, tool, arguments: args });

/** One of a server's resources, for browsing; shown as text in the window. */
export const readResource = (serverId: string, uri: string): Promise<JsonValue> =>
  invoke("read_resource", { serverId, uri });

/** Switches a server on (it starts) or off (it stops), and saves the choice. */
export const setServerEnabled = (serverId: string, enabled: boolean): Promise<void> =>
  invoke("set_server_enabled", { serverId, enabled });

/** Removes a server with its tool settings and approval rules. */
export const removeServer = (serverId: string): Promise<void> =>
  invoke("remove_server", { serverId });

/** The server's recent stderr, oldest first (the window polls it while the log is open). */
export const serverLog = (serverId: string): Promise<string[]> =>
  invoke("server_log", { serverId });

/** The folders a server may work in (its MCP roots). Returns the notice to show when the server was restarted for them. */
export const setServerRoots = (serverId: string, roots: string[]): Promise<string | null> =>
  invoke("set_server_roots", { serverId, roots });

/** A server's settings for the edit form; values that look like secrets are hidden. */
export const serverConfig = (serverId: string): Promise<ServerConfig> =>
  invoke("server_config", { serverId });

/** Saves an edited server (its id stays) and restarts it with the new settings. */
export const updateServer = (serverId: string, server: ServerConfig): Promise<void> =>
  invoke("update_server", { serverId, server });

/** Every tool of the ready servers: the name the model sees, or why it is hidden; and how much of the current provider's allowance the visible ones use. */
export const toolCatalog = (): Promise<ToolCatalogView> =>
  invoke("tool_catalog");

/** How tools are named and which are shown: the naming mode, per-server prefixes, include and exclude patterns, and the tools switched off. */
export const toolSettings = (): Promise<CatalogSettings> =>
  invoke("tool_settings");

/** Saves the tool settings after checking them (a bad pattern or prefix names the field). */
export const setToolSettings = (tools: CatalogSettings): Promise<CatalogSettings> =>
  invoke("set_tool_settings", { tools });

/** Offers a tool to the model or not; the next turn's tool list follows. */
export const setToolEnabled = (serverId: string, tool: string, enabled: boolean): Promise<void> =>
  invoke("set_tool_enabled", { serverId, tool, enabled });

/** One page of the MCP registry's servers whose name or description holds `search`. */
export const registrySearch = (search: string, cursor: string | null): Promise<Page> =>
  invoke("registry_search", { search, cursor });

/** What adding a registry server would run, and what it asks for. */
export const registryPlan = (name: string, version: string): Promise<Plan> =>
  invoke("registry_plan", { name, version });

/** Adds a registry server, pinned, its secrets to the keychain, and starts it. */
export const addFromRegistry = (name: string, version: string, id: string, answers: Record<string, string>): Promise<void> =>
  invoke("add_from_registry", { name, version, id, answers });

/** What installing the MCP bundle at `path` would install, with what its signature says. */
export const inspectBundle = (path: string): Promise<BundlePreview> =>
  invoke("inspect_bundle", { path });

/** Installs the MCP bundle at `path` as server `id` with the user's values (a tampered one is refused; secrets go to the keychain), and starts it. */
export const installBundle = (path: string, id: string, values: Record<string, string[]>): Promise<InstalledBundle> =>
  invoke("install_bundle", { path, id, values });

/** Signs in to a remote server in the system browser; `on_url` receives the address opened. `extra_scopes`: more access the user agreed to grant (after a call needed it). */
export const signInServer = (serverId: string, extraScopes: string[], onUrl: Channel<string>): Promise<SignedInInfo> =>
  invoke("sign_in_server", { serverId, extraScopes, onUrl });

/** Signs out of a remote server; returns notes (a revocation the server did not confirm). */
export const signOutServer = (serverId: string): Promise<string[]> =>
  invoke("sign_out_server", { serverId });

/** What the user must be told about this start (a settings or history file that could not be read, and where it was kept). */
export const startupNotices = (): Promise<string[]> =>
  invoke("startup_notices");

export const diagnostics = (): Promise<Diagnostics> =>
  invoke("diagnostics");

/** Whether Toolgate starts (in the tray) when the user logs in. */
export const startAtLogin = (): Promise<boolean> =>
  invoke("start_at_login");

export const setStartAtLogin = (enabled: boolean): Promise<boolean> =>
  invoke("set_start_at_login", { enabled });

/** Opens the folder of Toolgate's logs (the servers' logs are in it) in the file manager. The folder is the app's own: the window names none. */
export const openLogFolder = (): Promise<string> =>
  invoke("open_log_folder");

/** Everything remembered, for the web-view at start. */
export const uiState = (): Promise<Record<string, JsonValue>> =>
  invoke("ui_state");

/** Remembers one value (`null` forgets it). Saved shortly after, and at exit. */
export const setUiState = (key: string, value: unknown): Promise<void> =>
  invoke("set_ui_state", { key, value });
