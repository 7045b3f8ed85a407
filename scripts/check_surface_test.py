#!/usr/bin/env python3
"""Tests of scripts/check_surface.py on fixture trees: each rule finds what it should and
nothing else."""

import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_surface  # noqa: E402


def tree(files: dict) -> Path:
    root = Path(tempfile.mkdtemp(prefix="surface-"))
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


class Surface(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        root = tree({
            "README.md": "# Toolgate\n",
            "src-tauri/commands/servers.rs": "#[tauri::command]\npub fn list_servers() {}\n",
            "src-tauri/lib.rs": '.invoke_handler(include!(concat!(env!("OUT_DIR"), "/handlers.rs")))\n',
            "ui/src/generated/commands.ts": 'invoke("list_servers");\n',
            "ui/src/ipc.ts": 'export * from "./generated/commands";\n',
            "crates/a/src/lib.rs": "pub fn f() -> Result<(), Error> { Ok(()) }\n"
                                   "fn private() -> Result<(), String> { Ok(()) }\n"
                                   "#[cfg(test)]\nmod tests {\n pub fn t() -> Result<(), String> { Ok(()) }\n}\n",
            "capabilities/other.json": '{"permissions": ["core:event:allow-listen"]}',
            "crates/host/src/lib.rs": "pub struct Host {\n    servers: Servers,\n    pub(crate) gate: G,\n}\n"
                                      "pub struct Other {\n    pub open: u8,\n}\n",
        })
        out = io.StringIO()
        self.assertEqual(check_surface.check(root, out), 0, out.getvalue())

    def test_a_long_readme_is_named_with_its_size(self):
        root = tree({"README.md": "x" * 15_001})
        self.assertEqual(
            check_surface.readme_too_large(root),
            ["README.md is 15,001 bytes (over 15,000): move detail to docs/"],
        )

    def test_a_command_named_anywhere_else_is_found(self):
        root = tree({
            "src-tauri/apps.rs": "#[tauri::command]\npub fn load_app() {}\n",
            "src-tauri/lib.rs": "tauri::generate_handler![a::b]\n",
            "capabilities/main-window.json": '{"permissions": ["allow-list-servers"]}',
            "ui/src/Thing.tsx": 'await invoke<string>("x");\n',
            "ui/src/Other.ts": "const invokeLater = 1;\n",
        })
        found = "\n".join(check_surface.commands_named_twice(root))
        for name in ("src-tauri/apps.rs", "src-tauri/lib.rs", "capabilities/main-window.json", "ui/src/Thing.tsx"):
            self.assertIn(name, found)
        self.assertNotIn("Other.ts", found)

    def test_a_public_string_error_is_found_across_lines_and_through_generics(self):
        root = tree({
            "crates/a/src/lib.rs": "pub async fn sign_in(\n    x: u8,\n) -> Result<Vec<Option<u8>>, String> {\n todo!()\n}\n"
                                   "pub type Lookup = std::result::Result<Option<String>, String>;\n"
                                   "pub fn fine() -> Result<String, Error> { todo!() }\n"
                                   "// pub fn commented() -> Result<(), String>\n"
                                   "pub trait Store: Send {\n    fn read(&self) -> u8 { 0 }\n"
                                   "    async fn add(&self, r: Rule) -> Result<(), String>;\n}\n"
                                   "trait Private { fn f() -> Result<(), String>; }\n",
            "crates/a/src/tests.rs": "pub fn t() -> Result<(), String> { Ok(()) }\n",
        })
        found = check_surface.string_errors(root)
        self.assertEqual(len(found), 3, found)
        self.assertIn("crates/a/src/lib.rs:1: pub fn sign_in", found[0])
        self.assertIn("crates/a/src/lib.rs:11: method add of pub trait Store", found[1])
        self.assertIn("pub type Lookup", found[2])

    def test_a_pub_field_of_host_is_found_and_nothing_else(self):
        root = tree({
            "crates/host/src/lib.rs": "pub struct HostOptions {\n    pub data_dir: PathBuf,\n}\n"
                                      "/// The host.\npub struct Host {\n    data_dir: PathBuf,\n"
                                      "    /// Shared.\n    pub servers: Arc<ServerManager>,\n"
                                      "    // pub old: u8,\n    settings: Mutex<Settings>,\n"
                                      "    pub(crate) grants: Vec<Rule>,\n    pub notices: Vec<String>,\n}\n"
                                      "impl Host {\n    pub fn servers(&self) -> &Servers { todo!() }\n}\n",
        })
        found = check_surface.host_pub_fields(root)
        self.assertEqual(len(found), 2, found)
        self.assertIn("crates/host/src/lib.rs:8: Host has a pub field `servers`", found[0])
        self.assertIn("`notices`", found[1])
        out = io.StringIO()
        self.assertEqual(check_surface.check(root, out), 1)
        self.assertIn("2 pub field(s) of Host", out.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=0)
