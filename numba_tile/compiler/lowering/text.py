"""Lowering of text in tile code (see :mod:`~numba_tile.compiler.typing.text`): its run-time
value is a struct of the values it formats."""

from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.cuda.models import register_model

from ..abstract import RUN_TIME, constant_of
from ..typing.text import TextType, is_printable_value
from .registry import lower


@register_model(TextType)
class TextModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [(f"v{i}", t) for i, t in enumerate(fe_type.values)])



def text_values(builder, text_type, value):
    """The run-time values of a text (LLVM values, in the order of ``text_type.values``)."""
    return [builder.extract_value(value, i) for i in range(len(text_type.values))]


def tuple_values(builder, tuple_type, value):
    """The run-time items of a tuple, nested tuples' included, in the order of the values of
    its text (:func:`~numba_tile.compiler.typing.text.tuple_text`)."""
    values = []
    for index, item in enumerate(tuple_type):
        if constant_of(item, RUN_TIME) is not RUN_TIME:
            continue
        element = builder.extract_value(value, index)
        if isinstance(item, types.BaseTuple):
            values.extend(tuple_values(builder, item, element))
        else:
            values.append(element)
    return values


@lower("numba_tile.text", types.VarArg(types.Any))
def lower_text(context, builder, sig, args):
    """Text values are the run-time values of the operands, in order; constants fold."""
    result = sig.return_type
    if not isinstance(result, TextType):
        return context.get_constant_null(result)
    values = []
    for numba_type, value in zip(sig.args, args):
        if isinstance(numba_type, TextType):
            values.extend(text_values(builder, numba_type, value))
        elif isinstance(numba_type, types.BaseTuple):
            values.extend(tuple_values(builder, numba_type, value))
        elif is_printable_value(numba_type):
            values.append(value)
    packed = ir.Constant(context.get_value_type(result), ir.Undefined)
    for index, value in enumerate(values):
        packed = builder.insert_value(packed, value, index)
    return packed


@lower("numba_tile.str_join", types.StringLiteral, types.Any)
def lower_join(context, builder, sig, args):
    """A join of constant strings (folded by the typing: a constant), or of texts: the
    values of its items' texts, in order."""
    result, items_type = sig.return_type, sig.args[1]
    if not isinstance(result, TextType):
        return context.get_constant_null(result)
    values = []
    for index, item in enumerate(items_type):
        if isinstance(item, TextType):
            values.extend(text_values(builder, item, builder.extract_value(args[1], index)))
    packed = ir.Constant(context.get_value_type(result), ir.Undefined)
    for index, value in enumerate(values):
        packed = builder.insert_value(packed, value, index)
    return packed
