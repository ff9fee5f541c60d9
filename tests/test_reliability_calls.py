"""Call graphs, nesting depth and the inliner (issue #31, A3/A4/C1): deep call chains compile and
differentiate, call cycles and too-deep nesting are refused with clear errors instead of killing the
process, the inliner is linear in its output, and a private entry function is not deleted."""
import os
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import hloforge as hf
from hloforge.frontend.module import XLA_MAX_DEPTH
from hloforge.frontend.parsing import MAX_BRACKETS, MAX_NESTING, nesting_depth

T = "tensor<f32>"
HERE = os.path.dirname(os.path.abspath(__file__))


def fn(name, body, private=True):
    return f"func.func {'private ' if private else ''}@{name}(%a: {T}) -> {T} {{\n{body}\n}}\n"


def call(callee, arg="%a", out="%0"):
    return f"  {out} = call @{callee}({arg}) : ({T}) -> {T}"


RET = f"  return %0 : {T}"


def chain(n):
    """@main -> @f1 -> ... -> @fn, each adding 1."""
    add = f"  %c = stablehlo.constant dense<1.0> : {T}\n  %s = stablehlo.add %a, %c : {T}\n"
    text = fn("main", call("f1") + "\n" + RET, private=False)
    for i in range(1, n):
        text += fn(f"f{i}", add + call(f"f{i + 1}", "%s") + "\n" + RET)
    return text + fn(f"f{n}", add.replace("%s =", "%0 =") + RET)


def nested_ifs(n):
    """@main(%p, %a) with ``n`` stablehlo.if nested in one another; the innermost returns a + a."""
    opening = [f'{"  " * (d + 1)}%r{d} = "stablehlo.if"(%p) ({{' for d in range(n)]
    closing = []
    for d in reversed(range(n)):
        ind = "  " * (d + 1)
        done = f'{ind}"stablehlo.return"(%r{d}) : ({T}) -> ()' if d else f"  return %r0 : {T}"
        closing.append(f'{ind}}}, {{\n{ind}  "stablehlo.return"(%a) : ({T}) -> ()\n{ind}}}) : (tensor<i1>) -> {T}\n'
                       + done)
    inner = "  " * (n + 1)
    body = f'{inner}%x = stablehlo.add %a, %a : {T}\n{inner}"stablehlo.return"(%x) : ({T}) -> ()'
    return (f"func.func @main(%p: tensor<i1>, %a: {T}) -> {T} {{\n" + "\n".join(opening) + "\n" + body + "\n"
            + "\n".join(closing) + "\n}\n")


def run_script(code, timeout=300):
    """Run ``code`` in a fresh interpreter (a crash must not take pytest down); its stdout."""
    prelude = f"import sys; sys.path.insert(0, {HERE!r})\nfrom test_reliability_calls import *\n"
    done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    return done.stdout


def outcome(thunk) -> str:
    try:
        return f"ok {thunk()}"
    except ValueError as e:
        return f"ValueError {e}"


SELF = fn("main", call("main") + "\n" + RET, private=False)
BACK_TO_MAIN = fn("main", call("f") + "\n" + RET, private=False) + fn("f", call("main") + "\n" + RET)
MUTUAL = (fn("main", call("f") + "\n" + RET, private=False) + fn("f", call("g") + "\n" + RET)
          + fn("g", call("f") + "\n" + RET))
CYCLES = {"self": (SELF, "@main -> @main"), "back-to-main": (BACK_TO_MAIN, "@main -> @f -> @main"),
          "mutual": (MUTUAL, "@main -> @f -> @g -> @f")}


# ---------------------------------------------------------------- A3: call chains and cycles

def test_deep_call_chains_compile_without_crashing(child_output):
    out = child_output["chains"]
    assert "100 100.5 True" in out, "a shallow chain reaches XLA as it is"
    assert "250 250.5 False" in out and "3000 3000.5 False" in out, "deep chains are inlined first"
    assert "limit True False" in out


# The crash reproducers below run in ONE child process, a section each (each child costs a jax
# import); a crash there fails every test that reads it, with the exit status and the child's output.
CHILD_SECTIONS = {
    "cycles": """
        for name, (text, _) in CYCLES.items():
            print("cycle", name)
            print(outcome(lambda: hf.Module.parse(text).compile()))
            m = hf.Module.parse(text)
            m.optimize()
            print(outcome(lambda: m.compile()))
            print(outcome(lambda: hf.Module.parse(text).vjp()))
            print(outcome(lambda: hf.Module.parse(text).jvp()))
    """,
    "chains": f"""
        x = np.float32(0.5)
        for n in (100, 250, 3000):
            m = hf.Module.parse(chain(n))
            print(n, float(m.compile()(x)), "call @" in m._code_for_compile())
        at_limit = hf.Module.parse(chain({XLA_MAX_DEPTH}))._code_for_compile()
        past_limit = hf.Module.parse(chain({XLA_MAX_DEPTH + 1}))._code_for_compile()
        print("limit", "call @" in at_limit, "call @" in past_limit)
    """,
    "xla_nesting": f"""
        p, x = np.bool_(True), np.float32(1.5)
        print(outcome(lambda: float(hf.Module.parse(nested_ifs({XLA_MAX_DEPTH})).compile()(p, x))))
        print(outcome(lambda: hf.Module.parse(nested_ifs({XLA_MAX_DEPTH + 1})).compile()))
        print(outcome(lambda: hf.Module.parse(nested_ifs({MAX_NESTING - 2})).compile()))
    """,
    "thousands": """
        print(outcome(lambda: hf.Module.parse(nested_ifs(4000))))
        print(outcome(lambda: hf.Module.load(DEEP_PATH)))
        arrays = 'func.func @main() attributes {x = ' + '[' * 20000 + ']' * 20000 + '} { return }'
        print(outcome(lambda: hf.Module.parse(arrays)))
    """,
    "ad_recursion": """
        sys.setrecursionlimit(300)  # (40 nested ifs take about 350 frames; last: the limit stays low)
        m = hf.Module.parse(nested_ifs(40))
        g, j = m.vjp(), m.jvp()
        print(sys.getrecursionlimit())
        print([float(v) for v in g.compile()(np.bool_(True), np.float32(1.5), np.float32(1))])
        print([float(v) for v in j.compile()(np.bool_(True), np.float32(1.5), np.bool_(False), np.float32(1))])
    """,
}


@pytest.fixture(scope="module")
def deep_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("deep") / "deep.mlir"
    path.write_text(nested_ifs(4000))
    return path


@pytest.fixture(scope="module")
def child_output(deep_file):
    """{section: what it printed}, from one child process running CHILD_SECTIONS in turn."""
    code = f"DEEP_PATH = {str(deep_file)!r}\n" + "".join(
        f"print('=== {name}')\n" + textwrap.dedent(body) for name, body in CHILD_SECTIONS.items())
    out = run_script(code)
    sections = {}
    for section in out.split("=== ")[1:]:
        name, _, text = section.partition("\n")
        sections[name] = text
    assert list(sections) == list(CHILD_SECTIONS), out
    return sections


@pytest.fixture(scope="module")
def cycle_outcomes(child_output):
    """{cycle name: its four outcome lines}."""
    outcomes = {}
    for section in child_output["cycles"].strip().split("cycle ")[1:]:
        name, *lines = section.strip().splitlines()
        outcomes[name] = lines
    return outcomes


@pytest.mark.parametrize("name", list(CYCLES))
def test_call_cycles_are_refused_naming_the_cycle(cycle_outcomes, name):
    lines = cycle_outcomes[name]
    cycle = CYCLES[name][1]
    assert len(lines) == 4
    for line, what in zip(lines, ("compile", "compile", "Module.vjp", "Module.jvp")):
        assert line.startswith(f"ValueError {what}: the calls {cycle} are recursive; StableHLO has no recursion"), line


def test_refine_refuses_a_call_cycle():
    text = BACK_TO_MAIN.replace(T, "tensor<?xf32>")
    with pytest.raises(ValueError, match=r"refine: the calls @main -> @f -> @main are recursive"):
        hf.Module.parse(text).refine([((3,), np.float32)])


def test_a_cycle_nothing_reaches_is_not_refused():
    text = fn("main", f"  %0 = stablehlo.add %a, %a : {T}\n" + RET, private=False) + MUTUAL.split("\n", 4)[-1]
    m = hf.Module.parse(text)
    assert m.op_counts()["func.call"] == 2
    assert float(m.compile()(np.float32(2))) == 4.0


@pytest.mark.parametrize("transform", ["vjp", "jvp"])
def test_ad_of_deep_call_chains(transform):
    m = hf.Module.parse(chain(1000))
    g = getattr(m, transform)()
    assert "func.call" not in g.op_counts()
    out, derivative = g.compile()(np.float32(0.5), np.float32(2))
    assert float(out) == 1000.5 and float(derivative) == 2.0


# ---------------------------------------------------------------- A4: nesting depth

def test_nesting_is_measured_outside_strings_and_comments():
    assert nesting_depth(nested_ifs(3).encode()) == (5, 9), "the implicit module, the function, 3 regions"
    assert nesting_depth(b'module { x = "}}}{{{{\\"{{" } // {{{{ "\n [ ( ) ]') == (1, 2)
    text = (f'func.func @main(%a: {T}) -> {T} attributes {{note = "{"{" * 300}\\"{"[" * 2000}"}} {{\n'
            f'  // {"{" * 300}\n  return %a : {T}\n}}')
    assert float(hf.Module.parse(text).compile()(np.float32(3))) == 3.0


def test_region_nesting_limit_is_accepted_and_one_more_refused():
    assert MAX_NESTING == 256
    m = hf.Module.parse(nested_ifs(MAX_NESTING - 2))  # (with the module's and the function's braces: 256)
    assert m.op_counts()["stablehlo.if"] == MAX_NESTING - 2
    assert hf.Module.parse(m.text).op_counts() == m.op_counts(), "printed, it measures the same"
    with pytest.raises(ValueError, match=rf"Module.parse: the text nests regions \(or attribute dictionaries\) "
                                         rf"{MAX_NESTING + 1} deep, counting the braces {{ }} of the module \(implicit "
                                         rf"or not\) and its functions; hloforge accepts at most {MAX_NESTING}"):
        hf.Module.parse(nested_ifs(MAX_NESTING - 1))
    with pytest.raises(ValueError, match=rf"nests regions .* {MAX_NESTING + 1} deep"):
        hf.Module.parse("module {\n" + nested_ifs(MAX_NESTING - 1) + "}\n")


def test_bracket_nesting_limit_is_accepted_and_one_more_refused():
    def text(n):  # (the implicit module and the attribute dictionary are two levels)
        return f'func.func @main() attributes {{x = {"[" * n}{"]" * n}}} {{\n  return\n}}'

    hf.Module.parse(text(MAX_BRACKETS - 2))
    with pytest.raises(ValueError, match=rf"nests brackets \({{, \[ and \( together\) {MAX_BRACKETS + 1} deep; "
                                         rf"hloforge accepts at most {MAX_BRACKETS}"):
        hf.Module.parse(text(MAX_BRACKETS - 1))


def test_thousands_of_levels_are_refused_before_mlir_parses_them(child_output, deep_file):
    path = deep_file
    out = child_output["thousands"]
    assert out.count("ValueError Module.parse: the text nests regions (or attribute dictionaries) 4002 deep") == 2
    assert "nests brackets ({, [ and ( together) 20002 deep" in out
    cli = subprocess.run([os.path.join(os.path.dirname(sys.executable), "hloforge"), "inspect", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode > 0 and "4002 deep" in cli.stderr, (cli.returncode, cli.stderr[-2000:])


def test_bytecode_nested_too_deep_is_refused():
    from jaxlib.mlir import ir
    from hloforge.frontend.context import make_context, write_bytecode
    deep = ir.Module.parse(nested_ifs(300), context=make_context())  # (MLIR itself, below its own limit)
    with pytest.raises(ValueError, match=r"Module.parse: the text nests regions .* 302 deep"):
        hf.Module.parse(write_bytecode(deep))  # (read as text in a child process, then measured)


def test_everything_but_xla_works_at_the_nesting_limit():
    m = hf.Module.parse(nested_ifs(MAX_NESTING - 2))
    assert len(list(m.walk())) == sum(m.op_counts().values())
    m.summary()
    m.graph()
    m.clone()
    for data in (m.to_bytecode(), m.to_portable()):
        assert hf.Module.parse(data).op_counts() == m.op_counts()
    m.optimize()
    assert m.op_counts()["stablehlo.if"] == MAX_NESTING - 2


def test_xla_nesting_limit_is_accepted_and_one_more_refused(child_output):
    out = child_output["xla_nesting"]
    lines = out.strip().splitlines()
    assert lines[0] == "ok 3.0"
    for line, depth in zip(lines[1:], (XLA_MAX_DEPTH + 1, MAX_NESTING - 2)):
        assert line == (f"ValueError compile: regions nest {depth} deep in @main; XLA takes at most {XLA_MAX_DEPTH} "
                        f"(its converter recurses once per region and overflows its stack near 200)")


def test_calls_inside_nested_regions_count_toward_xla_depth():
    """A chain called from inside regions is inlined into them: the regions it brings nest deeper."""
    inner = nested_ifs(XLA_MAX_DEPTH).replace("@main", "@deep").replace("func.func", "func.func private")
    text = (f"func.func @main(%p: tensor<i1>, %a: {T}) -> {T} {{\n"
            f"  %0 = \"stablehlo.if\"(%p) ({{\n"
            f"    %1 = call @deep(%p, %a) : (tensor<i1>, {T}) -> {T}\n"
            f"    \"stablehlo.return\"(%1) : ({T}) -> ()\n"
            f"  }}, {{\n    \"stablehlo.return\"(%a) : ({T}) -> ()\n  }}) : (tensor<i1>) -> {T}\n"
            f"  return %0 : {T}\n}}\n" + inner)
    with pytest.raises(ValueError, match=rf"compile: regions nest {XLA_MAX_DEPTH + 1} deep in @main once its calls "
                                         rf"are inlined; XLA takes at most {XLA_MAX_DEPTH}"):
        hf.Module.parse(text).compile()


def test_ad_of_nested_regions_makes_room_beyond_the_recursion_limit(child_output):
    out = child_output["ad_recursion"]
    assert out.strip().splitlines() == ["300", "[3.0, 0.0, 2.0]", "[3.0, 2.0]"]


# ---------------------------------------------------------------- C1: the inliner's cost

def test_a_chain_of_ten_thousand_functions_optimizes_in_seconds():
    m = hf.Module.parse(chain(10_000))
    start = time.perf_counter()
    report = m.optimize()
    assert time.perf_counter() - start < 60  # (about 3 s here; it was 340 s before the OOM)
    assert report.fired["call_of_function"] == 10_000
    counts = m.op_counts()
    assert counts["func.func"] == 1 and "func.call" not in counts and counts["stablehlo.add"] == 10_000
    assert float(m.compile()(np.float32(0.5))) == 10_000.5


def test_inline_copies_each_callee_once_per_call_site():
    m = hf.Module.parse(chain(3000))
    before = sum(m.op_counts().values())
    report = m.optimize("inline")  # (private functions are left as they are: symbol-dce drops them)
    assert report.fired["call_of_function"] == 3000
    assert sum(m.op_counts().values()) < 2 * before, "linear, not the quadratic of inlining into every function"
    m.optimize("symbol-dce")
    assert m.op_counts()["func.func"] == 1 and float(m.compile()(np.float32(0))) == 3000.0


DIAMOND = (fn("main", call("f") + "\n" + call("g", "%0", "%1") + f"\n  return %1 : {T}", private=False)
           + fn("f", call("h") + "\n" + call("h", "%0", "%1") + f"\n  return %1 : {T}")
           + fn("g", call("h") + "\n" + RET)
           + fn("h", f"  %c = stablehlo.constant dense<3.0> : {T}\n  %0 = stablehlo.multiply %a, %c : {T}\n" + RET))


def test_a_function_called_from_several_places_is_copied_into_each():
    m = hf.Module.parse(DIAMOND)
    x = np.float32(0.25)
    want = float(m.compile()(x))
    assert want == 0.25 * 27
    report = m.optimize("inline,symbol-dce")
    assert report.fired["call_of_function"] == 5, "f, g, and h twice in f's copy and once in g's"
    assert m.op_counts()["func.func"] == 1 and m.op_counts()["stablehlo.multiply"] == 3
    assert float(m.compile()(x)) == want
    assert float(hf.Module.parse(DIAMOND).vjp().compile()(x, np.float32(1))[1]) == 27.0


def test_inlining_that_would_copy_bodies_millions_of_times_is_declined():
    n = 22  # each function calls the next twice: 2**22 copies
    text = fn("main", call("f0") + "\n" + RET, private=False)
    for i in range(n):
        text += fn(f"f{i}", call(f"f{i + 1}") + "\n" + call(f"f{i + 1}", "%0", "%1") + f"\n  return %1 : {T}")
    text += fn(f"f{n}", f"  %0 = stablehlo.add %a, %a : {T}\n" + RET)
    m = hf.Module.parse(text)
    with pytest.warns(RuntimeWarning, match=r"inline: @main keeps its calls: inlining them would copy function bodies "
                                            r"8388607 times \(more than 1000000\)"):
        report = m.optimize("inline")
    assert report.fired["call_of_function"] == 0 and m.op_counts()["func.call"] == 2 * n + 1


# ---------------------------------------------------------------- the entry function

PRIVATE_MAIN = f"func.func private @main(%x: {T}) -> {T} {{\n  %0 = stablehlo.add %x, %x : {T}\n  return %0 : {T}\n}}\n"


def test_a_private_entry_function_is_kept_by_optimize_and_refused_by_compile():
    m = hf.Module.parse(PRIVATE_MAIN)
    m.optimize()
    assert m.op_counts()["func.func"] == 1 and "private @main" in m.text
    with pytest.raises(ValueError, match=r"compile: the entry function @main is private, and XLA compiles only a "
                                         r"public @main \(the module has no public function; private: @main\): make "
                                         r"@main public \(drop `private`\)"):
        m.compile()
    public = hf.Module.parse(PRIVATE_MAIN.replace("private ", ""))
    assert float(public.compile()(np.float32(2))) == 4.0


def test_a_module_of_private_functions_names_them():
    text = PRIVATE_MAIN.replace("@main", "@helper") + PRIVATE_MAIN.replace("@main", "@other")
    with pytest.raises(ValueError, match=r"module has no public function to use as the entry point "
                                         r"\(private: @helper, @other\)"):
        hf.Module.parse(text)


def test_no_warning_for_ordinary_inlining():
    m = hf.Module.parse(chain(5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.optimize()
    assert float(m.compile()(np.float32(0))) == 5.0
