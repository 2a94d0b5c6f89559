#!/usr/bin/env python3
"""Fails when the source files of a crate import each other in a circle.

usage: scripts/import-cycles.py [WORKSPACE_DIR]

Layers stay one-way only if no file depends, through any chain, on a file that depends on
it. A file depends on the file of every module it names with a `crate::`, `super::` or
`self::` path (in a `use`, braced groups included, or inline). Its module comes from its
place under `src/` (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`); the crate root (`lib.rs`,
`main.rs`) is left out, since its re-exports are not a layer, and so is test code (files
under `tests/`, `benches/`, `examples/`, and everything from a `#[cfg(test)]` line on).

Prints each circle (a strongly connected set of two or more files) and the names that tie
it, then "import cycles: N". Exit status 1 when N > 0.
"""
import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(
    r"\buse\s+(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*::\s*\{(.*?)\}\s*;", re.S
)


def source_files(crate_src):
    """{path: module tuple} for the crate's source files."""
    files = {}
    for root, _dirs, names in os.walk(crate_src):
        for name in names:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            parts = os.path.relpath(path, crate_src)[:-3].split(os.sep)
            if parts[-1] == "mod":
                parts.pop()
            if parts in (["lib"], ["main"]):
                continue
            files[path] = tuple(parts)
    return files


def code_of(path):
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def segments(chain):
    return tuple(s.strip() for s in chain.split("::") if s.strip())


def absolute(module, head, rest):
    if head == "crate":
        return rest
    if head == "self":
        return module + rest
    return module[:-1] + rest  # super


def named_paths(module, code):
    """Absolute module paths (with the item last) this code names."""
    out = []
    for m in GROUP.finditer(code):
        prefix = absolute(module, m.group(1), segments(m.group(2)))
        depth = 0
        item = ""
        for ch in m.group(3) + ",":
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                name = item.split(" as ")[0].strip()
                name = re.sub(r"\{.*", "", name, flags=re.S).strip(": \n")
                if name and name != "self":
                    out.append(prefix + segments(name))
                elif name == "self":
                    out.append(prefix)
                item = ""
            else:
                item += ch
    code = GROUP.sub("", code)
    for m in PATH.finditer(code):
        out.append(absolute(module, m.group(1), segments(m.group(2))))
    return out


def owner(path, by_module):
    """The file of the longest module prefix of `path`."""
    for n in range(len(path), 0, -1):
        if path[:n] in by_module:
            return by_module[path[:n]]
    return None


def cycles_in(crate_src):
    files = source_files(crate_src)
    by_module = {m: p for p, m in files.items()}
    edges = {p: {} for p in files}
    for path, module in files.items():
        for named in named_paths(module, code_of(path)):
            target = owner(named, by_module)
            if target and target != path:
                edges[path].setdefault(target, set()).add(named[-1])
    # Tarjan's strongly connected components.
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(files):
        if v not in index:
            visit(v)
    return found, edges


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    total = 0
    for base in ("crates", "examples", "tests"):
        root = os.path.join(top, base)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            src = os.path.join(root, name, "src")
            if not os.path.isdir(src):
                continue
            found, edges = cycles_in(src)
            for component in found:
                total += 1
                shown = [os.path.relpath(c, top) for c in component]
                print(f"cycle {total}: {len(component)} files: {', '.join(shown)}")
                members = set(component)
                for a in component:
                    for b, names in sorted(edges[a].items()):
                        if b in members:
                            print(
                                f"  {os.path.relpath(a, top)} -> {os.path.relpath(b, top)}: "
                                f"{', '.join(sorted(names))}"
                            )
    print(f"import cycles: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
