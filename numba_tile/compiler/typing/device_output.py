"""Typing of the names of device output: ``ct.print``, ``ct.assert_`` and ``ct.static_iter``
calls are rewritten before typing; the calls they become are typed beside their lowering."""

from numba.cuda.typing.templates import AbstractTemplate

from ...language import debugging
from .templates import registry


class _Rewritten(AbstractTemplate):
    """Calls of ``ct.print``, ``ct.assert_`` and ``ct.static_iter`` are rewritten before
    typing (:mod:`~numba_tile.compiler.frontend.device_output`); these templates only give the names a type."""

    prefer_literal = True

    def generic(self, args, kws):
        return None


for _rewritten in (debugging.print, debugging.assert_, debugging.static_iter):
    registry.register_global(_rewritten)(type(f"Tile_{_rewritten.__name__}", (_Rewritten,),
                                              {"key": _rewritten}))
