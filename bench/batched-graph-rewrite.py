"""
all-MiniLM-L6-v2's q8 graph made batch-independent (issue 31, speed; bench/FINDINGS.md, perf14).

The q8 model quantizes each matrix product's activations dynamically, one scale and zero point per
tensor: over a whole batch, padding included, so a text's vector depended on its batch companions. This
rewrite computes them per sequence (per batch row) over that sequence's real tokens only, as a text run
alone gets them, with ONNX Runtime's own arithmetic:

  scale = (max - min) / 255 with min <= 0 <= max (1 when both are 0)
  zero point = round_half_to_even(clip(0 - min / scale, 0, 255))
  q = QuantizeLinear(x, scale, zero point), per axis 0 (MLAS's kernel, as DynamicQuantizeLinear's)

The padded positions are multiplied by the attention mask before the range is taken: 0 is in every range,
so they do not move it. MatMulInteger takes no per-row zero point, so the product is taken with zero point
0 and corrected exactly in int32: (q - zp_row)(W - zp_W) = q (W - zp_W) - zp_row colsum(W - zp_W). Then,
as onnxruntime's fused MatMulIntegerToFloat and DynamicQuantizeMatMul do (MLAS's scale-and-bias output
processor): float(acc) * (scale_row * scale_W), then + bias, each rounded once (the cast and the product as one
DequantizeLinear of the int32 sums, per row).

Input: the published graph as onnxruntime-node optimized it at level 'all' (bench/batched-graph.ts saves
it), whose fused nodes (DynamicQuantizeLinear feeding MatMulIntegerToFloat, DynamicQuantizeMatMul) fix
the arithmetic a text alone gets; the output graph is for a session at level 'disabled', so that nothing
re-fuses the new nodes into another order of additions.

  .cache/onnx-venv/bin/python bench/batched-graph-rewrite.py IN.onnx OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def main(source: str, target: str) -> None:
    model = onnx.load(source)
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    new_inits = [
        numpy_helper.from_array(np.array(0.0, np.float32), "pr/zero_f"),
        numpy_helper.from_array(np.array(1.0, np.float32), "pr/one_f"),
        numpy_helper.from_array(np.array(255.0, np.float32), "pr/c255"),
        numpy_helper.from_array(np.array(0, np.uint8), "pr/zero_u8"),
        numpy_helper.from_array(np.array([2], np.int64), "pr/axis2"),
        numpy_helper.from_array(np.array([-1, 1, 1], np.int64), "pr/rows3"),
    ]
    # The attention mask as [batch, tokens, 1] floats, made once.
    prelude = [
        helper.make_node("Cast", ["attention_mask"], ["pr/mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["pr/mask_f", "pr/axis2"], ["pr/mask3"]),
    ]

    def row_quantized(x: str, tag: str) -> tuple[list[onnx.NodeProto], str, str, str]:
        """Nodes quantizing x per batch row; returns (nodes, q, scale [B], zero point int32 [B,1,1])."""
        p = f"pr/{tag}/"
        nodes = [
            helper.make_node("Mul", [x, "pr/mask3"], [p + "masked"]),
            helper.make_node("ReduceMin", [p + "masked"], [p + "min_raw"], axes=[1, 2], keepdims=0),
            helper.make_node("ReduceMax", [p + "masked"], [p + "max_raw"], axes=[1, 2], keepdims=0),
            helper.make_node("Min", [p + "min_raw", "pr/zero_f"], [p + "min"]),
            helper.make_node("Max", [p + "max_raw", "pr/zero_f"], [p + "max"]),
            helper.make_node("Sub", [p + "max", p + "min"], [p + "range"]),
            helper.make_node("Div", [p + "range", "pr/c255"], [p + "scale_raw"]),
            helper.make_node("Equal", [p + "max", p + "min"], [p + "flat_range"]),
            helper.make_node("Where", [p + "flat_range", "pr/one_f", p + "scale_raw"], [p + "scale"]),
            helper.make_node("Div", [p + "min", p + "scale"], [p + "min_q"]),
            helper.make_node("Sub", ["pr/zero_f", p + "min_q"], [p + "zp_initial"]),
            helper.make_node("Clip", [p + "zp_initial", "pr/zero_f", "pr/c255"], [p + "zp_clipped"]),
            helper.make_node("Round", [p + "zp_clipped"], [p + "zp_rounded"]),
            helper.make_node("Cast", [p + "zp_rounded"], [p + "zp_u8"], to=TensorProto.UINT8),
            helper.make_node("QuantizeLinear", [x, p + "scale", p + "zp_u8"], [p + "q"], axis=0),
            helper.make_node("Cast", [p + "zp_u8"], [p + "zp_i32_rows"], to=TensorProto.INT32),
            helper.make_node("Reshape", [p + "zp_i32_rows", "pr/rows3"], [p + "zp_i32"]),
        ]
        return nodes, p + "q", p + "scale", p + "zp_i32"

    def product(
        q: str, scale: str, zp: str, w: str, w_scale: str, w_zp: str, bias: str, out: str, tag: str
    ) -> list[onnx.NodeProto]:
        """(q - zp)(W - w_zp) in int32, then float, times scale * w_scale, plus bias: into `out`."""
        p = f"pr/{tag}/"
        weights = numpy_helper.to_array(inits[w]).astype(np.int64)
        w_zero = int(numpy_helper.to_array(inits[w_zp]).reshape(-1)[0])
        colsum = (weights - w_zero).sum(axis=0).astype(np.int32)
        new_inits.append(numpy_helper.from_array(colsum, p + "colsum"))
        return [
            helper.make_node("MatMulInteger", [q, w, "pr/zero_u8", w_zp], [p + "acc_q"]),
            helper.make_node("Mul", [zp, p + "colsum"], [p + "zp_colsum"]),
            helper.make_node("Sub", [p + "acc_q", p + "zp_colsum"], [p + "acc"]),
            helper.make_node("Mul", [scale, w_scale], [p + "multiplier"]),
            # float(acc) * multiplier, per row (DequantizeLinear of int32 with no zero point: a cast, a product).
            helper.make_node("DequantizeLinear", [p + "acc", p + "multiplier"], [p + "scaled"], axis=0),
            helper.make_node("Add", [p + "scaled", bias], [out]),
        ]

    replaced = {"DynamicQuantizeLinear": 0, "MatMulIntegerToFloat": 0, "DynamicQuantizeMatMul": 0}
    out_nodes: list[onnx.NodeProto] = []
    done: set[str] = set()
    for index, node in enumerate(graph.node):
        if node.op_type == "DynamicQuantizeLinear":
            q0, s0, zp0 = node.output
            users = [c for name in node.output for c in consumers.get(name, [])]
            if any(u.op_type != "MatMulIntegerToFloat" or u.domain != MS for u in users):
                raise SystemExit(f"{node.name}: a consumer that is not MatMulIntegerToFloat")
            nodes, q, scale, zp = row_quantized(node.input[0], f"dql{index}")
            out_nodes += nodes
            replaced["DynamicQuantizeLinear"] += 1
            for u in {id(u): u for u in users}.values():
                a, w, a_s, w_s, a_zp, w_zp, bias = list(u.input) + [""] * (7 - len(u.input))
                if (a, a_s, a_zp) != (q0, s0, zp0) or not bias:
                    raise SystemExit(f"{u.name}: not wired as expected")
                out_nodes += product(q, scale, zp, w, w_s, w_zp, bias, u.output[0], f"mitf{len(done)}")
                done.add(u.name)
                replaced["MatMulIntegerToFloat"] += 1
        elif node.op_type == "MatMulIntegerToFloat":
            if node.name not in done:
                raise SystemExit(f"{node.name}: not fed by a DynamicQuantizeLinear")
        elif node.op_type == "DynamicQuantizeMatMul" and node.domain == MS:
            x, w, w_s, w_zp, bias = node.input
            nodes, q, scale, zp = row_quantized(x, f"dqmm{index}")
            out_nodes += nodes + product(q, scale, zp, w, w_s, w_zp, bias, node.output[0], f"dqmm{index}")
            replaced["DynamicQuantizeMatMul"] += 1
        else:
            out_nodes.append(node)

    # Each layer's Reshapes of the attention heads take constant shapes (0 keeps the input's dimension, -1
    # takes the rest), as model-graph.ts does for lone texts, the batch kept: a reshape is a view, the same
    # numbers; the Shape/Gather/Unsqueeze/Concat chains that computed them on every run are then unread.
    shapes = {"Reshape": [0, 0, -1, 32], "Reshape_1": [0, 0, -1, 32], "Reshape_2": [0, 0, -1, 32]}
    shapes |= {"Reshape_3": [0, -1, 0, 32], "Reshape_4": [0, 0, -1]}
    for node in out_nodes:
        head = node.name.rsplit("/", 1)
        if node.op_type == "Reshape" and head[0].endswith("/attention/self") and head[1] in shapes:
            name = f"pr/shape/{head[1]}"
            if name not in {t.name for t in new_inits}:
                new_inits.append(numpy_helper.from_array(np.array(shapes[head[1]], np.int64), name))
            node.input[1] = name
            replaced["Reshape"] = replaced.get("Reshape", 0) + 1
    # Drop the nodes none of whose outputs is read, until none is left.
    kept = prelude + out_nodes
    outputs = {o.name for o in graph.output}
    while True:
        read = outputs | {i for n in kept for i in n.input}
        left = [n for n in kept if any(o in read for o in n.output)]
        if len(left) == len(kept):
            break
        kept = left

    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(new_inits)
    onnx.save(model, target)
    print(f"{source} -> {target}: replaced {replaced}; {len(graph.node)} nodes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: batched-graph-rewrite.py IN.onnx OUT.onnx")
    main(sys.argv[1], sys.argv[2])
