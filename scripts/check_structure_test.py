#!/usr/bin/env python3
"""Tests of scripts/check_structure.py on small fixture trees. Run: python3 scripts/check_structure_test.py"""

import io
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # leave no __pycache__ in scripts/
sys.path.insert(0, str(Path(__file__).resolve().parent))

import check_structure as cs  # noqa: E402


class Tree:
    """A throw-away repository with the given files."""

    def __init__(self, files: dict[str, str]):
        self._dir = tempfile.TemporaryDirectory(prefix="check-structure-")
        self.root = Path(self._dir.name)
        for rel, text in files.items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")

    def check(self) -> tuple[int, str]:
        out = io.StringIO()
        code = cs.check(self.root, out=out)
        return code, out.getvalue()

    def close(self) -> None:
        self._dir.cleanup()


class StructureTest(unittest.TestCase):
    def run_tree(self, files: dict[str, str]) -> tuple[int, str]:
        tree = Tree(files)
        self.addCleanup(tree.close)
        return tree.check()

    def assert_clean(self, files: dict[str, str]) -> str:
        code, out = self.run_tree(files)
        self.assertEqual(code, 0, out)
        self.assertNotIn("circle in", out)
        return out

    def assert_circle(self, files: dict[str, str], members: list[str]) -> str:
        code, out = self.run_tree(files)
        self.assertEqual(code, 1, out)
        circles = [line for line in out.splitlines() if "import circle in" in line]
        self.assertEqual(len(circles), 1, out)
        listed = circles[0].split(": ", 2)[2].split(", ")
        self.assertEqual(listed, sorted(members), out)
        return out

    # --- circles -------------------------------------------------------------------------------

    def test_a_real_circle_between_siblings_is_reported_with_its_lines(self):
        out = self.assert_circle(
            {
                "crates/x/src/lib.rs": "mod a;\nmod b;\npub use a::A;\npub use b::B;\n",
                "crates/x/src/a.rs": """
                    use crate::b::B;
                    pub struct A(pub B);
                """,
                "crates/x/src/b.rs": """
                    pub struct B;
                    pub fn make() -> B { let _ = crate::a::helper; B }
                """,
            },
            ["crates/x/src/a.rs", "crates/x/src/b.rs"],
        )
        self.assertIn("crates/x/src/a.rs -> crates/x/src/b.rs", out)
        self.assertIn("a.rs:1: use crate::b::B;", out)
        self.assertIn("b.rs:2: pub fn make() -> B { let _ = crate::a::helper; B }", out)
        self.assertIn("FAILED: 1 import circle, 0 product files over 800 lines", out)

    def test_parent_declaring_and_reexporting_children_is_not_a_circle(self):
        self.assert_clean(
            {
                "crates/x/src/lib.rs": """
                    //! Uses [`crate::a::A`] in its docs only.
                    mod a;
                    mod error;
                    pub use a::A;
                    pub use error::Error;
                    pub(crate) use error::helper;

                    /// Defined here, used by the children.
                    pub struct Config;
                """,
                "crates/x/src/a.rs": """
                    use crate::{Config, Error};
                    pub struct A(Config, Error);
                    pub fn f() { crate::helper(); }
                """,
                "crates/x/src/error.rs": """
                    use crate::Config;
                    pub struct Error(Config);
                    pub fn helper() {}
                """,
            }
        )

    def test_a_path_through_a_reexport_reaches_the_defining_module(self):
        # a names `crate::Error` (lib.rs only re-exports it); error.rs names a's type: a circle
        # between a.rs and error.rs, with lib.rs out of it.
        self.assert_circle(
            {
                "crates/x/src/lib.rs": "mod a;\nmod error;\npub use error::Error;\n",
                "crates/x/src/a.rs": "use crate::Error;\npub struct A;\n",
                "crates/x/src/error.rs": "pub struct Error(crate::a::A);\n",
            },
            ["crates/x/src/a.rs", "crates/x/src/error.rs"],
        )

    # --- the crate root ------------------------------------------------------------------------

    def test_root_and_child_using_each_other_is_not_a_circle(self):
        # The root is the crate's namespace and public face: a type defined there with `impl`
        # blocks in child files, called from the root, is one type spread over files.
        self.assert_clean(
            {
                "crates/x/src/lib.rs": """
                    mod store;
                    mod apps;
                    pub use apps::App;
                    pub struct Info;
                    pub struct Agent { app: App }
                    pub fn load() -> Option<Info> { store::read() }
                    impl Agent { pub fn run(&self) { self.open(); let _ = apps::SCHEME; } }
                """,
                "crates/x/src/store.rs": "use crate::Info;\npub fn read() -> Option<Info> { None }\n",
                "crates/x/src/apps.rs": """
                    pub const SCHEME: u8 = 0;
                    pub struct App;
                    impl crate::Agent { pub(crate) fn open(&self) { let _ = crate::load(); } }
                """,
                "crates/x/src/main.rs": "mod cli;\npub struct Args;\nfn main() { cli::run(); }\n",
                "crates/x/src/cli.rs": "pub fn run() -> crate::Args { crate::Args }\n",
                "crates/x/src/bin/tool.rs": "mod helper;\nstruct T;\nfn main() { helper::go(); }\n",
                "crates/x/src/bin/helper.rs": "pub fn go() -> super::T { super::T }\n",
            }
        )

    def test_a_circle_among_children_is_reported_without_the_root(self):
        # lib.rs and both children all use each other; the root's edges do not count, the
        # sibling circle does, and lib.rs is not listed in it.
        out = self.assert_circle(
            {
                "crates/x/src/lib.rs": """
                    mod a;
                    mod b;
                    pub struct Config;
                    pub fn make() -> (a::A, b::B) { (a::A, b::B) }
                """,
                "crates/x/src/a.rs": "pub struct A;\npub fn f(_: crate::Config) { crate::b::g(); }\n",
                "crates/x/src/b.rs": "pub struct B;\npub fn g() -> crate::a::A { crate::make().0 }\n",
            },
            ["crates/x/src/a.rs", "crates/x/src/b.rs"],
        )
        self.assertNotIn("lib.rs ->", out)
        self.assertNotIn("-> crates/x/src/lib.rs", out)

    def test_a_type_spread_over_a_non_root_parent_and_its_child_is_a_circle(self):
        # Only the crate root is exempt: foo.rs is an ordinary module.
        out = self.assert_circle(
            {
                "crates/x/src/lib.rs": "pub mod foo;\n",
                "crates/x/src/foo.rs": """
                    mod apps;
                    pub struct Foo;
                    impl Foo { pub fn run(&self) { apps::start(); } }
                """,
                "crates/x/src/foo/apps.rs": "pub fn start() {}\nimpl super::Foo { fn open(&self) {} }\n",
            },
            ["crates/x/src/foo.rs", "crates/x/src/foo/apps.rs"],
        )
        self.assertIn("foo.rs:3: impl Foo { pub fn run(&self) { apps::start(); } }", out)

    def test_a_reexport_a_parent_uses_itself_counts(self):
        out = self.assert_circle(
            {
                "crates/x/src/lib.rs": "pub mod foo;\n",
                "crates/x/src/foo.rs": """
                    mod a;
                    pub use a::A;
                    pub struct Config;
                    pub fn make() -> A { A(Config) }
                """,
                "crates/x/src/foo/a.rs": "pub struct A(pub super::Config);\n",
            },
            ["crates/x/src/foo.rs", "crates/x/src/foo/a.rs"],
        )
        # the example is where the parent uses the name, not the re-export
        self.assertIn("foo.rs:4: pub fn make() -> A { A(Config) }", out)

    def test_test_code_is_ignored(self):
        self.assert_clean(
            {
                "crates/x/src/lib.rs": """
                    mod a;
                    mod b;
                    mod c;
                    #[cfg(test)]
                    mod tests;
                """,
                "crates/x/src/a.rs": """
                    pub struct A;

                    #[cfg(test)]
                    fn only_in_tests() -> crate::b::B { crate::b::B }

                    #[cfg(test)]
                    mod tests {
                        use super::*;
                        use crate::b::B;

                        mod inner {
                            use crate::b::B;
                        }

                        #[test]
                        fn t() { let _ = (A, B); }
                    }
                """,
                "crates/x/src/b.rs": """
                    use crate::a::A;
                    pub struct B;
                    pub fn f(_: A) {}
                    pub fn g() { crate::c::helper(); }
                    #[cfg(all(test, unix))]
                    mod unix_tests {
                        use crate::a::*;
                    }
                """,
                "crates/x/src/tests.rs": "use crate::a::A;\nuse crate::b::B;\n",
                "crates/x/src/c.rs": "#![cfg(test)]\nuse crate::b::B;\npub fn helper() {}\n",
            }
        )

    def test_comments_strings_and_chars_are_not_read(self):
        self.assert_clean(
            {
                "crates/x/src/lib.rs": "mod a;\nmod b;\n",
                "crates/x/src/a.rs": """
                    // use crate::b::B;
                    /* crate::b::B /* nested */ crate::b::B */
                    /// [`crate::b::B`]
                    pub fn f<'a>(s: &'a str) -> (&'a str, char, char) {
                        let _ = "crate::b::B \\" crate::b::B";
                        let _ = r#"crate::b::B "quoted" crate::b::B"#;
                        let _ = b"crate::b::B";
                        (s, '"', '\\'')
                    }
                    pub struct A;
                """,
                "crates/x/src/b.rs": "use crate::a::A;\npub struct B(A);\n",
            }
        )

    def test_nested_modules_super_and_self_paths(self):
        # foo.rs declares foo/x.rs; x names its parent's item with `super::`, and foo's code
        # calls into x with `self::x::`: a parent/child circle.
        self.assert_circle(
            {
                "crates/x/src/lib.rs": "mod foo;\nmod bar;\n",
                "crates/x/src/foo.rs": """
                    mod x;
                    pub struct Foo;
                    pub fn run() { self::x::go(); }
                """,
                "crates/x/src/foo/x.rs": "use super::Foo;\npub fn go() -> Foo { Foo }\n",
                "crates/x/src/bar/mod.rs": "mod y;\npub use y::Y;\n",
                "crates/x/src/bar/y.rs": "pub struct Y(crate::foo::Foo);\n",
            },
            ["crates/x/src/foo.rs", "crates/x/src/foo/x.rs"],
        )

    def test_a_child_naming_its_parent_alone_is_not_a_circle(self):
        self.assert_clean(
            {
                "crates/x/src/lib.rs": "mod foo;\n",
                "crates/x/src/foo.rs": "mod x;\npub use x::go;\npub struct Foo;\n",
                "crates/x/src/foo/x.rs": "use super::*;\npub fn go() -> Foo { super::Foo }\n",
            }
        )

    def test_aliases_and_use_groups_resolve(self):
        self.assert_circle(
            {
                "crates/x/src/lib.rs": "pub mod a;\npub mod b;\n",
                "crates/x/src/a.rs": """
                    use crate::{b as other, b::{self as again}};
                    pub struct A;
                    pub fn f() { other::g(); }
                """,
                "crates/x/src/b.rs": "pub fn g() {}\npub fn h() -> crate::a::A { crate::a::A }\n",
            },
            ["crates/x/src/a.rs", "crates/x/src/b.rs"],
        )

    def test_other_crates_and_macros_are_not_edges(self):
        self.assert_clean(
            {
                "crates/x/src/lib.rs": """
                    mod a;
                    pub use serde_json::Value;
                    pub(in crate::a) fn hidden() {}
                    macro_rules! m { () => { $crate::a::A } }
                """,
                "crates/x/src/a.rs": "use crate::Value;\nuse ::std::fmt;\npub struct A(Value);\n",
            }
        )

    def test_each_binary_is_a_crate_of_its_own_and_src_tauri_is_looked_at(self):
        code, out = self.run_tree(
            {
                "crates/x/src/lib.rs": "pub fn f() {}\n",
                "crates/x/src/main.rs": "mod cli;\nfn main() { cli::run(); }\n",
                "crates/x/src/cli.rs": "pub fn run() { x::f(); }\n",
                "crates/x/src/bin/tool.rs": "fn main() {}\n",
                "src-tauri/lib.rs": "mod commands;\nmod state;\n",
                "src-tauri/main.rs": "fn main() {}\n",
                "src-tauri/build.rs": "fn main() { crate::nothing(); }\n",
                "src-tauri/commands.rs": "use crate::state::AppState;\npub struct CommandError;\n",
                "src-tauri/state.rs": "use crate::commands::CommandError;\npub struct AppState;\n",
            }
        )
        self.assertEqual(code, 1, out)
        self.assertIn("import circle in src-tauri/lib.rs: src-tauri/commands.rs, src-tauri/state.rs", out)
        self.assertIn("(5 crates, 8 modules)", out)

    def test_a_missing_module_file_is_a_warning(self):
        code, out = self.run_tree({"crates/x/src/lib.rs": "mod gone;\n"})
        self.assertEqual(code, 0, out)
        self.assertIn("warning: ", out)
        self.assertIn("no file for `mod gone;`", out)

    # --- file length ---------------------------------------------------------------------------

    def test_long_product_files_are_reported_and_test_files_are_exempt(self):
        lines = lambda n: "x\n" * n  # noqa: E731
        code, out = self.run_tree(
            {
                "crates/x/src/lib.rs": "mod big;\nmod edge;\n#[cfg(test)]\nmod tests;\n",
                "crates/x/src/big.rs": lines(801),
                "crates/x/src/edge.rs": lines(800),
                "crates/x/src/tests.rs": lines(2000),
                "crates/x/src/tests/helpers.rs": lines(2000),
                "src-tauri/lib.rs": lines(799) + "no newline at the end",
                "ui/src/App.tsx": lines(900),
                "ui/src/App.test.tsx": lines(900),
                "ui/src/ipc.test.ts": lines(900),
                "ui/src/generated/types.ts": lines(1500),
                "ui/src/styles.css": lines(10),
            }
        )
        self.assertEqual(code, 1, out)
        self.assertIn("structure: crates/x/src/big.rs has 801 lines (over 800)", out)
        self.assertIn("structure: ui/src/App.tsx has 900 lines (over 800)", out)
        for name in ("edge.rs", "tests.rs", "helpers.rs", "src-tauri/lib.rs", ".test.", "generated"):
            self.assertNotIn(name, out.replace("FAILED", ""))
        self.assertIn("FAILED: 0 import circles, 2 product files over 800 lines", out)

    def test_a_clean_tree_prints_the_summary(self):
        out = self.assert_clean(
            {
                "crates/x/src/lib.rs": "mod a;\npub use a::A;\n",
                "crates/x/src/a.rs": "pub struct A;\n",
                "crates/y/src/lib.rs": "pub fn f() {}\n",
                "ui/src/App.tsx": "export {}\n",
            }
        )
        self.assertEqual(
            out.strip().splitlines()[-1],
            "structure: 2 crates, 3 modules, no import circle; no product file over 800 lines; "
            "no Agent::new outside crates/host; every file allowing unsafe code named in the audit note",
        )

    # --- unsafe code ---------------------------------------------------------------------------

    def test_a_file_allowing_unsafe_code_must_be_named_in_the_audit_note(self):
        manifest = (
            "[workspace.lints.rust]\n"
            "# Audited: the fork helper (crates/x/src/fork.rs).\n"
            'unsafe_code = "deny"\n'
        )
        files = {
            "Cargo.toml": manifest,
            "crates/x/src/lib.rs": "mod fork;\nmod pipe;\n",
            "crates/x/src/fork.rs": "#[allow(unsafe_code)]\nfn f() {}\n",
            "crates/x/src/pipe.rs": "#[allow(unsafe_code)]\nfn g() {}\n",
            "crates/x/tests/t.rs": "#![allow(unsafe_code)]\n",
        }
        code, out = self.run_tree(files)
        self.assertEqual(code, 1, out)
        self.assertIn(
            "structure: crates/x/src/pipe.rs allows unsafe code but the audit note in Cargo.toml does not name it",
            out,
        )
        self.assertNotIn("fork.rs allows", out)
        self.assertNotIn("t.rs allows", out)
        self.assertIn("1 unaudited unsafe file ", out)
        # Named, it passes; a name elsewhere in the manifest does not count.
        files["Cargo.toml"] = manifest.replace("(crates/x/src/fork.rs)", "(crates/x/src/fork.rs, crates/x/src/pipe.rs)")
        self.assert_clean(files)
        files["Cargo.toml"] = manifest + "# crates/x/src/pipe.rs\n"
        code, out = self.run_tree(files)
        self.assertEqual(code, 1, out)

    # --- Agent::new ----------------------------------------------------------------------------

    def test_agent_new_outside_crates_host_is_reported(self):
        code, out = self.run_tree(
            {
                "crates/gateway/src/lib.rs": """
                    mod serve;
                    // Agent::new(parts) in a comment, and "Agent::new(" in a string, are not calls
                    pub fn f() { let _ = "Agent::new("; }
                """,
                "crates/gateway/src/serve.rs": """
                    use toolgate_agent::{Agent, AgentParts};
                    pub fn serve(parts: AgentParts) -> Agent {
                        Agent::new(parts)
                    }
                """,
                "src-tauri/lib.rs": "mod commands;\n",
                "src-tauri/commands.rs": "pub fn go(p: P) { let _ = toolgate_agent::Agent::new(p); }\n",
                "src-tauri/build.rs": "fn main() { let _ = parts.map(Agent::new); }\n",
            }
        )
        self.assertEqual(code, 1, out)
        found = [line for line in out.splitlines() if "Agent::new outside" in line]
        self.assertEqual(
            found,
            [
                "structure: Agent::new outside crates/host/src: crates/gateway/src/serve.rs:3: "
                "Agent::new(parts)",
                "structure: Agent::new outside crates/host/src: src-tauri/build.rs:1: "
                "fn main() { let _ = parts.map(Agent::new); }",
                "structure: Agent::new outside crates/host/src: src-tauri/commands.rs:1: "
                "pub fn go(p: P) { let _ = toolgate_agent::Agent::new(p); }",
            ],
            out,
        )
        self.assertIn("FAILED: 0 import circles, 0 product files over 800 lines, "
                      "3 Agent::new calls outside crates/host", out)

    def test_agent_new_in_host_the_agent_crate_tests_benches_examples_and_test_code_is_allowed(self):
        call = "pub fn f(p: P) -> Agent { Agent::new(p) }\n"
        self.assert_clean(
            {
                "crates/host/src/lib.rs": "mod agent;\n",
                "crates/host/src/agent.rs": call,
                "crates/agent/src/lib.rs": "pub struct Agent;\nimpl Agent { pub fn new() -> Self { Agent } }\n"
                + call,
                "crates/cli/src/lib.rs": """
                    mod run;
                    #[cfg(test)]
                    mod tests;
                    #[cfg(test)]
                    pub(crate) mod support;
                    mod only_tests;
                """,
                "crates/cli/src/run.rs": """
                    pub fn run() {}
                    #[cfg(test)]
                    fn fixture(p: P) -> Agent { Agent::new(p) }
                    #[cfg(test)]
                    mod tests {
                        fn t(p: P) { let _ = toolgate_agent::Agent::new(p); }
                    }
                """,
                "crates/cli/src/tests.rs": call,
                "crates/cli/src/support.rs": "mod fake;\n" + call,
                "crates/cli/src/support/fake.rs": call,
                "crates/cli/src/only_tests.rs": "#![cfg(test)]\nmod deeper;\n" + call,
                "crates/cli/src/only_tests/deeper.rs": call,
                "crates/cli/src/tests/harness.rs": call,
                "crates/cli/src/benches/b.rs": call,
                "crates/cli/src/examples/e.rs": call,
                "crates/cli/tests/it.rs": call,
            }
        )


if __name__ == "__main__":
    unittest.main()
