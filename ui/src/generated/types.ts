// Generated from the Rust types by src-tauri/bindings.rs (ts-rs). Do not edit: change the Rust
// type, then regenerate with
//   TOOLGATE_WRITE_TYPES=1 cargo test -p toolgate --lib bindings
// (without the variable, that test fails when this file differs from what Rust sends).

export type AddedServer = { id: string, name: string, transport: TransportKind, enabled: boolean,
/**
 * What will run, for the user to check before anything does: the command line (arguments
 * with spaces or quotes in single quotes), or the address.
 */
runs: string, };

/**
 * MCP tool annotations. They are hints from the server, not guarantees: the approval gate may use
 * them to choose a default, never to skip asking when the user said to ask.
 */
export type Annotations = { title?: string | null, readOnlyHint?: boolean | null, destructiveHint?: boolean | null, idempotentHint?: boolean | null, openWorldHint?: boolean | null, };

/**
 * An app ready to frame.
 */
export type AppView = { id: string,
/**
 * The id, on the scheme this platform serves it at (the window makes the URL).
 */
prefersBorder: boolean, };

/**
 * One condition on the arguments; a rule's conditions must all hold.
 */
export type ArgCondition = {
/**
 * A JSON pointer into the arguments, such as `/path` or `/command`.
 */
pointer: string, matcher: Matcher, };

/**
 * One value the user is asked for before the server is added.
 */
export type Ask = {
/**
 * What the answer is keyed by (`env:NAME`, `header:NAME`, `url:NAME`, `arg:N`).
 */
key: string,
/**
 * The variable, header or argument, as the server names it.
 */
label: string, description: string | null,
/**
 * Kept in the keychain, never in the settings; asked without echo.
 */
secret: boolean, required: boolean, default: string | null, choices: Array<string>, };

/**
 * A resource to attach to a message.
 */
export type Attachment = { serverId: string, uri: string, };

/**
 * What the approval gate decided about a request.
 *
 * Stored and serialized as the same snake_case word (`timed_out`), so a filter written
 * against the export matches the database too.
 */
export type AuditDecision = "allowed" | "denied" | "timed_out" | "cancelled";

/**
 * Which entries [`History::audit`] returns. Every field narrows the list; the default is
 * everything.
 */
export type AuditFilter = { serverId?: string | null, tool?: string | null, decision?: AuditDecision | null, conversationId?: string | null,
/**
 * Calls from this connected client only.
 */
client?: string | null,
/**
 * Decided at or after this time (unix milliseconds).
 */
sinceMs?: number | null,
/**
 * Decided before this time (unix milliseconds): `since_ms..until_ms` is half-open, so
 * consecutive ranges neither overlap nor leave gaps.
 */
untilMs?: number | null,
/**
 * A substring of the arguments (either set) or the reason, ignoring case. Blank matches
 * everything.
 */
text?: string | null,
/**
 * At most this many entries, the newest.
 */
limit?: number | null, };

/**
 * A stored [`AuditEntry`] with its id; also one line of the JSON Lines export.
 */
export type AuditRow = {
/**
 * Counts up from 1 and is never reused.
 */
id: number,
/**
 * Unix milliseconds, when the decision was made.
 */
decidedAt: number,
/**
 * The conversation the request came from; `None` for calls made outside one (the CLI, by
 * hand). May name a conversation that has since been deleted.
 */
conversationId: string | null,
/**
 * The connected client that asked (its `clientInfo.name` or profile), for calls that came
 * through the gateway; `None` for Toolgate's own chat and the CLI.
 */
client: string | null, serverId: string,
/**
 * The tool called, or for a request from a server its kind (`sampling/createMessage`, …).
 */
tool: string,
/**
 * The arguments as they reached the server (or would have): after any edit by the user.
 */
arguments: JsonValue,
/**
 * What the model asked for, when the user edited it into [`arguments`](Self::arguments).
 */
originalArguments: JsonValue | null, decision: AuditDecision, decidedBy: DecidedBy,
/**
 * The rule that decided, when [`decided_by`](Self::decided_by) is [`DecidedBy::Rule`].
 */
ruleId: string | null,
/**
 * The user's or the rule's reason, if one was given.
 */
reason: string | null,
/**
 * How long the call took; `None` until it returned, and for calls that never ran.
 */
durationMs: number | null,
/**
 * The size of the result the server sent, if there was one.
 */
resultBytes: number | null,
/**
 * The call failed (an error from the server or a tool result marked as an error).
 */
isError: boolean,
/**
 * What went wrong, when it did.
 */
error: string | null, };

/**
 * What a grant was given to; see [`crate::fingerprint`].
 */
export type Binding = { serverFingerprint: string,
/**
 * Set for grants on one tool; absent for server-wide grants and server requests.
 */
toolFingerprint?: string | null, };

/**
 * How much of a provider's allowance the visible tools use.
 */
export type Budget = { tools: number, limit: number,
/**
 * Rough prompt tokens the tool definitions cost on every request: for each tool, the bytes
 * of its name, description and compact schema JSON, divided by 4 (the usual ratio for
 * English text and JSON under BPE tokenizers). Providers add their own framing per tool, so
 * treat this as a lower bound good for comparing settings, not for billing.
 */
estimatedTokens: number, };

/**
 * A bundle before it is installed, and the server id it would get.
 */
export type BundlePreview = { suggestedId: string, name: string, displayName: string, version: string, description: string, author: string, serverType: ServerType, manifestVersion: string, signature: Signature, userConfig: Array<ConfigField>, files: number,
/**
 * Why it cannot run here (another OS), when it cannot.
 */
unsupported?: string, };

export type CatalogSettings = { naming: NamingMode,
/**
 * By server id. A server with no entry shows all its tools under the default rules.
 */
servers?: { [key in string]: ServerToolSettings },
/**
 * When the model is offered a `search_tools` tool instead of every tool.
 */
search?: ToolSearch, };

/**
 * Who already had the id a server wanted.
 */
export type Clash = "existingServer" | "importedServer";

/**
 * An error the UI can show as it is: what went wrong and what to do.
 */
export type CommandError = { kind: string, message: string, };

/**
 * One value the bundle asks for.
 */
export type ConfigField = { key: string, type: UserConfigType, title: string, description: string, required: boolean,
/**
 * Stored in the keychain, never in the settings.
 */
sensitive: boolean,
/**
 * A string, number, boolean or list of strings, as the manifest has it.
 */
default?: string | number | boolean | string[],
/**
 * Several values (several folders, say), each its own argument.
 */
multiple: boolean, min?: number, max?: number, };

/**
 * One piece of a tool result. MCP tools return text and images; both go back to the model.
 */
export type ContentPart = { "type": "text", text: string, } | { "type": "image", mimeType: string,
/**
 * Base64, without a `data:` prefix (as MCP sends it).
 */
data: string, } | { "type": "toolReference", toolName: string, };

/**
 * A conversation as the list shows it.
 */
export type ConversationSummary = {
/**
 * A UUID v4, lower-case and hyphenated.
 */
id: string, title: string,
/**
 * Unix milliseconds.
 */
createdAt: number,
/**
 * Unix milliseconds of the last appended message, or of creation.
 */
updatedAt: number, messageCount: number, inputTokens: number, outputTokens: number,
/**
 * Input tokens read from the provider's prompt cache (billed at a fraction).
 */
cacheReadTokens: number,
/**
 * Input tokens written to the provider's prompt cache (billed at a premium, by Anthropic).
 */
cacheWriteTokens: number,
/**
 * The estimated cost of the model calls whose price is known, in millionths of a dollar.
 */
costMicroUsd: number,
/**
 * Model calls whose price is not known (a local or unlisted model): the cost leaves them
 * out.
 */
unpricedCalls: number, };

/**
 * Who or what made the decision.
 */
export type DecidedBy = "user" | "rule" | "default" | "pause" | "timeout" | "toolgate" | "unattended";

export type Decision = { "decision": "approve" } | { "decision": "approveEdited", arguments: JsonValue, } | { "decision": "allow", reach: Reach, lasting: Lasting, } | { "decision": "deny", reason: string | null, } | { "decision": "denyAlways", reach: Reach, };

/**
 * The last word when nothing else decides. There is deliberately no "allow": a request that
 * no rule covers is one the user has not seen.
 */
export type DefaultDecision = "ask" | "deny";

/**
 * Versions, folders, and what servers need to start.
 */
export type Diagnostics = { version: string, settingsFile: string, dataDir: string | null, logDir: string | null, checks: Array<DoctorCheck>, versions: Array<Version>, };

/**
 * One finding.
 */
export type DoctorCheck = { name: string, ok: boolean,
/**
 * What was found: a path, a version, or what went wrong.
 */
detail: string,
/**
 * How to fix it, when it is not fine.
 */
fix?: string, };

/**
 * The door as the window shows it: its settings, the names of its clients, and whether it
 * listens. Never a token.
 */
export type DoorView = {
/**
 * Opened when the app starts.
 */
enabled: boolean,
/**
 * Where it listens, `127.0.0.1:8787`.
 */
address: string,
/**
 * What a client is given: `http://127.0.0.1:8787/mcp`.
 */
url: string,
/**
 * It is listening now.
 */
listening: boolean,
/**
 * Why it is not listening although it is switched on (the port is taken…).
 */
problem: string | null,
/**
 * The clients holding a token, by name.
 */
clients: Array<string>, };

export type Effect = "allow" | "deny" | "ask";

/**
 * An `mcpServers` document and what it does not hold.
 */
export type Export = {
/**
 * `{"mcpServers": {...}}`.
 */
json: JsonValue, leftOut: Array<LeftOut>, };

/**
 * A tool a search found, for the UI and the CLI's trace.
 */
export type FoundTool = {
/**
 * The name the model calls it by.
 */
name: string, serverId: string, serverName: string,
/**
 * The server's own name for it.
 */
tool: string, };

/**
 * The window's size and place, in physical pixels.
 */
export type Geometry = { width: number, height: number, x: number, y: number, maximized: boolean, };

/**
 * Why a tool is not offered to the model, as the UI's tool list shows it.
 */
export type HiddenReason = { "kind": "serverDisabled" } | { "kind": "disabledByUser" } | { "kind": "notIncluded" } | { "kind": "excluded", pattern: string, } | { "kind": "duplicateName" };

/**
 * The user's answer to "this server wants to reach HOST".
 */
export type HostAnswer = "once" | "always" | "deny";

/**
 * What connecting a host would change; nothing is written until it is connected.
 */
export type HostPreview = { id: string, label: string, path: string,
/**
 * The servers that move to Toolgate (`None`: it runs none).
 */
report: ImportReport | null,
/**
 * Entries that stay in the host's config, with why.
 */
kept: Array<[string, string]>, notes: Array<string>,
/**
 * What the host will run instead.
 */
command: string, };

/**
 * Another AI app whose MCP config Toolgate can take over.
 */
export type HostView = { id: string, label: string,
/**
 * Where its config is (or would be).
 */
path: string | null,
/**
 * Its config file is there.
 */
found: boolean,
/**
 * Connected to Toolgate; its original config is kept here.
 */
backup: string | null, };

/**
 * Where the organisation's users sign in once for every enterprise-managed server.
 */
export type IdentityProvider = {
/**
 * The identity provider's issuer identifier, exactly as its metadata gives it.
 */
issuer: string,
/**
 * Its token endpoint, where the token exchange is made.
 */
tokenEndpoint: string,
/**
 * The client id the identity provider knows Toolgate by.
 */
clientId: string,
/**
 * That client's secret, as a `${secret:NAME}` reference; absent: a public client.
 */
clientSecret?: string | null,
/**
 * The user's ID token from the identity provider, as a `${secret:NAME}` reference (the
 * organisation's sign-in tool, or `toolgate secrets set`, keeps it in the keychain).
 */
idToken: string, };

/**
 * The user's answers to an [`ImportReport`](super::ImportReport).
 */
export type ImportChoices = {
/**
 * An answer for every entry of [`ImportReport::inputs`](super::ImportReport::inputs), by id. Password answers come back
 * in [`Applied::secrets`]; the others are written into the settings.
 */
inputs: { [key in string]: string },
/**
 * Which [`SecretCandidate`](super::SecretCandidate)s to move to the keychain.
 */
moveSecrets: Array<SecretMove>, };

/**
 * The shape of the JSON being imported.
 */
export type ImportFormat = "mcpServers" | "vsCode" | "serverMap" | "singleServer";

/**
 * What an import would do. Holds no secret value, so it may go to the window and the logs.
 */
export type ImportReport = { format: ImportFormat,
/**
 * In the order they would be added to the settings.
 */
added: Array<AddedServer>,
/**
 * Added servers whose id is not their slugified name, because that id was taken.
 */
renamed: Array<RenamedServer>, skipped: Array<SkippedServer>,
/**
 * "Always allow" rules from `autoApprove` / `alwaysAllow`.
 */
rules: Array<ImportedRule>,
/**
 * VS Code inputs the caller must ask the user for, and pass back in [`super::ImportChoices`].
 */
inputs: Array<InputRequest>,
/**
 * Literal values that look like secrets, offered for moving to the keychain.
 */
secretCandidates: Array<SecretCandidate>, warnings: Array<ImportWarning>, };

/**
 * Where servers to import come from.
 */
export type ImportSource = { "kind": "text", text: string,
/**
 * The name for a single server pasted alone.
 */
name: string | null, } | { "kind": "claudeDesktop" } | { "kind": "host", host: string, };

/**
 * Files the import can offer to read, where they exist.
 */
export type ImportSources = { claudeDesktop: string | null, };

export type ImportWarning = {
/**
 * The server's name in the imported text, when the warning is about one.
 */
server: string | null, message: string, };

export type ImportedRule = { serverId: string, tool: string, };

/**
 * A VS Code input to ask the user for.
 */
export type InputRequest = { id: string, description: string,
/**
 * Ask without echoing; the answer goes to the keychain under `secret_name`.
 */
password: boolean,
/**
 * For a password input: the keychain name its `${input:…}` references now use.
 */
secretName: string | null,
/**
 * The file's default answer (never kept for a password input).
 */
default: string | null,
/**
 * A `pickString` input's choices.
 */
options?: Array<string>,
/**
 * The ids of the imported servers that use it.
 */
usedBy: Array<string>, };

/**
 * A server entry from an install link, for the Add server dialog.
 */
export type InstallLink = {
/**
 * The name the link gives the server.
 */
name: string,
/**
 * The server's entry as JSON text, as pasting it would give.
 */
text: string,
/**
 * Whose link form it was: "Toolgate", "Cursor", "VS Code" or "LM Studio".
 */
form: string, };

/**
 * A package Toolgate installed for a server, as its card shows it.
 */
export type Installed = { package: string, version: string,
/**
 * `npm` or `PyPI`.
 */
registry: string, };

/**
 * A bundle installed: the server added (not started) and who signed it.
 */
export type InstalledBundle = { id: string, name: string, version: string, signature: Signature,
/**
 * How many values went to the keychain.
 */
secrets: number,
/**
 * Where its files are.
 */
folder: string, };

/**
 * A token just issued: shown once, then only its name.
 */
export type IssuedToken = { name: string, token: string,
/**
 * The door's address, for the client's configuration.
 */
url: string, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

/**
 * Where a key was found.
 */
export type KeySource = "keychain" | "environment";

/**
 * How long an "always" answer lasts.
 */
export type Lasting = "conversation" | "always";

/**
 * A server the export does not include, and why.
 */
export type LeftOut = { id: string, reason: string, };

/**
 * A page a server asks the user to open, with the domain to show prominently: the host as
 * the browser will reach it (an international name in its ASCII form, so a look-alike is
 * seen for what it is).
 */
export type Link = { url: string, domain: string, };

/**
 * A link as the window gets it: the server it holds, or why it could not be read.
 */
export type LinkOffer = { link: InstallLink | null, problem: string | null, };

/**
 * Every tool a running server offers, shown or not, for the UI's tool list.
 */
export type ListedTool = { serverId: string, serverName: string, tool: SourceTool, state: ToolState,
/**
 * The id of another server when this tool's own name looks like that server's prefixed
 * name (`files__read` offered by server `evil`, beside a server `files`): a name chosen to
 * be mistaken for, or to catch grants meant for, the other server's tool. Shown as a
 * warning; the tool is still named and resolved as its own.
 */
imitates?: string, };

/**
 * One entry as a search shows it.
 */
export type Listing = { name: string, title: string | null, description: string, version: string,
/**
 * How it runs: `npm`, `pypi`, `oci`, `mcpb`, `remote`, or several.
 */
kinds: Array<string>,
/**
 * The registry's message when the entry is deprecated.
 */
deprecated: string | null, };

/**
 * A model server that answered.
 */
export type LocalServer = {
/**
 * The preset it is (`ollama`, `lmstudio`).
 */
preset: string, name: string,
/**
 * The OpenAI-compatible base URL to configure (ends in `/v1`).
 */
baseUrl: string,
/**
 * The models it offers, sorted; empty when none is downloaded yet.
 */
models: Array<string>, };

/**
 * Settings the organisation fixes. Each key present is locked to its value; absent keys
 * stay the user's.
 */
export type Locks = {
/**
 * Allow tools their server marks read-only without asking (usually locked off).
 */
autoAllowReadOnly?: boolean,
/**
 * What happens when no rule decides.
 */
defaultDecision?: DefaultDecision,
/**
 * How long a call waits for the user's answer.
 */
approvalTimeoutSecs?: number,
/**
 * `true`: every local server runs in its sandbox; the user cannot switch it off.
 */
sandbox?: boolean,
/**
 * The most network a local server's sandbox may give it.
 */
networkAtMost?: NetworkAccess,
/**
 * Per server id, tools whose results the user reviews before the model sees them (`*`:
 * all of them).
 */
reviewResults?: { [key in string]: Array<string> }, };

export type ManagedOrigin = { place: string, modifiedMs: number | null, };

/**
 * What the window, the CLI and the doctor show of the managed policy.
 */
export type ManagedView = {
/**
 * Whether any place set a policy.
 */
active: boolean,
/**
 * Where it came from, in the order merged, with when each was last changed.
 */
origins: Array<ManagedOrigin>,
/**
 * What was refused or could not be fetched.
 */
warnings: Array<string>,
/**
 * The locked settings, each key present locked to its value.
 */
locks: Locks,
/**
 * The servers the organisation adds, by id: they cannot be removed or loosened.
 */
requiredServers: Array<string>,
/**
 * Whether the user may add servers of their own.
 */
allowUserServers: boolean,
/**
 * Whether servers may be added only from the organisation's registry.
 */
registryOnly: boolean,
/**
 * The organisation's rules, ranked with the user's (a deny or ask here is never undone).
 */
rules: Array<Rule>,
/**
 * The collector the organisation streams the audit to, when it names one (never its
 * headers).
 */
telemetryEndpoint: string | null,
/**
 * Whether the organisation sets the identity provider (the user cannot change it).
 */
identityProviderLocked: boolean,
/**
 * When it was last read, in Unix milliseconds.
 */
readAtMs: number | null, };

/**
 * How a condition compares the value it points at.
 */
export type Matcher = { "kind": "glob", "value": string } | { "kind": "prefix", "value": string } | { "kind": "equals", "value": JsonValue };

/**
 * One entry of the conversation. Its JSON (camelCase, tagged by `role`) is what the history
 * stores and what the UI receives.
 */
export type Message = { "role": "user", text: string, } | { "role": "assistant", text: string, toolCalls: Array<ToolCall>, } | { "role": "toolResult", callId: string, content: Array<ContentPart>, isError: boolean, };

/**
 * When tool names carry their server's prefix (the user's choice, in
 * [`CatalogSettings`](crate::CatalogSettings)).
 */
export type NamingMode = "auto" | "always" | "none";

/**
 * How far a confined server reaches on the network.
 */
export type NetworkAccess = "none" | "loopback" | "any" | "hosts";

/**
 * How a remote server's tokens are got.
 */
export type OAuthGrant = "authorizationCode" | "clientCredentials" | "jwtBearer" | "enterpriseManaged";

/**
 * A remote server's sign-in choices. Tokens and registrations are never here.
 */
export type OAuthSettings = {
/**
 * A client id registered by hand with the authorization server, for servers that do not
 * allow dynamic registration.
 */
clientId?: string | null,
/**
 * That client's secret, as a `${secret:NAME}` reference (never the value itself).
 */
clientSecret?: string | null,
/**
 * Scopes to ask for; absent: the ones the server names.
 */
scopes?: Array<string>,
/**
 * An HTTPS URL of a Client ID Metadata Document describing Toolgate, used as the client id
 * where the authorization server accepts such documents.
 */
clientMetadataUrl?: string | null,
/**
 * The loopback port the sign-in's redirect comes back to; absent: any free port.
 */
callbackPort?: number | null,
/**
 * How tokens are got: a person signing in in the browser (the default), or, for a server
 * that knows Toolgate as a machine client (`toolgate serve` on a server), the client
 * credentials grant with `clientId` and `clientSecret` or `privateKey`, no browser at all.
 */
grant?: OAuthGrant,
/**
 * A machine client's private key (PEM) for `private_key_jwt`, as a `${secret:NAME}`
 * reference (never the key itself).
 */
privateKey?: string | null,
/**
 * The private key's signing algorithm: `RS256` (the default), `RS384`, `RS512`, `ES256`
 * or `ES384`.
 */
signingAlgorithm?: string | null,
/**
 * DPoP (RFC 9449): tokens bound to a key of Toolgate's, kept in the keychain. Absent: when
 * the authorization server takes it and the server asks for it (its challenge names the
 * DPoP scheme); `true`: whenever the authorization server takes it; `false`: never.
 */
dpop?: boolean | null,
/**
 * Workload identity (`jwtBearer`): the workload's JWT as a `${secret:NAME}` reference.
 */
assertion?: string | null,
/**
 * Workload identity (`jwtBearer`): the file the platform keeps the workload's JWT in (a
 * Kubernetes projected service-account token, a cloud's identity token), read at each
 * connection because the platform renews it.
 */
assertionFile?: string | null, };

/**
 * One installed server's version and what its registry offers now.
 */
export type PackageView = { server: string, package: string, installed: string,
/**
 * The newest version its registry has; `None` when the registry could not be asked
 * (`problem` says why).
 */
available: string | null, problem: string | null, };

export type Page = { servers: Array<Listing>,
/**
 * Give it back for the next page; `None` at the end.
 */
nextCursor: string | null, };

/**
 * A request held for the user's decision: usually a tool call, or a server's request.
 */
export type PendingCall = {
/**
 * The gate's id for this request: unguessable, answered once.
 */
id: string,
/**
 * Named `request`, not `kind`: turn events are tagged with `kind` and embed this struct.
 */
request: RequestKind,
/**
 * What the server says to the user (an elicitation's question).
 */
message?: string,
/**
 * The model's id for the call.
 */
callId: string, serverId: string, serverName: string, tool: string,
/**
 * The arguments in full, exactly as they will be sent.
 */
arguments: JsonValue, readOnly: boolean, destructive: boolean,
/**
 * The tool's input schema, for editing the arguments before approving.
 */
inputSchema: JsonValue,
/**
 * Why the user is asked (no rule applies, a destructive tool, a grant whose tool changed…).
 */
reason: string,
/**
 * No rule could let this call run without a question (untrusted content and a way out,
 * a secret, a value from outside content: `Verdict::beyond_rules`). Only a person's
 * answer lets it run, so a question offers no "always allow", which would not change
 * the outcome.
 */
beyondRules: boolean,
/**
 * The connected client that asks (through the gateway), e.g. `claude-code`; `None` for
 * Toolgate's own chat and the servers' requests.
 */
client?: string,
/**
 * The title of Toolgate's chat that asks, when one does, as it was when it asked: the
 * tray, the notification and *Activity* say which chat, where the chat is not in view.
 */
chat?: string,
/**
 * A server's question that is a page to open (URL-mode elicitation): approving opens it
 * in the browser, and only that does.
 */
link?: Link,
/**
 * What the tool does, as its server describes it (the server's words: plain text).
 */
description?: string,
/**
 * When the gate denies the request if nobody answers (Unix milliseconds), set by
 * [`Gate::ask`]; `None` for a request held without a time limit.
 */
deadline?: number, };

/**
 * What adding an entry would do, for the user to see first.
 */
export type Plan = { name: string, version: string,
/**
 * An id for the settings, from the name (`io.github.x/time` → `time`).
 */
suggestedId: string,
/**
 * What will run, in words (`npx -y @scope/server@1.2.3`, `https://…`).
 */
runs: string, asks: Array<Ask>,
/**
 * `deprecated`, with the registry's message, when it is.
 */
warning: string | null, };

/**
 * Everything the gate decides by, apart from the request itself.
 */
export type PolicySettings = {
/**
 * Deny everything, whatever the rules say: the user's emergency stop.
 */
paused: boolean,
/**
 * Allow tools their server marks read-only without asking. Off by default because the
 * mark is the server's claim, not something Toolgate can check.
 */
autoAllowReadOnly: boolean,
/**
 * What happens when no rule and no annotation decides.
 */
default: DefaultDecision,
/**
 * Seconds a call waits for the user's answer before it is denied; none means 10 minutes.
 */
approvalTimeoutSecs?: number | null, rules: Array<Rule>, };

/**
 * A provider a window offers as a starting point.
 */
export type PresetView = { id: string, name: string, kind: ProviderKind, baseUrl: string, needsKey: boolean, };

export type PromptArgumentInfo = { name: string, description: string | null, required: boolean, };

export type PromptInfo = { name: string, description: string | null,
/**
 * The arguments' names, in order.
 */
arguments: Array<string>,
/**
 * Each argument with what the server says of it, for a form to fill.
 */
argumentInfo: Array<PromptArgumentInfo>, };

export type ProviderInput = { kind: ProviderKind, baseUrl: string, model: string, };

/**
 * The wire format a provider speaks.
 */
export type ProviderKind = "anthropic" | "openai";

/**
 * The provider settings and whether a key is set, where it came from and its last 4
 * characters; never the key.
 */
export type ProviderView = { keySet: boolean, keySource: KeySource | null, keyHint: string | null,
/**
 * The environment variable a key may also come from.
 */
keyEnvVar: string,
/**
 * Why the keychain could not be read, if it could not.
 */
keyError: string | null,
/**
 * Whether the provider refuses requests without a key (a local server does not).
 */
keyNeeded: boolean, kind: ProviderKind, baseUrl: string, model: string, };

/**
 * How far an "always" answer reaches.
 */
export type Reach = "tool" | "server";

/**
 * A tool a server offered that Toolgate will not call, and why.
 */
export type RefusedTool = { name: string, reason: string, };

/**
 * The MCP registry entry a server was added from.
 */
export type RegistryOrigin = {
/**
 * The registry's address (its API base).
 */
url: string,
/**
 * The server's name there (`io.github.owner/server`).
 */
name: string,
/**
 * The version it was added at, and is pinned to.
 */
version: string, };

export type RenamedServer = { name: string,
/**
 * The id the name would have had.
 */
wantedId: string,
/**
 * The id it got.
 */
id: string, clash: Clash, };

/**
 * What a held request is.
 */
export type RequestKind = "toolCall" | "sampling" | "elicitation" | "toolResult";

export type ResourceInfo = { uri: string, name: string, description: string | null, mimeType: string | null, };

/**
 * A resource template: an RFC 6570 URI template the user fills to read a resource.
 */
export type ResourceTemplateInfo = { uriTemplate: string, name: string, description: string | null, mimeType: string | null,
/**
 * The template's variables, in order of first use (for a form to fill).
 */
variables: Array<string>, };

/**
 * One rule, as stored in the user's settings.
 */
export type Rule = {
/**
 * Unique among the rules; chosen by the caller (this crate makes no random ids).
 */
id: string, effect: Effect, scope: Scope, target: RuleTarget,
/**
 * All must hold for the rule to apply. On a Deny or Ask rule a value that cannot be
 * checked counts as holding, on an Allow rule as not (see [`crate::condition`]).
 */
conditions?: Array<ArgCondition>,
/**
 * For Allow rules: the grant holds only while the server and tool are the ones the user
 * saw. Deny and Ask rules ignore it: a restriction never lapses because something changed.
 */
boundTo?: Binding | null,
/**
 * When the rule was made, in milliseconds since the Unix epoch.
 */
createdAt: number,
/**
 * When the rule stops applying, in milliseconds since the Unix epoch ("allow for an hour").
 */
expiresAt?: number | null,
/**
 * The user's name for the rule, used in place of a generated description.
 */
note?: string | null,
/**
 * Applies only to calls from this connected client (a host such as Claude Code, by its
 * profile or `clientInfo.name`); `None`: to every call, Toolgate's own chat included.
 */
client?: string | null,
/**
 * Set by the organisation's managed policy, never by the user: it ranks with the user's
 * own (so a managed deny or ask beats any allow, and the user may still deny or ask where
 * it allows), is named as the organisation's, and is never saved in the user's settings.
 */
managed?: boolean, };

/**
 * Which of the recent requests a rule would have matched.
 */
export type RulePreview = {
/**
 * How many recent requests were looked at (the newest first).
 */
checked: number,
/**
 * Those the rule would have matched, newest first.
 */
matched: Array<AuditRow>, };

/**
 * What a rule is about.
 */
export type RuleTarget = { "kind": "tool", serverId: string, tool: string, } | { "kind": "server", serverId: string, } | { "kind": "sampling", serverId: string, } | { "kind": "elicitation", serverId: string, };

/**
 * A server's sandbox as its card shows it.
 */
export type SandboxReport = { enabled: boolean, network: NetworkAccess,
/**
 * Folders it may change: roots, folders on its command line, its data folder, the
 * user's extras.
 */
writable: Array<string>,
/**
 * Folders beyond the system it may read: its program and runtime, its files, the user's
 * extras.
 */
readable: Array<string>, dataDir: string | null,
/**
 * What is not confined, in words: a kernel without the support, a sandbox switched off,
 * a folder that opens the home folder or a place with secrets.
 */
warnings: Array<string>,
/**
 * The settings are the defaults for what the server is.
 */
defaults: boolean,
/**
 * How it is confined, in a few words ("Landlock + seccomp").
 */
mechanism: string, };

/**
 * A local server's sandbox, as the user set it.
 */
export type SandboxSettings = {
/**
 * Confine the server. Off: it runs with everything your account can reach.
 */
enabled: boolean, network: NetworkAccess,
/**
 * Folders it may also read (besides the system, its runtime and its own files).
 */
read?: Array<string>,
/**
 * Folders it may also change (besides its roots and its data folder).
 */
write?: Array<string>,
/**
 * With network "hosts": the names it may reach (`api.github.com`, `*.notion.so`).
 */
hosts?: Array<string>,
/**
 * With network "hosts": a listed name may resolve to a private, loopback or link-local
 * address (off: such a name is refused, so no name can be turned into the local network).
 */
privateAddresses?: boolean, };

/**
 * How long a rule lasts.
 */
export type Scope = { "kind": "once" } | { "kind": "conversation", id: string, } | { "kind": "always" };

export type SearchMode = "auto" | "always" | "never";

/**
 * A literal value that looks like a secret and can move to the keychain.
 */
export type SecretCandidate = { serverId: string, location: SecretLocation,
/**
 * The variable's or header's name.
 */
name: string,
/**
 * A valid secret name no other server or candidate uses.
 */
suggestedSecret: string, };

/**
 * Where a value that could move to the keychain is.
 */
export type SecretLocation = "env" | "header";

/**
 * "Move this candidate to the keychain", optionally under another name than the suggested one.
 */
export type SecretMove = { serverId: string, location: SecretLocation, name: string, secretName?: string | null, };

/**
 * A secret that a server's env or headers refer to as `${secret:NAME}`: whether it is set and
 * its last 4 characters, never its value.
 */
export type SecretView = { name: string,
/**
 * The servers whose settings refer to it.
 */
usedBy: Array<string>, set: boolean, hint: string | null, };

/**
 * One MCP server: how to reach it, and how to supervise it.
 */
export type ServerConfig = {
/**
 * Stable identifier, unique among servers; used to route tool calls and name log files.
 */
id: string,
/**
 * Name shown to the user.
 */
name: string, enabled: boolean,
/**
 * How long the server may take from start to a listed set of tools. Generous by default
 * because `npx` and `uvx` may first fetch the package.
 */
startupTimeoutSecs: number,
/**
 * The default limit for one tool call, reset by each progress notification.
 */
callTimeoutSecs: number,
/**
 * The limit for one call however much progress it reports.
 */
maxCallTimeoutSecs: number,
/**
 * Restart the server, with backoff, when it exits on its own.
 */
autoRestart: boolean,
/**
 * Folders offered to the server when it asks for `roots/list`.
 */
roots?: Array<string>,
/**
 * Environment variables that can make the program load other code (`LD_PRELOAD`,
 * `NODE_OPTIONS`…) which the user explicitly allows in this server's `env`.
 */
allowEnv?: Array<string>,
/**
 * Pins the protocol era: `2026-07-28` (`server/discover` only) or an `initialize` version
 * ([`PROTOCOL_VERSIONS`]). Absent: `server/discover` first, then `initialize`.
 */
protocolVersion?: string | null,
/**
 * What a local server may reach. Absent: the defaults for what it is
 * ([`SandboxSettings::defaults_for`]), which confine it. Ignored for a remote server.
 */
sandbox?: SandboxSettings | null,
/**
 * What the gate should know of this server: untrusted output, a way out, results to
 * review ([`TrustMarks`]).
 */
trust?: TrustMarks,
/**
 * What Toolgate tells this server about each call in the call's `_meta` (off unless set).
 */
toolContext?: ToolContext,
/**
 * How Toolgate signs in to a remote server that asks for OAuth, when the defaults (dynamic
 * registration, the scopes the server names) are not enough. Never holds a token: those
 * live in the keychain only.
 */
oauth?: OAuthSettings | null,
/**
 * Where the server was added from, when from an MCP registry: the version it is pinned to.
 */
registry?: RegistryOrigin, } & ({ "transport": "stdio", command: string, args: Array<string>, env: { [key in string]: string }, cwd: string | null, } | { "transport": "http", url: string, headers: { [key in string]: string }, } | { "transport": "sse", url: string, headers: { [key in string]: string }, });

/**
 * What the UI and the loop see of one server.
 */
export type ServerSnapshot = { id: string, name: string, enabled: boolean, status: ServerStatus,
/**
 * `serverInfo` from the handshake, e.g. `mcp-servers/everything 2.0.0`.
 */
implementation: string | null, protocolVersion: string | null, tools: Array<ToolInfo>, resources: Array<ResourceInfo>, resourceTemplates: Array<ResourceTemplateInfo>, prompts: Array<PromptInfo>,
/**
 * The folders the server is offered as its roots.
 */
roots: Array<string>,
/**
 * A remote server's sign-in (issuer, expiry, scopes), never a token; `None` when it has none.
 */
signedIn: SignedInInfo | null,
/**
 * The scopes a call was refused for (403 `insufficient_scope`): the user may sign in again
 * to grant them.
 */
needsScope: string | null,
/**
 * Tools the server listed that Toolgate refused, with the reason (2026-07-28: an invalid
 * `x-mcp-header` annotation).
 */
refusedTools: Array<RefusedTool>,
/**
 * A local server's sandbox: what it may change and reach, and what is not enforced. As
 * applied at its last start, else as its settings say.
 */
sandbox: SandboxReport | null,
/**
 * Its results bring text from outside into a chat (the user's mark, or what it is).
 */
readsUntrusted: boolean,
/**
 * Its calls can send data out of this computer: remote, unconfined, with network access,
 * on a kernel that cannot confine its network, or marked so by the user.
 */
sendsOut: boolean,
/**
 * Tools whose results wait for the user's review before the model sees them (`*`: all).
 */
reviewResults: Array<string>,
/**
 * Tools held since they changed, until the user accepts them (`baseline.rs`): not in
 * `tools`, so neither offered nor callable.
 */
heldTools?: Array<ToolChange>,
/**
 * Names its proxy refused (network "hosts") that wait for the user: allow once, always,
 * or deny.
 */
wantedHosts?: Array<string>,
/**
 * The exact version Toolgate installed for it and runs (an npx or uvx server).
 */
installed?: Installed, };

export type ServerStatus = { "state": "stopped" } | { "state": "starting" } | { "state": "ready" } | { "state": "restarting", attempt: number, retryInMs: number, reason: string, } | { "state": "failed", reason: string, } | { "state": "signIn", reason: string, again: boolean, };

export type ServerToolSettings = {
/**
 * Used instead of the server id when this server's tools are prefixed.
 */
prefix?: string | null,
/**
 * Glob patterns on the tool's original name; when non-empty, a tool must match one.
 */
include?: Array<string>,
/**
 * Glob patterns on the tool's original name; a match hides the tool.
 */
exclude?: Array<string>,
/**
 * Original tool names the user switched off. Kept by name, not pruned when the server stops
 * listing a tool, so a tool that disappears and comes back keeps the user's choice.
 */
disabledTools?: Array<string>,
/**
 * Every tool of this server is offered even when tool search is on.
 */
alwaysLoaded?: boolean,
/**
 * Original names of this server's tools that are offered even when tool search is on.
 */
alwaysLoadedTools?: Array<string>, };

export type ServerType = "node" | "python" | "binary" | "uv";

/**
 * An image from a tool result, base64-encoded.
 */
export type ShownImage = { mimeType: string, data: string, };

/**
 * What the bundle's signature says.
 */
export type Signature = { "status": "unsigned" } | { "status": "signed" } & Signer | { "status": "tampered", reason: string, };

/**
 * What a signed-in server shows: never a token.
 */
export type SignedInInfo = {
/**
 * The authorization server that issued the tokens.
 */
issuer: string,
/**
 * When the access token expires, in seconds since 1970; refreshed before then when the
 * authorization server gave a refresh token.
 */
expiresAt: number | null, renewable: boolean, scopes: Array<string>, };

/**
 * Who signed, as the signing certificate says, and how far its chain holds.
 */
export type Signer = {
/**
 * The certificate's common name (else its whole subject).
 */
name: string,
/**
 * The subject, `CN=…,O=…`.
 */
subject: string,
/**
 * The issuer's common name (else its whole name).
 */
issuer: string,
/**
 * Signed by its own key: anyone can make such a certificate with any name.
 */
selfSigned: boolean,
/**
 * Each certificate of the chain is signed by the next and within its dates now, each issuer
 * is an authority that may sign certificates, and the signer may sign code.
 */
chainValid: boolean,
/**
 * The chain ends at an authority this computer's trust store holds.
 */
trusted: boolean,
/**
 * SHA-256 of the signing certificate, hex.
 */
fingerprint: string,
/**
 * Why the chain does not hold, when it does not.
 */
problem?: string, };

export type SkipReason = { "kind": "identical", id: string,
/**
 * The server is in the settings (true) or earlier in this import (false).
 */
existing: boolean, } | { "kind": "disabledDuplicate", id: string, existing: boolean, } | { "kind": "unsafeEnv", variable: string, } | { "kind": "unsupportedTransport", transport: string, };

export type SkippedServer = {
/**
 * Its name in the imported text.
 */
name: string, reason: SkipReason, };

/**
 * One tool as the server describes it in `tools/list`.
 */
export type SourceTool = {
/**
 * The server's own name for the tool; calls go back to the server under this name.
 */
name: string, title?: string | null, description: string,
/**
 * The JSON Schema of the arguments, exactly as the server sent it.
 */
inputSchema: JsonValue, annotations: Annotations, };

/**
 * A call the server runs as a task, as last polled.
 */
export type TaskState = { id: string,
/**
 * `working`, `input_required`, `completed`, `failed` or `cancelled`.
 */
status: string, };

/**
 * A template's resource, read: the URI the values made, and the server's answer.
 */
export type TemplateRead = { uri: string, result: JsonValue, };

/**
 * A tool result the window shows in its server's app.
 */
export type ToolApp = { serverId: string, resourceUri: string,
/**
 * The arguments the call ran with, for `ui/notifications/tool-input`.
 */
arguments: JsonValue,
/**
 * The whole `CallToolResult`, for `ui/notifications/tool-result`.
 */
result: JsonValue, };

/**
 * A tool call the model asked for.
 */
export type ToolCall = { id: string, name: string,
/**
 * The arguments. When the model sent text that is not JSON, this is that text as a
 * `Value::String`, so the loop can answer with an error result instead of failing.
 */
arguments: JsonValue, };

/**
 * Every tool of the ready servers: the name the model sees, or why it is hidden; and how much of
 * the current provider's allowance the visible ones use.
 */
export type ToolCatalogView = { tools: Array<ListedTool>, budget: Budget | null,
/**
 * Why no tool list can be sent as the settings stand, if so.
 */
problem: string | null, };

/**
 * A tool held since it changed (or appeared): what was accepted (`None` for a new tool) and
 * what the server says now. Untrusted text, shown side by side.
 */
export type ToolChange = { name: string, before: ToolText | null, after: ToolText, };

/**
 * Context passed to a server with each `tools/call`, in the request's `_meta`: opt-in per server,
 * so no server learns anything about the conversation it was not given. Never a secret: a value
 * that refers to the keychain, or a key named like a credential, is refused by validation.
 */
export type ToolContext = {
/**
 * Send the conversation's id as `dev.toolgate/conversationId` (a chat's calls only; a
 * connected client's and the user's own calls belong to no conversation).
 */
conversationId?: boolean,
/**
 * Keys and values the user chose, sent as they are.
 */
meta?: { [key in string]: JsonValue }, };

/**
 * A tool as a server describes it, with its annotations (hints, never guarantees).
 */
export type ToolInfo = { name: string, title: string | null, description: string, inputSchema: JsonValue, outputSchema: JsonValue | null, readOnly: boolean, destructive: boolean, idempotent: boolean, openWorld: boolean,
/**
 * The `ui://` resource an MCP App shows this tool's result in (`_meta.ui.resourceUri`).
 */
uiResource?: string,
/**
 * Only the server's app may call it (`_meta.ui.visibility` is `["app"]`): never offered to
 * the model.
 */
appOnly?: boolean, };

/**
 * The result of a tool call: rmcp's typed `CallToolResult` exactly as the server sent it
 * (every content block — text, image, audio, embedded resource, resource link —
 * `structuredContent`, `isError`, `_meta`), with a text rendering for the model. JSON only at
 * the window's edge (serialized as `raw`) and in the history.
 */
export type ToolOutput = { isError: boolean,
/**
 * Text blocks joined; other blocks named by kind, so the model knows they exist.
 */
text: string, raw: JsonValue, };

/**
 * Tool search: past a threshold, the model gets the always-loaded tools and a `search_tools`
 * tool that finds (and loads, for the rest of the turn) the others by what they do.
 */
export type ToolSearch = { mode: SearchMode,
/**
 * In mode `auto`, search is on when more tools than this are visible.
 */
maxTools: number,
/**
 * In mode `auto`, search is on when the visible tools' definitions are estimated at more
 * tokens than this (see [`crate::Budget::estimated_tokens`]).
 */
maxTokens: number, };

export type ToolState = { "state": "visible", modelName: string, } | { "state": "hidden", reason: HiddenReason, };

/**
 * A tool's words and hints as the user accepts them: what a change is judged by.
 */
export type ToolText = { title: string | null, description: string, inputSchema: JsonValue, outputSchema: JsonValue | null, readOnly: boolean, destructive: boolean, idempotent: boolean, openWorld: boolean, };

export type TransportKind = "stdio" | "http" | "sse";

/**
 * What the gate should know of a server beyond what its tools' hints say. `None` fields take
 * the default for what the server is ([`ServerKind`]).
 */
export type TrustMarks = {
/**
 * Its results bring text from outside into the chat (web pages, mail, issues): once a
 * chat has read one, calls that can send data out are asked even where a rule allows them.
 */
readsUntrusted?: boolean | null,
/**
 * Its calls can send data out of this computer, whatever its tools' hints and its sandbox
 * say (a remote server, a server that reaches the network).
 */
sendsOut?: boolean | null,
/**
 * Tools whose results wait for the user's review before the model (or a connected client)
 * sees them, by their own name; `*` for every tool of the server.
 */
reviewResults?: Array<string>,
/**
 * Accept its tools' changes as they come, instead of holding a changed or new tool until
 * the user has looked at it (off unless set).
 */
acceptToolChanges?: boolean,
/**
 * Look for secrets in its calls' arguments (a call carrying one is asked, whatever the
 * rules allow) and in its results (removed before the model sees them). Absent: on.
 */
scanSecrets?: boolean | null,
/**
 * Its results are the user's own data (the user's mark): a recipient, an address or an
 * account read from one of its tools that is not marked open-world counts as the user's,
 * as if typed, when the gate looks at where a call's values came from. Off unless set.
 */
trustedSource?: boolean, };

/**
 * What happens during a turn, in order, for a UI to show.
 */
export type TurnEvent = { "kind": "textDelta", text: string, } | { "kind": "assistantText", text: string, } | { "kind": "approvalRequested" } & PendingCall | { "kind": "decidedByRule", allowed: boolean,
/**
 * The gate's id for this request: unguessable, answered once.
 */
id: string,
/**
 * Named `request`, not `kind`: turn events are tagged with `kind` and embed this struct.
 */
request: RequestKind,
/**
 * What the server says to the user (an elicitation's question).
 */
message?: string,
/**
 * The model's id for the call.
 */
callId: string, serverId: string, serverName: string, tool: string,
/**
 * The arguments in full, exactly as they will be sent.
 */
arguments: JsonValue, readOnly: boolean, destructive: boolean,
/**
 * The tool's input schema, for editing the arguments before approving.
 */
inputSchema: JsonValue,
/**
 * Why the user is asked (no rule applies, a destructive tool, a grant whose tool changed…).
 */
reason: string,
/**
 * No rule could let this call run without a question (untrusted content and a way out,
 * a secret, a value from outside content: `Verdict::beyond_rules`). Only a person's
 * answer lets it run, so a question offers no "always allow", which would not change
 * the outcome.
 */
beyondRules: boolean,
/**
 * The connected client that asks (through the gateway), e.g. `claude-code`; `None` for
 * Toolgate's own chat and the servers' requests.
 */
client?: string,
/**
 * The title of Toolgate's chat that asks, when one does, as it was when it asked: the
 * tray, the notification and *Activity* say which chat, where the chat is not in view.
 */
chat?: string,
/**
 * A server's question that is a page to open (URL-mode elicitation): approving opens it
 * in the browser, and only that does.
 */
link?: Link,
/**
 * What the tool does, as its server describes it (the server's words: plain text).
 */
description?: string,
/**
 * When the gate denies the request if nobody answers (Unix milliseconds), set by
 * [`Gate::ask`]; `None` for a request held without a time limit.
 */
deadline?: number, } | { "kind": "unattended",
/**
 * The gate's id for this request: unguessable, answered once.
 */
id: string,
/**
 * Named `request`, not `kind`: turn events are tagged with `kind` and embed this struct.
 */
request: RequestKind,
/**
 * What the server says to the user (an elicitation's question).
 */
message?: string,
/**
 * The model's id for the call.
 */
callId: string, serverId: string, serverName: string, tool: string,
/**
 * The arguments in full, exactly as they will be sent.
 */
arguments: JsonValue, readOnly: boolean, destructive: boolean,
/**
 * The tool's input schema, for editing the arguments before approving.
 */
inputSchema: JsonValue,
/**
 * Why the user is asked (no rule applies, a destructive tool, a grant whose tool changed…).
 */
reason: string,
/**
 * No rule could let this call run without a question (untrusted content and a way out,
 * a secret, a value from outside content: `Verdict::beyond_rules`). Only a person's
 * answer lets it run, so a question offers no "always allow", which would not change
 * the outcome.
 */
beyondRules: boolean,
/**
 * The connected client that asks (through the gateway), e.g. `claude-code`; `None` for
 * Toolgate's own chat and the servers' requests.
 */
client?: string,
/**
 * The title of Toolgate's chat that asks, when one does, as it was when it asked: the
 * tray, the notification and *Activity* say which chat, where the chat is not in view.
 */
chat?: string,
/**
 * A server's question that is a page to open (URL-mode elicitation): approving opens it
 * in the browser, and only that does.
 */
link?: Link,
/**
 * What the tool does, as its server describes it (the server's words: plain text).
 */
description?: string,
/**
 * When the gate denies the request if nobody answers (Unix milliseconds), set by
 * [`Gate::ask`]; `None` for a request held without a time limit.
 */
deadline?: number, } | { "kind": "toolStarted", callId: string, } | { "kind": "toolProgress", callId: string, progress: number, total: number | null, message: string | null,
/**
 * Set when the server runs the call as a task: its id and last status.
 */
task?: TaskState, } | { "kind": "retrying", attempt: number, delayMs: number, reason: string, } | { "kind": "toolFinished", callId: string, isError: boolean, output: string,
/**
 * The result's images (PNG, JPEG, GIF, WebP), for the window to show.
 */
images?: Array<ShownImage>,
/**
 * The server's MCP App that shows this result, when the tool links one.
 */
app?: ToolApp, } | { "kind": "toolDenied", callId: string, reason: string | null, } | { "kind": "toolsSearched", callId: string, query: string, found: Array<FoundTool>, } | { "kind": "usage", usage: Usage, costMicroUsd: number | null, } | { "kind": "finished", text: string, usage: Usage, costMicroUsd: number | null, } | { "kind": "failed", message: string, };

/**
 * The tokens of one model call (or of several, summed).
 */
export type Usage = {
/**
 * Input tokens not read from or written to the prompt cache.
 */
inputTokens: number, outputTokens: number,
/**
 * Input tokens read from the prompt cache.
 */
cacheReadTokens: number,
/**
 * Input tokens written to the prompt cache (Anthropic bills these at a premium).
 */
cacheWriteTokens: number, };

export type UserConfigType = "string" | "number" | "boolean" | "directory" | "file";

/**
 * One component's version, for the diagnostics.
 */
export type Version = { name: string, version: string, };
