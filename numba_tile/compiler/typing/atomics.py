"""Typing of the atomics (``ct.atomic_*``) and of raw memory (``Array.get_raw_memory()`` and
the methods of what it returns). The rules are :mod:`numba_tile.rules.atomics` and
:mod:`numba_tile.rules.gather`; the result of an atomic or a ``load_offset`` is laid out as a
gather of the same indices is."""

from numba.core import types
from numba.cuda.typing.templates import AttributeTemplate

from ... import dtypes as d
from ...enums import MemoryOrder, MemoryScope
from ...errors import TileUnsupportedFeatureError
from ...language import atomics
from ...rules import atomics as atomic_rules
from ...rules import gather as gather_rules
from ..abstract import operand
from ..compile_state import current
from ..types import ConstantType, RawMemoryType
from .gather import element_type
from .memory import ArrayAttributes, TiledViewAttributes
from .templates import REQUIRED, bound_method, constant_value, register_template, registry

HOPPER = (9, 0)


def check_target(dtype, op, semantics, what):
    """``TileUnsupportedFeatureError`` (with ``needs``) for what the GPU compiled for lacks:
    bfloat16 atomic add and the cluster scope need sm_90."""
    target = current().target
    if target >= HOPPER:
        return
    lacking = None
    if op == "add" and dtype is d.bfloat16:
        lacking = "an atomic add of bfloat16"
    elif semantics[1] == "cluster":
        lacking = "the CLUSTER memory scope"
    if lacking:
        raise TileUnsupportedFeatureError(
            f"{what}: {lacking} needs compute capability 9.0; this kernel is compiled for "
            f"sm_{target[0]}{target[1]}", needs=HOPPER)


def _infer_rmw(op):
    def infer(values):
        dtype, shape, _, _, semantics = atomic_rules.atomic_rmw(
            op, operand(values["array"]), operand(values["indices"]),
            operand(values["update"]), constant_value(values["check_bounds"]),
            constant_value(values["memory_order"]), constant_value(values["memory_scope"]))
        check_target(dtype, op, semantics, f"atomic_{op}()")
        return element_type(dtype, shape, values["indices"])
    return infer


def infer_cas(values):
    dtype, shape, _, _, _, semantics = atomic_rules.atomic_cas(
        operand(values["array"]), operand(values["indices"]), operand(values["expected"]),
        operand(values["desired"]), constant_value(values["check_bounds"]),
        constant_value(values["memory_order"]), constant_value(values["memory_scope"]))
    check_target(dtype, "cas", semantics, "atomic_cas()")
    return element_type(dtype, shape, values["indices"])


register_template(atomics.atomic_cas, infer_cas)
for _op in atomic_rules.RMW_DTYPES:
    register_template(getattr(atomics, f"atomic_{_op}"), _infer_rmw(_op))


# -- raw memory -------------------------------------------------------------------------------
ArrayAttributes.resolve_get_raw_memory = bound_method(
    "array.get_raw_memory", (), lambda array, values: RawMemoryType(array))

_ORDERING = (("memory_order", MemoryOrder.ACQ_REL), ("memory_scope", MemoryScope.DEVICE))


def infer_load_offset(memory, values):
    shape, _, _, _ = gather_rules.raw_load(memory.dtype, operand(values["offset"]),
                                           operand(values["mask"]),
                                           operand(values["padding_value"]),
                                           operand(values["latency"]))
    return element_type(memory.dtype, shape, values["offset"])


def infer_store_offset(memory, values):
    gather_rules.raw_store(memory.dtype, operand(values["offset"]), operand(values["value"]),
                           operand(values["mask"]), operand(values["latency"]))
    return types.none


def _infer_raw_rmw(op):
    def infer(memory, values):
        dtype, shape, _, _, _, semantics = atomic_rules.raw_rmw(
            op, memory.dtype, operand(values["offset"]), operand(values["update"]),
            operand(values["mask"]), constant_value(values["memory_order"]),
            constant_value(values["memory_scope"]))
        check_target(dtype, op, semantics, f"atomic_{op}_offset()")
        return element_type(dtype, shape, values["offset"])
    return infer


def infer_raw_cas(memory, values):
    dtype, shape, _, _, _, _, semantics = atomic_rules.raw_cas(
        memory.dtype, operand(values["offset"]), operand(values["expected"]),
        operand(values["desired"]), operand(values["mask"]),
        constant_value(values["memory_order"]), constant_value(values["memory_scope"]))
    check_target(dtype, "cas", semantics, "atomic_cas_offset()")
    return element_type(dtype, shape, values["offset"])


@registry.register_attr
class RawMemoryAttributes(AttributeTemplate):
    key = RawMemoryType

    def resolve_dtype(self, memory):
        return ConstantType(memory.dtype)

    resolve_load_offset = bound_method(
        "raw.load_offset", (("offset", REQUIRED), ("mask", None), ("padding_value", 0),
                            ("latency", None)), infer_load_offset)
    resolve_store_offset = bound_method(
        "raw.store_offset", (("offset", REQUIRED), ("value", REQUIRED), ("mask", None),
                             ("latency", None)), infer_store_offset)
    resolve_atomic_cas_offset = bound_method(
        "raw.atomic_cas_offset", (("offset", REQUIRED), ("expected", REQUIRED),
                                  ("desired", REQUIRED), ("mask", None)) + _ORDERING,
        infer_raw_cas)


for _op in atomic_rules.RMW_DTYPES:
    setattr(RawMemoryAttributes, f"resolve_atomic_{_op}_offset", bound_method(
        f"raw.atomic_{_op}_offset", (("offset", REQUIRED), ("update", REQUIRED),
                                     ("mask", None)) + _ORDERING, _infer_raw_rmw(_op)))


def _infer_view_atomic_store(op):
    def infer(view, values):
        atomic_rules.view_atomic_store(op, view, operand(values["index"]),
                                       operand(values["update"]))
        check_target(view.dtype, op, atomic_rules.VIEW_STORE_SEMANTICS,
                     f"TiledView.atomic_store_{op}()")
        return types.none
    return infer


for _op in atomic_rules.VIEW_STORE_OPS:
    setattr(TiledViewAttributes, f"resolve_atomic_store_{_op}", bound_method(
        f"view.atomic_store_{_op}", (("index", REQUIRED), ("update", REQUIRED)),
        _infer_view_atomic_store(_op)))
