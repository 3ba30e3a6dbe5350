"""What the hardware adds: tensor-core products (:mod:`.mma_sync`, :mod:`.wgmma`), the stages
of pipelined loads and their copies (:mod:`.staged_loads`, :mod:`.async_copies`, the tensor
memory accelerator in :mod:`.tma`), and every inline PTX instruction in :mod:`.asm`.
"""
