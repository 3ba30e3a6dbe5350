"""``mma_scaled``, the block-scaled matrix product, as tile code that both executors run.

No GPU before Blackwell has a block-scaled tensor-core instruction, so the scales are applied
in registers: each scale is repeated along K over its block, the inputs are multiplied by
them in float32 and rounded to bfloat16, and an ordinary bfloat16 product accumulates in
float32. The rounding is exact: every input dtype has at most 2 and every scale dtype at
most 4 significant bits, so a scaled input has at most 8, which bfloat16 holds, with
float32's exponent range (only values beyond float32's range, or below bfloat16's smallest
subnormal, 2**-133, differ from the exact products).
"""

from .. import dtypes as d
from ..source.tile_functions import function
from ..rules import scaled_products as rules
from .debugging import static_eval
from .elementwise import astype
from .matrix import mma
from .shapes import broadcast_to, expand_dims, reshape


@function(host=True)
def _scaled(values, scale, plan):
    """``values`` times ``scale`` repeated over its blocks along K, as bfloat16."""
    axis, repeated, shape = plan
    scale = reshape(broadcast_to(expand_dims(scale, axis), repeated), shape)
    return astype(astype(values, d.float32) * astype(scale, d.float32), d.bfloat16)


@function(host=True)  # (the interpreter calls it as it is, from ct.mma_scaled)
def mma_scaled(x, x_scale, y, y_scale, /, acc):
    """The block-scaled product ``(x * x_scale) @ (y * y_scale) + acc``, each scale applying
    to ``B = K // K_s`` consecutive elements along K; 2-d, or 3-d with a batch axis
    (broadcast as in :func:`mma`). Inputs, scales and block sizes B:
    float8_e4m3fn or float8_e5m2 with float8_e8m0fnu scales (B = 32); float4_e2m1fn with
    float8_e8m0fnu (B = 16 or 32), float8_e4m3fn (16) or float8_e5m3fnu (16 or 32) scales.
    The accumulator and the result are float32. Runs on every GPU: the scales are applied in
    registers before an ordinary tensor-core product (exactly, see the module's notes).

    >>> import numba_tile as ct
    >>> @ct.kernel
    ... def show():
    ...     x = ct.full((2, 32), 1.5, ct.float8_e4m3fn)
    ...     x_scale = ct.full((2, 1), 4.0, ct.float8_e8m0fnu)
    ...     y = ct.ones((32, 2), ct.float8_e4m3fn)
    ...     y_scale = ct.full((1, 2), 0.5, ct.float8_e8m0fnu)
    ...     print(ct.mma_scaled(x, x_scale, y, y_scale, ct.ones((2, 2), ct.float32)))
    >>> ct.launch(0, (1,), show, ())
    [[97.0, 97.0], [97.0, 97.0]]
    """
    x_plan, y_plan = static_eval(rules.mma_scaled(x, x_scale, y, y_scale, acc))
    return mma(_scaled(x, x_scale, x_plan), _scaled(y, y_scale, y_plan), acc)
