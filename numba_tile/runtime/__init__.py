"""Everything between ``ct.launch``/``ct.compile`` and the CUDA driver.

- :mod:`.kernel_decorator` (``ct.kernel``, with Numba's launch syntax) and :mod:`.kernels`
  (the kernel object: options, ``ByTarget``, its caches);
- :mod:`.launch` (``ct.launch``, interpreter mode) and :mod:`.grids` (grid checks and
  inference);
- :mod:`.arguments` (argument classification), :mod:`.compile_entry` (``ct.compile``,
  ``ct.compiler_timeout``, the memory cache), :mod:`.disk_cache` and :mod:`.cache_trust`;
- the GPU path: :mod:`.gpu_launch`, :mod:`.launch_plans` (the fast path of a signature seen
  before), :mod:`.loaded_kernels`, :mod:`.driver`, :mod:`.devices` (several GPUs) and
  :mod:`.tensor_maps` (TMA descriptors).
"""
