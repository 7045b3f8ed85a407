//! The command names are written in four places that must agree: `build.rs` (which makes a
//! permission for each), the handler list in `lib.rs`, the window's capability, and `ui/src/ipc.ts`
//! (the only module that calls `invoke`). A command missing from one of them fails only at run
//! time ("command not found" or "not allowed"), so this test reads all four and names what is
//! missing where.

use std::collections::BTreeSet;

/// The string literals in `build.rs`'s `let commands = &[…];`.
fn declared(build_rs: &str) -> Vec<String> {
    let start = build_rs
        .find("let commands = &[")
        .expect("build.rs declares `let commands = &[…]`");
    let list = &build_rs[start..];
    let list = &list[..list.find("];").expect("the list ends with `];`")];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The last path segment of each entry of `generate_handler![…]` in `lib.rs`.
fn handled(lib_rs: &str) -> Vec<String> {
    let start = lib_rs
        .find("generate_handler![")
        .expect("lib.rs registers its commands with generate_handler!");
    let list = &lib_rs[start + "generate_handler![".len()..];
    let list = &list[..list.find(']').expect("the handler list ends with `]`")];
    list.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| entry.rsplit("::").next().unwrap_or(entry).to_owned())
        .collect()
}

/// The app's own commands the capability allows: `allow-list-servers` is `list_servers`.
fn allowed(capability: &str) -> Vec<String> {
    let capability: serde_json::Value =
        serde_json::from_str(capability).expect("the capability is JSON");
    capability["permissions"]
        .as_array()
        .expect("the capability has a permissions list")
        .iter()
        .filter_map(serde_json::Value::as_str)
        // Plugins' and core permissions are `plugin:allow-…`; the app's own have no prefix.
        .filter_map(|p| p.strip_prefix("allow-"))
        .map(|name| name.replace('-', "_"))
        .collect()
}

/// The first argument of every `invoke<…>("name"` in `ipc.ts`.
fn invoked(ipc_ts: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = ipc_ts;
    while let Some(at) = rest.find("invoke") {
        rest = &rest[at + "invoke".len()..];
        let mut call = rest;
        // Skips the type argument, which may nest (`invoke<{ a: B<C> }[]>`).
        if let Some(generic) = call.strip_prefix('<') {
            let mut depth = 1;
            let end = generic.char_indices().find_map(|(i, c)| {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            });
            let Some(end) = end else { break };
            call = &generic[end + 1..];
        }
        let Some(args) = call.strip_prefix('(') else {
            continue;
        };
        let Some(quoted) = args.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some(end) = quoted.find('"') {
            names.push(quoted[..end].to_owned());
        }
    }
    names
}

/// Each name in any list that some list lacks, with the lists that lack it; and names written
/// twice in one list.
fn disagreements(lists: &[(&str, Vec<String>)]) -> Vec<String> {
    let mut problems = Vec::new();
    let all: BTreeSet<&String> = lists.iter().flat_map(|(_, names)| names).collect();
    for name in all {
        let missing: Vec<&str> = lists
            .iter()
            .filter(|(_, names)| !names.contains(name))
            .map(|(place, _)| *place)
            .collect();
        if !missing.is_empty() {
            problems.push(format!("`{name}` is missing from {}", missing.join(", ")));
        }
    }
    for (place, names) in lists {
        let mut seen = BTreeSet::new();
        for name in names {
            if !seen.insert(name) {
                problems.push(format!("`{name}` is written twice in {place}"));
            }
        }
    }
    problems
}

#[test]
fn the_four_lists_of_command_names_agree() {
    let lists = [
        ("src-tauri/build.rs", declared(include_str!("build.rs"))),
        (
            "generate_handler! in src-tauri/lib.rs",
            handled(include_str!("lib.rs")),
        ),
        (
            "capabilities/main-window.json",
            allowed(include_str!("../capabilities/main-window.json")),
        ),
        ("ui/src/ipc.ts", invoked(include_str!("../ui/src/ipc.ts"))),
    ];
    for (place, names) in &lists {
        assert!(
            names.len() > 50,
            "only {} names read from {place}",
            names.len()
        );
    }
    let problems = disagreements(&lists);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_reader_finds_what_its_file_writes() {
    assert_eq!(
        declared("fn main() {\n    let commands = &[\n        \"a_b\",\n        \"c\",\n    ];\n}"),
        ["a_b", "c"]
    );
    assert_eq!(
        handled("generate_handler![\n  m::a_b,\n  n::o::c,\n])"),
        ["a_b", "c"]
    );
    assert_eq!(
        allowed(r#"{"permissions": ["core:event:allow-listen", "allow-a-b", "allow-c"]}"#),
        ["a_b", "c"]
    );
    let ipc = r#"import { Channel, invoke } from "x";
        // components never call `invoke` themselves
        export const a = () => invoke<{ json: unknown; left: { id: string }[] }>("a_b", { x });
        export const c = () =>
          invoke<Map<string, Set<number>>>(
            "c",
          );"#;
    assert_eq!(invoked(ipc), ["a_b", "c"]);
    let problems = disagreements(&[
        ("one", vec!["a".into(), "b".into()]),
        ("two", vec!["a".into(), "a".into()]),
    ]);
    assert_eq!(
        problems,
        ["`b` is missing from two", "`a` is written twice in two"]
    );
}
