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

    def test_root_code_calling_a_child_that_uses_a_root_type_is_a_circle(self):
        out = self.assert_circle(
            {
                "crates/x/src/lib.rs": """
                    mod store;
                    pub struct Info;
                    pub fn load() { store::read(); }
                """,
                "crates/x/src/store.rs": "use crate::Info;\npub fn read() -> Option<Info> { None }\n",
            },
            ["crates/x/src/lib.rs", "crates/x/src/store.rs"],
        )
        self.assertIn("lib.rs:3: pub fn load() { store::read(); }", out)

    def test_a_reexport_the_root_uses_itself_counts(self):
        out = self.assert_circle(
            {
                "crates/x/src/lib.rs": """
                    mod a;
                    pub use a::A;
                    pub struct Config;
                    pub fn make() -> A { A(Config) }
                """,
                "crates/x/src/a.rs": "pub struct A(pub crate::Config);\n",
            },
            ["crates/x/src/a.rs", "crates/x/src/lib.rs"],
        )
        # the example is where the root uses the name, not the re-export
        self.assertIn("lib.rs:4: pub fn make() -> A { A(Config) }", out)

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
                "ui/src/styles.css": lines(10),
            }
        )
        self.assertEqual(code, 1, out)
        self.assertIn("structure: crates/x/src/big.rs has 801 lines (over 800)", out)
        self.assertIn("structure: ui/src/App.tsx has 900 lines (over 800)", out)
        for name in ("edge.rs", "tests.rs", "helpers.rs", "src-tauri/lib.rs", ".test."):
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
            "structure: 2 crates, 3 modules, no import circle; no product file over 800 lines",
        )


if __name__ == "__main__":
    unittest.main()
