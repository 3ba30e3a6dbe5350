"""Run the examples of cuTile's documented API (its stub file, ``cuda_tile_stub.py``) on the
GPU with numba_tile, unchanged, and compare what they print with the output the stub
documents::

    python tests/run_stub_examples.py ../shared/spec/cuda_tile_stub.py [--jobs 8] [-v]

The stub's docstrings hold Sphinx ``testcode`` blocks, each followed by its ``testoutput``;
some docstrings are made per op by a decorator (``{op_name}``), so the stub is imported
(with stand-ins for the private ``cuda.tile`` modules it imports) and the docstrings read
from the objects. A ``kernel_wrapper.py`` example is the body of a kernel launched on one
block; a ``setup_only.py`` example is a whole program with ``ct``, ``torch``, ``np`` and
``stream`` defined. Each example runs in its own process (a kernel's ``print`` writes to
the process's C stdout). The exit status is the number of examples whose output differs
or that fail. An example documenting an error passes where the same error is raised
(its message matching the documented one, ``...`` standing for any text).
"""

import argparse
import concurrent.futures
import enum
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
import types

SETUP = ("import math\nimport numpy as np\nimport torch\nimport numba_tile as ct\n"
         "stream = torch.cuda.current_stream()\n")


def _stand_ins():
    """The private ``cuda.tile`` modules the stub imports, made of numba_tile's names."""
    import numba_tile as ct

    def identity(fn=None, **_):
        return fn if fn is not None else (lambda f: f)

    modules = {
        "cuda": {}, "cuda.tile": {},
        "cuda.tile._memory_model": {"MemoryOrder": ct.MemoryOrder,
                                    "MemoryScope": ct.MemoryScope},
        "cuda.tile._execution": {"function": identity, "stub": identity},
        "cuda.tile._datatype": {"DType": ct.DType, "int32": ct.int32, "int64": ct.int64},
        "cuda.tile._numeric_semantics": {"RoundingMode": ct.RoundingMode,
                                         "PaddingMode": ct.PaddingMode},
    }
    saved = {name: sys.modules.get(name) for name in modules}
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        module.__path__ = []
        sys.modules[name] = module
    return saved


def _docstrings(stub_path):
    """Every docstring of the stub's module-level functions, classes and their members."""
    saved = _stand_ins()
    try:
        spec = importlib.util.spec_from_file_location("cuda_tile_stub", stub_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # (its dataclasses look their module up)
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("cuda_tile_stub", None)
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
    seen, docs = set(), []

    def add(name, obj):
        doc = getattr(obj, "__doc__", None)
        if isinstance(doc, str) and doc not in seen:
            seen.add(doc)
            docs.append((name, doc))

    for name, obj in vars(module).items():
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        add(name, obj)
        if inspect.isclass(obj) and not issubclass(obj, enum.Enum):
            for member, value in vars(obj).items():
                if not member.startswith("_") or member in ("__init__", "__call__"):
                    add(f"{name}.{member}", value)
    return docs


_DIRECTIVE = re.compile(r"^(\s*)\.\. (testcode|testoutput)::\s*$")


def _blocks(doc):
    """``[(kind, options, text)]`` of the ``testcode`` and ``testoutput`` blocks of a
    docstring (dedented; the options are the ``:name: value`` lines)."""
    lines = textwrap.dedent(doc).splitlines()
    found, i = [], 0
    while i < len(lines):
        match = _DIRECTIVE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, kind = len(match.group(1)), match.group(2)
        i += 1
        options = {}
        while i < len(lines) and lines[i].strip().startswith(":"):
            key, _, value = lines[i].strip()[1:].partition(":")
            options[key.strip()] = value.strip()
            i += 1
        body = []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        found.append((kind, options, textwrap.dedent("\n".join(body)).strip("\n")))
    return found


def examples(stub_path):
    """``[(name, program, expected output)]`` of every example of the stub."""
    result = []
    for name, doc in _docstrings(stub_path):
        blocks = _blocks(doc)
        for k, (kind, options, text) in enumerate(blocks):
            if kind != "testcode":
                continue
            expected = blocks[k + 1][2] if k + 1 < len(blocks) and \
                blocks[k + 1][0] == "testoutput" else ""
            if options.get("template") == "kernel_wrapper.py":
                program = (SETUP + "@ct.kernel\ndef kernel():\n" +
                           textwrap.indent(text, "    ") +
                           "\nct.launch(stream, (1,), kernel, ())\ntorch.cuda.synchronize()\n")
            else:
                program = SETUP + text + "\ntorch.cuda.synchronize()\n"
            result.append((f"{name}#{k}", program, expected))
    return result


def _normalized(text):
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _raised_as_documented(expected, stderr):
    """Whether the error a child reported is the one an example documents: its last line
    ``Name: message``, the name ending the error's (cuTile's ``TileStaticAssertionError``
    documented as ``StaticAssertionError``), ``...`` in the message matching anything."""
    name, _, message = expected.strip().splitlines()[-1].partition(": ")
    pattern = ".*".join(re.escape(part) for part in message.strip().split("..."))
    raised = [line for line in stderr.splitlines() if re.match(r"[\w.]+Error: ", line)]
    if not raised:
        return False
    got_name, _, got_message = raised[-1].partition(": ")
    return got_name.endswith(name) and re.fullmatch(pattern, got_message.strip()) is not None


def run(example, timeout=300):
    """``(name, passed, report)`` of one example run in a child process (from a file: tile
    code needs its source)."""
    import tempfile
    name, program, expected = example
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "example.py")
        with open(path, "w") as file:
            file.write(program)
        child = subprocess.run([sys.executable, path], capture_output=True, text=True,
                               timeout=timeout)
    output = child.stdout
    if expected.startswith("Traceback (most recent call last):"):
        passed = child.returncode != 0 and _raised_as_documented(expected, child.stderr)
    else:
        passed = child.returncode == 0 and _normalized(output) == _normalized(expected)
    report = (f"--- {name}: {'ok' if passed else 'FAILED'} (exit {child.returncode})\n"
              f"{program}\n--- expected:\n{expected}\n--- got:\n{output}\n"
              f"{child.stderr[-3000:]}")
    return name, passed, report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stub", help="path of cuda_tile_stub.py")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("-v", "--verbose", action="store_true", help="print every report")
    options = parser.parse_args(argv)
    found = examples(options.stub)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        for name, passed, report in pool.map(run, found):
            failed += not passed
            if options.verbose or not passed:
                print(report)
    print(f"{len(found) - failed} of {len(found)} examples of the stub print what it "
          f"documents; {failed} differ or fail")
    return min(failed, 255)


if __name__ == "__main__":
    sys.exit(main())
