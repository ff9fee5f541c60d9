"""Every ```python block of README.md and docs/*.md runs as written (issue 50).

The convention (also at the top of docs/architecture.md): a ```python block runs on its own, in a fresh
namespace, in an empty temporary directory. An HTML comment on the line just before the fence changes that:

- `<!-- continues -->`: the block runs in the namespace the file's block before it left (that block may
  itself continue another);
- `<!-- needs: tpu -->` (or `gpu`): the block runs only where `hf.devices(kind)` finds such a device;
  `<!-- needs: cluster -->`: several processes started with `jax.distributed`, never here;
- `<!-- excerpt -->`: code quoted from hloforge's own source (a rule or a pattern as it is registered
  there); it must compile, but is not run, since running it would register the rule a second time.

```bash`, ```sh and ```console blocks are shell; ```text blocks and blocks without a language are output,
not code. Neither is run. Each file's blocks run in one test, in order, in this process: keep them small.
"""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ["README.md"] + sorted(os.path.join("docs", name) for name in os.listdir(os.path.join(ROOT, "docs"))
                               if name.endswith(".md"))
SETTINGS = ("device", "cache_size", "cache_dir", "cache_max_bytes", "local_ffts", "log", "cost_model", "dtypes",
            "first_call")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(continues|excerpt|needs:\s*(tpu|gpu|cluster))\s*-->\s*$")
PYTHON = ("python", "py", "python3")
NOT_RUN = ("bash", "sh", "console", "shell", "text", "")


def blocks(path):
    """(first line number of the code, language, marker or None, code) for each fenced block of `path`."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2).lower()
        before = lines[i - 1] if i else ""
        marker = MARKER.match(before)
        if "<!--" in before and not marker:
            raise AssertionError(f"{path}:{i}: unknown marker {before.strip()!r} (see tests/test_docs.py)")
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        assert j < len(lines), f"{path}:{i + 1}: a fence that is never closed"
        code = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:j])
        out.append((i + 2, lang, re.sub(r"\s+", " ", marker.group(1)) if marker else None, code))
        i = j + 1
    return out


def _has(kind):
    import hloforge as hf
    if kind == "cluster":
        return False
    try:
        return bool(hf.devices(kind))
    except Exception:
        return False


def test_every_block_is_known():
    """Every fence has a language the test knows, so no block of Python escapes it under another name."""
    for path in FILES:
        for line, lang, marker, _ in blocks(path):
            assert lang in PYTHON + NOT_RUN, f"{path}:{line - 1}: fence language {lang!r}"
            assert marker is None or lang in PYTHON, f"{path}:{line - 1}: a marker on a {lang or 'plain'} block"


@pytest.mark.every_case  # (each page and example is a promise to users)
@pytest.mark.parametrize("path", [path for path in FILES if any(b[1] in PYTHON for b in blocks(path))])
def test_python_blocks_run(path, tmp_path, monkeypatch):
    import hloforge as hf
    saved = {name: getattr(hf.config, name) for name in SETTINGS}
    monkeypatch.chdir(tmp_path)
    namespace = False         # the last run block's; None after a block this machine cannot run
    try:
        for line, lang, marker, code in blocks(path):
            if lang not in PYTHON:
                continue
            # as many blank lines before the code as the markdown has, so tracebacks give the file's lines
            compiled = compile("\n" * (line - 1) + code + "\n", os.path.join(ROOT, path), "exec")
            if marker == "excerpt":
                continue
            if (marker or "").startswith("needs:") and not _has(marker[6:].strip()):
                namespace = None
                continue
            if marker == "continues":
                assert namespace is not False, f"{path}:{line}: continues, but no block runs before it"
                if namespace is None:   # it continues a block that needs what this machine lacks
                    continue
            else:
                namespace = {"__name__": "__docs__"}
            try:
                exec(compiled, namespace)
            except Exception as e:
                raise AssertionError(f"{path}:{line}: the block fails: {type(e).__name__}: {e}") from e
    finally:
        for name, value in saved.items():
            setattr(hf.config, name, value)


def test_every_named_doc_exists():
    """The README sends readers to docs/ for what moved there: each `docs/NAME.md` it or a doc names exists."""
    for path in FILES:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            for name in sorted(set(re.findall(r"docs/[\w-]+\.md", f.read()))):
                assert os.path.exists(os.path.join(ROOT, name)), f"{path} names {name}, which does not exist"
