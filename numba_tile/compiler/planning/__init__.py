"""Plans of what the hardware adds, made while typing (they decide types and shared memory)
and followed by the lowering: how each product runs on tensor cores and the layout of its
result (:mod:`.products`), the stages of pipelined loads and their rings (:mod:`.staged_loads`),
and the tensor maps and boxes of the tensor memory accelerator's copies (:mod:`.tma`).

Nothing here builds LLVM IR: the code that carries out these plans is in :mod:`..lowering`
(:mod:`..lowering.mma_sync`, :mod:`..lowering.wgmma`, :mod:`..lowering.staged_loads`,
:mod:`..lowering.async_copies`, :mod:`..lowering.tma`), so typing reads the plans without
importing the lowering.
"""
