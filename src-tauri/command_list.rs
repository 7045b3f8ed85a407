//! The window's commands, named once. A command is a `#[tauri::command]` function in a module of
//! `src-tauri/commands/`; this reads those modules (with `syn`) and makes everything else from
//! them, so a command cannot be registered, allowed or called under a name written by hand:
//!
//! - the handler list `lib.rs` registers (`generate_handler!`, written to `OUT_DIR`);
//! - the permission Tauri makes for each command, and the main window's capability allowing
//!   exactly those (written to `OUT_DIR` and read from there by `tauri-build`);
//! - the TypeScript function for each (`ui/src/generated/commands.ts`: its name, its arguments
//!   with their types, what it resolves to), which `ui/src/ipc.ts` re-exports.
//!
//! `build.rs` runs it on every build for the Rust side; the TypeScript file is checked in, and
//! this module's test fails when it differs from what this makes (`TOOLGATE_WRITE_TYPES=1`
//! writes it).

use std::collections::BTreeSet;
use std::path::Path;

/// One command: where it is, its name, and what the window passes and gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The module under `commands/` (`servers`).
    pub module: String,
    /// The Rust function's name, which is the command's (`list_servers`).
    pub name: String,
    /// The arguments the window passes, in order: their names as the window spells them
    /// (Tauri's camelCase) and their TypeScript types. Tauri's own (state, app handle, window)
    /// are left out.
    pub params: Vec<(String, String)>,
    /// The TypeScript type the call resolves to (`void` for nothing).
    pub returns: String,
    /// The first paragraph of its doc comment, for the TypeScript function.
    pub doc: String,
}

/// What Tauri hands a command itself: never passed by the window.
const INJECTED: &[&str] = &["State", "AppHandle", "Window", "WebviewWindow", "Webview"];

/// Every command of every module in `dir` (`src-tauri/commands`), modules in name order and
/// commands in file order. A command whose argument or result this cannot name in TypeScript
/// is an error saying which.
pub fn read(dir: &Path) -> Result<Vec<Command>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    files.sort();
    let mut commands = Vec::new();
    for path in files {
        let module = path
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("{} has no module name", path.display()))?
            .to_owned();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        commands.extend(in_module(&module, &text).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    let mut seen = BTreeSet::new();
    for c in &commands {
        if !seen.insert(&c.name) {
            return Err(format!(
                "two commands are named {}: Tauri would register one",
                c.name
            ));
        }
    }
    Ok(commands)
}

/// The commands in one module's source.
pub fn in_module(module: &str, source: &str) -> Result<Vec<Command>, String> {
    let file = syn::parse_file(source).map_err(|e| format!("does not parse: {e}"))?;
    let mut commands = Vec::new();
    for item in file.items {
        let syn::Item::Fn(f) = item else { continue };
        if !f.attrs.iter().any(is_command_attribute) {
            continue;
        }
        if f.attrs
            .iter()
            .any(|a| is_command_attribute(a) && matches!(a.meta, syn::Meta::List(_)))
        {
            return Err(format!(
                "{} gives #[tauri::command] options; the generated names assume none",
                f.sig.ident
            ));
        }
        if !matches!(f.vis, syn::Visibility::Public(_)) {
            return Err(format!("{} must be `pub` to be registered", f.sig.ident));
        }
        let name = f.sig.ident.to_string();
        let mut params = Vec::new();
        for input in &f.sig.inputs {
            let syn::FnArg::Typed(arg) = input else {
                return Err(format!("{name} takes `self`"));
            };
            if is_injected(&arg.ty) {
                continue;
            }
            let syn::Pat::Ident(ident) = &*arg.pat else {
                return Err(format!("{name}: an argument is a pattern, not a name"));
            };
            let ts = ts_type(&arg.ty).map_err(|e| format!("{name}({}): {e}", ident.ident))?;
            // Any JSON may be passed where the command takes a `Value`.
            let ts = if ts == "JsonValue" {
                "unknown".to_owned()
            } else {
                ts
            };
            params.push((camel(&ident.ident.to_string()), ts));
        }
        let returns = match &f.sig.output {
            syn::ReturnType::Default => "void".to_owned(),
            syn::ReturnType::Type(_, ty) => {
                ts_type(ok_type(ty)).map_err(|e| format!("{name} returns {e}"))?
            }
        };
        commands.push(Command {
            module: module.to_owned(),
            name,
            params,
            returns,
            doc: doc(&f.attrs),
        });
    }
    Ok(commands)
}

fn is_command_attribute(attr: &syn::Attribute) -> bool {
    let segments: Vec<String> = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    segments == ["tauri", "command"] || segments == ["command"]
}

fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last(),
        _ => None,
    }
}

fn is_injected(ty: &syn::Type) -> bool {
    last_segment(ty).is_some_and(|s| INJECTED.contains(&s.ident.to_string().as_str()))
}

/// `T` of `Result<T, _>` (or of the crate's `Result<T>`); any other type as it is.
fn ok_type(ty: &syn::Type) -> &syn::Type {
    match last_segment(ty) {
        Some(s) if s.ident == "Result" => generic_args(s).into_iter().next().unwrap_or(ty),
        _ => ty,
    }
}

fn generic_args(segment: &syn::PathSegment) -> Vec<&syn::Type> {
    match &segment.arguments {
        syn::PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The TypeScript spelling of a type crossing to the window: JSON's own types for Rust's, and
/// any other type by its name, as `src-tauri/bindings.rs` exports it into `types.ts`.
pub fn ts_type(ty: &syn::Type) -> Result<String, String> {
    if let syn::Type::Tuple(t) = ty {
        if t.elems.is_empty() {
            return Ok("void".to_owned());
        }
    }
    let Some(segment) = last_segment(ty) else {
        return Err(
            "a type that is not a path (a reference, a tuple, an array): pass an owned, named type"
                .to_owned(),
        );
    };
    let args = generic_args(segment);
    let one = |what: &str| -> Result<String, String> {
        match args.as_slice() {
            [inner] => ts_type(inner),
            _ => Err(format!("{what} without its one type")),
        }
    };
    let ident = segment.ident.to_string();
    Ok(match ident.as_str() {
        "String" | "str" | "PathBuf" => "string".to_owned(),
        "bool" => "boolean".to_owned(),
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" | "f32"
        | "f64" => "number".to_owned(),
        "Value" => "JsonValue".to_owned(),
        "Option" => format!("{} | null", one("Option")?),
        "Vec" => {
            let inner = one("Vec")?;
            if inner.contains(' ') {
                format!("Array<{inner}>")
            } else {
                format!("{inner}[]")
            }
        }
        "Channel" => format!("Channel<{}>", one("Channel")?),
        "Map" | "BTreeMap" | "HashMap" => match args.as_slice() {
            [] => "Record<string, JsonValue>".to_owned(),
            [_, value] => format!("Record<string, {}>", ts_type(value)?),
            _ => return Err(format!("{ident} without its key and value types")),
        },
        "Result" => return Err("a Result inside a command's types".to_owned()),
        _ if args.is_empty() => ident,
        _ => {
            return Err(format!(
                "{ident}<…>: a generic type the window has no name for"
            ))
        }
    })
}

/// Tauri's spelling of an argument in the window: `server_id` is `serverId`.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// An argument's name as a TypeScript parameter: `arguments` (and `eval`) cannot be one in a
/// module, so they are `args` (and `evalValue`) there and keep their name in the call.
fn ts_name(name: &str) -> String {
    match name {
        "arguments" => "args".to_owned(),
        "eval" => "evalValue".to_owned(),
        other => other.to_owned(),
    }
}

/// The first paragraph of the doc comment, on one line.
fn doc(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        {
            let line = s.value().trim().to_owned();
            if line.is_empty() && !lines.is_empty() {
                break;
            }
            if !line.is_empty() {
                lines.push(line);
            }
        }
    }
    lines.join(" ")
}

/// The handler list for `lib.rs`: `tauri::generate_handler![…]`.
pub fn handlers(commands: &[Command]) -> String {
    let mut out = String::from("tauri::generate_handler![\n");
    for c in commands {
        out.push_str(&format!("    crate::commands::{}::{},\n", c.module, c.name));
    }
    out.push(']');
    out
}

/// Tauri's permission for a command: `allow-list-servers`.
pub fn permission(name: &str) -> String {
    format!("allow-{}", name.replace('_', "-"))
}

/// The main window's capability: the events it listens to and exactly the app's commands.
pub fn capability(commands: &[Command]) -> String {
    let mut permissions: Vec<String> = ["core:event:allow-listen", "core:event:allow-unlisten"]
        .iter()
        .map(|p| (*p).to_owned())
        .collect();
    permissions.extend(commands.iter().map(|c| permission(&c.name)));
    let capability = serde_json::json!({
        "identifier": "main-window",
        "description": "What the main window may do: listen to events and call Toolgate's own \
                        commands (made from src-tauri/commands/ by src-tauri/command_list.rs). \
                        No file system, shell or HTTP access from the web-view.",
        "windows": ["main"],
        "permissions": permissions,
    });
    serde_json::to_string_pretty(&capability).expect("a capability is JSON")
}

/// `ui/src/generated/commands.ts`: one function per command, typed.
pub fn typescript(commands: &[Command]) -> String {
    const BUILT_IN: &[&str] = &[
        "string", "boolean", "number", "void", "null", "unknown", "Array", "Record", "Channel",
    ];
    let mut types = BTreeSet::new();
    let mut channel = false;
    for c in commands {
        let all = c.params.iter().map(|(_, t)| t).chain([&c.returns]);
        for t in all {
            for word in t.split(|ch: char| !ch.is_alphanumeric() && ch != '_') {
                if word == "Channel" {
                    channel = true;
                }
                if !word.is_empty() && !BUILT_IN.contains(&word) {
                    types.insert(word.to_owned());
                }
            }
        }
    }
    let mut out = String::from(
        "// Made by src-tauri/command_list.rs from the #[tauri::command] functions in\n\
         // src-tauri/commands/; do not edit (TOOLGATE_WRITE_TYPES=1 cargo test -p toolgate --lib\n\
         // command_list writes it). ui/src/ipc.ts re-exports these; components import from there.\n\n",
    );
    out.push_str(if channel {
        "import { Channel, invoke } from \"@tauri-apps/api/core\";\n"
    } else {
        "import { invoke } from \"@tauri-apps/api/core\";\n"
    });
    if !types.is_empty() {
        let list: Vec<_> = types.into_iter().collect();
        out.push_str(&format!(
            "import type {{ {} }} from \"./types\";\n",
            list.join(", ")
        ));
    }
    for c in commands {
        out.push('\n');
        if !c.doc.is_empty() {
            out.push_str(&format!("/** {} */\n", c.doc.replace("*/", "*\\/")));
        }
        let params: Vec<String> = c
            .params
            .iter()
            .map(|(n, t)| format!("{}: {t}", ts_name(n)))
            .collect();
        let args = if c.params.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = c
                .params
                .iter()
                .map(|(n, _)| match ts_name(n) {
                    same if same == *n => same,
                    other => format!("{n}: {other}"),
                })
                .collect();
            format!(", {{ {} }}", names.join(", "))
        };
        out.push_str(&format!(
            "export const {} = ({}): Promise<{}> =>\n  invoke(\"{}\"{});\n",
            camel(&c.name),
            params.join(", "),
            c.returns,
            c.name,
            args
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
    }

    #[test]
    fn a_command_is_read_with_what_the_window_passes_and_gets() {
        let source = r#"
            /// Restarts a server.
            ///
            /// More words.
            #[tauri::command]
            pub async fn restart_server<R: Runtime>(
                app: AppHandle<R>,
                state: State<'_, AppState>,
                server_id: String,
                extra_scopes: Option<Vec<toolgate_x::Scope>>,
                on_url: tauri::ipc::Channel<String>,
                values: BTreeMap<String, String>,
                arguments: serde_json::Map<String, Value>,
                input: Value,
            ) -> Result<Vec<Option<u64>>> { todo!() }

            #[tauri::command]
            pub fn nothing() {}

            pub fn not_a_command(x: &str) {}
        "#;
        let commands = in_module("servers", source).unwrap();
        assert_eq!(commands.len(), 2);
        assert_eq!(
            commands[0],
            Command {
                module: "servers".into(),
                name: "restart_server".into(),
                params: vec![
                    ("serverId".into(), "string".into()),
                    ("extraScopes".into(), "Scope[] | null".into()),
                    ("onUrl".into(), "Channel<string>".into()),
                    ("values".into(), "Record<string, string>".into()),
                    ("arguments".into(), "Record<string, JsonValue>".into()),
                    ("input".into(), "unknown".into()),
                ],
                returns: "Array<number | null>".into(),
                doc: "Restarts a server.".into(),
            }
        );
        assert_eq!(commands[1].returns, "void");
        let ts = typescript(&commands);
        assert!(ts.contains("import { Channel, invoke } from \"@tauri-apps/api/core\";"));
        assert!(ts.contains("import type { JsonValue, Scope } from \"./types\";"));
        assert!(ts.contains(
            "export const restartServer = (serverId: string, extraScopes: Scope[] | null, \
             onUrl: Channel<string>, values: Record<string, string>, args: \
             Record<string, JsonValue>, input: unknown): Promise<Array<number | null>> =>\n  \
             invoke(\"restart_server\", { serverId, extraScopes, onUrl, values, arguments: args, input });"
        ));
        assert!(ts.contains("export const nothing = (): Promise<void> =>\n  invoke(\"nothing\");"));
        assert_eq!(
            handlers(&commands),
            "tauri::generate_handler![\n    crate::commands::servers::restart_server,\n    \
             crate::commands::servers::nothing,\n]"
        );
        let capability: serde_json::Value = serde_json::from_str(&capability(&commands)).unwrap();
        assert_eq!(
            capability["permissions"],
            serde_json::json!([
                "core:event:allow-listen",
                "core:event:allow-unlisten",
                "allow-restart-server",
                "allow-nothing"
            ])
        );
        assert_eq!(capability["windows"], serde_json::json!(["main"]));
    }

    #[test]
    fn a_command_the_window_could_not_call_as_written_is_refused_saying_why() {
        for (source, says) in [
            (
                "#[tauri::command] pub fn a(x: &str) {}",
                "a(x): a type that is not a path",
            ),
            ("#[tauri::command] fn b() {}", "b must be `pub`"),
            (
                "#[tauri::command(rename_all = \"snake_case\")] pub fn c() {}",
                "c gives #[tauri::command] options",
            ),
            (
                "#[tauri::command] pub fn d(x: Cow<'static, str>) {}",
                "d(x): Cow<…>: a generic type",
            ),
            (
                "#[tauri::command] pub fn e() -> Result<Result<(), String>, E> {}",
                "e returns a Result inside",
            ),
            (
                "#[tauri::command] pub fn f(x: Vec) {}",
                "f(x): Vec without its one type",
            ),
        ] {
            let e = in_module("m", source).unwrap_err();
            assert!(e.contains(says), "{source}: {e}");
        }
        let dir = std::env::temp_dir().join(format!("toolgate-commands-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.rs"), "#[tauri::command] pub fn same() {}").unwrap();
        std::fs::write(dir.join("b.rs"), "#[tauri::command] pub fn same() {}").unwrap();
        let e = read(&dir).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("two commands are named same"), "{e}");
    }

    /// A command outside `commands/` would be neither registered nor allowed: every one is there.
    #[test]
    fn every_command_of_the_app_is_in_the_commands_folder() {
        let mut outside = Vec::new();
        let mut stack = vec![root().join("src-tauri")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if !path.ends_with("commands") {
                        stack.push(path);
                    }
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.ends_with("command_list.rs")
                    && std::fs::read_to_string(&path)
                        .unwrap()
                        .contains("#[tauri::command")
                {
                    outside.push(path);
                }
            }
        }
        assert!(
            outside.is_empty(),
            "commands outside src-tauri/commands/: {outside:?}"
        );
        let commands = read(&root().join("src-tauri/commands")).unwrap();
        assert!(commands.len() > 80, "{} commands", commands.len());
    }

    /// The TypeScript functions the window calls are the ones made from the commands now; the
    /// web-view calls `invoke` nowhere else.
    #[test]
    fn the_windows_functions_are_made_from_the_commands() {
        let fresh = typescript(&read(&root().join("src-tauri/commands")).unwrap());
        let path = root().join("ui/src/generated/commands.ts");
        if std::env::var_os("TOOLGATE_WRITE_TYPES").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == fresh,
            "ui/src/generated/commands.ts is not what the commands make: run \
             TOOLGATE_WRITE_TYPES=1 cargo test -p toolgate --lib command_list"
        );
        let mut calls = Vec::new();
        let mut stack = vec![root().join("ui/src")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path != root().join("ui/src/generated/commands.ts")
                    && std::fs::read_to_string(&path)
                        .is_ok_and(|text| text.contains("invoke(") || text.contains("invoke<"))
                {
                    calls.push(path);
                }
            }
        }
        assert!(
            calls.is_empty(),
            "invoke called outside generated/commands.ts: {calls:?}"
        );
    }
}
