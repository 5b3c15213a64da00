#!/usr/bin/python3
"""Rebuilds the ONNX graphs of tests/data/onnx/ with Debian's python3-onnx (1.12, helper API).

    /usr/bin/python3 tests/data/onnx/make_models.py     # rewrites the .onnx files here

The graphs are the published architectures, not trained models: weights are initializers with
their shapes and no data (ONNX external data whose file is absent: shape inference reads the
dims, nothing reads the values), so each file stays a few kB. tests/test_onnx_import.cpp
imports them and checks op counts and FLOPs against a hand count.

- dlrm.onnx: DLRM (Naumov et al., "Deep Learning Recommendation Model for Personalization and
  Recommendation Systems", arXiv:1906.00091), the Criteo Kaggle configuration of
  facebookresearch/dlrm (bench/dlrm_s_criteo_kaggle.sh: --arch-sparse-feature-size=16
  --arch-mlp-bot=13-512-256-64-16 --arch-mlp-top=512-256-1, dot interaction without the self
  terms), the 26 table sizes of the Criteo Kaggle data set (as listed in
  flexflow/FlexFlow examples/DLRM/run_kaggle_day1.sh's companion run_kaggle.sh). Each sparse
  feature is an embedding bag of one index (Gather + ReduceSum, how torch.onnx exports
  nn.EmbeddingBag(mode="sum")).
- deepfm.onnx: DeepFM (Guo et al., "DeepFM: A Factorization-Machine based Neural Network for
  CTR Prediction", arXiv:1703.04247, section 3.2): 39 Criteo fields, embedding size 10, the deep
  part 400-400-400 with ReLU, the FM part's first order (a 1-wide embedding) and second order
  0.5 * ((sum e)^2 - sum e^2), a sigmoid of the sum. One shared table of 1,000,000 rows (an
  assumption: the paper hashes features into one space and gives no count).
- autoint.onnx: AutoInt (Song et al., "AutoInt: Automatic Feature Interaction Learning via
  Self-Attentive Neural Networks", CIKM 2019, arXiv:1810.11921) in the Criteo configuration of the
  authors' code, DeepGraphLearning/RecommenderSystems featureRec/run_criteo.sh (commit
  23350c4c): 39 fields, embedding 16 (train.py's default), 3 interacting blocks of 64 units,
  2 heads, residual. The graph follows featureRec/autoint/model.py's multihead_attention as
  tf2onnx exports it: Q, K, V and the residual as dense layers with ReLU; the heads split on the
  last axis and stacked on the batch axis ([2B, 39, 32]); Q x K^T / sqrt(32), softmax, x V;
  the heads merged back; residual add, ReLU, layer normalisation (model.py's normalize, as its
  primitive ops); the flattened 39 x 64 features to one logit and a sigmoid. One table of
  1,000,000 rows (an assumption, as for DeepFM: the repository reads its size from the
  preprocessed data). tests/test_onnx_import.cpp finds its three attention subgraphs.
- ctr_ranking.onnx: perfcast's built-in CTR scenario (include/perfcast/scenario.hpp,
  tests/data/models/ctr_ranking.model), line by line: the scenario lists ops, not a data flow, so
  a tensor no exported node computes is declared in value_info with its shape ("batch*8": 8 x B)
  and produced by no node. Ops ONNX has no single node for are exported as one with the same
  inputs and operations per element: the fused bias + ReLU and the mask-and-scale (2 inputs,
  2 operations) as PRelu, the softmax as one Softmax, the AI CPU default-value
  Where as an op of a custom domain (costed by its bytes). ONNX cannot say host dispatch,
  dynamic shapes, hot rows, HF32 or a matmul's wider output: tests/test_onnx_import.cpp lists
  them.
- mlp_1000.onnx: 1,000 nodes for bench/bench_onnx_import.cpp: 250 layers of MatMul (256 x 256),
  Add (bias), Relu and Reshape, a made-up stack (no published model).
- bad_dynamic_seq.onnx: a graph whose input has a second dynamic dimension (seq): an error.
- bad_unknown_op.onnx: an op of an unknown domain, whose output shape inference cannot know.
- bad_raw_data.onnx: a ReduceSum whose axes initializer (one INT64) holds 5 raw bytes, not 8:
  an error naming it (libonnx's shape inference would copy past its buffer; the fuzzer found
  it).
- bad_string_type.onnx: a Cast of a STRING input: an error naming the type as ONNX does.
- not_onnx.onnx, truncated.onnx: bytes that are not an ONNX model.
- head_weights.onnx: activations [batch, 32, 1, 128] (fp16) times per-head weights
  [32, 128, 4096]: 32 matrices, each shared by the batch (once read as one, 32x too few bytes).
- weight_left.onnx: a weight on the left, W [256, 256] times x [batch, 256, 8] (W x).
- static_shapes.onnx: both with static shapes (no batch dimension): activations [2, 1, 16, 128]
  times per-head weights [32, 128, 256], and W [256, 256] times x [4, 256, 8].
- broadcast_both.onnx: A [2, 16, 128] (a weight) times x [batch, 1, 128, 64]: numpy.matmul
  broadcasts each to the other's leading dimension, 2 x batch products.
- if_branch.onnx: an If whose then-branch holds a MatMul: its work is not priced, and said so.
- qdq_tower.onnx: two GEMMs in the QDQ format (uint8 activations, int8 weights), fc1 with a
  QuantizeLinear after it, fc2 a Gemm with a dequantized int32 bias and a float output: two
  integer GEMMs on import.
- qdq_linear.onnx: two Linear layers as pytorch-quantization exports them (float weights
  quantized in the graph, each DequantizeLinear -> Transpose -> MatMul, then a bias Add), fc1
  with a Relu and a QuantizeLinear after it, fc2 with a float output: two integer GEMMs, the
  Transposes, both bias Adds, fc1's Relu and QuantizeLinear folded.
- bad_cycle.onnx, bad_order.onnx, bad_twice.onnx, bad_no_op.onnx: graphs onnx.checker refuses
  (a cycle, a node before the node writing its input, a tensor written twice, an op the default
  domain does not register); opset18_reduce.onnx, ai_onnx_domain.onnx: valid graphs it must
  not refuse (an opset newer than libonnx 1.12's, the default domain spelled "ai.onnx"); so is
  custom_only.onnx, a graph of one custom-domain op with no default-domain opset.
- reduce_axes.onnx: one input summed over a strided axis and over its innermost one.
- quantized.onnx: an input quantized to uint8 and three GEMMs on it (a float MatMul after a
  DequantizeLinear, its weight float: not an integer GEMM; MatMulInteger; QLinearMatMul).
"""
import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 13)]
F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


def weight(name, dims, dtype=F32):
    """An initializer with its dims and no data: external data in a file that is not there."""
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key = "location"
    entry.value = "weights-not-shipped.bin"
    return t


def const_i64(name, values):
    """A small int64 initializer with its data (shapes, axes, indices)."""
    return helper.make_tensor(name, I64, [len(values)], values)


def save(model, name):
    path = os.path.join(HERE, name)
    onnx.save(model, path)
    print(f"{path}: {len(model.graph.node)} nodes, {os.path.getsize(path)} bytes")


def mlp(nodes, inits, x, dims, prefix, last_act):
    """Gemm + activation per layer (dims[0] -> dims[1] -> ...); returns the output name."""
    for i in range(len(dims) - 1):
        w, b = f"{prefix}{i}_w", f"{prefix}{i}_b"
        inits += [weight(w, [dims[i], dims[i + 1]]), weight(b, [dims[i + 1]])]
        y = f"{prefix}{i}_gemm"
        nodes.append(helper.make_node("Gemm", [x, w, b], [y], name=f"{prefix}{i}"))
        act = "Relu" if i + 2 < len(dims) else last_act
        x = f"{prefix}{i}_out"
        nodes.append(helper.make_node(act, [y], [x], name=f"{prefix}{i}_{act.lower()}"))
    return x


# Criteo Kaggle categorical cardinalities (26 tables).
KAGGLE_TABLES = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593,
                 3194, 27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105,
                 142572]


def dlrm():
    d = 16
    nodes, inits = [], []
    inputs = [helper.make_tensor_value_info("dense_x", F32, ["batch", 13])]
    bot = mlp(nodes, inits, "dense_x", [13, 512, 256, 64, 16], "bot", "Relu")
    inits.append(const_i64("axes1", [1]))
    pooled = [bot]
    for t, rows in enumerate(KAGGLE_TABLES):
        ids = f"sparse_{t}"
        inputs.append(helper.make_tensor_value_info(ids, I64, ["batch", 1]))
        inits.append(weight(f"emb_{t}", [rows, d]))
        nodes.append(helper.make_node("Gather", [f"emb_{t}", ids], [f"emb_{t}_rows"],
                                      name=f"emb_{t}"))
        nodes.append(helper.make_node("ReduceSum", [f"emb_{t}_rows", "axes1"], [f"emb_{t}_bag"],
                                      name=f"emb_{t}_bag", keepdims=0))
        pooled.append(f"emb_{t}_bag")
    f = len(pooled)  # 27 feature vectors
    nodes.append(helper.make_node("Concat", pooled, ["T_flat"], name="interact_cat", axis=1))
    inits.append(const_i64("T_shape", [-1, f, d]))
    nodes.append(helper.make_node("Reshape", ["T_flat", "T_shape"], ["T"], name="interact_view"))
    nodes.append(helper.make_node("Transpose", ["T"], ["Tt"], name="interact_t", perm=[0, 2, 1]))
    nodes.append(helper.make_node("MatMul", ["T", "Tt"], ["Z"], name="interact_bmm"))
    inits.append(const_i64("Z_shape", [-1, f * f]))
    nodes.append(helper.make_node("Reshape", ["Z", "Z_shape"], ["Z_flat"], name="interact_flat"))
    lower = [i * f + j for i in range(f) for j in range(i)]  # 351 pairs below the diagonal
    inits.append(const_i64("tril", lower))
    nodes.append(helper.make_node("Gather", ["Z_flat", "tril"], ["Zl"], name="interact_tril",
                                  axis=1))
    nodes.append(helper.make_node("Concat", [bot, "Zl"], ["R"], name="top_in", axis=1))
    top = mlp(nodes, inits, "R", [d + len(lower), 512, 256, 1], "top", "Sigmoid")
    outputs = [helper.make_tensor_value_info(top, F32, ["batch", 1])]
    g = helper.make_graph(nodes, "dlrm_kaggle", inputs, outputs, initializer=inits)
    save(helper.make_model(g, opset_imports=OPSET, producer_name="perfcast make_models.py"),
         "dlrm.onnx")


def deepfm():
    fields, k, rows = 39, 10, 1000000
    nodes, inits = [], []
    inputs = [helper.make_tensor_value_info("feat_ids", I64, ["batch", fields])]
    inits += [weight("emb", [rows, k]), weight("w1", [rows, 1]), const_i64("axes1", [1]),
              const_i64("flat_shape", [-1, fields * k])]
    n = helper.make_node
    nodes += [
        n("Gather", ["emb", "feat_ids"], ["e"], name="embedding"),           # [B,39,10]
        n("Gather", ["w1", "feat_ids"], ["e1"], name="first_order_w"),       # [B,39,1]
        n("ReduceSum", ["e1", "axes1"], ["y1_3"], name="first_order_sum", keepdims=0),  # [B,1]
        n("ReduceSum", ["e", "axes1"], ["s"], name="fm_sum", keepdims=0),   # [B,10]
        n("Mul", ["s", "s"], ["s2"], name="fm_sum_sq"),
        n("Mul", ["e", "e"], ["e2"], name="fm_sq"),
        n("ReduceSum", ["e2", "axes1"], ["q"], name="fm_sq_sum", keepdims=0),  # [B,10]
        n("Sub", ["s2", "q"], ["d"], name="fm_diff"),
        n("ReduceSum", ["d", "axes1"], ["d1"], name="fm_reduce", keepdims=1),  # [B,1]
    ]
    inits.append(helper.make_tensor("half", F32, [], [0.5]))
    nodes.append(n("Mul", ["d1", "half"], ["y_fm"], name="fm_half"))
    nodes.append(n("Reshape", ["e", "flat_shape"], ["h0"], name="deep_flat"))
    deep = mlp(nodes, inits, "h0", [fields * k, 400, 400, 400], "deep", "Relu")
    inits += [weight("out_w", [400, 1]), weight("out_b", [1])]
    nodes.append(n("Gemm", [deep, "out_w", "out_b"], ["y_deep"], name="deep_out"))
    nodes.append(n("Add", ["y1_3", "y_fm"], ["y_a"], name="add_fm"))
    nodes.append(n("Add", ["y_a", "y_deep"], ["logit"], name="add_deep"))
    nodes.append(n("Sigmoid", ["logit"], ["ctr"], name="ctr"))
    outputs = [helper.make_tensor_value_info("ctr", F32, ["batch", 1])]
    g = helper.make_graph(nodes, "deepfm_criteo", inputs, outputs, initializer=inits)
    save(helper.make_model(g, opset_imports=OPSET, producer_name="perfcast make_models.py"),
         "deepfm.onnx")


def autoint():
    fields, d, units, heads, blocks = 39, 16, 64, 2, 3
    hd = units // heads
    n = helper.make_node
    nodes, inits = [], []
    inputs = [helper.make_tensor_value_info("feat_index", TensorProto.INT32, ["batch", fields]),
              helper.make_tensor_value_info("feat_value", F32, ["batch", fields])]
    inits += [weight("feature_embeddings", [1000000, d]),
              const_i64("value_shape", [-1, fields, 1]),
              const_i64("last_axis", [-1]),
              helper.make_tensor("scale", F32, [], [hd ** 0.5]),
              helper.make_tensor("eps", F32, [], [1e-8])]
    nodes += [n("Gather", ["feature_embeddings", "feat_index"], ["emb"], name="embedding_lookup"),
              n("Reshape", ["feat_value", "value_shape"], ["fv"], name="feat_value_view"),
              n("Mul", ["emb", "fv"], ["x0"], name="embedding_scale")]
    x, width = "x0", d
    for b in range(blocks):
        p = f"block{b}"

        def dense(name):
            w, bias = f"{p}_{name}_w", f"{p}_{name}_b"
            inits.extend([weight(w, [width, units]), weight(bias, [units])])
            nodes.extend([n("MatMul", [x, w], [f"{p}_{name}_mm"], name=f"{p}_{name}"),
                          n("Add", [f"{p}_{name}_mm", bias], [f"{p}_{name}_a"],
                            name=f"{p}_{name}_bias"),
                          n("Relu", [f"{p}_{name}_a"], [f"{p}_{name}_r"],
                            name=f"{p}_{name}_relu")])
            return f"{p}_{name}_r"

        def stack_heads(t):
            parts = [f"{t}_h{h}" for h in range(heads)]
            nodes.extend([n("Split", [t], parts, name=f"{t}_split", axis=2),
                          n("Concat", parts, [f"{t}_"], name=f"{t}_stack", axis=0)])
            return f"{t}_"

        q, k, v, res = dense("q"), dense("k"), dense("v"), dense("res")
        q_, k_, v_ = stack_heads(q), stack_heads(k), stack_heads(v)
        nodes += [n("Transpose", [k_], [f"{p}_kt"], name=f"{p}_kt", perm=[0, 2, 1]),
                  n("MatMul", [q_, f"{p}_kt"], [f"{p}_s"], name=f"{p}_qk"),
                  n("Div", [f"{p}_s", "scale"], [f"{p}_s2"], name=f"{p}_scale"),
                  n("Softmax", [f"{p}_s2"], [f"{p}_p"], name=f"{p}_softmax", axis=-1),
                  n("MatMul", [f"{p}_p", v_], [f"{p}_o"], name=f"{p}_pv")]
        parts = [f"{p}_o_h{h}" for h in range(heads)]
        nodes += [n("Split", [f"{p}_o"], parts, name=f"{p}_unstack", axis=0),
                  n("Concat", parts, [f"{p}_merged"], name=f"{p}_merge", axis=2),
                  n("Add", [f"{p}_merged", res], [f"{p}_resid"], name=f"{p}_residual"),
                  n("Relu", [f"{p}_resid"], [f"{p}_y"], name=f"{p}_relu")]
        # normalize(): (y - mean) / sqrt(var + eps) * gamma + beta over the last axis.
        y = f"{p}_y"
        inits += [weight(f"{p}_gamma", [units]), weight(f"{p}_beta", [units])]
        nodes += [n("ReduceMean", [y], [f"{p}_mean"], name=f"{p}_mean", axes=[-1]),
                  n("Sub", [y, f"{p}_mean"], [f"{p}_c"], name=f"{p}_centre"),
                  n("Mul", [f"{p}_c", f"{p}_c"], [f"{p}_c2"], name=f"{p}_square"),
                  n("ReduceMean", [f"{p}_c2"], [f"{p}_var"], name=f"{p}_var", axes=[-1]),
                  n("Add", [f"{p}_var", "eps"], [f"{p}_ve"], name=f"{p}_var_eps"),
                  n("Sqrt", [f"{p}_ve"], [f"{p}_sd"], name=f"{p}_sd"),
                  n("Div", [f"{p}_c", f"{p}_sd"], [f"{p}_z"], name=f"{p}_normalise"),
                  n("Mul", [f"{p}_z", f"{p}_gamma"], [f"{p}_zg"], name=f"{p}_gamma"),
                  n("Add", [f"{p}_zg", f"{p}_beta"], [f"{p}_out"], name=f"{p}_beta")]
        x, width = f"{p}_out", units
    inits += [const_i64("flat_shape", [-1, fields * units]),
              weight("prediction", [fields * units, 1]), weight("prediction_bias", [1])]
    nodes += [n("Reshape", [x, "flat_shape"], ["flat"], name="flat"),
              n("MatMul", ["flat", "prediction"], ["logit_mm"], name="prediction"),
              n("Add", ["logit_mm", "prediction_bias"], ["logit"], name="logits"),
              n("Sigmoid", ["logit"], ["pred"], name="pred")]
    outputs = [helper.make_tensor_value_info("pred", F32, ["batch", 1])]
    g = helper.make_graph(nodes, "autoint_criteo", inputs, outputs, initializer=inits)
    save(helper.make_model(g, opset_imports=OPSET, producer_name="perfcast make_models.py"),
         "autoint.onnx")


def ctr_ranking():
    F16 = TensorProto.FLOAT16
    I32 = TensorProto.INT32
    BOOL = TensorProto.BOOL
    n = helper.make_node
    vi = helper.make_tensor_value_info
    inputs = [vi("in_item_ids", I64, ["batch", 26]), vi("in_dense", F32, ["batch", 13]),
              vi("in_recent_ids", I64, [1, 300]), vi("in_longterm_ids", I64, [1, 2000])]
    free = []  # tensors the scenario does not compute: declared, produced by no node

    def f(name, dtype, dims):
        free.append(vi(name, dtype, dims))
        return name

    def out(name, dtype, dims):  # a declared output shape ONNX cannot infer (Tile's repeats)
        free.append(vi(name, dtype, dims))
        return name

    inits = [weight("emb_fp16", [20000000, 32], F16), weight("emb_fp32", [20000000, 32]),
             const_i64("k50", [50]), const_i64("flat", [-1])]
    for i, (k, m) in enumerate([(1261, 1024), (1024, 512), (512, 256), (256, 1)]):
        inits.append(weight(f"w{i + 1}", [k, m], F16))
    nodes = [
        n("Cast", ["in_item_ids"], ["ids32"], name="cast_item_ids", to=I32),
        n("Gather", ["emb_fp16", "ids32"], ["item_emb"], name="gather_item_emb"),
        n("Gather", ["emb_fp32", f("recent_idx", I32, [300])], ["recent_emb"],
          name="gather_recent_emb"),
        n("Gather", ["emb_fp16", f("longterm_idx", I32, [2000])], ["longterm_emb"],
          name="gather_longterm_emb"),
        n("Cast", [f("query", F16, ["batch", 8, 32])], ["query32"], name="cast_query", to=F32),
        n("Tile", [f("recent3", F32, [1, 300, 32]), f("tile_reps", I64, [3])],
          [out("tiled", F32, ["batch*8", 300, 32])], name="tile_recent"),
        n("MatMul", [f("q", F32, ["batch*8", 1, 32]), f("k", F32, ["batch*8", 32, 300])],
          ["scores"], name="bmm_scores"),
        n("Equal", [f("eq_a", I64, ["batch", 1]), f("eq_b", I64, [1, 300])], ["mask"],
          name="equal_mask"),
        n("PRelu", [f("ms_x", F32, ["batch*8", 300]), f("ms_y", F32, ["batch*8", 300])],
          ["masked"], name="mask_scale"),
        n("Softmax", [f("sm_x", F32, ["batch*8", 300])], ["probs"], name="softmax", axis=-1),
        n("MatMul", [f("p", F32, ["batch*8", 1, 300]), f("v", F32, ["batch*8", 300, 32])],
          ["pooled"], name="bmm_pool"),
        n("Cast", [f("attn", F32, ["batch", 256])], ["attn16"], name="cast_attention", to=F16),
        n("MatMul", [f("u", F16, ["batch", 1, 32]), f("lt_w", F16, [32, 2000])], ["lt_scores"],
          name="bmm_longterm"),
        n("TopK", [f("tk_x", F32, ["batch", 2000]), "k50"], ["top_v", "top_i"],
          name="topk_longterm"),
        n("Gather", ["emb_fp16", f("top_idx", I32, ["batch", 50])], ["top_emb"],
          name="gather_top_emb"),
        n("ReduceSum", [f("pt_x", F16, ["batch", 32, 50]), const_name(inits, "axes2", [2])],
          ["pooled_top"], name="pool_top", keepdims=0),
        n("WhereDefault", [f("wd_x", I64, ["batch", 4])], [out("wd_y", I64, ["batch", 4])],
          name="where_default", domain="perfcast.example"),
        n("Gather", ["emb_fp16", f("def_idx", I32, ["batch", 4])], ["def_emb"],
          name="gather_default"),
        n("Add", [f("md_a", F16, ["batch", 128]), f("md_b", F16, ["batch", 128])],
          ["md"], name="mask_default"),
        n("Cast", ["in_dense"], ["dense16"], name="cast_dense", to=F16),
        n("Concat", [f("c0", F16, ["batch", 832]), f("c1", F16, ["batch", 256]),
                     f("c2", F16, ["batch", 32]), f("c3", F16, ["batch", 128]), "dense16"],
          ["cat"], name="concat", axis=1),
    ]
    x = "cat"
    for i, width in enumerate([1024, 512, 256]):
        nodes.append(n("MatMul", [x, f"w{i + 1}"], [f"h{i + 1}"], name=f"mlp{i + 1}"))
        nodes.append(n("PRelu", [f"h{i + 1}", f(f"bias{i + 1}", F16, ["batch", width])],
                       [f"a{i + 1}"], name=f"bias_relu{i + 1}"))
        x = f"a{i + 1}"
    nodes.append(n("MatMul", [x, "w4"], ["logit16"], name="mlp_out"))
    nodes.append(n("Sigmoid", [f("logit", F32, ["batch", 1])], ["prob"], name="sigmoid"))
    nodes.append(n("Reshape", ["prob", "flat"], ["out_scores"], name="flatten_scores"))
    g = helper.make_graph(nodes, "ctr_ranking", inputs, [vi("out_scores", F32, ["batch"])],
                          initializer=inits, value_info=free)
    save(helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("perfcast.example", 1)]),
         "ctr_ranking.onnx")


def const_name(inits, name, values):
    inits.append(const_i64(name, values))
    return name


def mlp_1000():
    n = helper.make_node
    nodes, inits = [], [const_i64("flat", [-1, 256])]
    x = "x"
    for i in range(250):
        inits += [weight(f"w{i}", [256, 256]), weight(f"b{i}", [256])]
        nodes += [n("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"mm{i}"),
                  n("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"bias{i}"),
                  n("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}"),
                  n("Reshape", [f"r{i}", "flat"], [f"h{i}"], name=f"view{i}")]
        x = f"h{i}"
    g = helper.make_graph(nodes, "mlp_1000",
                          [helper.make_tensor_value_info("x", F32, ["batch", 256])],
                          [helper.make_tensor_value_info(x, F32, ["batch", 256])],
                          initializer=inits)
    save(helper.make_model(g, opset_imports=OPSET), "mlp_1000.onnx")


def bad_models():
    n = helper.make_node
    g = helper.make_graph(
        [n("Relu", ["x"], ["y"], name="relu")], "dynamic_seq",
        [helper.make_tensor_value_info("x", F32, ["batch", "seq", 64])],
        [helper.make_tensor_value_info("y", F32, ["batch", "seq", 64])])
    save(helper.make_model(g, opset_imports=OPSET), "bad_dynamic_seq.onnx")
    g = helper.make_graph(
        [n("Relu", ["x"], ["h"], name="relu"),
         n("Mystery", ["h"], ["y"], name="mystery", domain="com.example")], "unknown_op",
        [helper.make_tensor_value_info("x", F32, ["batch", 64])],
        [helper.make_tensor_value_info("y", F32, None)])
    save(helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("com.example", 1)]),
         "bad_unknown_op.onnx")
    g = helper.make_graph(
        [n("Cast", ["x"], ["y"], name="parse", to=F32)], "string_type",
        [helper.make_tensor_value_info("x", TensorProto.STRING, ["batch", 4])],
        [helper.make_tensor_value_info("y", F32, ["batch", 4])])
    save(helper.make_model(g, opset_imports=OPSET), "bad_string_type.onnx")
    bad_raw_data()
    with open(os.path.join(HERE, "not_onnx.onnx"), "w") as f:
        f.write("name ctr\nmatmul B,13;13,64 fp32\n")
    with open(os.path.join(HERE, "dlrm.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(HERE, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])


def bad_raw_data():
    axes = onnx.TensorProto()
    axes.name = "axes"
    axes.data_type = onnx.TensorProto.INT64
    axes.dims.append(1)
    axes.raw_data = b"\x01\x00\x00\x00\x00"  # 5 bytes for one 8-byte element
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum", keepdims=0)],
        "raw_data", [helper.make_tensor_value_info("x", F32, ["batch", 64])],
        [helper.make_tensor_value_info("y", F32, None)], initializer=[axes])
    save(helper.make_model(g, opset_imports=OPSET), "bad_raw_data.onnx")


def structure_models():
    n = helper.make_node
    F16 = TensorProto.FLOAT16
    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        [n("MatMul", ["a", "wh"], ["y"], name="head_proj")], "head_weights",
        [vi("a", F16, ["batch", 32, 1, 128])], [vi("y", F16, ["batch", 32, 1, 4096])],
        initializer=[weight("wh", [32, 128, 4096], F16)])
    save(helper.make_model(g, opset_imports=OPSET), "head_weights.onnx")
    g = helper.make_graph(
        [n("MatMul", ["w", "x"], ["y"], name="left")], "weight_left",
        [vi("x", F32, ["batch", 256, 8])], [vi("y", F32, ["batch", 256, 8])],
        initializer=[weight("w", [256, 256])])
    save(helper.make_model(g, opset_imports=OPSET), "weight_left.onnx")
    # The same two products with static shapes (no batch dimension anywhere).
    g = helper.make_graph(
        [n("MatMul", ["a", "wh"], ["y"], name="head_proj"),
         n("MatMul", ["w", "x"], ["z"], name="left")], "static_shapes",
        [vi("a", F16, [2, 1, 16, 128]), vi("x", F32, [4, 256, 8])],
        [vi("y", F16, [2, 32, 16, 256]), vi("z", F32, [4, 256, 8])],
        initializer=[weight("wh", [32, 128, 256], F16), weight("w", [256, 256])])
    save(helper.make_model(g, opset_imports=OPSET), "static_shapes.onnx")
    # A of its own leading dimension (2) times B with the batch and a 1 there: each of the
    # batch's B matrices meets both of A's, 2 x batch products.
    g = helper.make_graph(
        [n("MatMul", ["w", "x"], ["y"], name="both")], "broadcast_both",
        [vi("x", F32, ["batch", 1, 128, 64])], [vi("y", F32, ["batch", 2, 16, 64])],
        initializer=[weight("w", [2, 16, 128])])
    save(helper.make_model(g, opset_imports=OPSET), "broadcast_both.onnx")
    then_g = helper.make_graph([n("MatMul", ["x", "w"], ["t"], name="branch_mm")], "then", [],
                               [vi("t", F32, ["batch", 512])])
    else_g = helper.make_graph([n("Identity", ["x"], ["e"], name="branch_id")], "else", [],
                               [vi("e", F32, ["batch", 512])])
    g = helper.make_graph(
        [n("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "if_branch", [vi("cond", TensorProto.BOOL, []), vi("x", F32, ["batch", 512])],
        [vi("y", F32, ["batch", 512])], initializer=[weight("w", [512, 512])])
    save(helper.make_model(g, opset_imports=OPSET), "if_branch.onnx")
    x = [vi("x", F32, ["batch", 64])]
    y = [vi("y", F32, ["batch", 64])]
    g = helper.make_graph([n("Add", ["x", "c"], ["a"], name="add"),
                           n("Relu", ["a"], ["c"], name="relu"),
                           n("Relu", ["a"], ["y"], name="out")], "cycle", x, y)
    save(helper.make_model(g, opset_imports=OPSET), "bad_cycle.onnx")
    g = helper.make_graph([n("Relu", ["h"], ["y"], name="relu"),
                           n("Neg", ["x"], ["h"], name="neg")], "order", x, y)
    save(helper.make_model(g, opset_imports=OPSET), "bad_order.onnx")
    g = helper.make_graph([n("Relu", ["x"], ["h"], name="first"),
                           n("Neg", ["x"], ["h"], name="second"),
                           n("Relu", ["h"], ["y"], name="out")], "twice", x, y)
    save(helper.make_model(g, opset_imports=OPSET), "bad_twice.onnx")
    g = helper.make_graph([n("NotARealOp", ["x"], ["y"], name="mystery")], "no_op", x, y)
    save(helper.make_model(g, opset_imports=OPSET), "bad_no_op.onnx")
    # Valid graphs the checks must not refuse: an opset-18 ReduceMean (axes an input, newer than
    # libonnx 1.12's schemas) and a node whose domain is spelled "ai.onnx".
    g = helper.make_graph([n("ReduceMean", ["x", "axes"], ["m"], name="mean", keepdims=1),
                           n("Sub", ["x", "m"], ["y"], name="centre")], "opset18",
                          x, y, initializer=[const_i64("axes", [1])],
                          value_info=[vi("m", F32, ["batch", 1])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), "opset18_reduce.onnx")
    g = helper.make_graph([n("Relu", ["x"], ["y"], name="relu", domain="ai.onnx")], "ai_domain",
                          x, y)
    save(helper.make_model(g, opset_imports=OPSET), "ai_onnx_domain.onnx")
    g = helper.make_graph([n("Mystery", ["x"], ["y"], name="mystery", domain="com.example")],
                          "custom_only", x, y)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("com.example", 1)]),
         "custom_only.onnx")
    # [batch, 16, 16] summed over axis 1 (strided) and over axis 2 (the innermost): the same
    # output shape, told apart by the axes.
    g = helper.make_graph(
        [n("ReduceSum", ["x", "ax1"], ["a"], name="over_rows", keepdims=0),
         n("ReduceSum", ["x", "ax2"], ["b"], name="over_last", keepdims=0),
         n("Add", ["a", "b"], ["y"], name="both")], "reduce_axes",
        [vi("x", F32, ["batch", 16, 16])], [vi("y", F32, ["batch", 16])],
        initializer=[const_i64("ax1", [1]), const_i64("ax2", [2])])
    save(helper.make_model(g, opset_imports=OPSET), "reduce_axes.onnx")


def pinned_models():
    # A Reshape to a shape constant written at the exported batch (64): its input grows with
    # the batch, its output does not (docs/import.md, "The batch").
    n = helper.make_node
    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        [n("Reshape", ["x", "shape"], ["r"], name="pin"),
         n("MatMul", ["r", "w"], ["y"], name="proj")], "pinned_reshape",
        [vi("x", F32, ["batch", 4, 32])], [vi("y", F32, [64, 16])],
        initializer=[const_i64("shape", [64, 128]), weight("w", [128, 16])])
    save(helper.make_model(g, opset_imports=OPSET), "pinned_reshape.onnx")


def quantized_models():
    # x quantized to uint8, then three GEMMs on it: a float MatMul after its DequantizeLinear
    # (its weight float: no integer GEMM), MatMulInteger (int32 out), QLinearMatMul (uint8 out,
    # B its fourth input). The uint8 weight is not shipped (external data).
    n = helper.make_node
    vi = helper.make_tensor_value_info
    U8 = TensorProto.UINT8
    scalar = lambda name, dtype, v: helper.make_tensor(name, dtype, [], [v])
    g = helper.make_graph(
        [n("QuantizeLinear", ["x", "s", "zp"], ["xq"], name="quant"),
         n("DequantizeLinear", ["xq", "s", "zp"], ["xd"], name="dequant"),
         n("MatMul", ["xd", "w"], ["y"], name="float_mm"),
         n("MatMulInteger", ["xq", "wq", "zp", "wzp"], ["yi"], name="int_mm"),
         n("QLinearMatMul", ["xq", "s", "zp", "wq", "ws", "wzp", "ys", "zp"], ["yq"],
           name="qlinear_mm")], "quantized",
        [vi("x", F32, ["batch", 64])],
        [vi("y", F32, ["batch", 32]), vi("yi", TensorProto.INT32, ["batch", 32]),
         vi("yq", U8, ["batch", 32])],
        initializer=[scalar("s", F32, 0.05), scalar("zp", U8, 128), weight("w", [64, 32]),
                     weight("wq", [64, 32], U8), scalar("ws", F32, 0.01),
                     scalar("wzp", U8, 128), scalar("ys", F32, 0.1)])
    save(helper.make_model(g, opset_imports=OPSET), "quantized.onnx")


def qdq_models():
    # A two-layer tower quantized in the QDQ format (onnxruntime.quantization's default: uint8
    # activations, int8 weights, int32 biases, every GEMM a float MatMul / Gemm between
    # DequantizeLinear inputs): fc1 with a QuantizeLinear on its output, then a DequantizeLinear
    # and a Relu that stay float, requantized for fc2, a Gemm with a dequantized int32 bias and
    # a float output.
    n = helper.make_node
    vi = helper.make_tensor_value_info
    U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
    scalar = lambda name, dtype, v: helper.make_tensor(name, dtype, [], [v])
    g = helper.make_graph(
        [n("QuantizeLinear", ["x", "s", "zp"], ["xq"], name="x_q"),
         n("DequantizeLinear", ["xq", "s", "zp"], ["xd"], name="x_dq"),
         n("DequantizeLinear", ["w1q", "ws", "wzp"], ["w1d"], name="w1_dq"),
         n("MatMul", ["xd", "w1d"], ["h1"], name="fc1"),
         n("QuantizeLinear", ["h1", "s", "zp"], ["h1q"], name="h1_q"),
         n("DequantizeLinear", ["h1q", "s", "zp"], ["h1d"], name="h1_dq"),
         n("Relu", ["h1d"], ["r1"], name="relu1"),
         n("QuantizeLinear", ["r1", "s", "zp"], ["r1q"], name="r1_q"),
         n("DequantizeLinear", ["r1q", "s", "zp"], ["r1d"], name="r1_dq"),
         n("DequantizeLinear", ["w2q", "ws", "wzp"], ["w2d"], name="w2_dq"),
         n("DequantizeLinear", ["b2q", "bs"], ["b2d"], name="b2_dq"),
         n("Gemm", ["r1d", "w2d", "b2d"], ["y"], name="fc2")], "qdq_tower",
        [vi("x", F32, ["batch", 512])],
        [vi("y", F32, ["batch", 64])],
        initializer=[scalar("s", F32, 0.05), scalar("zp", U8, 128),
                     weight("w1q", [512, 256], I8), weight("w2q", [256, 64], I8),
                     scalar("ws", F32, 0.01), scalar("wzp", I8, 0), weight("b2q", [64], I32),
                     scalar("bs", F32, 0.0005)])
    save(helper.make_model(g, opset_imports=OPSET), "qdq_tower.onnx")

    # Two Linear layers as pytorch-quantization exports them for TensorRT: int8 activations and
    # weights, each float weight [out, in] quantized in the graph, dequantized and transposed
    # before its MatMul, a float bias added after; fc1's Relu quantized for fc2, fc2's output
    # float.
    g = helper.make_graph(
        [n("QuantizeLinear", ["x", "s", "z"], ["xq"], name="x_q"),
         n("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="x_dq"),
         n("QuantizeLinear", ["w1", "ws", "z"], ["w1q"], name="w1_q"),
         n("DequantizeLinear", ["w1q", "ws", "z"], ["w1d"], name="w1_dq"),
         n("Transpose", ["w1d"], ["w1t"], name="w1_t", perm=[1, 0]),
         n("MatMul", ["xd", "w1t"], ["h1"], name="fc1"),
         n("Add", ["h1", "b1"], ["h1b"], name="fc1_bias"),
         n("Relu", ["h1b"], ["r1"], name="relu1"),
         n("QuantizeLinear", ["r1", "s", "z"], ["r1q"], name="r1_q"),
         n("DequantizeLinear", ["r1q", "s", "z"], ["r1d"], name="r1_dq"),
         n("QuantizeLinear", ["w2", "ws", "z"], ["w2q"], name="w2_q"),
         n("DequantizeLinear", ["w2q", "ws", "z"], ["w2d"], name="w2_dq"),
         n("Transpose", ["w2d"], ["w2t"], name="w2_t", perm=[1, 0]),
         n("MatMul", ["r1d", "w2t"], ["h2"], name="fc2"),
         n("Add", ["h2", "b2"], ["y"], name="fc2_bias")], "qdq_linear",
        [vi("x", F32, ["batch", 512])],
        [vi("y", F32, ["batch", 64])],
        initializer=[scalar("s", F32, 0.05), scalar("z", I8, 0), scalar("ws", F32, 0.01),
                     weight("w1", [256, 512]), weight("b1", [256]),
                     weight("w2", [64, 256]), weight("b2", [64])])
    save(helper.make_model(g, opset_imports=OPSET), "qdq_linear.onnx")


if __name__ == "__main__":
    dlrm()
    deepfm()
    autoint()
    ctr_ranking()
    mlp_1000()
    bad_models()
    structure_models()
    pinned_models()
    quantized_models()
    qdq_models()
