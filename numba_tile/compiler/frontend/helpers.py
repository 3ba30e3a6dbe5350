"""Plain Python helpers called from kernels are inlined into them before typing.

The kernel is compiled from a copy of its function whose globals and closure cells hold, in
place of each helper of the user's code (or ``@ct.function``), a numba-cuda device function
marked ``inline="always"``: Numba's inlining pass then splices the helper's IR into the
kernel, where our typing applies to it. Helpers of helpers are handled the same way.
"""

import types

from ... import static_expressions
from ...interpreter.runner import is_user_code
from ...source_code import closure_for, rewritten_code
from ..compilation import current
from ..typing.static_expressions import compiled_static_assert, compiled_static_eval


# (code, expressions compiled as code) -> (rewritten code or None, expression keys): the
# source of a function is parsed once per process, as Python compiles it once
_REWRITTEN = {}


class InlineHelpers:
    """Memoized rewriting of functions, module globals and modules (one per compilation)."""

    def __init__(self):
        self._globals = {}
        self._dispatchers = {}
        self._modules = {}

    def function(self, fn):
        """``fn`` re-bound to rewritten globals and closure, its ``static_eval`` calls
        rewritten (:mod:`numba_tile.static_expressions`)."""
        closure = None
        if fn.__closure__ is not None:
            closure = tuple(self._cell(cell, fn) for cell in fn.__closure__)
        code = self._static_eval_code(fn)
        if code is not None and closure is not None:
            closure = closure_for(code, fn, closure)
        rebound = types.FunctionType(code or fn.__code__, self.globals_for(fn.__globals__),
                                     fn.__name__, fn.__defaults__, closure)
        rebound.__kwdefaults__ = fn.__kwdefaults__
        return rebound

    @staticmethod
    def _static_eval_code(fn):
        """``fn``'s code with its ``static_eval`` calls rewritten, or None (it has none); the
        namespace each expression reads is recorded in the compilation."""
        code = fn.__code__
        if not static_expressions.mentions_static_construct(code):
            return None
        compilation = current()
        cache_key = (code, frozenset(compilation.static_as_code),
                     frozenset(compilation.static_globals))
        if cache_key not in _REWRITTEN:
            keys = []

            def transform(node):
                keys.extend(static_expressions.rewrite(
                    node, code.co_filename, (code, "compile"),
                    as_code=compilation.static_as_code,
                    as_global=frozenset(compilation.static_globals)))
                return bool(keys)
            _REWRITTEN[cache_key] = rewritten_code(fn, transform), tuple(keys)
        new_code, keys = _REWRITTEN[cache_key]
        if new_code is not None:
            namespace = static_expressions.namespace_of(fn)
            compilation.static_namespaces.update((key, namespace) for key in keys)
        return new_code

    def _cell(self, cell, owner):
        try:
            value = cell.cell_contents
        except ValueError:  # not yet assigned
            return cell
        replaced = self.value(value) if value is not owner else value
        return cell if replaced is value else types.CellType(replaced)

    def globals_for(self, module_globals):
        key = id(module_globals)
        if key not in self._globals:
            new = dict(module_globals)
            self._globals[key] = new
            new[static_expressions.CALL_NAME] = compiled_static_eval
            new[static_expressions.ASSERT_NAME] = compiled_static_assert
            for static_key, value in current().static_globals.items():
                new[static_expressions.value_name(static_key)] = self.value(value)
            for name, value in module_globals.items():
                if not name.startswith("__"):
                    new[name] = self.value(value)
        return self._globals[key]

    def value(self, value):
        """What a global or closure value of tile code becomes for the compiler."""
        is_op = (getattr(value, "__module__", None) or "").startswith("numba_tile.language")
        if isinstance(value, types.FunctionType) and not is_op and (
                is_user_code(value) or hasattr(value, "__numba_tile_function__")):
            return self._dispatcher(value)
        if isinstance(value, types.ModuleType) and is_user_code(value):
            if id(value) not in self._modules:
                proxy = types.ModuleType(value.__name__, value.__doc__)
                self._modules[id(value)] = proxy
                proxy.__dict__.update(self.globals_for(vars(value)))
            return self._modules[id(value)]
        return value

    def _dispatcher(self, fn):
        if id(fn) not in self._dispatchers:
            from numba import cuda
            self._dispatchers[id(fn)] = None  # a recursive helper refers to itself as is
            self._dispatchers[id(fn)] = cuda.jit(device=True, inline="always")(
                self.function(fn))
        return self._dispatchers[id(fn)] or fn


def kernel_for_compilation(fn):
    """The kernel function with its helpers made inlinable."""
    helpers = InlineHelpers()
    current().static_helpers = helpers
    return helpers.function(fn)
