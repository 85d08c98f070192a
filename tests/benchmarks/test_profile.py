"""The training-step profile: op classification, XLA HLO attribution, shares adding up to
100 %, and the command end to end on a tiny model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import hlo, op_types, trace
from benchmarks.op_types import (
    BN_BWD,
    BN_FWD,
    CONV_BWD_FILTER,
    CONV_BWD_INPUT,
    CONV_FWD,
    ELEMENTWISE,
    LAYOUT,
    OPTIMIZER,
    OTHER,
    OUTSIDE,
)

ROOT = Path(__file__).resolve().parents[2]
BN = frozenset({"bn1", "final_bn"})

HLO = """HloModule a_inference_one_step_on_data_1__.9, entry_computation_layout={()->()}

%fused_computation.1 (param_0.1: f32[2,4,4,3]) -> f32[3,4,4,2] {
  %param_0.1 = f32[2,4,4,3]{3,2,1,0} parameter(0)
  %transpose.1 = f32[3,4,4,2]{0,2,1,3} transpose(%param_0.1), dimensions={3,1,2,0}
  ROOT %copy.1 = f32[3,4,4,2]{3,2,1,0} copy(%transpose.1)
}

%fused_computation.2 (param_0.2: f32[2,4,4,8]) -> f32[2,4,4,8] {
  %param_0.2 = f32[2,4,4,8]{3,2,1,0} parameter(0)
  %constant.1 = f32[] constant(0)
  %broadcast.1 = f32[2,4,4,8]{3,2,1,0} broadcast(%constant.1), dimensions={}
  ROOT %maximum.1 = f32[2,4,4,8]{3,2,1,0} maximum(%param_0.2, %broadcast.1), metadata={op_type="Relu" op_name="m_1/unit_1/Relu"}
}

%m_1_unit_1_bn1_1_moments_variance-reduction.1 (x.1: f32[], y.1: f32[]) -> f32[] {
  %x.1 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  ROOT %add.1 = f32[] add(%x.1, %y.1)
}

%wrapped_reduce-window_computation (param_0.3: f32[2,4,4,8], param_1.3: f32[]) -> f32[1,1,1,8] {
  %param_0.3 = f32[2,4,4,8]{3,2,1,0} parameter(0)
  %param_1.3 = f32[] parameter(1)
  ROOT %reduce-window.1 = f32[1,1,1,8]{3,2,1,0} reduce-window(%param_0.3, %param_1.3), window={size=2x4x4x1 stride=2x4x4x1}, to_apply=%m_1_unit_1_bn1_1_moments_variance-reduction.1
}

ENTRY %a_inference_one_step_on_data_1__.9 (arg0.1: f32[2,4,4,3], arg1.1: f32[3,3,3,8]) -> (f32[2,4,4,8], f32[3,3,3,8]) {
  %arg0.1 = f32[2,4,4,3]{3,2,1,0} parameter(0), metadata={op_name="XLA_Args"}
  %arg1.1 = f32[3,3,3,8]{3,2,1,0} parameter(1), metadata={op_name="XLA_Args"}
  %convolution.1 = f32[2,4,4,8]{3,2,1,0} convolution(%arg0.1, %arg1.1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, metadata={op_type="Conv2D" op_name="m_1/conv_1/convolution"}
  %fusion.2 = f32[2,4,4,8]{3,2,1,0} fusion(%convolution.1), kind=kLoop, calls=%fused_computation.2
  %transpose_copy_fusion = f32[3,4,4,2]{3,2,1,0} fusion(%arg0.1), kind=kLoop, calls=%fused_computation.1
  %convolution.2 = f32[3,3,3,8]{3,2,1,0} convolution(%transpose_copy_fusion, %fusion.2), window={size=4x4 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, metadata={op_type="Conv2DBackpropFilter" op_name="gradient_tape/m_1/conv_1/convolution/Conv2DBackpropFilter"}
  %convolution-window-dilated = f32[3,1,1,8]{3,2,1,0} convolution(%transpose_copy_fusion, %fusion.2), window={size=4x4 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  %copy.5 = f32[3,3,3,8]{3,2,1,0} copy(%arg1.1)
  %constant.9 = f32[] constant(0)
  %wrapped_reduce-window = f32[1,1,1,8]{3,2,1,0} fusion(%convolution.1, %constant.9), kind=kLoop, calls=%wrapped_reduce-window_computation
  ROOT %tuple = (f32[2,4,4,8]{3,2,1,0}, f32[3,3,3,8]{3,2,1,0}) tuple(%fusion.2, %convolution.2)
}
"""


@pytest.mark.parametrize("op_type, op_name, expected", [
    ("Conv2D", "StatefulPartitionedCall/m_1/conv1_1/convolution", CONV_FWD),
    ("Conv2DBackpropInput", "gradient_tape/m_1/conv1_1/convolution/Conv2DBackpropInput", CONV_BWD_INPUT),
    ("Conv2DBackpropFilter", "gradient_tape/m_1/conv1_1/convolution/Conv2DBackpropFilter", CONV_BWD_FILTER),
    ("Mul", "StatefulPartitionedCall/m_1/stage1_unit1_1/bn1_1/batchnorm/mul", BN_FWD),
    ("Sum", "StatefulPartitionedCall/gradient_tape/m_1/final_bn_1/batchnorm/add_1/Sum", BN_BWD),
    ("AssignAddVariableOp", "StatefulPartitionedCall/sgd/AssignAddVariableOp_3", OPTIMIZER),
    ("Sub", "sgd/Sub_68", OPTIMIZER),
    ("ReluGrad", "gradient_tape/m_1/stage1_unit1_1/gate_1/ReluGrad", ELEMENTWISE),
    ("Pad", "m_1/stage2_unit1_1/Pad", OTHER),
])
def test_classify_tensorflow_ops(op_type, op_name, expected):
    assert op_types.classify(op_type, op_name, BN, "sgd") == expected


def test_hlo_instructions_take_their_tensorflow_op_or_the_convolution_they_feed():
    ops = hlo.parse_hlo(HLO)
    got = {name: hlo.classify_hlo(name, ops, BN, "sgd") for name in ops}
    assert got["convolution.1"] == CONV_FWD
    assert got["fusion.2"] == ELEMENTWISE  # metadata of the fused root (Relu)
    assert ops["transpose_copy_fusion"].layout
    assert got["transpose_copy_fusion"] == CONV_BWD_FILTER  # feeds convolution.2
    assert got["convolution-window-dilated"] == CONV_BWD_FILTER
    assert got["copy.5"] == LAYOUT
    assert got["wrapped_reduce-window"] == BN_FWD  # its reducer is named after bn1's moments
    assert got["tuple"] == OTHER


def test_breakdown_shares_add_up_to_100_with_ops_side_by_side():
    ms = 10**9  # picoseconds
    steps = [(0, 10 * ms), (12 * ms, 22 * ms)]
    events = [trace.OpEvent(0, "conv", CONV_FWD, True, 1 * ms, 5 * ms),
              trace.OpEvent(1, "bn", BN_FWD, False, 3 * ms, 7 * ms),  # overlaps conv
              trace.OpEvent(0, "relu", ELEMENTWISE, False, 13 * ms, 15 * ms),
              trace.OpEvent(0, "before", OTHER, False, -3 * ms, -1 * ms)]  # outside the steps
    result = trace.breakdown(events, steps)
    shares = {k: v["percent"] for k, v in result["categories"].items()}
    assert sum(shares.values()) == pytest.approx(100)
    assert shares[OUTSIDE] == pytest.approx(100 * (22 - 6 - 2) / 22)  # busy: 1-7 and 13-15
    assert shares[CONV_FWD] == pytest.approx(shares[BN_FWD])
    assert result["step_ms"] == pytest.approx(11) and result["steps"] == 2
    assert result["concurrency"] == pytest.approx(10 / 8)
    assert result["categories"][CONV_FWD]["kernel_ms_per_step"] == pytest.approx(2)
    # 1-3 ms alone, 3-5 ms beside the batch-norm op: 2 + 2 / 2 ms over two steps
    assert result["categories"][CONV_FWD]["wall_ms_per_step"] == pytest.approx(1.5)


@pytest.mark.slow  # a profiled child process per XLA setting (15 s)
def test_profile_command_on_a_tiny_model(tmp_path):
    command = [sys.executable, "-m", "benchmarks.profile", "--model", "gresnetfc2", "--batch", "8",
               "--steps", "2", "--jit-compile", "both", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "profile.gresnetfc2.json").read_text())
    assert [run["jit_compile"] for run in result["runs"]] == [True, False]
    assert result["sgemm_gflops"] > 0 and result["peak_gflops"] > 0
    for run in result["runs"]:
        assert sum(c["percent"] for c in run["categories"].values()) == pytest.approx(100, abs=0.5)
        assert run["steps"] == 2 and run["step_ms"] > 0
        assert run["categories"][OPTIMIZER]["op_ms_per_step"] > 0
    assert result["runs"][0]["hlo_modules"] >= 1  # the XLA run read its HLO
    assert "| outside ops |" in (tmp_path / "profile.gresnetfc2.md").read_text()
