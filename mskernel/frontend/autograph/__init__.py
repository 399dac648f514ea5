"""AST conversion of Python control flow for ``@jit`` (graph mode), as MindSpore's graph mode
and TensorFlow's AutoGraph do it.

A jitted function's source is rewritten so that ``if``/``elif``/``else``, ``while``, ``for``
over ``range`` or a tensor's first axis, ``break``, ``continue`` and early ``return`` call
runtime helpers instead of testing Python truth values.  While tracing, a helper given a
Python value or a concrete tensor runs the statement as plain Python (a loop over a Python
range unrolls); given a traced tensor it stages ``If``/``While`` nodes.  Functions called
from converted code are converted in turn when they are user code.

- :func:`convert` — the converted version of a function or bound method;
- :func:`do_not_convert` — call a function as it is from converted code;
- :func:`to_source` — the converted source, for debugging;
- :func:`user_callables` — declare the parameters of a higher-order function (``grad``,
  ``cond`` …) that take user functions, which then run converted under a trace too;
- :class:`ConversionError` — a construct that cannot be converted, with its ``file:line``.

Plugins that call user code while a trace is active (a layer's ``__call__`` calling its
``construct``) call ``convert(bound_method)`` to get the same treatment.

Modules: :mod:`.analysis`, :mod:`.lowering`, :mod:`.syntax` and :mod:`.transformer` rewrite
the AST; :mod:`.conversion` compiles and caches converted functions (:mod:`.converted`
records their code objects); :mod:`.runtime` holds the helpers converted code calls, built
on :mod:`.staging`, :mod:`.layout`, :mod:`.values` and :mod:`.errors`.  The only import cycle
is the converted-call recursion between :mod:`.conversion` and :mod:`.runtime` (documented
there).
"""

from .callables import as_user_callable, user_callables
from .conversion import ConversionWarning, convert, do_not_convert, to_source
from .errors import ConversionError

__all__ = ["ConversionError", "ConversionWarning", "as_user_callable", "convert",
           "do_not_convert", "to_source", "user_callables"]
