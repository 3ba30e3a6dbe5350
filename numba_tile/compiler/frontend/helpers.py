"""Plain Python helpers called from kernels are inlined into them before typing.

The kernel is compiled from a copy of its function whose globals and closure cells hold, in
place of each helper of the user's code (or ``@ct.function``), a numba-cuda device function
marked ``inline="always"``: Numba's inlining pass then splices the helper's IR into the
kernel, where our typing applies to it. Helpers of helpers are handled the same way.
"""

import itertools
import types

from numba import cuda

from ...rules.context_managers import generator_function
from ...rules.global_values import global_value_error
from ...source import static_expressions
from ...source.source_code import closure_for, rewritten_code
from ...source.tile_functions import tile_function
from ...source.user_code import is_user_code
from ..compile_state import current
from ..typing.rewrite_errors import compiled_rewrite_error
from ..typing.static_expressions import compiled_static_assert, compiled_static_eval, \
    compiled_static_raise
from ..typing.static_iteration import compiled_static_condition, compiled_static_iter
from ..typing.global_reads import NotAConstant
from ..typing.context_manager_values import ContextManagerFunction
from . import variadic, with_blocks


# (code, expressions compiled as code) -> (rewritten code or None, expression keys): the
# source of a function is parsed once per process, as Python compiles it once
_REWRITTEN = {}


class InlineHelpers:
    """Memoized rewriting of functions, module globals and modules (one per compilation)."""

    def __init__(self):
        self._globals = {}
        self._converted = {}  # id of a module's globals -> the names converted so far
        self._dispatchers = {}
        self._modules = {}
        # numbers the inlined with blocks: their names (globals shared by the functions of
        # a module among them) differ in the whole compile
        self._inlined_blocks = itertools.count()

    def function(self, fn):
        """``fn`` re-bound to rewritten globals and closure, its source rewritten
        (:meth:`_rewritten_code`)."""
        closure = None
        if fn.__closure__ is not None:
            closure = tuple(self._cell(cell, fn) for cell in fn.__closure__)
        code = self._rewritten_code(fn)
        if code is not None and closure is not None:
            closure = closure_for(code, fn, closure)
        final = code or fn.__code__
        rebound = types.FunctionType(final, self.globals_for(fn.__globals__,
                                                             _global_names(final)),
                                     fn.__name__, fn.__defaults__, closure)
        rebound.__kwdefaults__ = fn.__kwdefaults__
        _record_globals(rebound.__code__, rebound.__globals__)
        return rebound

    def _rewritten_code(self, fn):
        """``fn``'s code with its ``with`` blocks inlined (:mod:`.with_blocks`), its
        ``static_eval`` calls and its calls with ``**`` rewritten
        (:mod:`numba_tile.source.static_expressions`, :mod:`.variadic`), or None (it has none of
        them); the namespace each static expression reads is recorded in the compilation,
        the globals the inlined context managers read are added to ``fn``'s."""
        code = fn.__code__
        withs = with_blocks.has_with(code)
        # (an inlined context manager may bring static expressions and ``**`` calls)
        static = withs or static_expressions.mentions_static_construct(code)
        unpacking = withs or variadic.has_keyword_unpacking(code)
        if not (static or unpacking):
            return None
        compilation = current()
        cache_key = (code, frozenset(compilation.static_as_code),
                     frozenset(compilation.static_globals))
        injected = {}
        # (with blocks are rewritten by what fn's names hold: for this compile only)
        if withs or cache_key not in _REWRITTEN:
            keys = []

            def transform(node):
                changed = withs and with_blocks.WithBlocks(
                    fn, injected, compilation.rewrite_errors,
                    self._inlined_blocks).rewrite_function(node)
                if static:
                    keys.extend(static_expressions.rewrite(
                        node, code.co_filename, (code, "compile"),
                        as_code=compilation.static_as_code,
                        as_global=frozenset(compilation.static_globals)))
                changed = unpacking and variadic.rewrite_unpacking_calls(node) or changed
                return bool(keys) or changed
            rewritten = rewritten_code(fn, transform), tuple(keys)
            if withs:
                new_code, keys = rewritten
            else:
                _REWRITTEN[cache_key] = rewritten
        if not withs:
            new_code, keys = _REWRITTEN[cache_key]
        if new_code is not None:
            module_globals = self.globals_for(fn.__globals__, ())
            module_globals.update((name, self.value(value)) for name, value in injected.items())
            namespace = static_expressions.namespace_of(fn)
            namespace.update(injected)
            compilation.static_namespaces.update((key, namespace) for key in keys)
        return new_code

    def _cell(self, cell, owner):
        try:
            value = cell.cell_contents
        except ValueError:  # not yet assigned
            return cell
        replaced = self.value(value) if value is not owner else value
        return cell if replaced is value else types.CellType(replaced)

    def globals_for(self, module_globals, names=None):
        """The globals tile code of a module sees: ``module_globals`` with the functions of
        user code among ``names`` (default: all) made inlinable helpers. Only the names a
        compiled function reads are converted, so that host code beside a kernel (a test
        with ``with pytest.raises``, a launcher) is never rewritten as tile code."""
        key = id(module_globals)
        if key in self._globals:
            self._convert(module_globals, names)
        if key not in self._globals:
            new = dict(module_globals)
            self._globals[key] = new
            self._converted[key] = set()
            new[static_expressions.CALL_NAME] = compiled_static_eval
            new[static_expressions.ASSERT_NAME] = compiled_static_assert
            new[static_expressions.RAISE_NAME] = compiled_static_raise
            new[static_expressions.ITER_NAME] = compiled_static_iter
            new[static_expressions.CONDITION_NAME] = compiled_static_condition
            new[variadic.CALL_NAME] = variadic.call_unpacked
            new[with_blocks.ERROR_NAME] = compiled_rewrite_error
            for static_key, value in current().static_globals.items():
                new[static_expressions.value_name(static_key)] = self.value(value)
            self._convert(module_globals, names)
        return self._globals[key]

    def _convert(self, module_globals, names):
        key = id(module_globals)
        new, done = self._globals[key], self._converted[key]
        for name in module_globals if names is None else names:
            if name in done or name.startswith("__") or name not in module_globals:
                continue
            done.add(name)
            new[name] = self.value(module_globals[name])

    def value(self, value):
        """What a global or closure value of tile code becomes for the compiler (an array,
        which only a kernel argument may be, a stand-in whose typing is cuTile's error)."""
        if global_value_error(value) is not None:
            return NotAConstant(value)
        generator = generator_function(value)
        if generator is not None and is_user_code(generator):
            # a contextlib.contextmanager helper called outside a with (a with inlines it)
            return ContextManagerFunction(generator)
        is_op = (getattr(value, "__module__", None) or "").startswith(
            "numba_tile.language") and not hasattr(value, "__numba_tile_function__")
        if isinstance(value, types.FunctionType) and not is_op and (
                is_user_code(value) or hasattr(value, "__numba_tile_function__")):
            return self._dispatcher(tile_function(value))
        if isinstance(value, types.ModuleType) and (
                is_user_code(value) or value.__name__ == "numba_tile" or
                value.__name__.startswith("numba.cuda")):
            # (numba.cuda's: its SIMT intrinsics are cuTile's error where tile code reads
            # one, cuda.threadIdx, as a global of a user module's would be)
            # (numba_tile's own functions written as tile code, ct.scan, are helpers too)
            if id(value) not in self._modules:
                self._modules[id(value)] = self._module_proxy(value)
            return self._modules[id(value)]
        return value

    def _module_proxy(self, module):
        """A stand-in for a user module that tile code reads: an attribute is converted
        when tile code first reads it (a module ``__getattr__``), so that the module's host
        code (launchers, tests) is never rewritten as tile code."""
        proxy = types.ModuleType(module.__name__, module.__doc__)
        proxy.__dict__.update((name, value) for name, value in vars(module).items()
                              if name.startswith("__") and name != "__getattr__")

        def converted_attribute(name):
            if name.startswith("__"):
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            value = self.value(getattr(module, name))
            setattr(proxy, name, value)
            return value
        proxy.__getattr__ = converted_attribute
        return proxy

    def inlinable(self, fn):
        """``fn`` as a helper inlined where it is called, whatever its module (a function
        of a dataclass, :mod:`.dataclass_members`)."""
        return self._dispatcher(fn)

    def _dispatcher(self, fn):
        if id(fn) not in self._dispatchers:
            self._dispatchers[id(fn)] = None  # a recursive helper refers to itself as is
            self._dispatchers[id(fn)] = cuda.jit(device=True, inline="always")(
                self.function(fn))
            # a static expression's value that is this function, put in the globals of its
            # own module while it was being made (static_eval(helper) in that module)
            static_names = {static_expressions.value_name(key)
                            for key in current().static_globals}
            for module_globals in self._globals.values():
                for name in static_names & module_globals.keys():
                    if module_globals[name] is fn:
                        module_globals[name] = self._dispatchers[id(fn)]
        return self._dispatchers[id(fn)] or fn


def _global_names(code):
    """The global names ``code`` and the functions defined in it read."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def _record_globals(code, module_globals):
    """Note the globals of ``code`` and of the functions defined in it, for closures
    inlined away from their function (:mod:`.closures`)."""
    current().code_globals[code] = module_globals
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _record_globals(constant, module_globals)


def kernel_for_compilation(fn):
    """The kernel function with its helpers made inlinable."""
    helpers = InlineHelpers()
    current().static_helpers = helpers
    return helpers.function(fn)
