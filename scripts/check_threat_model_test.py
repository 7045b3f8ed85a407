"""Tests of scripts/check_threat_model.py on small fixture trees."""

import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_threat_model as ctm  # noqa: E402

HELD = """pub enum Held {
    /// A call.
    ToolCall,
    Link,
}
"""
HANDLER = """impl ServerHandler for Session {
    fn get_info(&self) -> X {
        inner(|| { 1 })
    }

    async fn call_tool(&self) {}
}

impl Session {
    fn helper(&self) {}
}
"""


class CheckTest(unittest.TestCase):
    def tree(self, page: str, extra: dict | None = None) -> Path:
        root = Path(tempfile.mkdtemp())
        files = {
            ctm.HELD: HELD,
            ctm.HANDLER: HANDLER,
            "crates/x/src/lib.rs": "#[test]\nfn a_test() {}\n",
            "ui/src/A.test.ts": 'it("keeps HTML as text", () => {});\n',
            ctm.PAGE: page,
        }
        files.update(extra or {})
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return root

    def run_check(self, root: Path) -> tuple[int, str]:
        out = io.StringIO()
        return ctm.check(root, out), out.getvalue()

    GOOD = (
        "| Held::ToolCall, Held::Link | `call_tool`, `get_info` | "
        "`crates/x/src/lib.rs::a_test`, `ui/src/A.test.ts › keeps HTML as text` |\n"
    )

    def test_a_page_that_names_everything_passes(self):
        code, out = self.run_check(self.tree(self.GOOD))
        self.assertEqual(code, 0, out)
        self.assertIn("2 tests named", out)

    def test_a_missing_test_file_or_title_fails(self):
        page = self.GOOD + "`crates/x/src/lib.rs::gone` `crates/y.rs::a` `ui/src/A.test.ts › other`\n"
        code, out = self.run_check(self.tree(page))
        self.assertEqual(code, 1)
        self.assertIn("crates/x/src/lib.rs::gone: no such test", out)
        self.assertIn("crates/y.rs::a: no such file", out)
        self.assertIn("other: no test of that title", out)

    def test_a_kind_or_method_without_a_row_fails(self):
        page = self.GOOD.replace("Held::Link", "").replace("`get_info`", "")
        code, out = self.run_check(self.tree(page))
        self.assertEqual(code, 1)
        self.assertIn("Held::Link has no row", out)
        self.assertIn("method get_info has no row", out)
        self.assertNotIn("helper", out)

    def test_a_missing_page_fails(self):
        root = self.tree("")
        (root / ctm.PAGE).unlink()
        code, out = self.run_check(root)
        self.assertEqual(code, 1)
        self.assertIn("missing", out)


if __name__ == "__main__":
    unittest.main()
