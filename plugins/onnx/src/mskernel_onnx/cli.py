"""``mskernel convert MODEL -o OUTPUT [--opset N]``: read a model file of any format an
installed plugin reads (mskernel's ``.mindir``, ``.onnx``, ...) and write it in the format
``OUTPUT``'s suffix names, ``.mindir`` or ``.onnx`` (at ``--opset``)."""

from __future__ import annotations

import argparse
import os
import sys

#: output suffix → file_format
WRITERS = {".mindir": "MINDIR", ".mskernel": "MINDIR", ".onnx": "ONNX"}


def configure(parser: argparse.ArgumentParser) -> None:
    from .export import DEFAULT_OPSET, OPSETS

    parser.add_argument("model", help="the model file to read (.mindir, .onnx, or any "
                                      "format an installed plugin reads)")
    parser.add_argument("-o", "--output", required=True,
                        help="the file to write; its suffix picks the format: "
                             + ", ".join(WRITERS))
    parser.add_argument("--opset", type=int, default=DEFAULT_OPSET, choices=list(OPSETS),
                        metavar="N", help=f"the ONNX opset to write ({OPSETS.start}-"
                                          f"{OPSETS.stop - 1}, default {DEFAULT_OPSET})")


def run(args: argparse.Namespace) -> int:
    from mskernel_sdk import MskernelError, read_model, save_model

    from .export import save_onnx, to_onnx

    fmt = WRITERS.get(os.path.splitext(args.output)[1].lower())
    if fmt is None:
        print(f"mskernel convert: cannot tell the format of {args.output!r} from its suffix; "
              f"use one of {', '.join(WRITERS)}", file=sys.stderr)
        return 2
    try:
        model = read_model(args.model)
        if fmt == "MINDIR":
            save_model(args.output, model.graph, model.weights, dtypes=model.weight_dtypes)
        else:
            onnx_model = to_onnx(model.graph, model.weights, opset=args.opset,
                                 weight_dtypes=model.weight_dtypes,
                                 doc=f"converted from {os.path.basename(args.model)}")
            save_onnx(onnx_model, args.output)
    except (MskernelError, OSError) as exc:
        print(f"mskernel convert: {exc}", file=sys.stderr)
        return 1
    detail = f"opset {args.opset}, " if fmt == "ONNX" else ""
    print(f"wrote {args.output} ({fmt}, {detail}{len(model.graph.nodes)} nodes, "
          f"{len(model.weights)} weights)")
    return 0
