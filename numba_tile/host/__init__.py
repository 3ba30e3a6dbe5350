"""Host values: the values of tile code as NumPy holds them on the host, what the ops of
:mod:`numba_tile.language` compute on in the interpreter and what the compiler's static
evaluation sees as constants.

Tiles (:mod:`.tile`), loosely typed constants (:mod:`.scalars`), global arrays and tiled
views (:mod:`.arrays`), raw memory (:mod:`.raw_memory`), ``range`` (:mod:`.loops`), the
elements an indexed access or an atomic touches (:mod:`.element_access`), dtype conversions
and bit patterns in NumPy (:mod:`.conversion`, :mod:`.bit_patterns`), how values print
(:mod:`.printing`) and where tile code is running (:mod:`.context`).

The package sits between the rules (:mod:`numba_tile.rules`, which it follows) and the
language, which imports it: the methods that call ops (``t.reshape(...)``, ``a + b``) are
attached by the language module of each op
(:func:`numba_tile.language.tile_methods.tile_method`), never imported from here. The
interpreter (:mod:`numba_tile.interpreter`) and the compiler both build on it.
"""
