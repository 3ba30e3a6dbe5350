"""The frontend: rewrites of a kernel's Numba IR around type inference (helpers inlined,
constant branches decided, ``static_iter`` loops unrolled, device output, the loads that feed
``mma`` pipelined, product waits deferred, index tiles asked for their reader's layout, the
products that run on found). :mod:`.passes` declares their order and what each needs.
"""
