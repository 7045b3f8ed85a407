//! The window's contract generated: every Rust type a command takes or returns, or a channel
//! carries, rendered by ts-rs into one TypeScript file, `ui/src/generated/types.ts`, which
//! `ui/src/ipcTypes.ts` re-exports. The serde attributes (camelCase, tags, flatten, fields
//! left out when empty) shape the TypeScript as they shape the JSON, so the window's types
//! cannot drift from what the backend sends.
//!
//! The test renders the file and compares it with the committed one; run with
//! `TOOLGATE_WRITE_TYPES=1` it writes the file instead. A type reached from the roots below is
//! included with everything it refers to, in the order of their names.
//!
//! ts-rs makes a field optional (`name?: T | null`) only when serde both skips it and has a
//! default for it. A field serde skips without a default is marked on the Rust side:
//! `#[ts(optional)]` on an `Option` (absent, never `null`), `#[ts(optional = nullable)]` on
//! anything else (ts-rs's spelling of "may be absent, type unchanged"). 64-bit integers are
//! `number`: JSON has no other.

use std::any::type_name;
use std::collections::BTreeMap;
use std::path::Path;

use ts_rs::{Config, TypeVisitor, TS};

/// The generated file, from the workspace root.
const FILE: &str = "ui/src/generated/types.ts";

const HEADER: &str = "\
// Generated from the Rust types by src-tauri/bindings.rs (ts-rs). Do not edit: change the Rust
// type, then regenerate with
//   TOOLGATE_WRITE_TYPES=1 cargo test -p toolgate --lib bindings
// (without the variable, that test fails when this file differs from what Rust sends).
";

/// The types the window sees, with every type they refer to.
fn roots(collect: &mut Collect) {
    // What the commands return.
    collect.visit::<toolgate_mcp::ServerSnapshot>();
    collect.visit::<toolgate_mcp::ToolOutput>();
    collect.visit::<toolgate_mcp::doctor::Check>();
    collect.visit::<toolgate_oauth::SignedInInfo>();
    collect.visit::<toolgate_host::ToolCatalogView>();
    collect.visit::<toolgate_host::ProviderView>();
    collect.visit::<toolgate_host::PresetView>();
    collect.visit::<toolgate_host::SecretView>();
    collect.visit::<toolgate_host::ImportSources>();
    collect.visit::<toolgate_host::HostView>();
    collect.visit::<toolgate_host::HostPreview>();
    collect.visit::<toolgate_host::DoorView>();
    collect.visit::<toolgate_host::ManagedView>();
    collect.visit::<toolgate_registry::Page>();
    collect.visit::<toolgate_registry::Plan>();
    collect.visit::<toolgate_host::BundlePreview>();
    collect.visit::<toolgate_host::InstalledBundle>();
    collect.visit::<toolgate_host::IssuedToken>();
    collect.visit::<toolgate_host::RulePreview>();
    collect.visit::<toolgate_settings::ServerConfig>();
    collect.visit::<toolgate_settings::IdentityProvider>();
    collect.visit::<toolgate_hosts::export::Export>();
    collect.visit::<toolgate_hosts::import::ImportReport>();
    collect.visit::<toolgate_catalog::CatalogSettings>();
    collect.visit::<toolgate_policy::PolicySettings>();
    collect.visit::<toolgate_history::ConversationSummary>();
    collect.visit::<toolgate_history::AuditRow>();
    collect.visit::<toolgate_llm::Message>();
    collect.visit::<toolgate_llm::local::LocalServer>();
    collect.visit::<toolgate_agent::PendingCall>();
    collect.visit::<crate::error::CommandError>();
    collect.visit::<crate::commands::apps::AppView>();
    collect.visit::<crate::commands::content::TemplateRead>();
    collect.visit::<crate::commands::system::Diagnostics>();
    collect.visit::<crate::commands::ui_state::Geometry>();
    // What the commands take.
    collect.visit::<toolgate_agent::Decision>();
    collect.visit::<toolgate_host::ImportSource>();
    collect.visit::<toolgate_hosts::import::ImportChoices>();
    collect.visit::<toolgate_settings::SandboxSettings>();
    collect.visit::<toolgate_mcp::HostAnswer>();
    collect.visit::<toolgate_host::PackageView>();
    collect.visit::<crate::commands::install_link::LinkOffer>();
    collect.visit::<toolgate_settings::TrustMarks>();
    collect.visit::<toolgate_history::AuditFilter>();
    collect.visit::<toolgate_policy::Rule>();
    collect.visit::<crate::commands::content::Attachment>();
    collect.visit::<crate::commands::provider::ProviderInput>();
    // What a turn's channel carries.
    collect.visit::<toolgate_agent::TurnEvent>();
}

/// Each type's declaration by its TypeScript name, with the Rust type it came from.
struct Collect {
    cfg: Config,
    decls: BTreeMap<String, (&'static str, String)>,
}

impl TypeVisitor for Collect {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Primitives and containers have no declaration of their own.
        if T::output_path().is_none() {
            return;
        }
        let name = T::ident(&self.cfg);
        let decl = format!(
            "{}export {}",
            T::docs().unwrap_or_default(),
            T::decl(&self.cfg)
        );
        // ts-rs leaves a space at the end of a line before each field's doc comment.
        let text = decl
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n");
        if let Some((rust, seen)) = self.decls.get(&name) {
            // The same type may come twice under two Rust names (ts-rs renders
            // `serde_json::Value` as its own `JsonValue`); two different ones may not.
            assert!(
                *seen == text,
                "two Rust types are `{name}` in TypeScript: {rust} and {}; give one a \
                 #[ts(rename = \"…\")]",
                type_name::<T>()
            );
            return;
        }
        self.decls.insert(name, (type_name::<T>(), text));
        T::visit_dependencies(self);
    }
}

/// The declarations, by name.
fn declarations() -> Vec<(String, String)> {
    // serde_json writes 64-bit integers as JSON numbers, which the window parses as `number`.
    let mut collect = Collect {
        cfg: Config::new().with_large_int("number"),
        decls: BTreeMap::new(),
    };
    roots(&mut collect);
    collect
        .decls
        .into_iter()
        .map(|(name, (_, text))| (name, text))
        .collect()
}

fn render(declarations: &[(String, String)]) -> String {
    let mut out = String::from(HEADER);
    for (_, text) in declarations {
        out.push('\n');
        out.push_str(text);
        out.push('\n');
    }
    out
}

/// Why `committed` is not `rendered`, naming the first type that differs.
fn first_difference(declarations: &[(String, String)], committed: &str) -> String {
    if let Some((name, text)) = declarations
        .iter()
        .find(|(_, text)| !committed.contains(&format!("\n{text}\n")))
    {
        return format!("`{name}` differs or is missing; Rust renders it as:\n{text}");
    }
    let gone = committed
        .lines()
        .filter_map(|l| l.strip_prefix("export type "))
        .filter_map(|l| l.split([' ', '<']).next())
        .find(|name| !declarations.iter().any(|(n, _)| n == name));
    match gone {
        Some(name) => format!("`{name}` is in the file but no longer in Rust"),
        None => "the header or the order differs".to_owned(),
    }
}

#[test]
fn bindings_match_the_rust_types() {
    let declarations = declarations();
    let rendered = render(&declarations);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE);
    if std::env::var_os("TOOLGATE_WRITE_TYPES").is_some() {
        std::fs::create_dir_all(path.parent().expect("the file is in a folder"))
            .expect("ui/src/generated can be made");
        std::fs::write(&path, &rendered).expect("the generated file can be written");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "{FILE} is not what the Rust types render: {}\nRegenerate it with \
         TOOLGATE_WRITE_TYPES=1 cargo test -p toolgate --lib bindings",
        first_difference(&declarations, &committed)
    );
}

#[test]
fn a_changed_or_removed_type_is_named() {
    let declarations = vec![
        ("A".to_owned(), "export type A = { a: string, };".to_owned()),
        ("B".to_owned(), "export type B = \"x\" | \"y\";".to_owned()),
    ];
    let file = render(&declarations);
    assert!(first_difference(&declarations, &file).contains("order"));
    let changed = file.replace("a: string", "a: number");
    assert!(first_difference(&declarations, &changed).starts_with("`A` differs"));
    let extra = format!("{file}\nexport type C = {{ }};\n");
    assert!(first_difference(&declarations, &extra).starts_with("`C` is in the file"));
}
