"""Sphinx directives that render numba_tile's dtype list and promotion table from the code.

The pages never restate these tables by hand, so they cannot drift from what the package does:

``.. numba-tile-dtype-table::``
    one row per dtype: name, short name, bit width, category, arithmetic or numeric-only,
    and the NumPy type the interpreter stores it in.
``.. numba-tile-promotion-table::``
    the common dtype of every pair of dtypes, as ``numba_tile.promotion.table_dtype`` computes
    it (``ERR``: no implicit promotion).
``.. numba-tile-dtype-data::``
    a ``py:data`` entry for every dtype (used by the API reference, current module
    ``numba_tile``).
"""

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from numba_tile import dtypes as d
from numba_tile.promotion import integer_range, table_dtype

CATEGORY_NAMES = {d.BOOLEAN: "boolean", d.INTEGRAL: "integral", d.FLOAT: "floating-point"}

# Bit layouts of the floating-point formats: (sign bits, exponent bits, mantissa bits, note).
FLOAT_FORMATS = {
    "float16": (1, 5, 10, "IEEE 754 binary16 (half precision)"),
    "float32": (1, 8, 23, "IEEE 754 binary32 (single precision)"),
    "float64": (1, 11, 52, "IEEE 754 binary64 (double precision)"),
    "bfloat16": (1, 8, 7, "the exponent range of float32 with 8 significant bits"),
    "tfloat32": (1, 8, 10, "the tensor-core input format, kept in a 32-bit container"),
    "float8_e4m3fn": (1, 4, 3, "finite values and NaN, no infinities"),
    "float8_e5m2": (1, 5, 2, "IEEE-like, with infinities and NaN"),
    "float8_e8m0fnu": (0, 8, 0, "powers of two, used as block scale factors"),
    "float8_e5m3fnu": (0, 5, 3, "non-negative finite values and NaN"),
    "float4_e2m1fn": (1, 2, 1, "finite values only; one element per byte in arrays"),
}


def category_name(dtype):
    return CATEGORY_NAMES[dtype.category]


def describe_dtype(dtype):
    """One sentence about ``dtype`` for the API reference."""
    if dtype.is_bool:
        return "Boolean (``True``/``False``), stored in 8 bits."
    if dtype.is_integral:
        low, high = integer_range(dtype)
        kind = "signed" if dtype.is_signed else "unsigned"
        return f"{dtype.bitwidth}-bit {kind} integer, from {low} to {high}."
    sign, exponent, mantissa, note = FLOAT_FORMATS[dtype.name]
    fields = [_bits(exponent, "exponent"), _bits(mantissa, "mantissa")]
    fields.insert(0, _bits(sign, "sign") if sign else "no sign bit")
    kind = "" if dtype.arithmetic else " Numeric-only: no arithmetic of its own (convert it first)."
    return (f"{dtype.bitwidth}-bit floating point ({', '.join(fields)}): {note}.{kind}")


def _bits(count, field):
    return f"{count} {field} bit{'s' if count != 1 else ''}"


def list_table(header, rows, *, css_class, stub_columns=0):
    """The lines of an rst ``list-table`` with one header row."""
    lines = [".. list-table::", "   :header-rows: 1", f"   :class: {css_class}"]
    if stub_columns:
        lines.append(f"   :stub-columns: {stub_columns}")
    lines.append("")
    for row in [header] + rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    lines.append("")
    return lines


def dtype_table_lines():
    header = ["dtype", "short", "bits", "category", "kind", "interpreter storage"]
    rows = [[f":data:`~numba_tile.{t.name}`", f"``{t.short_name}``", str(t.bitwidth),
             category_name(t), "arithmetic" if t.arithmetic else "numeric-only",
             f"``{t.storage.name}``"] for t in d.ALL_DTYPES]
    return list_table(header, rows, css_class="dtype-table")


def promotion_table_lines():
    header = [""] + [t.short_name for t in d.ALL_DTYPES]
    rows = []
    for a in d.ALL_DTYPES:
        cells = []
        for b in d.ALL_DTYPES:
            result = table_dtype(a, b)
            cells.append("ERR" if result is None else result.short_name)
        rows.append([a.short_name] + cells)
    return list_table(header, rows, css_class="promotion-table", stub_columns=1)


def dtype_data_lines():
    lines = []
    for t in d.ALL_DTYPES:
        lines += [f".. py:data:: {t.name}", "   :type: DType", "", f"   {describe_dtype(t)}",
                  ""]
    return lines


class GeneratedRst(SphinxDirective):
    """Parse rst lines produced by ``make_lines`` as if they were written in the page."""

    has_content = False
    make_lines = None

    def run(self):
        source = self.get_source_info()[0] or "<numba_tile_tables>"
        content = StringList()
        for i, line in enumerate(type(self).make_lines()):
            content.append(line, source, self.lineno + i)
        holder = nodes.container()
        nested_parse_with_titles(self.state, content, holder)
        return holder.children


class DtypeTable(GeneratedRst):
    make_lines = staticmethod(dtype_table_lines)


class PromotionTable(GeneratedRst):
    make_lines = staticmethod(promotion_table_lines)


class DtypeData(GeneratedRst):
    make_lines = staticmethod(dtype_data_lines)


def setup(app):
    app.add_directive("numba-tile-dtype-table", DtypeTable)
    app.add_directive("numba-tile-promotion-table", PromotionTable)
    app.add_directive("numba-tile-dtype-data", DtypeData)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
