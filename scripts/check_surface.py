#!/usr/bin/env python3
"""What a newcomer meets first stays in shape (issue 41):

1. README.md is a first page: at most 15,000 bytes. Features, tests and platforms live in docs/.
2. Each window command is named once: a command is a `#[tauri::command]` function in
   src-tauri/commands/ (src-tauri/command_list.rs makes the handler list, the capability and the
   TypeScript functions from them). So: no `#[tauri::command]` elsewhere in src-tauri/, no
   `generate_handler!` written by hand, no capability file under capabilities/ naming the app's own
   commands (`allow-...`), and no `invoke` in ui/src outside ui/src/generated/commands.ts.
3. Typed errors at crate boundaries: no `pub fn` in crates/*/src (test code left out) returns
   `Result<_, String>`, and no `pub type` is one.
4. Front ends use `Host` and its services only: the `Host` struct in crates/host/src/lib.rs has
   no `pub` field (what front ends need is a method or a service such as `host.servers()`), so
   nothing reaches around it to the server manager, the gate or the history.

Usage: python3 scripts/check_surface.py [REPO_ROOT] (scripts/check-structure.sh runs it after its
tests in scripts/check_surface_test.py). Standard library only. Exit 1 listing every problem.
"""

import re
import sys
from pathlib import Path

README_MAX_BYTES = 15_000


def readme_too_large(repo: Path) -> list[str]:
    readme = repo / "README.md"
    if not readme.is_file():
        return []
    size = readme.stat().st_size
    if size > README_MAX_BYTES:
        return [f"README.md is {size:,} bytes (over {README_MAX_BYTES:,}): move detail to docs/"]
    return []


def _rust_files(top: Path):
    for p in sorted(top.rglob("*.rs")):
        if not {"target", "node_modules"} & set(p.relative_to(top).parts):
            yield p


def commands_named_twice(repo: Path) -> list[str]:
    out = []
    shell = repo / "src-tauri"
    if shell.is_dir():
        for p in _rust_files(shell):
            rel = p.relative_to(repo).as_posix()
            if rel == "src-tauri/command_list.rs" or rel == "src-tauri/build.rs":
                continue
            text = p.read_text(encoding="utf-8")
            if "#[tauri::command" in text and not rel.startswith("src-tauri/commands/"):
                out.append(f"{rel}: a #[tauri::command] outside src-tauri/commands/ (it is neither registered nor allowed)")
            if "generate_handler!" in text:
                out.append(f"{rel}: a handler list written by hand (build.rs makes it from src-tauri/commands/)")
    caps = repo / "capabilities"
    if caps.is_dir():
        for p in sorted(caps.rglob("*.json")):
            if re.search(r'"allow-[a-z]', p.read_text(encoding="utf-8")):
                out.append(f"{p.relative_to(repo).as_posix()}: names the app's own commands (build.rs makes the window's capability)")
    ui = repo / "ui" / "src"
    if ui.is_dir():
        for p in sorted(ui.rglob("*")):
            rel = p.relative_to(repo).as_posix()
            if not p.is_file() or p.suffix not in {".ts", ".tsx"} or rel == "ui/src/generated/commands.ts":
                continue
            if re.search(r"\binvoke\s*[<(]", p.read_text(encoding="utf-8")):
                out.append(f"{rel}: calls invoke (call the function ui/src/generated/commands.ts makes, through ipc.ts)")
    return out


def _strip_tests(text: str) -> str:
    """The file up to its first `#[cfg(test)]` item: test modules sit at the end."""
    m = re.search(r"^\s*#\[cfg\(test\)\]", text, re.M)
    return text[: m.start()] if m else text


def _blank_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


STRING_RESULT = re.compile(r"Result<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*,\s*String\s*>")


def _braced(text: str, open_at: int) -> str:
    """What the brace at `open_at` encloses (to its matching close, or the file's end)."""
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at + 1 : i]
    return text[open_at + 1 :]


def string_errors(repo: Path) -> list[str]:
    out = []
    for src in sorted((repo / "crates").glob("*/src")):
        for p in _rust_files(src):
            rel = p.relative_to(repo)
            if "tests" in rel.parts[:-1] or p.name == "tests.rs":
                continue
            text = _blank_comments(_strip_tests(p.read_text(encoding="utf-8")))
            for m in re.finditer(r"\bpub\s+(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)[^{;]*", text):
                ret = m.group(0).split("->", 1)
                if len(ret) == 2 and STRING_RESULT.search(ret[1]):
                    line = text.count("\n", 0, m.start()) + 1
                    out.append(f"{rel.as_posix()}:{line}: pub fn {m.group(1)} returns Result<_, String> (give it a typed error)")
            for m in re.finditer(r"\bpub\s+trait\s+(\w+)[^{;]*\{", text):
                body = _braced(text, m.end() - 1)
                for f in re.finditer(r"\bfn\s+(\w+)[^{;]*", body):
                    ret = f.group(0).split("->", 1)
                    if len(ret) == 2 and STRING_RESULT.search(ret[1]):
                        line = text.count("\n", 0, m.end() + f.start()) + 1
                        out.append(f"{rel.as_posix()}:{line}: method {f.group(1)} of pub trait {m.group(1)} returns Result<_, String> (give it a typed error)")
            for m in re.finditer(r"\bpub\s+type\s+(\w+)[^;]*;", text):
                if STRING_RESULT.search(m.group(0)):
                    line = text.count("\n", 0, m.start()) + 1
                    out.append(f"{rel.as_posix()}:{line}: pub type {m.group(1)} is a Result<_, String>")
    return out


HOST_FILE = "crates/host/src/lib.rs"


def host_pub_fields(repo: Path) -> list[str]:
    """Every `pub` field of `pub struct Host { ... }` in crates/host/src/lib.rs (`pub(crate)` and
    the like are not seen by front ends, so they pass)."""
    p = repo / HOST_FILE
    if not p.is_file():
        return []
    text = _blank_comments(_strip_tests(p.read_text(encoding="utf-8")))
    m = re.search(r"\bpub\s+struct\s+Host\b[^{;]*\{", text)
    if not m:
        return []
    depth, end = 1, m.end()
    while end < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
    out = []
    for f in re.finditer(r"^\s*pub\s+(?:r#)?(\w+)\s*:", text[m.end():end], re.M):
        line = text.count("\n", 0, m.end() + f.start(1)) + 1
        out.append(f"{HOST_FILE}:{line}: Host has a pub field `{f.group(1)}` (front ends use Host's methods and services; add one)")
    return out


def check(repo: Path, out=sys.stdout) -> int:
    repo = repo.resolve()
    readme, names, errors = readme_too_large(repo), commands_named_twice(repo), string_errors(repo)
    fields = host_pub_fields(repo)
    for problem in readme + names + errors + fields:
        print(f"surface: {problem}", file=out)
    if readme or names or errors or fields:
        print(
            f"surface: FAILED: {len(readme)} README problem(s), {len(names)} command named outside "
            f"src-tauri/commands/, {len(errors)} public Result<_, String>, {len(fields)} pub field(s) "
            "of Host",
            file=out,
        )
        return 1
    print(
        "surface: README.md within 15,000 bytes; every window command named once, in "
        "src-tauri/commands/; no public Result<_, String>; no pub field of Host",
        file=out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(check(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
