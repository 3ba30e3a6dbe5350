"""Launch plans: straight-line Python written once per kernel and argument signature, so
that a cached launch does little more than read its arrays and call the driver.

The first launch of a signature goes through :func:`numba_tile.runtime.arguments.quick_signature`
(a loop over the arguments that builds a key, then a dictionary lookup). After it,
:func:`make_plan` writes a function for that signature: a comparison of each argument's
class, dtype and rank with the ones it was made for, each tensor's pointer, shape and
strides read once, the parameter buffer packed from them in one call, and the driver
called. A plan that meets anything else (another dtype, an unaligned array, a value that
does not fit its field, a grid not seen before that is not valid) returns False, and the
launch goes the general way, which reports the errors. ``tests/test_launch_plans.py``
checks that a plan takes exactly the launches whose
:func:`~numba_tile.runtime.arguments.quick_signature` key is its own, with the same values.

>>> from numba_tile.runtime.launch_plans import plan_source
>>> print(plan_source(((int, 64),), (64,)).splitlines()[5])
    if type(a0) is not int or a0 != 64:
"""

import struct

from .arguments import interface_entry, torch_tensor_classes
from ..partitions import Partition

MAX_PLANS = 4  # per kernel: launch loops alternate between a few signatures
_UNSEEN = object()  # the grid and stream of a plan that has not launched yet
_INT32 = 2**31


def plan_source(key, kernel_args, *, tensor_maps=False):
    """The source of the plan for ``kernel_args``, whose
    :func:`~numba_tile.runtime.arguments.quick_signature` key is ``key``; None where a plan does
    not take one of them (a partition). ``tensor_maps``: the kernel's parameters end with
    tensor maps made from the values (``encode_maps``).

    >>> from numba_tile.runtime.launch_plans import plan_source
    >>> "type(a0) is not float" in plan_source((float,), (0.5,))
    True
    """
    checks, reads, values = [], [], []
    for position, (entry, value) in enumerate(zip(key, kernel_args)):
        name = f"a{position}"
        if type(value) is Partition:
            return None
        if type(value) in torch_tensor_classes():
            checks.append(f"type({name}) is not C{position}")
            lines, names = _tensor_reads(position, entry[1], entry[2], value.element_size())
            reads += lines
            values += names
        elif isinstance(entry, tuple) and isinstance(entry[0], str):  # array interface
            checks.append(f"type({name}) is not C{position}")
            reads += [f"f{position} = interface_entry({name})",
                      f"if f{position} is None or f{position}[0] != K{position}:",
                      "    return False"]
            values.append(f"*f{position}[1]")
        elif isinstance(entry, tuple):  # a Constant's int or bool: the kernel has its value
            checks.append(f"type({name}) is not {entry[0].__name__} or {name} != {entry[1]!r}")
            values.append(name)
        elif entry is int:
            checks.append(f"type({name}) is not int or not {-_INT32} <= {name} < {_INT32}")
            values.append(name)
        else:  # bool, float
            checks.append(f"type({name}) is not {entry.__name__}")
            values.append(name)
    count = len(kernel_args)
    lines = ["def plan(stream, grid, args):",
             '    """A launch of one signature; False where it is another."""',
             f"    if type(args) is not tuple or len(args) != {count}:",
             "        return False"]
    if count:
        lines.append(f"    {''.join(f'a{p}, ' for p in range(count))}= args")
    for check in checks:
        lines += [f"    if {check}:", "        return False"]
    lines += [f"    {line}" for line in reads]
    return "\n".join(lines + _launch_lines(", ".join(values), tensor_maps)) + "\n"


def _tensor_reads(position, ndim, aligned, itemsize):
    """Source lines reading the PyTorch tensor ``a<position>``: False unless its dtype,
    device, rank and alignment (:func:`~numba_tile.compiler.types.is_aligned`, unrolled for
    the rank) are the signature's. Its extents and strides become names of their own (a
    tuple of another length does not unpack), which the packing takes as they are."""
    p = f"p{position}"
    extents = [f"n{position}_{axis}" for axis in range(ndim)]
    strides = [f"t{position}_{axis}" for axis in range(ndim)]
    last = ndim - 1
    rule = [f"not {p} & 15", f"{strides[last]} == 1",
            f"not {extents[last]} * {itemsize} & 15"]
    rule += [f"not {strides[axis]} * {itemsize} & 15 and "
             f"({strides[axis]} > 0 or {extents[axis]} == 1)" for axis in range(last)]
    return [f"if a{position}.dtype is not D{position} or not a{position}.is_cuda:",
            "    return False",
            "try:",
            f"    {''.join(name + ', ' for name in extents)}= a{position}.shape",
            f"    {''.join(name + ', ' for name in strides)}= a{position}.stride()",
            "except ValueError:  # another rank",
            "    return False",
            f"{p} = a{position}.data_ptr()",
            f"if {'' if aligned else 'not '}not ({' and '.join(rule)}):",
            "    return False"], [p, *extents, *strides]


def _launch_lines(values, tensor_maps):
    """The end of a plan: the grid and stream, the packing, the driver call."""
    if tensor_maps:
        pack = [f"            flat = [{values}]",
                "            pack(buffer, 0, *flat, *encode_maps(flat))"]
    else:
        pack = [f"            pack(buffer, 0{', ' if values else ''}{values})"]
    return [
        # the grid and stream of the plan's last launch, the very objects (a launch loop
        # passes the same ones): their driver arguments without reading them again
        "    seen_grid, seen_stream, arguments = last[0]",
        "    if grid is not seen_grid or stream is not seen_stream:",
        "        if type(grid) is not tuple or stream is None:",
        "            return False",
        "        for n in grid:",
        "            if type(n) is not int:",
        "                return False",
        "        handle = stream if type(stream) is int else stream_handle(stream)",
        "        arguments = driver_arguments.get((grid, handle))",
        "        if arguments is None:",
        "            if not valid_grid(grid):",
        "                return False",
        "            arguments = target.driver_arguments(grid, handle)",
        "        last[0] = (grid, stream, arguments)  # (one store: threads see all or none)",
        "    with lock:",
        "        try:",
        *pack,
        "        except struct_error:  # a shape beyond int32: the general way says so",
        "            return False",
        "        status = start(*arguments)",
        "    return not status or target.failed(status)"]


def make_plan(key, kernel_args, target, *, stream_handle, valid_grid):
    """The plan (``plan(stream, grid, args) -> bool``) of a signature for ``target``, the
    loaded kernel (:class:`numba_tile.runtime.gpu_launch.LoadedKernel`, or a stand-in with its
    attributes: ``buffer``, ``lock``, ``pack``, ``start``, ``arguments``,
    ``driver_arguments(grid, handle)``, ``failed(status)``, ``encode_maps(flat)``,
    ``tensor_maps``); None where the arguments take no plan.

    >>> import threading
    >>> from numba_tile.runtime.launch_plans import make_plan
    >>> class Target:  # records what a launch would pack and start
    ...     buffer, lock, tensor_maps, arguments = None, threading.Lock(), (), {}
    ...     def pack(self, buffer, offset, *values): self.packed = values
    ...     def start(self, *arguments): return 0
    ...     def driver_arguments(self, grid, handle): return (grid, handle)
    >>> target = Target()
    >>> plan = make_plan((int, float), (3, 0.5), target, stream_handle=int,
    ...                  valid_grid=lambda grid: True)
    >>> plan(0, (4,), (7, 2.5)), target.packed
    (True, (7, 2.5))
    >>> plan(0, (4,), (7, 2))  # an int where the signature has a float
    False
    """
    source = plan_source(key, kernel_args, tensor_maps=bool(target.tensor_maps))
    if source is None:
        return None
    namespace = {"interface_entry": interface_entry, "stream_handle": stream_handle,
                 "valid_grid": valid_grid, "struct_error": struct.error, "target": target,
                 "driver_arguments": target.arguments, "lock": target.lock,
                 "pack": target.pack, "buffer": target.buffer, "start": target.start,
                 "encode_maps": getattr(target, "encode_maps", None),
                 "last": [(_UNSEEN, _UNSEEN, None)]}
    for position, (entry, value) in enumerate(zip(key, kernel_args)):
        namespace[f"C{position}"] = type(value)
        if isinstance(entry, tuple):
            namespace[f"D{position}"] = entry[0]
            namespace[f"K{position}"] = entry
    exec(compile(source, f"<launch plan of {len(kernel_args)} arguments>", "exec"), namespace)
    return namespace["plan"]
