"""Typing of device output: ``print``/``ct.print`` and ``ct.assert_`` calls are rewritten before
typing (:mod:`~numba_tile.compiler.frontend.device_output`) into the calls typed here, as is
``ct.printf``; ``ct.static_iter`` loops are unrolled before typing, so its name only needs a
type."""

import inspect

from numba.core import types
from numba.core.typing import signature
from numba.cuda.typing.templates import AbstractTemplate

from ...errors import TileTypeError
from ...language import debugging
from ...rules.calls import bind_arguments
from ...rules.formatting import check_assert_arguments, check_constant_string, check_printable, \
    check_printf_arguments, printf_format
from ..abstract import RUN_TIME, constant_of, operand
from ..intrinsics import device_assert, device_print
from .templates import registry
from .text import TextType, is_printable_value, tuple_text


class _Rewritten(AbstractTemplate):
    """Calls of ``ct.print``, ``ct.assert_`` and ``ct.static_iter`` are rewritten before
    typing (:mod:`~numba_tile.compiler.frontend.device_output`); these templates only give
    the names a type."""

    prefer_literal = True

    def generic(self, args, kws):
        return None


for _rewritten in (debugging.print, debugging.assert_, debugging.static_iter):
    registry.register_global(_rewritten)(type(f"Tile_{_rewritten.__name__}", (_Rewritten,),
                                              {"key": _rewritten}))


# -- the calls of device output --------------------------------------------------------------
def _constant_string(numba_type, what):
    value = constant_of(numba_type, RUN_TIME)
    check_constant_string(value if value is not RUN_TIME else _rule_operand(numba_type), what)
    return value


def _rule_operand(numba_type):
    """The rule operand of a value, or the Numba type where it is none the rules know."""
    if isinstance(numba_type, types.Omitted):
        return numba_type.value
    try:
        return operand(numba_type)
    except TileTypeError:
        return numba_type


def _check_printable(numba_type):
    check_printable(_rule_operand(numba_type))  # an array: the interpreter's error
    if isinstance(numba_type, (TextType, types.StringLiteral)) or is_printable_value(
            numba_type) or constant_of(numba_type, RUN_TIME) is not RUN_TIME:
        return
    if isinstance(numba_type, types.BaseTuple) and tuple_text(numba_type) is not None:
        return
    raise TileTypeError(f"Cannot print a {numba_type} from tile code")


class DevicePrintTemplate(AbstractTemplate):
    key = device_print
    prefer_literal = True

    def generic(self, args, kws):
        sep, end, *values = args
        _constant_string(sep, "print(sep=...)")
        _constant_string(end, "print(end=...)")
        for value in values:
            _check_printable(value)
        return signature(types.none, *args)


class PrintfTemplate(AbstractTemplate):
    key = debugging.printf
    prefer_literal = True

    def generic(self, args, kws):
        bind_arguments("printf", inspect.signature(debugging.printf), args, kws)
        fmt, *values = args
        check_printf_arguments(printf_format(operand(fmt)), [operand(v) for v in values])
        return signature(types.none, *args)


class DeviceAssertTemplate(AbstractTemplate):
    key = device_assert
    prefer_literal = True

    def generic(self, args, kws):
        condition, message, where = args
        check_assert_arguments(*(_rule_operand(t) for t in (condition, message)))
        if not (is_printable_value(condition) or isinstance(condition, types.Literal)):
            raise TileTypeError(f"ct.assert_() needs a tile or scalar condition, got "
                                f"{condition}")
        if not isinstance(message, (types.NoneType, types.Omitted)):
            _constant_string(message, "The message of ct.assert_()")
        return signature(types.none, *args)


registry.register_global(device_print)(DevicePrintTemplate)
registry.register_global(debugging.printf)(PrintfTemplate)
registry.register_global(device_assert)(DeviceAssertTemplate)
