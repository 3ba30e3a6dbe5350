"""The public tile operations, one module per group of ops.

Each function's body is the interpreter's implementation (the shared rule, then NumPy); the
compiler attaches its typing and lowering to the same function objects.
"""
