"""Lowering of a helper's ``**kwargs`` (:mod:`~numba_tile.compiler.typing.keywords`): the
record is a struct of its values, read at the positions of constant keys."""

import operator

from numba.core import types
from numba.core.datamodel import models
from numba.cuda.models import register_model

from ..abstract import constant_of
from ..typing.keywords import KeywordArgumentsType, pack_keywords
from .registry import lower

register_model(KeywordArgumentsType)(models.TupleModel)


@lower(pack_keywords, types.VarArg(types.Any))
def lower_pack_keywords(context, builder, sig, args):
    return context.make_tuple(builder, sig.return_type, args[1::2])


@lower("numba_tile.starred_tuple", types.BaseTuple)
def lower_starred_tuple(context, builder, sig, args):
    return args[0]


def _entry(builder, record_type, record, key_type):
    return builder.extract_value(record, record_type.index(constant_of(key_type)))


@lower(operator.getitem, KeywordArgumentsType, types.Any)
def lower_getitem(context, builder, sig, args):
    return _entry(builder, sig.args[0], args[0], sig.args[1])


@lower("keywords.get", KeywordArgumentsType, types.VarArg(types.Any))
def lower_get(context, builder, sig, args):
    record_type, key = sig.args[0], constant_of(sig.args[1])
    if key in record_type.names:
        return _entry(builder, record_type, args[0], sig.args[1])
    if len(args) == 3:
        return args[2]
    return context.get_dummy_value()
