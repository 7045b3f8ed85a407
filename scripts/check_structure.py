#!/usr/bin/env python3
"""Structure check: no import circle inside a Rust crate, no product file over 800 lines, no
`Agent::new` outside crates/host, no product file allowing unsafe code that Cargo.toml's audit
note (the comment above `unsafe_code = "deny"`) does not name.

Usage: python3 scripts/check_structure.py [REPO_ROOT]     (scripts/check-structure.sh runs it,
after its own unit tests in scripts/check_structure_test.py). Python 3.11, standard library only.
Exit 0 with a one-line summary when all is well; exit 1 listing every problem otherwise.

1. Import circles
-----------------
Crates: every `crates/*/src` and `src-tauri/`. Each `lib.rs`, `main.rs`, `bin/*.rs` and
`bin/*/main.rs` found there is the root of a crate of its own (a binary beside a library uses the
library by its crate name, not by `crate::`). `src-tauri/build.rs` is a build script, not a module.

Modules: a module is a file. `mod x;` is found the way rustc finds it: beside the declaring file
when that file is a crate root or a `mod.rs` (`x.rs` or `x/mod.rs`), otherwise in the folder named
after it (`foo.rs` declares `foo/x.rs` or `foo/x/mod.rs`); `#[path = "..."]` is honoured. Inline
`mod x { ... }` blocks belong to their file, but paths inside them (`super::`, `self::`) are
resolved from the inline module, as rustc does.

Test code is not looked at: an item under `#[cfg(test)]` (or `#[cfg(all(test, ...))]`) is skipped
whole -- an inline `mod tests { ... }`, a `mod tests;` declaration (so `tests.rs` is not part of
the graph), a test-only function or `use`. A file starting with `#![cfg(test)]` is skipped.
Comments (doc links such as [`crate::x`] included) and string and character literals are blanked
before anything is read.

Edges. A module depends on another when its own (non-test) code names something the other one
defines. What counts:
  * a private `use` (`use crate::a::b::X;`, `use super::X;`, `use self::x::Y;`, `use child::X;`
    from a parent, `use super::*;`), also inside function bodies;
  * a path written in code: `crate::a::f()`, `super::g()`, `self::x::h`, `child::f()` (a path
    starting with a module the current module declares), or `alias::f()` where `alias` was
    brought in by a `use`;
  * a `pub use` / `pub(crate) use` only when the re-exporting module's own code uses the name it
    re-exports (the identifier appears in its code outside `use` lines, not after `.` or `::`).
What does not count:
  * `mod x;` declarations: parents declare children, that is not a dependency;
  * re-exports (`pub use child::X;`, `pub(crate) use ...`, `pub use child::*;`) on their own: they
    are aliases. Every path is resolved THROUGH them to the module that really defines the item:
    `crate::Error`, where lib.rs says `pub use error::Error;`, is an edge to error.rs, not to
    lib.rs. So children naming `crate::SomeType` re-exported by lib.rs do not depend on lib.rs,
    and lib.rs re-exporting its children does not depend on them.
  * names from other crates (`std::`, `serde::`, `toolgate_x::`), `Self::`, `$crate::`,
    `pub(in crate::x)` visibilities, and paths that resolve to the module they are written in.
Resolution: a path goes down the module tree as far as modules exist (`crate::manager::calls::X`
is manager/calls.rs); the next segment is looked up among the items that module defines (fn,
struct, enum, union, trait, type, const, static, macro_rules) -- found: that module; not found but
brought in by a `use` (public or private) or a glob `use`: followed to where it is defined; not
found at all: the deepest module reached (`crate::Agent` is the crate root when lib.rs defines
`Agent`).
So a child using `crate::Type` defined IN lib.rs depends on lib.rs, and lib.rs code calling into
that child (`child::f()`, or a `use child::X;` it uses) depends on the child. A child naming its
parent's items (`use super::Thing;`) depends on the parent.

The crate root does not count. Edges into and out of a crate's ROOT file (`lib.rs`, `main.rs`,
`bin/*.rs`, `bin/*/main.rs`, with the inline modules written in it) are found but left out of
the circle rule. Why: the root is the crate's namespace and public face, the one module every
other one reaches through. A type defined there (`pub struct Agent`) with `impl` blocks in child
files, whose methods the root calls, is one type spread over files, not two ideas depending on
each other; and the root calling `child::f()` while the child names `crate::Config` is the crate
using its own parts, which no split of the root would make clearer. Everything below the root
still counts: a circle between siblings (a.rs <-> b.rs), and between a parent that is not the
root and its child (foo.rs <-> foo/x.rs, even when it is one type's `impl` spread over the two),
is reported. A consequence: a circle that closes only through the root (a.rs -> lib.rs -> b.rs
-> a.rs) is not reported; its edges between a.rs and b.rs are.

Every strongly connected component of more than one file, over the edges that count, is reported
with its files and, for each counted edge inside it, the first line that makes the edge.

Limits (it reads paths, it does not type-check): a method call `x.f()` is no edge, so a type's
`impl` blocks spread over files (`impl super::Foo { .. }` in a child) give edges from those
files to the type's file, never back; macros are not expanded (`$crate::` is skipped); a name
brought in by a glob `use` gives one edge, to the glob's module.

2. File length
--------------
No product file over 800 lines (counted as `wc -l` does: newline characters) under `crates/*/src`,
`src-tauri/` and `ui/src/`. Test files are exempt: anything under a `tests/` folder, files named
`tests.rs`, `*.test.ts` and `*.test.tsx`. So are generated files, anything under a `generated/`
folder (`ui/src/generated/types.ts`, written by a test from the Rust types: its length is theirs).
Binary files and `node_modules/` are not looked at.

3. No `Agent::new` outside crates/host
-------------------------------------
A gated agent is had only through the host (`Host::agent(Caller)`), so the only product code
that may build one with `Agent::new` is under `crates/host/src/`. Looked at: every `.rs` file
under `crates/*/src/` and `src-tauri/` (`target/` and `node_modules/` folders skipped). Allowed:
`crates/host/src/` and `crates/agent/src/` (the definition), any file below a folder named
`tests`, `benches` or `examples`, and test code: items under `#[cfg(test)]`, files starting
with `#![cfg(test)]`, and files reached only through a `#[cfg(test)] mod x;` (with the files
they declare). Comments and strings are blanked first, as above. What is found: the path
`Agent::new` (also `toolgate_agent::Agent::new`, and without a call: `map(Agent::new)`); each one
is reported as file:line. Not found: a renamed import (`use toolgate_agent::Agent as A;` then
`A::new(..)`), `Self::new` and macros that build the path from pieces.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINES = 800

# ---------------------------------------------------------------------------------------------
# Lexing
# ---------------------------------------------------------------------------------------------

_RAW_STR = re.compile(r'(?:br|cr|r)(#*)"')
_TOKEN = re.compile(r"r#[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*|::|\d[A-Za-z0-9_.]*|\S")


def _is_ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _blank(s: str) -> str:
    return "".join("\n" if ch == "\n" else " " for ch in s)


def blank_literals(src: str) -> str:
    """The source with comments and string/char literals replaced by spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        prev_ident = i > 0 and _is_ident_char(src[i - 1])
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c == "/" and src.startswith("/*", i):
            depth, j = 0, i
            while j < n:
                if src.startswith("/*", j):
                    depth += 1
                    j += 2
                elif src.startswith("*/", j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        break
                else:
                    j += 1
            out.append(_blank(src[i:j]))
            i = j
            continue
        if c in "bcr" and not prev_ident:
            m = _RAW_STR.match(src, i)
            if m:
                close = '"' + m.group(1)
                j = src.find(close, m.end())
                j = n if j < 0 else j + len(close)
                out.append(_blank(src[i:j]))
                i = j
                continue
            if c in "bc" and src.startswith('"', i + 1):
                out.append(" ")
                i += 1
                c = '"'
                prev_ident = False
        if c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(_blank(src[i:j]))
            i = j
            continue
        if c == "'":
            if src.startswith("\\", i + 1):
                j = src.find("'", i + 3)
                j = n if j < 0 else j + 1
                out.append(_blank(src[i:j]))
                i = j
                continue
            if i + 2 < n and src[i + 2] == "'" and src[i + 1] != "\n":
                out.append("   ")
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


@dataclass
class Tok:
    text: str
    line: int


def tokenize(code: str) -> list[Tok]:
    toks: list[Tok] = []
    line_starts = [0]
    for m in re.finditer("\n", code):
        line_starts.append(m.end())
    li = 0
    for m in _TOKEN.finditer(code):
        pos = m.start()
        while li + 1 < len(line_starts) and line_starts[li + 1] <= pos:
            li += 1
        toks.append(Tok(m.group(0), li + 1))
    return toks


# ---------------------------------------------------------------------------------------------
# Scanning one file
# ---------------------------------------------------------------------------------------------

ITEM_KEYWORDS = {"fn", "struct", "enum", "union", "trait", "type", "const", "static"}
PATH_STARTS = {"crate", "super", "self"}
_CFG_TEST = re.compile(r"^cfg\(\s*(test|all\(\s*test\s*(,.*)?\))\s*\)$")


def _name(tok: str) -> str:
    return tok[2:] if tok.startswith("r#") else tok


def _is_ident(tok: str) -> bool:
    return bool(tok) and (tok[0].isalpha() or tok[0] == "_" or tok.startswith("r#"))


@dataclass
class UseBinding:
    module: tuple  # logical module the `use` is written in
    target: list  # path as written (first segment crate/self/super/child/extern)
    name: str | None  # bound name (None for `as _`)
    glob: bool
    public: bool
    line: int
    module_level: bool  # directly in the module (not inside a function body)


@dataclass
class PathRef:
    module: tuple
    segs: list
    line: int


@dataclass
class ModuleInfo:
    path: tuple
    file: Path
    inline: bool
    children: dict = field(default_factory=dict)  # name -> child logical path
    items: set = field(default_factory=set)
    bindings: dict = field(default_factory=dict)  # name -> UseBinding (module level)
    globs: list = field(default_factory=list)  # UseBinding with glob=True (module level)
    idents: dict = field(default_factory=dict)  # identifier used in own code -> first line


@dataclass
class FileScan:
    mod_decls: list  # (logical parent path, name, line, path attribute or None)
    inline_mods: list  # logical paths of inline modules
    uses: list
    paths: list
    items: dict  # logical path -> set of names
    idents: dict  # logical path -> {name: first line}
    test_mod_decls: list = field(default_factory=list)  # as mod_decls, under #[cfg(test)]
    agent_new: list = field(default_factory=list)  # lines naming `Agent::new` in non-test code


class Scanner:
    def __init__(self, toks: list[Tok], module: tuple):
        self.t = toks
        self.i = 0
        self.base = module
        self.scan = FileScan([], [], [], [], {}, {})
        # stack of (logical path, brace depth of the module's items)
        self.stack: list[tuple[tuple, int]] = [(module, 0)]
        self.depth = 0

    def tok(self, k: int = 0) -> str:
        j = self.i + k
        return self.t[j].text if 0 <= j < len(self.t) else ""

    @property
    def mod(self) -> tuple:
        return self.stack[-1][0]

    def at_module_level(self) -> bool:
        return self.depth == self.stack[-1][1]

    def run(self) -> FileScan:
        t = self.t
        if len(t) >= 3 and t[0].text == "#" and t[1].text == "!" and t[2].text == "[":
            self.i = 2
            attr, _ = self.read_attribute()
            if _CFG_TEST.match(attr):
                # a test-only file: nothing in it counts; the files it declares are test-only too
                body = self.read_body()
                return FileScan([], [], [], [], {}, {}, body.mod_decls + body.test_mod_decls)
            self.i = 0
        return self.read_body()

    def read_body(self) -> FileScan:
        t = self.t
        pending_test = False
        path_attr = None
        while self.i < len(t):
            s = self.tok()
            if s == "#" and self.tok(1) == "[":
                self.i += 1
                attr, raw_path = self.read_attribute()
                if _CFG_TEST.match(attr):
                    pending_test = True
                if raw_path is not None:
                    path_attr = raw_path
                continue
            if s == "#" and self.tok(1) == "!" and self.tok(2) == "[":
                self.i += 2
                self.read_attribute()
                continue
            if pending_test:
                pending_test = False
                self.note_test_mod(path_attr)
                path_attr = None
                self.skip_item()
                continue
            if s == "{":
                self.depth += 1
                self.i += 1
                continue
            if s == "}":
                self.depth -= 1
                if len(self.stack) > 1 and self.depth == self.stack[-1][1] - 1:
                    self.stack.pop()
                self.i += 1
                continue
            if s == "mod" and _is_ident(self.tok(1)) and self.tok(-1) != "::":
                name = _name(self.tok(1))
                if self.tok(2) == ";":
                    self.scan.mod_decls.append((self.mod, name, t[self.i].line, path_attr))
                    self.i += 3
                elif self.tok(2) == "{":
                    child = self.mod + (name,)
                    self.scan.inline_mods.append(child)
                    self.depth += 1
                    self.stack.append((child, self.depth))
                    self.i += 3
                else:
                    self.i += 1
                path_attr = None
                continue
            if s in (";", "{", "}"):
                path_attr = None
            if s == "use" and self.tok(1) != "<" and self.tok(-1) != "::":
                self.read_use()
                continue
            if s == "pub" and self.tok(1) == "(" and self.tok(2) == "in":
                # `pub(in crate::a)` is a visibility, not a dependency
                while self.i < len(t) and self.tok() != ")":
                    self.i += 1
                continue
            if s in ITEM_KEYWORDS and self.tok(-1) not in ("::", ".", "'"):
                k = 2 if self.tok(1) == "mut" else 1
                name = self.tok(k)
                if _is_ident(name) and name not in ITEM_KEYWORDS and name != "_":
                    if self.at_module_level():
                        self.scan.items.setdefault(self.mod, set()).add(_name(name))
                    self.i += k + 1  # the defined name is not a use of it
                    continue
                self.i += 1
                continue
            if s == "macro_rules" and self.tok(1) == "!" and _is_ident(self.tok(2)):
                if self.at_module_level():
                    self.scan.items.setdefault(self.mod, set()).add(_name(self.tok(2)))
                self.i += 3
                continue
            if _is_ident(s) and self.tok(-1) not in ("::", "$"):
                if self.tok(1) == "::" and _is_ident(self.tok(2)):
                    self.read_path()
                    continue
                if self.tok(-1) not in (".", "'") and self.tok(-1) != "fn":
                    self.scan.idents.setdefault(self.mod, {}).setdefault(_name(s), self.t[self.i].line)
            self.i += 1
        return self.scan

    def read_attribute(self) -> tuple[str, str | None]:
        """At `[`: returns the attribute's text (tokens joined) and the `path` value if any."""
        start = self.i
        level = 0
        while self.i < len(self.t):
            s = self.tok()
            if s in "([{" and len(s) == 1:
                level += 1
            elif s in ")]}" and len(s) == 1:
                level -= 1
                if level == 0:
                    self.i += 1
                    break
            self.i += 1
        inner = [x.text for x in self.t[start + 1 : self.i - 1]]
        text = "".join(inner)
        path = None
        if inner[:2] == ["path", "="]:
            path = ""  # filled in by the caller from the raw source
        return text, path

    def skip_item(self) -> None:
        """Skips one item (or statement): to `;` before any block, or to its first block's end."""
        level = 0
        while self.i < len(self.t):
            s = self.tok()
            if s == "#" and self.tok(1) == "[":
                self.i += 1
                self.read_attribute()
                continue
            if s in ("(", "["):
                level += 1
            elif s in (")", "]"):
                level -= 1
            elif s == ";" and level <= 0:
                self.i += 1
                return
            elif s == "}" and level <= 0:
                return  # end of the enclosing block: the item had nothing more
            elif s == "{":
                braces = 0
                while self.i < len(self.t):
                    s = self.tok()
                    if s == "{":
                        braces += 1
                    elif s == "}":
                        braces -= 1
                        if braces == 0:
                            self.i += 1
                            if level <= 0:
                                return
                            break
                    self.i += 1
                continue
            self.i += 1

    def note_test_mod(self, path_attr: str | None) -> None:
        """At a `#[cfg(test)]` item: notes it when it is a `mod x;` declaration (test-only file)."""
        j = self.i
        if self.tok() == "pub":
            j += 1
            if j < len(self.t) and self.t[j].text == "(":
                while j < len(self.t) and self.t[j].text != ")":
                    j += 1
                j += 1
        k = j - self.i
        if self.tok(k) == "mod" and _is_ident(self.tok(k + 1)) and self.tok(k + 2) == ";":
            line = self.t[j].line
            self.scan.test_mod_decls.append((self.mod, _name(self.tok(k + 1)), line, path_attr))

    def read_path(self) -> None:
        start_line = self.t[self.i].line
        segs = [_name(self.tok())]
        self.i += 1
        while self.tok() == "::" and _is_ident(self.tok(1)):
            segs.append(_name(self.tok(1)))
            self.i += 2
        self.scan.paths.append(PathRef(self.mod, segs, start_line))
        if segs[-2:] == ["Agent", "new"]:
            self.scan.agent_new.append(start_line)

    def read_use(self) -> None:
        line = self.t[self.i].line
        public = self.tok(-1) == "pub" or (
            self.tok(-1) == ")" and self._visibility_before(self.i - 1)
        )
        module_level = self.at_module_level()
        self.i += 1
        extern = False
        if self.tok() == "::":
            extern = True
            self.i += 1
        out: list[tuple[list, str | None, bool]] = []
        self._use_tree([], out)
        while self.i < len(self.t) and self.tok() != ";":
            self.i += 1
        self.i += 1
        if extern:
            return
        for target, name, glob in out:
            self.scan.uses.append(
                UseBinding(self.mod, target, name, glob, public, line, module_level)
            )

    def _visibility_before(self, close: int) -> bool:
        j = close
        while j >= 0 and self.t[j].text != "(":
            j -= 1
        return j >= 1 and self.t[j - 1].text == "pub"

    def _use_tree(self, prefix: list, out: list) -> None:
        segs = list(prefix)
        while self.i < len(self.t):
            s = self.tok()
            if s == "*":
                out.append((segs, None, True))
                self.i += 1
                return
            if s == "{":
                self.i += 1
                while self.i < len(self.t) and self.tok() != "}":
                    if self.tok() == ",":
                        self.i += 1
                        continue
                    before = self.i
                    self._use_tree(segs, out)
                    if self.i == before:
                        self.i += 1
                self.i += 1
                return
            if _is_ident(s):
                name = _name(s)
                self.i += 1
                if self.tok() == "::":
                    segs.append(name)
                    self.i += 1
                    continue
                alias = name
                if self.tok() == "as" and _is_ident(self.tok(1)):
                    alias = _name(self.tok(1))
                    self.i += 2
                if name == "self":
                    target = segs
                    if alias == "self":
                        alias = segs[-1] if segs else None
                else:
                    target = segs + [name]
                out.append((target, None if alias == "_" else alias, False))
                return
            return


def scan_file(path: Path, module: tuple) -> tuple[FileScan, list[str]]:
    src = path.read_text(encoding="utf-8", errors="replace")
    code = blank_literals(src)
    scanner = Scanner(tokenize(code), module)
    result = scanner.run()
    # `#[path = "..."]` values are string literals (blanked in `code`): read them from the source
    lines = src.split("\n")
    def fixed(decls: list) -> list:
        out = []
        for parent, name, line, path_attr in decls:
            if path_attr is not None:
                path_attr = _path_attribute(lines, line)
            out.append((parent, name, line, path_attr))
        return out

    result.mod_decls = fixed(result.mod_decls)
    result.test_mod_decls = fixed(result.test_mod_decls)
    return result, lines


_PATH_ATTR = re.compile(r'#\[\s*path\s*=\s*"([^"]*)"\s*\]')


def _path_attribute(lines: list[str], line: int) -> str | None:
    for k in range(line - 1, max(line - 6, -1), -1):
        m = _PATH_ATTR.search(lines[k])
        if m:
            return m.group(1)
    return None


# ---------------------------------------------------------------------------------------------
# A crate's module graph
# ---------------------------------------------------------------------------------------------


@dataclass
class Edge:
    line: int
    text: str


@dataclass
class CrateGraph:
    name: str
    root: Path
    modules: dict  # logical path -> ModuleInfo
    files: list  # files in the graph
    edges: dict  # (from file, to file) -> Edge (first one)
    warnings: list
    test_files: set = field(default_factory=set)  # files reached only through #[cfg(test)] mods

    def counted_edges(self) -> set:
        """The edges the circle rule looks at: none into or out of the crate's root file."""
        return {(a, b) for (a, b) in self.edges if self.root not in (a, b)}


def _declares_beside(file: Path, is_root: bool) -> bool:
    return is_root or file.name == "mod.rs"


def _mod_candidates(file: Path, is_root: bool, mpath: tuple, decl: tuple) -> list[Path]:
    """Where `mod child;` (declared in logical module `parent`, written in `file`, whose own
    module is `mpath`) may be, in rustc's order."""
    parent, child, _line, path_attr = decl
    folder = file.parent if _declares_beside(file, is_root) else file.parent / file.stem
    sub = folder.joinpath(*parent[len(mpath) :])
    if path_attr:
        base = file.parent if len(parent) == len(mpath) else sub
        return [base / path_attr]
    return [sub / f"{child}.rs", sub / child / "mod.rs"]


def build_crate(name: str, root: Path) -> CrateGraph:
    modules: dict[tuple, ModuleInfo] = {}
    scans: dict[Path, tuple[FileScan, list[str]]] = {}
    warnings: list[str] = []
    queue: list[tuple[tuple, Path, bool]] = [((), root, True)]
    files: list[Path] = []
    # `#[cfg(test)] mod x;` declarations: (child path, declaring file, is root, its module, decl)
    test_queue: list = []
    while queue:
        mpath, file, is_root = queue.pop(0)
        if file in scans:
            continue
        files.append(file)
        scan, lines = scan_file(file, mpath)
        scans[file] = (scan, lines)
        modules.setdefault(mpath, ModuleInfo(mpath, file, False))
        for ipath in scan.inline_mods:
            modules[ipath] = ModuleInfo(ipath, file, True)
            modules[ipath[:-1]].children[ipath[-1]] = ipath
        for decl in scan.test_mod_decls:
            test_queue.append((decl[0] + (decl[1],), file, is_root, mpath, decl))
        for decl in scan.mod_decls:
            parent, child, line, _ = decl
            cpath = parent + (child,)
            candidates = _mod_candidates(file, is_root, mpath, decl)
            found = next((c for c in candidates if c.is_file()), None)
            if found is None:
                warnings.append(f"{file}:{line}: no file for `mod {child};` (looked for "
                                + " or ".join(str(c) for c in candidates) + ")")
                continue
            modules.setdefault(cpath, ModuleInfo(cpath, found, False))
            modules[parent].children[child] = cpath
            queue.append((cpath, found, False))
    for file, (scan, _) in scans.items():
        for mpath, names in scan.items.items():
            modules[mpath].items |= names
        for mpath, names in scan.idents.items():
            for name, line in names.items():
                modules[mpath].idents.setdefault(name, line)
        for use in scan.uses:
            if not use.module_level:
                continue
            info = modules[use.module]
            if use.glob:
                info.globs.append(use)
            elif use.name:
                info.bindings.setdefault(use.name, use)

    resolver = _Resolver(modules)
    edges: dict[tuple[Path, Path], Edge] = {}

    def add(from_mod: tuple, to_mod: tuple | None, line: int, lines: list[str]) -> None:
        if to_mod is None:
            return
        a, b = modules[from_mod].file, modules[to_mod].file
        if a != b and (a, b) not in edges:
            edges[(a, b)] = Edge(line, lines[line - 1].strip() if 0 < line <= len(lines) else "")

    for file, (scan, lines) in scans.items():
        for use in scan.uses:
            line = use.line
            if use.public and use.module_level:
                # a re-export: a dependency only if this module's own code uses the name
                if use.glob or not use.name or use.name not in modules[use.module].idents:
                    continue
                line = modules[use.module].idents[use.name]
            add(use.module, resolver.target_of(use.module, use.target), line, lines)
        for ref in scan.paths:
            first = ref.segs[0]
            info = modules[ref.module]
            if first in PATH_STARTS or first in info.children or first in info.bindings:
                add(ref.module, resolver.target_of(ref.module, ref.segs), ref.line, lines)
    return CrateGraph(name, root, modules, files, edges, warnings, _test_files(test_queue, files))


def _test_files(queue: list, product: list) -> set:
    """Files reached only through `#[cfg(test)] mod x;` declarations, and everything below them."""
    seen = set(product)
    out: set = set()
    while queue:
        cpath, file, is_root, mpath, decl = queue.pop(0)
        found = next((c for c in _mod_candidates(file, is_root, mpath, decl) if c.is_file()), None)
        if found is None or found in seen:
            continue
        seen.add(found)
        out.add(found)
        scan, _ = scan_file(found, cpath)
        for d in scan.mod_decls + scan.test_mod_decls:
            queue.append((d[0] + (d[1],), found, False, cpath, d))
    return out


class _Resolver:
    def __init__(self, modules: dict):
        self.m = modules

    def absolute(self, mod: tuple, segs: list, seen: frozenset = frozenset()) -> list | None:
        """`segs` as written in module `mod`, from the crate root; None for other crates."""
        if not segs:
            return list(mod)
        first = segs[0]
        if first == "crate":
            return list(segs[1:])
        if first == "self":
            return list(mod) + list(segs[1:])
        if first == "super":
            base = list(mod)
            k = 0
            while k < len(segs) and segs[k] == "super":
                if not base:
                    return None
                base.pop()
                k += 1
            return base + list(segs[k:])
        info = self.m.get(mod)
        if info is None:
            return None
        if first in info.children or first in info.items:
            return list(mod) + list(segs)
        if first in info.bindings and (mod, first) not in seen:
            b = info.bindings[first]
            base = self.absolute(mod, b.target, seen | {(mod, first)})
            return None if base is None else base + list(segs[1:])
        return None

    def target_of(self, mod: tuple, segs: list) -> tuple | None:
        abs_segs = self.absolute(mod, segs)
        if abs_segs is None:
            return None
        found = self.resolve(abs_segs, frozenset())
        return None if found is None else found[0]

    def resolve(self, segs: list, seen: frozenset) -> tuple[tuple, bool] | None:
        """The module defining what `segs` (from the crate root) names, and whether `segs` names
        that module itself. None when it is defined in another crate."""
        cur: tuple = ()
        for k, s in enumerate(segs):
            info = self.m[cur]
            if s in info.children:
                cur = info.children[s]
                continue
            if s in info.items:
                return cur, False
            found = self._lookup(cur, s, seen)
            if found is None:
                return cur, False
            if found == "extern":
                return None
            mod, exact = found
            if exact:
                cur = mod
                continue
            return mod, False
        return cur, True

    def _lookup(self, cur: tuple, name: str, seen: frozenset):
        """`name` brought into module `cur` by a `use`: where it is defined."""
        info = self.m[cur]
        key = (cur, name)
        if key in seen:
            return None
        seen = seen | {key}
        if name in info.bindings:
            b = info.bindings[name]
            target = self.absolute(cur, b.target, seen)
            if target is None:
                return "extern"
            found = self.resolve(target, seen)
            return "extern" if found is None else found
        for g in info.globs:
            target = self.absolute(cur, g.target, seen)
            if target is None:
                continue
            gm = self.resolve(target, seen)
            if gm is None or not gm[1]:
                continue
            ginfo = self.m[gm[0]]
            if name in ginfo.children:
                return ginfo.children[name], True
            if name in ginfo.items:
                return gm[0], False
            found = self._lookup(gm[0], name, seen)
            if found is not None:
                return found
        return None


def strongly_connected(nodes: list, edges: set) -> list[list]:
    """Tarjan's algorithm, iterative. Components in discovery order."""
    succ: dict = {n: [] for n in nodes}
    for a, b in sorted(edges, key=lambda e: (str(e[0]), str(e[1]))):
        succ[a].append(b)
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out: list[list] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            if k < len(succ[v]):
                work.append((v, k + 1))
                w = succ[v][k]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


# ---------------------------------------------------------------------------------------------
# The repository
# ---------------------------------------------------------------------------------------------


def crate_roots(repo: Path) -> list[tuple[str, Path]]:
    dirs = sorted(p for p in (repo / "crates").glob("*/src") if p.is_dir())
    if (repo / "src-tauri").is_dir():
        dirs.append(repo / "src-tauri")
    roots = []
    for d in dirs:
        label = str(d.relative_to(repo))
        for name in ("lib.rs", "main.rs"):
            if (d / name).is_file():
                roots.append((f"{label}/{name}", d / name))
        bins = d / "bin"
        if bins.is_dir():
            for b in sorted(bins.iterdir()):
                if b.suffix == ".rs" and b.is_file():
                    roots.append((str(b.relative_to(repo)), b))
                elif (b / "main.rs").is_file():
                    roots.append((str((b / "main.rs").relative_to(repo)), b / "main.rs"))
    return roots


def is_test_file(rel: Path) -> bool:
    name = rel.name
    return (
        "tests" in rel.parts[:-1]
        or name == "tests.rs"
        or name.endswith(".test.ts")
        or name.endswith(".test.tsx")
    )


def long_files(repo: Path) -> list[tuple[Path, int]]:
    tops = sorted(p for p in (repo / "crates").glob("*/src") if p.is_dir())
    tops += [p for p in (repo / "src-tauri", repo / "ui" / "src") if p.is_dir()]
    out = []
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "node_modules" and not d.startswith("."))
            for f in sorted(filenames):
                p = Path(dirpath) / f
                rel = p.relative_to(repo)
                if is_test_file(rel) or "generated" in rel.parts[:-1] or not p.is_file():
                    continue
                data = p.read_bytes()
                if b"\0" in data[:8192]:
                    continue
                count = data.count(b"\n")
                if count > MAX_LINES:
                    out.append((rel, count))
    return out


AGENT_NEW_ALLOWED = ("crates/host/src/", "crates/agent/src/")
AGENT_NEW_ALLOWED_FOLDERS = {"tests", "benches", "examples"}


def agent_new_calls(repo: Path, test_files: set) -> list[tuple[Path, int, str]]:
    """Every `Agent::new` in product code outside crates/host/src (and the agent crate itself)."""
    tops = sorted(p for p in (repo / "crates").glob("*/src") if p.is_dir())
    if (repo / "src-tauri").is_dir():
        tops.append(repo / "src-tauri")
    skip = {"node_modules", "target"}
    out = []
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in skip and not d.startswith("."))
            for f in sorted(filenames):
                p = Path(dirpath) / f
                rel = p.relative_to(repo)
                if (
                    p.suffix != ".rs"
                    or not p.is_file()
                    or rel.as_posix().startswith(AGENT_NEW_ALLOWED)
                    or AGENT_NEW_ALLOWED_FOLDERS & set(rel.parts[:-1])
                    or p.resolve() in test_files
                ):
                    continue
                scan, lines = scan_file(p, ())
                for line in scan.agent_new:
                    out.append((rel, line, lines[line - 1].strip()))
    return out


def unnamed_unsafe(repo: Path) -> list[Path]:
    """Product files that allow `unsafe_code` without being named in the workspace's audit note
    (the comment above `unsafe_code = "deny"` in Cargo.toml)."""
    manifest = repo / "Cargo.toml"
    if not manifest.is_file():
        return []
    lines = manifest.read_text(encoding="utf-8").splitlines()
    note = []
    for i, line in enumerate(lines):
        if line.strip().startswith("unsafe_code"):
            j = i - 1
            while j >= 0 and lines[j].lstrip().startswith("#"):
                note.append(lines[j])
                j -= 1
            break
    named = "\n".join(note)
    tops = sorted(p for p in (repo / "crates").glob("*/src") if p.is_dir())
    if (repo / "src-tauri").is_dir():
        tops.append(repo / "src-tauri")
    out = []
    for top in tops:
        for p in sorted(top.rglob("*.rs")):
            rel = p.relative_to(repo)
            if {"node_modules", "target", "tests"} & set(rel.parts[:-1]):
                continue
            if "allow(unsafe_code)" in p.read_text(encoding="utf-8") and rel.as_posix() not in named:
                out.append(rel)
    return out


def check(repo: Path, out=sys.stdout) -> int:
    repo = repo.resolve()
    problems = 0
    circles = 0
    crates = 0
    modules = 0
    test_files: set = set()
    for label, root in crate_roots(repo):
        graph = build_crate(label, root)
        crates += 1
        modules += len(graph.files)
        test_files |= graph.test_files
        for w in graph.warnings:
            print(f"structure: warning: {w}", file=out)
        counted = graph.counted_edges()
        for comp in strongly_connected(graph.files, counted):
            if len(comp) < 2:
                continue
            circles += 1
            members = sorted(comp, key=str)
            rels = [str(m.relative_to(repo)) for m in members]
            print(f"structure: import circle in {label}: {', '.join(rels)}", file=out)
            inside = set(members)
            for (a, b), e in sorted(graph.edges.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
                if a in inside and b in inside and (a, b) in counted:
                    ra, rb = a.relative_to(repo), b.relative_to(repo)
                    print(f"  {ra} -> {rb}    ({ra}:{e.line}: {e.text})", file=out)
    problems += circles
    long = long_files(repo)
    for rel, count in long:
        print(f"structure: {rel} has {count} lines (over {MAX_LINES})", file=out)
    problems += len(long)
    calls = agent_new_calls(repo, test_files)
    for rel, line, text in calls:
        print(f"structure: Agent::new outside crates/host/src: {rel}:{line}: {text}", file=out)
    problems += len(calls)
    unsafe = unnamed_unsafe(repo)
    for rel in unsafe:
        print(
            f"structure: {rel} allows unsafe code but the audit note in Cargo.toml does not name it",
            file=out,
        )
    problems += len(unsafe)
    if problems:
        print(
            f"structure: FAILED: {circles} import circle{'s' if circles != 1 else ''}, "
            f"{len(long)} product file{'s' if len(long) != 1 else ''} over {MAX_LINES} lines, "
            f"{len(calls)} Agent::new call{'s' if len(calls) != 1 else ''} outside crates/host, "
            f"{len(unsafe)} unaudited unsafe file{'s' if len(unsafe) != 1 else ''} "
            f"({crates} crates, {modules} modules)",
            file=out,
        )
        return 1
    print(
        f"structure: {crates} crates, {modules} modules, no import circle; "
        f"no product file over {MAX_LINES} lines; no Agent::new outside crates/host; "
        f"every file allowing unsafe code named in the audit note",
        file=out,
    )
    return 0


def main(argv: list[str]) -> int:
    repo = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    return check(repo)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
