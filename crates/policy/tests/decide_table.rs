//! The precedence of `decide`, one row per case.

use serde_json::{json, Value};
use toolgate_policy::{
    decide, decide_for_client, Annotations, ArgCondition, Basis, ChangeKind, Changed, Decision,
    DefaultDecision, Effect, PolicySettings, Rule, Scope, Subject, Target, ToolCall,
};

const NOW: i64 = 1_700_000_000_000;

fn call(server: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        server_id: server.into(),
        tool: tool.into(),
        arguments,
        annotations: Annotations::default(),
        server_fingerprint: format!("{server}-v1"),
        tool_fingerprint: format!("{tool}-v1"),
    }
}

fn shell(command: &str) -> ToolCall {
    call("shell", "run", json!({ "command": command }))
}

fn fs(tool: &str, path: &str) -> ToolCall {
    call("fs", tool, json!({ "path": path }))
}

fn read_only(mut c: ToolCall) -> ToolCall {
    c.annotations.read_only = true;
    c
}

fn destructive(mut c: ToolCall) -> ToolCall {
    c.annotations.destructive = true;
    c
}

fn sampling(server: &str) -> Subject {
    Subject::Sampling {
        server_id: server.into(),
        server_fingerprint: format!("{server}-v1"),
    }
}

fn elicitation(server: &str) -> Subject {
    Subject::Elicitation {
        server_id: server.into(),
        server_fingerprint: format!("{server}-v1"),
    }
}

fn conversation(id: &str) -> Scope {
    Scope::Conversation { id: id.into() }
}

fn settings(rules: Vec<Rule>) -> PolicySettings {
    PolicySettings {
        rules,
        ..PolicySettings::default()
    }
}

fn paused(mut s: PolicySettings) -> PolicySettings {
    s.paused = true;
    s
}

fn auto_read_only(mut s: PolicySettings) -> PolicySettings {
    s.auto_allow_read_only = true;
    s
}

fn deny_by_default(mut s: PolicySettings) -> PolicySettings {
    s.default = DefaultDecision::Deny;
    s
}

fn when(rule: Rule, conditions: Vec<ArgCondition>) -> Rule {
    rule.with_conditions(conditions)
}

fn changed(rule_id: &str, what: ChangeKind) -> Changed {
    Changed {
        rule_id: rule_id.into(),
        what,
    }
}

/// What a case expects: the decision, the step that made it, the rule named, lapsed grants.
struct Expect {
    decision: Decision,
    basis: Basis,
    rule_id: Option<&'static str>,
    changed: Vec<Changed>,
}

fn by_rule(decision: Decision, rule_id: &'static str) -> Expect {
    Expect {
        decision,
        basis: Basis::Rule,
        rule_id: Some(rule_id),
        changed: Vec::new(),
    }
}

fn by(decision: Decision, basis: Basis) -> Expect {
    Expect {
        decision,
        basis,
        rule_id: None,
        changed: Vec::new(),
    }
}

fn lapsed(mut e: Expect, changes: Vec<Changed>) -> Expect {
    e.changed = changes;
    e
}

struct Case {
    name: &'static str,
    subject: Subject,
    settings: PolicySettings,
    conversation: Option<&'static str>,
    expect: Expect,
    /// Whether the settings pass `validate`; a few cases test what `decide` does with settings
    /// the UI would never store.
    valid: bool,
}

fn case(
    name: &'static str,
    subject: impl Into<SubjectArg>,
    settings: PolicySettings,
    conversation: Option<&'static str>,
    expect: Expect,
) -> Case {
    Case {
        name,
        subject: subject.into().0,
        settings,
        conversation,
        expect,
        valid: true,
    }
}

fn unvalidated(c: Case) -> Case {
    Case { valid: false, ..c }
}

struct SubjectArg(Subject);

impl From<ToolCall> for SubjectArg {
    fn from(c: ToolCall) -> Self {
        SubjectArg(Subject::ToolCall(c))
    }
}

impl From<Subject> for SubjectArg {
    fn from(s: Subject) -> Self {
        SubjectArg(s)
    }
}

// One row per case, kept on as few lines as possible so the table reads as a table.
#[rustfmt::skip]
fn cases() -> Vec<Case> {
    use Decision::{Allow, Ask, Deny};
    let git_status = shell("git status");
    let allow_shell = || Rule::allow_server("allow-shell", &git_status, Scope::Always, NOW);
    let allow_run = || Rule::allow_tool("allow-run", &git_status, Scope::Always, NOW);
    let allow_git_status = || when(
        Rule::allow_tool("allow-git-status", &git_status, Scope::Always, NOW),
        vec![ArgCondition::prefix("/command", "git status")],
    );
    let ask_git_push = || when(
        Rule::ask_tool("ask-git-push", &git_status, Scope::Always, NOW),
        vec![ArgCondition::prefix("/command", "git push")],
    );
    let deny_run = || Rule::deny_tool("deny-run", &git_status, Scope::Always, NOW);
    let deny_shell = || Rule { target: Target::Server { server_id: "shell".into() }, ..Rule::deny_tool("deny-shell", &git_status, Scope::Always, NOW) };
    let write = fs("write_file", "/home/me/project/a.txt");
    let allow_fs = || Rule::allow_server("allow-fs", &write, Scope::Always, NOW);
    let allow_write_in_project = || when(
        Rule::allow_tool("write-project", &write, Scope::Always, NOW),
        vec![ArgCondition::glob("/path", "/home/me/project/**")],
    );
    let deny_write_etc = || when(
        Rule::deny_tool("deny-etc", &write, Scope::Always, NOW),
        vec![ArgCondition::glob("/path", "/etc/**")],
    );
    let mkdir = |parents: Value| call("fs", "mkdir", json!({ "path": "/tmp/x", "parents": parents }));
    let deny_parents = || when(
        Rule::deny_tool("no-parents", &mkdir(json!(null)), Scope::Always, NOW),
        vec![ArgCondition::equals("/parents", json!(true))],
    );
    let in_c1 = |rule: Rule| Rule { scope: conversation("c1"), ..rule };
    // The organisation's managed policy: unbound, by name, ranked with the user's rules.
    let org = |rule: Rule| Rule { managed: true, bound_to: None, ..rule };
    let rm = destructive(fs("delete_file", "/home/me/project/a.txt"));
    let read = read_only(fs("read_file", "/home/me/project/a.txt"));
    let server_moved = ToolCall { server_fingerprint: "shell-v2".into(), ..git_status.clone() };
    let tool_moved = ToolCall { tool_fingerprint: "run-v2".into(), ..git_status.clone() };
    let both_moved = ToolCall { tool_fingerprint: "run-v2".into(), ..server_moved.clone() };
    let allow_sampling = || Rule::for_subject("sample", Effect::Allow, &sampling("llm"), Scope::Always, NOW);
    let none = || settings(vec![]);

    vec![
        // 1. Paused beats everything.
        case("paused beats an allow", git_status.clone(), paused(settings(vec![allow_run()])), None, by(Deny, Basis::Paused)),
        case("paused beats read-only auto-allow", read.clone(), paused(auto_read_only(none())), None, by(Deny, Basis::Paused)),
        case("paused covers sampling", sampling("llm"), paused(settings(vec![allow_sampling()])), None, by(Deny, Basis::Paused)),
        // 2–3. Deny beats ask beats allow, whatever their reach.
        case("deny beats allow", git_status.clone(), settings(vec![allow_run(), deny_run()]), None, by_rule(Deny, "deny-run")),
        case("deny beats ask", shell("git push"), settings(vec![ask_git_push(), deny_run()]), None, by_rule(Deny, "deny-run")),
        case("server-wide deny beats a narrower allow", git_status.clone(), settings(vec![allow_git_status(), deny_shell()]), None, by_rule(Deny, "deny-shell")),
        case("ask beats a server-wide allow", shell("git push origin main"), settings(vec![allow_shell(), ask_git_push()]), None, by_rule(Ask, "ask-git-push")),
        case("ask beats a tool allow", shell("git push"), settings(vec![allow_run(), ask_git_push()]), None, by_rule(Ask, "ask-git-push")),
        case("ask hidden behind a chained command", shell("git add . && git push"), settings(vec![allow_shell(), ask_git_push()]), None, by_rule(Ask, "ask-git-push")),
        case("ask whose condition fails leaves the allow", git_status.clone(), settings(vec![allow_shell(), ask_git_push()]), None, by_rule(Allow, "allow-shell")),
        // 4. Allow, the most specific rule named.
        case("tool+conditions beats tool beats server", git_status.clone(), settings(vec![allow_shell(), allow_run(), allow_git_status()]), None, by_rule(Allow, "allow-git-status")),
        case("tool beats server", shell("ls"), settings(vec![allow_shell(), allow_run(), allow_git_status()]), None, by_rule(Allow, "allow-run")),
        case("server-wide allow covers every tool", call("shell", "env", json!({})), settings(vec![allow_shell()]), None, by_rule(Allow, "allow-shell")),
        case("a server's rule is not another server's", call("other", "run", json!({})), settings(vec![allow_shell()]), None, by(Ask, Basis::Default)),
        case("a tool's rule is not another tool's", call("shell", "env", json!({})), settings(vec![allow_run()]), None, by(Ask, Basis::Default)),
        // Scopes and expiry.
        case("conversation grant in its conversation", git_status.clone(), settings(vec![in_c1(allow_run())]), Some("c1"), by_rule(Allow, "allow-run")),
        case("conversation grant in another conversation", git_status.clone(), settings(vec![in_c1(allow_run())]), Some("c2"), by(Ask, Basis::Default)),
        case("conversation grant outside any conversation", git_status.clone(), settings(vec![in_c1(allow_run())]), None, by(Ask, Basis::Default)),
        case("conversation deny only in its conversation", git_status.clone(), settings(vec![allow_run(), in_c1(deny_run())]), Some("c2"), by_rule(Allow, "allow-run")),
        case("conversation deny in its conversation", git_status.clone(), settings(vec![allow_run(), in_c1(deny_run())]), Some("c1"), by_rule(Deny, "deny-run")),
        unvalidated(case("a once rule found in settings is ignored", git_status.clone(), settings(vec![Rule { scope: Scope::Once, ..allow_run() }]), Some("c1"), by(Ask, Basis::Default))),
        case("an expired grant is ignored", git_status.clone(), settings(vec![allow_run().expiring_at(NOW)]), None, by(Ask, Basis::Default)),
        case("a grant before its expiry applies", git_status.clone(), settings(vec![allow_run().expiring_at(NOW + 1)]), None, by_rule(Allow, "allow-run")),
        // Argument conditions.
        case("glob: a path under the folder", write.clone(), settings(vec![allow_write_in_project()]), None, by_rule(Allow, "write-project")),
        case("glob: a path outside the folder", fs("write_file", "/home/me/other/a.txt"), settings(vec![allow_write_in_project()]), None, by(Ask, Basis::Default)),
        case("glob: climbing out with ..", fs("write_file", "/home/me/project/../../../etc/x"), settings(vec![allow_write_in_project()]), None, by(Ask, Basis::Default)),
        case("glob: deny matches", fs("write_file", "/etc/hosts"), settings(vec![deny_write_etc(), allow_fs()]), None, by_rule(Deny, "deny-etc")),
        case("glob: deny does not match", fs("write_file", "/tmp/x"), settings(vec![deny_write_etc(), allow_fs()]), None, by_rule(Allow, "allow-fs")),
        case("prefix: matches", git_status.clone(), settings(vec![allow_git_status()]), None, by_rule(Allow, "allow-git-status")),
        case("prefix: does not match", shell("rm -rf ~"), settings(vec![allow_git_status()]), None, by(Ask, Basis::Default)),
        case("prefix: a chained tail is not allowed", shell("git status; rm -rf ~"), settings(vec![allow_git_status()]), None, by(Ask, Basis::Default)),
        case("equals: matches", mkdir(json!(true)), settings(vec![deny_parents()]), None, by_rule(Deny, "no-parents")),
        case("equals: does not match", mkdir(json!(false)), settings(vec![deny_parents()]), None, by(Ask, Basis::Default)),
        case("missing pointer: no grant", call("shell", "run", json!({"cmd": "git status"})), settings(vec![allow_git_status()]), None, by(Ask, Basis::Default)),
        case("not a string: no grant", call("shell", "run", json!({"command": ["git", "status"]})), settings(vec![allow_git_status()]), None, by(Ask, Basis::Default)),
        case("missing pointer: a deny still holds", call("fs", "write_file", json!({"file": "/etc/hosts"})), settings(vec![deny_write_etc(), allow_fs()]), None, by_rule(Deny, "deny-etc")),
        case("missing pointer: an ask still holds", call("shell", "run", json!({})), settings(vec![allow_shell(), ask_git_push()]), None, by_rule(Ask, "ask-git-push")),
        // 5. Annotations.
        case("destructive asks even with read-only auto-allow", destructive(read_only(fs("delete_file", "/x"))), auto_read_only(none()), None, by(Ask, Basis::Destructive)),
        case("destructive is not covered by a server-wide allow", rm.clone(), settings(vec![Rule::allow_server("allow-fs", &rm, Scope::Always, NOW)]), None, by(Ask, Basis::Destructive)),
        case("destructive allowed by a rule naming the tool", rm.clone(), settings(vec![Rule::allow_tool("allow-rm", &rm, Scope::Always, NOW)]), None, by_rule(Allow, "allow-rm")),
        case("destructive under deny-by-default is denied", rm.clone(), deny_by_default(none()), None, by(Deny, Basis::Default)),
        case("read-only with auto-allow on", read.clone(), auto_read_only(none()), None, by(Allow, Basis::ReadOnly)),
        case("read-only with auto-allow off", read.clone(), none(), None, by(Ask, Basis::Default)),
        case("read-only auto-allow does not beat an ask rule", read.clone(), auto_read_only(settings(vec![Rule::ask_tool("ask-read", &read, Scope::Always, NOW)])), None, by_rule(Ask, "ask-read")),
        // 6. The default.
        case("default ask", git_status.clone(), none(), None, by(Ask, Basis::Default)),
        case("default deny", git_status.clone(), deny_by_default(none()), None, by(Deny, Basis::Default)),
        // Re-ask on change.
        case("server changed: the grant lapses and is reported", server_moved.clone(), settings(vec![allow_run()]), None, lapsed(by(Ask, Basis::Default), vec![changed("allow-run", ChangeKind::ServerChanged)])),
        case("server changed: a server-wide grant lapses too", server_moved.clone(), settings(vec![allow_shell()]), None, lapsed(by(Ask, Basis::Default), vec![changed("allow-shell", ChangeKind::ServerChanged)])),
        case("tool changed: the grant lapses and is reported", tool_moved.clone(), settings(vec![allow_run()]), None, lapsed(by(Ask, Basis::Default), vec![changed("allow-run", ChangeKind::ToolChanged)])),
        case("tool changed: a server-wide grant still holds", tool_moved.clone(), settings(vec![allow_run(), allow_shell()]), None, lapsed(by_rule(Allow, "allow-shell"), vec![changed("allow-run", ChangeKind::ToolChanged)])),
        case("both changed: the server is reported", both_moved.clone(), settings(vec![allow_run()]), None, lapsed(by(Ask, Basis::Default), vec![changed("allow-run", ChangeKind::ServerChanged)])),
        case("changed under deny-by-default: denied, still reported", server_moved.clone(), deny_by_default(settings(vec![allow_run()])), None, lapsed(by(Deny, Basis::Default), vec![changed("allow-run", ChangeKind::ServerChanged)])),
        case("server changed: a deny is not bound and still holds", server_moved.clone(), settings(vec![deny_run()]), None, by_rule(Deny, "deny-run")),
        case("an unbound grant applies whatever changed", server_moved.clone(), settings(vec![Rule { bound_to: None, ..allow_run() }]), None, by_rule(Allow, "allow-run")),
        // The organisation's rules (managed policy) beside the user's.
        case("managed deny beats the user's tool allow", git_status.clone(), settings(vec![allow_run(), org(Rule { id: "org-deny-shell".into(), ..deny_shell() })]), None, by_rule(Deny, "org-deny-shell")),
        case("managed ask beats the user's narrowest allow", shell("git push"), settings(vec![allow_git_status(), allow_run(), org(ask_git_push())]), None, by_rule(Ask, "ask-git-push")),
        case("managed ask beats the user's server allow", shell("git push x"), settings(vec![allow_shell(), org(ask_git_push())]), None, by_rule(Ask, "ask-git-push")),
        case("managed allow: the user's deny narrows it", git_status.clone(), settings(vec![org(allow_shell()), deny_run()]), None, by_rule(Deny, "deny-run")),
        case("managed allow: the user's ask narrows it", shell("git push"), settings(vec![org(allow_shell()), ask_git_push()]), None, by_rule(Ask, "ask-git-push")),
        case("managed allow applies where the user said nothing", git_status.clone(), settings(vec![org(allow_run())]), None, by_rule(Allow, "allow-run")),
        case("managed allow: pause still denies", git_status.clone(), paused(settings(vec![org(allow_run())])), None, by(Deny, Basis::Paused)),
        case("managed deny beats the user's allow in a conversation", git_status.clone(), settings(vec![in_c1(allow_run()), org(deny_run())]), Some("c1"), by_rule(Deny, "deny-run")),
        case("managed deny of a tool beats the user's allow of its server", write.clone(), settings(vec![allow_fs(), org(when(Rule::deny_tool("org-etc", &write, Scope::Always, NOW), vec![ArgCondition::glob("/path", "/home/me/**")]))]), None, by_rule(Deny, "org-etc")),
        // Requests a server makes of the client.
        case("sampling: the default asks", sampling("llm"), settings(vec![allow_shell()]), None, by(Ask, Basis::Default)),
        case("sampling: allowed by its rule", sampling("llm"), settings(vec![allow_sampling()]), None, by_rule(Allow, "sample")),
        case("sampling: its rule does not allow elicitation", elicitation("llm"), settings(vec![allow_sampling()]), None, by(Ask, Basis::Default)),
        case("sampling: the server changed", Subject::Sampling { server_id: "llm".into(), server_fingerprint: "llm-v2".into() }, settings(vec![allow_sampling()]), None, lapsed(by(Ask, Basis::Default), vec![changed("sample", ChangeKind::ServerChanged)])),
        case("sampling: a server-wide tool grant does not cover it", sampling("shell"), settings(vec![allow_shell()]), None, by(Ask, Basis::Default)),
        case("elicitation: denied by its rule", elicitation("forms"), settings(vec![Rule::for_subject("no-forms", Effect::Deny, &elicitation("forms"), Scope::Always, NOW)]), None, by_rule(Deny, "no-forms")),
        case("elicitation: the default denies", elicitation("forms"), deny_by_default(none()), None, by(Deny, Basis::Default)),
    ]
}

#[test]
fn decide_follows_the_documented_precedence() {
    let mut failures = Vec::new();
    for c in cases() {
        if c.valid {
            c.settings
                .validate()
                .unwrap_or_else(|e| panic!("{}: settings invalid: {e}", c.name));
        }
        let v = decide(&c.subject, &c.settings, c.conversation, NOW);
        let got = (v.decision, v.basis, v.rule_id.as_deref(), &v.changed);
        let want = (
            c.expect.decision,
            c.expect.basis,
            c.expect.rule_id,
            &c.expect.changed,
        );
        if got != want {
            failures.push(format!(
                "{}:\n  got  {got:?}\n  want {want:?}\n  reason: {}",
                c.name, v.reason
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn reasons_are_human_words() {
    let c = shell("git status");
    let rule = Rule::allow_tool("r", &c, Scope::Always, NOW)
        .with_conditions(vec![ArgCondition::prefix("/command", "git status")])
        .with_note("git status in shell");
    let v = decide(
        &Subject::ToolCall(c.clone()),
        &settings(vec![rule.clone()]),
        None,
        NOW,
    );
    assert_eq!(
        v.reason,
        "allowed by your rule “git status in shell” (always)"
    );

    let unnamed = Rule {
        note: None,
        client: None,
        ..rule.clone()
    };
    let v = decide(
        &Subject::ToolCall(c.clone()),
        &settings(vec![unnamed]),
        None,
        NOW,
    );
    assert_eq!(
        v.reason,
        "allowed by your rule “run in shell when /command starts with ‘git status’” (always)"
    );

    let v = decide(
        &Subject::ToolCall(shell("git push")),
        &settings(vec![]),
        None,
        NOW,
    );
    assert_eq!(v.reason, "asking because no rule covers this");

    let v = decide(
        &Subject::ToolCall(c.clone()),
        &paused(settings(vec![])),
        None,
        NOW,
    );
    assert_eq!(v.reason, "all tools are paused");

    let moved = ToolCall {
        server_fingerprint: "elsewhere".into(),
        ..c
    };
    let v = decide(&Subject::ToolCall(moved), &settings(vec![rule]), None, NOW);
    assert_eq!(
        v.reason,
        "asking because no rule covers this; your rule “git status in shell” no longer applies \
         because the server's command or address changed since you made it"
    );
}

#[test]
fn conversation_reason_names_the_scope() {
    let c = shell("ls");
    let rule = Rule::allow_tool("r", &c, conversation("c1"), NOW);
    let v = decide(
        &Subject::ToolCall(c),
        &settings(vec![rule]),
        Some("c1"),
        NOW,
    );
    assert_eq!(
        v.reason,
        "allowed by your rule “run in shell” (in this conversation)"
    );
}

#[test]
fn verdict_serializes_for_the_ui() {
    let c = ToolCall {
        tool_fingerprint: "new".into(),
        ..shell("ls")
    };
    let rule = Rule::allow_tool("r", &shell("ls"), Scope::Always, NOW);
    let v = decide(&Subject::ToolCall(c), &settings(vec![rule]), None, NOW);
    let value = serde_json::to_value(&v).unwrap();
    assert_eq!(value["decision"], json!("ask"));
    assert_eq!(value["basis"], json!("default"));
    assert_eq!(
        value["changed"],
        json!([{"ruleId": "r", "what": "toolChanged"}])
    );
    assert_eq!(value.get("ruleId"), None);
}

#[test]
fn a_managed_rule_is_named_as_the_organisations() {
    let c = shell("git push");
    let rule = Rule {
        managed: true,
        note: Some("no pushes from agents".into()),
        ..Rule::deny_tool("org-1", &c, Scope::Always, NOW)
    };
    let v = decide(&Subject::ToolCall(c), &settings(vec![rule]), None, NOW);
    assert_eq!(
        v.reason,
        "denied by your organisation's rule “no pushes from agents”"
    );
}

#[test]
fn a_rule_limited_to_one_client_applies_to_that_client_only() {
    let c = fs("write_file", "/home/u/notes/a.md");
    let for_claude = Rule {
        client: Some("claude-code".into()),
        ..Rule::allow_tool("claude", &c, Scope::Always, NOW)
    };
    let deny_cursor = Rule {
        client: Some("cursor".into()),
        ..Rule::deny_tool("cursor", &c, Scope::Always, NOW)
    };
    let s = settings(vec![for_claude, deny_cursor]);
    let subject = Subject::ToolCall(c);
    let by = |client: Option<&str>| decide_for_client(&subject, &s, None, client, NOW);
    let claude = by(Some("claude-code"));
    assert_eq!(
        (claude.decision, claude.rule_id.as_deref()),
        (Decision::Allow, Some("claude"))
    );
    assert!(
        claude.reason.contains("for claude-code"),
        "{}",
        claude.reason
    );
    let cursor = by(Some("cursor"));
    assert_eq!(
        (cursor.decision, cursor.rule_id.as_deref()),
        (Decision::Deny, Some("cursor"))
    );
    assert_eq!(by(Some("zed")).decision, Decision::Ask, "another client");
    assert_eq!(
        decide(&subject, &s, None, NOW).decision,
        Decision::Ask,
        "Toolgate's own chat is no client"
    );
    let everyone = Rule::allow_tool("all", &fs("write_file", "/x"), Scope::Always, NOW);
    let s = settings(vec![everyone]);
    assert_eq!(
        decide_for_client(&subject, &s, None, Some("zed"), NOW).decision,
        Decision::Allow,
        "a rule for everyone covers clients too"
    );
}
