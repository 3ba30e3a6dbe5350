"""The op rules shared by the interpreter and the compiler (DESIGN.md section 2).

A rule takes abstract operands and returns the result's :class:`~numba_tile.rules.core.Spec`
(dtype, shape, constness), raising the compile-time ``TileError`` that the spec prescribes.
An abstract operand is a :class:`~numba_tile.promotion.Loose` constant or any object with
``dtype``, ``shape``, ``is_constant`` and ``constant_value()``: the interpreter's host tiles
and the compiler's Numba tile types both qualify.
"""
