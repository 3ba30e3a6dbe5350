"""Which stores of a variable start a new version of it when Numba reads a kernel's bytecode.

Numba's bytecode interpreter goes through the blocks in the order of their offsets. A store
in a block of the *backbone* (a block every run passes through, outside any loop) starts a
new version of the variable (``a`` becomes ``a.1``): every store and read processed after it
then uses the new name. That is right only where the blocks processed after the store are
those it leads to and dominates. A ``break`` that is the one way out of a ``while True``
loop is on the backbone and outside the loop's body (the loop's body is what leads back to
its head), but the rest of the loop comes after it in the bytecode: the other branch's
store in the loop took the new name, while the head of the loop, reached again, still read
the old one, and the value the loop carried was lost (``a = 20`` in the ``else`` of the
loop's ``if`` never reached the ``a += 3`` of its next iteration).

:data:`PATCHES` keeps the new versions to the blocks where they are right: a backbone block
starts one only where every block after it in the bytecode is one it dominates, and every
block it leads to comes after it (:mod:`.numba_patches` puts this in place while a kernel
compiles).

Compiled, the value the other branch gives is typed where the loop starts again (here a
float32 where the loop entered with an int32):

>>> import numpy as np, numba_tile as ct
>>> @ct.kernel
... def k(x):
...     i, a = 0, 10
...     while True:
...         if ct.bid(0) == i:
...             a += 3
...             break
...         else:
...             a = 20.0
...             i += 1
...     ct.scatter(x, ct.bid(0), a)
>>> ct.compile(k, (np.zeros(2, np.float32),), arch="sm_90")
Traceback (most recent call last):
...
numba_tile.errors.TileTypeError: Type of `a` depends on path taken: Tile[int32,()] (on one ...
...
"""

from numba.cuda.core.byteflow import AdaptCFA


def reached(graph, block):
    """The blocks reachable from ``block`` (itself not included unless on a cycle) in
    ``graph`` (anything with numba's ``successors``: a ``CFGraph``).

    >>> from numba.cuda.core.controlflow import CFGraph
    >>> from numba_tile.compiler.frontend.variable_versions import reached
    >>> graph = CFGraph()
    >>> for node in (0, 1, 2):
    ...     graph.add_node(node)
    >>> graph.add_edge(0, 1); graph.add_edge(1, 2); graph.add_edge(2, 1)
    >>> graph.set_entry_point(0); graph.process()
    >>> sorted(reached(graph, 0)), sorted(reached(graph, 1))
    ([1, 2], [1, 2])
    """
    found, pending = set(), [block]
    while pending:
        for successor, _ in graph.successors(pending.pop()):
            if successor not in found:
                found.add(successor)
                pending.append(successor)
    return found


def _backbone(cfa):
    """numba-cuda's backbone of ``cfa`` (an ``AdaptCFA``), less the blocks whose new
    versions would reach code that does not come after them."""
    graph = cfa.graph
    dominators = graph.dominators()
    blocks = sorted(graph.nodes())
    kept = set()
    for block in cfa._backbone:
        later = {b for b in blocks if b > block}
        if all(block in dominators[b] for b in later) and reached(graph, block) <= later:
            kept.add(block)
    return kept


#: what this module changes in numba-cuda while a kernel compiles (put in place by
#: :mod:`.numba_patches`)
PATCHES = ((AdaptCFA, "backbone", property(_backbone)),)
