"""Kernel source: reading a function's source, rewriting its syntax tree and compiling it
again, and the questions both executors ask of user code before running or compiling it.

It sits below the op rules (:mod:`numba_tile.rules`) and imports only the lowest layer
(errors): :mod:`.source_code` (source lines, code compiled again from a changed tree),
:mod:`.static_expressions` (the rewrite of ``static_eval``/``static_assert``/``static_iter``),
:mod:`.static_iter_uses` (where ``static_iter`` may appear), :mod:`.comprehensions` (tuple
comprehensions as unrolled loops), :mod:`.keyword_arguments` (a helper's ``**kwargs``),
:mod:`.user_code` (whose code a function is) and :mod:`.tile_functions` (``ct.function``'s
marker).
"""
