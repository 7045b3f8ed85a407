"""Holds docs/threat-model.md to the code (run by scripts/check-structure.sh).

- Every test the page names exists: `path::name` is a Rust function `fn name` in that file;
  `path › title` is a test whose title (the text in quotes) is in that file.
- Every kind of request the gate settles (the variants of `pub enum Held` in
  crates/gate/src/gatekeeper.rs) is named on the page, as `Held::Kind`.
- Every MCP method the gateway answers (each `fn` of `impl ServerHandler for Session` in
  crates/gateway/src/session.rs) is named on the page, in backquotes.

So a new kind of request or a new method cannot land without its row, and a row cannot name a
test that was renamed or removed. Standard library only.
"""

import re
import sys
from pathlib import Path

PAGE = "docs/threat-model.md"
HELD = "crates/gate/src/gatekeeper.rs"
HANDLER = "crates/gateway/src/session.rs"

RUST_REF = re.compile(r"`([\w./-]+\.rs)::(\w+)`")
TS_REF = re.compile(r"`([\w./-]+\.(?:ts|tsx)) › ([^`]+)`")


def enum_variants(source: str, name: str) -> list[str]:
    match = re.search(r"pub enum " + name + r"\s*\{(.*?)\n\}", source, re.S)
    if not match:
        return []
    body = re.sub(r"//[^\n]*", "", match.group(1))
    return re.findall(r"^\s*([A-Z]\w*)\s*,", body, re.M)


def impl_functions(source: str, header: str) -> list[str]:
    start = source.find(header)
    if start < 0:
        return []
    depth, i, body_start = 0, source.index("{", start), None
    for i in range(source.index("{", start), len(source)):
        if source[i] == "{":
            depth += 1
            body_start = body_start if body_start is not None else i
        elif source[i] == "}":
            depth -= 1
            if depth == 0:
                break
    body = source[body_start:i]
    # Only the impl's own functions: those indented by one level.
    return re.findall(r"^    (?:async )?fn (\w+)", body, re.M)


def check(repo: Path, out=sys.stdout) -> int:
    page_path = repo / PAGE
    if not page_path.is_file():
        print(f"threat model: {PAGE} is missing", file=out)
        return 1
    page = page_path.read_text(encoding="utf-8")
    problems = []
    named = 0
    for path, name in RUST_REF.findall(page):
        named += 1
        file = repo / path
        if not file.is_file():
            problems.append(f"{path}::{name}: no such file")
        elif not re.search(r"\bfn " + re.escape(name) + r"\b", file.read_text(encoding="utf-8")):
            problems.append(f"{path}::{name}: no such test in that file")
    for path, title in TS_REF.findall(page):
        named += 1
        file = repo / path
        if not file.is_file():
            problems.append(f"{path} › {title}: no such file")
        elif f'"{title}"' not in file.read_text(encoding="utf-8"):
            problems.append(f"{path} › {title}: no test of that title in that file")
    held = repo / HELD
    for kind in enum_variants(held.read_text(encoding="utf-8") if held.is_file() else "", "Held"):
        if f"Held::{kind}" not in page:
            problems.append(f"the gate's kind Held::{kind} has no row")
    handler = repo / HANDLER
    for method in impl_functions(
        handler.read_text(encoding="utf-8") if handler.is_file() else "",
        "impl ServerHandler for Session",
    ):
        if f"`{method}`" not in page and f"`{method}`," not in page:
            problems.append(f"the gateway's method {method} has no row")
    for p in problems:
        print(f"threat model: {p}", file=out)
    if problems:
        print(f"threat model: FAILED: {len(problems)} problem(s) in {PAGE}", file=out)
        return 1
    print(f"threat model: {named} tests named, every one found; every kind and method has its row", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(check(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
