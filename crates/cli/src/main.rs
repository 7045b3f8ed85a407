//! `toolgate`: the desktop app's servers, approval rules, keys and tool loop from a terminal. It
//! reads and writes the app's own settings file and history, so both see the same servers,
//! rules and audit log.

mod approve;
mod bundle;
mod changes;
mod context;
mod door;
mod gateway;
mod hosts;
mod manage;
mod packages;
mod policy;
mod registry;
mod run;
mod screen;
mod sign_in;
mod terminal;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

const EXIT_CODES: &str = "\
Exit codes:
  0  done
  1  error (a server, the provider, the keychain or the settings failed; the message says which)
  2  usage (unknown command or bad arguments)
  3  denied (a tool call of the run was denied: by a rule, at the prompt, or because no
     terminal was attached to ask)

Files: the app's data folder, $XDG_DATA_HOME/dev.toolgate.desktop (settings.json,
history.sqlite3, logs/servers/<id>.log), unless --data-dir or TOOLGATE_DATA_DIR says otherwise.
Keys and secrets are read from the OS keychain; ANTHROPIC_API_KEY / OPENAI_API_KEY are used when
the keychain has no provider key.";

/// Toolgate from a terminal: the same MCP servers, approval rules, keys and history as the app.
#[derive(Parser)]
#[command(name = "toolgate", version, after_help = EXIT_CODES)]
struct Cli {
    /// The data folder (settings, history, logs) to use instead of the app's.
    #[arg(long, global = true, env = "TOOLGATE_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List, add, remove, enable, disable, test-start or read the logs of MCP servers.
    #[command(subcommand)]
    Servers(Servers),
    /// The tools the model sees.
    #[command(subcommand)]
    Tools(Tools),
    /// Call a tool yourself (no approval: you are the one asking), e.g.
    /// `toolgate call echo '{"message":"hi"}'`.
    Call {
        /// The tool's name as the model sees it (`toolgate tools list`).
        tool: String,
        /// The arguments, as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print the server's whole result (every content block, `structuredContent`,
        /// `_meta`) as JSON, instead of its text.
        #[arg(long)]
        json: bool,
    },
    /// Chat with the model at the prompt; each tool call asks: yes, no, always, or edit.
    Chat {
        /// Allow tools matching this glob (model-facing or own name) for this session only.
        #[arg(long, value_name = "GLOB")]
        approve: Vec<String>,
    },
    /// Work through one goal and print the trace of every tool call and the answer.
    Run {
        /// What to do, in words.
        goal: String,
        /// Print the goal, the trace and the answer as JSON.
        #[arg(long)]
        json: bool,
        /// Allow tools matching this glob (model-facing or own name) for this run only.
        #[arg(long, value_name = "GLOB")]
        approve: Vec<String>,
        /// A JSON Schema file: the answer must be one JSON value valid against it, printed
        /// alone on stdout (the provider's structured output where it has one; otherwise
        /// asked for, checked, and sent back once to be repaired).
        #[arg(long, value_name = "FILE")]
        schema: Option<PathBuf>,
        /// The most replies the model may give in this turn, each after the results of the
        /// calls in the last (1 to 100); the turn ends with an error past it.
        #[arg(long, value_name = "N", default_value_t = 10,
              value_parser = clap::value_parser!(u16).range(1..=100))]
        max_rounds: u16,
    },
    /// Add servers from another host's config: Claude Desktop, Cursor, .mcp.json or VS Code's
    /// mcp.json. Values that look like secrets are moved to the keychain.
    Import {
        file: PathBuf,
        /// Only show what would be added, renamed and skipped.
        #[arg(long)]
        dry_run: bool,
        /// Leave values that look like secrets in the settings file as they are.
        #[arg(long)]
        keep_secrets_in_settings: bool,
    },
    /// Store or remove a secret that servers refer to as ${secret:NAME}.
    #[command(subcommand)]
    Secrets(Secrets),
    /// The MCP server another host (Claude Desktop, Claude Code, Cursor…) launches over stdio:
    /// it forwards to Toolgate's gateway, starting the app in the tray if it is not running.
    /// Every tool call the host makes passes your approval.
    Connect {
        /// The profile (which servers and tools the host sees); default: the host's own name.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Seconds to wait for a started app's gateway.
        #[arg(long, default_value_t = 30, value_name = "SECONDS")]
        wait: u64,
        /// Fail at once when no gateway runs, instead of starting the app.
        #[arg(long)]
        no_start: bool,
        /// Copy every message through this process instead of handing the host's stdin and
        /// stdout to the gateway (Linux and macOS hand them over; Windows always copies).
        #[arg(long)]
        relay: bool,
    },
    /// Connect another host (Claude Desktop, Claude Code, Cursor, VS Code, Goose, Zed, Codex CLI,
    /// Gemini CLI) to Toolgate: its servers move into Toolgate and it runs `toolgate connect`; or
    /// undo that.
    #[command(subcommand)]
    Hosts(Hosts),
    /// Run the gateway without the app (a server, an SSH session): hosts connect with
    /// `toolgate connect`, or over HTTP with --http. Calls your rules leave open are asked here
    /// when this is a terminal, else refused.
    Serve {
        /// Also open the HTTP door at this loopback address (127.0.0.1:PORT; port 0: any free
        /// port), for hosts and containers that speak only HTTP: MCP over Streamable HTTP at
        /// http://ADDRESS/mcp, each client with a token from `toolgate door token add NAME`.
        /// Without it the door opens when the window's switch is on.
        #[arg(long, value_name = "ADDRESS")]
        http: Option<std::net::SocketAddr>,
    },
    /// What your organisation's managed policy sets (locked settings, its servers and rules,
    /// which servers may run) and where it was read from.
    Policy {
        /// Print it as JSON.
        #[arg(long)]
        json: bool,
        /// Fetch the organisation's remote policy now (it is fetched every 15 minutes anyway).
        #[arg(long)]
        refresh: bool,
    },
    /// The HTTP door's tokens (`toolgate serve --http`, or the window's HTTP door): every client
    /// needs one, named after it.
    #[command(subcommand)]
    Door(Door),
    /// Print Toolgate's Client ID Metadata Document for URL: host it there (https), and that
    /// address is Toolgate's client id, without registering, with every authorization server
    /// that accepts such documents. Name it in a server's settings as oauth.clientMetadataUrl.
    ClientMetadata {
        /// The https:// address the document will be served at (default: the one built in).
        url: Option<String>,
        /// A fixed loopback port to list as well, for an authorization server that matches
        /// redirect ports exactly; set the same as the server's oauth.callbackPort (repeatable).
        #[arg(long = "callback-port", value_name = "PORT")]
        callback_ports: Vec<u16>,
    },
}

#[derive(Subcommand)]
enum Servers {
    /// The configured servers.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Search the MCP registry (the organisation's, the settings' `registry.url`, or the
    /// official one) by name or description; the latest version of each server.
    Search {
        /// Words in the name or description; none: every server.
        query: Option<String>,
        /// The page after the one that printed this cursor.
        #[arg(long)]
        cursor: Option<String>,
        /// Servers a page (1 to 100; default 20).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
        limit: Option<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `toolgate servers add files -- npx -y @modelcontextprotocol/server-filesystem ~/notes`,
    /// `toolgate servers add remote --url https://example.com/mcp`, or from the registry:
    /// `toolgate servers add time --registry io.github.modelcontextprotocol/time[@VERSION]`
    /// (pinned to that version; each secret it needs is asked without echo, one line each
    /// from stdin when it is not a terminal, and kept in the keychain), or from an MCP bundle:
    /// `toolgate servers add weather weather.mcpb --config units=metric` (its signature
    /// checked and its signer shown, or "unsigned"; a tampered bundle refused; unpacked into
    /// Toolgate's folder; secret values asked as the registry's are).
    Add {
        id: String,
        /// An MCP bundle (.mcpb) to install as this server.
        #[arg(value_name = "FILE.mcpb", conflicts_with_all = ["command", "url", "registry"])]
        bundle: Option<PathBuf>,
        /// A value the bundle asks for, KEY=VALUE (a key given twice: two values, for a field
        /// that takes several).
        #[arg(long = "config", value_name = "KEY=VALUE", requires = "bundle")]
        config: Vec<String>,
        #[arg(long)]
        name: Option<String>,
        /// A Streamable HTTP server's address.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// A server of the MCP registry, NAME or NAME@VERSION (default: its latest version).
        #[arg(long, value_name = "NAME[@VERSION]", conflicts_with_all = ["command", "url"])]
        registry: Option<String>,
        /// A registry server's value that is not secret, KEY=VALUE (the key as `servers add`
        /// lists it, such as env:TZ); asked at the terminal otherwise.
        #[arg(long = "set", value_name = "KEY=VALUE", requires = "registry")]
        values: Vec<String>,
        /// An environment variable, NAME=value; the value may be ${secret:NAME} or ${env:NAME}.
        #[arg(long, value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// The command and its arguments, after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
    Remove {
        id: String,
    },
    Enable {
        id: String,
    },
    Disable {
        id: String,
    },
    /// Start the server now and report whether it comes up, with its tools.
    Restart {
        id: String,
    },
    /// Sign in to a remote server: prints the address to open (and opens the browser when
    /// there is one), then waits for the sign-in to finish. Tokens go to the keychain only.
    Login {
        id: String,
        /// A client id registered by hand, for a server that does not let apps register.
        #[arg(long)]
        client_id: Option<String>,
        /// A scope to ask for on top of the usual ones (repeatable).
        #[arg(long = "scope")]
        scopes: Vec<String>,
        /// Seconds to wait for the browser.
        #[arg(long, default_value_t = 300)]
        wait: u64,
    },
    /// Sign out of a remote server: its tokens revoked where offered, removed from the keychain.
    Logout {
        id: String,
    },
    /// The server's recent stderr.
    Logs {
        id: String,
        #[arg(long, default_value_t = 50)]
        lines: usize,
    },
    /// The exact versions installed for npx and uvx servers, and what their registries offer.
    Versions {
        #[arg(long)]
        json: bool,
    },
    /// Install a newer version of an npx or uvx server (its command line's newest match, or
    /// `--version`); it runs from its next start, the old version kept.
    Update {
        id: String,
        #[arg(long)]
        version: Option<String>,
    },
}

#[derive(Subcommand)]
enum Hosts {
    /// Each host, where its config is, and whether it is connected.
    List,
    /// Show what would change, ask, then import the host's servers and point it at Toolgate.
    Connect {
        /// claude-desktop, claude-code, cursor, vscode, goose, zed, codex or gemini.
        host: String,
        /// Do not ask (the preview is still printed).
        #[arg(long)]
        yes: bool,
        /// Leave values that look like secrets in the settings file as they are.
        #[arg(long)]
        keep_secrets_in_settings: bool,
    },
    /// Give the host its own config back: byte for byte when nothing else changed it, else with
    /// Toolgate's entry taken out and its servers put back, keeping what the host wrote since.
    Undo {
        host: String,
        /// Do not ask (what will change is still printed).
        #[arg(long)]
        yes: bool,
        /// Put the original back byte for byte even when the host wrote to the file since
        /// (those writes are lost).
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum Door {
    /// Issue, list or revoke the tokens clients of the HTTP door present.
    #[command(subcommand)]
    Token(DoorToken),
}

#[derive(Subcommand)]
enum DoorToken {
    /// Issue a token for the client NAME and print it (only this once). NAME is how the client
    /// is known: on approval cards and in the log, in rules limited to a client, and as its
    /// gateway profile, exactly as `toolgate connect --profile NAME`. The token goes in the
    /// keychain; the client sends it as `Authorization: Bearer <token>`.
    Add {
        /// Letters, digits, '-', '_' or '.' (e.g. claude-web, ci-runner).
        name: String,
    },
    /// The clients holding a token, by name (never the tokens).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke NAME's token: the door refuses it from then on.
    Revoke { name: String },
}

#[derive(Subcommand)]
enum Tools {
    /// Each tool by the name the model sees, and the server and tool it routes to.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Tools held since they changed (or appeared): what you accepted beside what the server
    /// says now. A held tool is not offered to the model nor callable until accepted.
    Changes {
        #[arg(long)]
        json: bool,
    },
    /// Accepts the held tools of SERVER (all of them, or the TOOLs named): offered from now on.
    Accept { server: String, tools: Vec<String> },
}

#[derive(Subcommand)]
enum Secrets {
    /// Reads the value from the terminal without echoing it (or from piped stdin).
    Set {
        name: String,
    },
    Clear {
        name: String,
    },
}

async fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    if let Command::ClientMetadata {
        url,
        callback_ports,
    } = &cli.command
    {
        return sign_in::client_metadata(url.as_deref(), callback_ports);
    }
    let data_dir = match cli.data_dir {
        Some(dir) => dir,
        None => context::default_data_dir()?,
    };
    // The shim needs nothing but the folder's socket: no settings, keychain or history.
    if let Command::Connect {
        profile,
        wait,
        no_start,
        relay,
    } = cli.command
    {
        gateway::connect(&data_dir, profile, wait, !no_start, relay)
    }
    // Only these start servers or turns; the rest read and write the settings and keychain.
    let runs_servers = matches!(
        cli.command,
        Command::Servers(Servers::Restart { .. })
            | Command::Tools(_)
            | Command::Call { .. }
            | Command::Chat { .. }
            | Command::Run { .. }
            | Command::Serve { .. }
    );
    let mut ctx = context::Context::load(data_dir, runs_servers)?;
    match cli.command {
        Command::Servers(command) => match command {
            Servers::List { json } => manage::servers_list(&ctx, json),
            Servers::Search {
                query,
                cursor,
                limit,
                json,
            } => registry::search(&ctx, query.as_deref().unwrap_or(""), cursor, limit, json).await,
            Servers::Add {
                id,
                bundle: Some(file),
                config,
                ..
            } => bundle::add(&mut ctx, &id, &file, &config).await,
            Servers::Add {
                id,
                registry: Some(entry),
                values,
                ..
            } => registry::add(&mut ctx, &id, &entry, &values).await,
            Servers::Add {
                id,
                name,
                url,
                env,
                command,
                ..
            } => manage::servers_add(&mut ctx, &id, name, url, command, env),
            Servers::Remove { id } => manage::servers_remove(&mut ctx, &id),
            Servers::Enable { id } => manage::servers_enable(&mut ctx, &id, true),
            Servers::Disable { id } => manage::servers_enable(&mut ctx, &id, false),
            Servers::Restart { id } => manage::servers_restart(&ctx, &id).await,
            Servers::Logs { id, lines } => manage::servers_logs(&ctx, &id, lines),
            Servers::Versions { json } => packages::versions(&ctx, json).await,
            Servers::Update { id, version } => {
                packages::update(&ctx, &id, version.as_deref()).await
            }
            Servers::Login {
                id,
                client_id,
                scopes,
                wait,
            } => sign_in::login(&ctx, &id, client_id, scopes, wait).await,
            Servers::Logout { id } => sign_in::logout(&ctx, &id).await,
        },
        Command::Tools(Tools::List { json }) => manage::tools_list(&ctx, json).await,
        Command::Tools(Tools::Changes { json }) => changes::list(&ctx, json).await,
        Command::Tools(Tools::Accept { server, tools }) => {
            changes::accept(&ctx, &server, &tools).await
        }
        Command::Call {
            tool,
            arguments,
            json,
        } => manage::call(&ctx, &tool, &arguments, json).await,
        Command::Chat { approve } => run::chat(ctx, &approve).await,
        Command::Run {
            goal,
            json,
            approve,
            schema,
            max_rounds,
        } => {
            let shape = run::Shape {
                json,
                schema: schema.as_deref(),
                max_rounds: usize::from(max_rounds),
            };
            run::run(ctx, &goal, &approve, shape).await
        }
        Command::Import {
            file,
            dry_run,
            keep_secrets_in_settings,
        } => manage::import(&mut ctx, &file, keep_secrets_in_settings, dry_run).await,
        Command::Secrets(Secrets::Set { name }) => manage::secrets_set(&ctx, &name).await,
        Command::Secrets(Secrets::Clear { name }) => manage::secrets_clear(&ctx, &name).await,
        Command::Serve { http } => gateway::serve(ctx, http).await,
        Command::Door(Door::Token(command)) => match command {
            DoorToken::Add { name } => door::token_add(&ctx, &name),
            DoorToken::List { json } => door::token_list(&ctx, json),
            DoorToken::Revoke { name } => door::token_revoke(&ctx, &name),
        },
        Command::Policy { json, refresh } => policy::show(&ctx, json, refresh).await,
        Command::Hosts(Hosts::List) => hosts::list(&ctx),
        Command::Hosts(Hosts::Connect {
            host,
            yes,
            keep_secrets_in_settings,
        }) => hosts::connect(&mut ctx, &host, yes, keep_secrets_in_settings).await,
        Command::Hosts(Hosts::Undo { host, yes, force }) => hosts::undo(&ctx, &host, yes, force),
        Command::Connect { .. } | Command::ClientMetadata { .. } => {
            unreachable!("handled before the host is opened")
        }
    }
}

fn main() -> ExitCode {
    // Clap prints usage errors and exits with 2 itself.
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            // rmcp logs a failed connection in its own terms (type names, debug dumps); the
            // server's status says the same in words, once. `TOOLGATE_LOG=rmcp=debug` shows it.
            // The gateway's own notes (a client connected, what its first list waited for) are
            // what `toolgate serve`'s log is for.
            tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
                .unwrap_or_else(|_| "warn,rmcp=off,toolgate_gateway=info".into()),
        )
        .with_writer(std::io::stderr)
        // Colours only for a terminal: not in `toolgate serve`'s log file or a service's journal.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("toolgate: could not start: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("toolgate: {e:#}");
            ExitCode::from(1)
        }
    }
}
