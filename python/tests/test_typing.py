"""A typed program using paynter, checked by mypy --strict against the stub
(typing_test.sh); it also runs (python_module's pytest collects it)."""
import os
from typing import Dict, List

import numpy as np
import numpy.typing as npt

import paynter

SOURCE = os.environ.get("PAYNTER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
RLC = os.path.join(SOURCE, "examples", "rlc.yaml")


def final_voltage(resistance: float) -> float:
    m: paynter.Model = paynter.load(RLC)
    r: paynter.Result = m.simulate(0.05, method="dopri5", params={"R": resistance}, rtol=1e-8)
    v: npt.NDArray[np.float64] = r["v_cap"]
    return float(v[-1])


def test_typed_use() -> None:
    m = paynter.load(RLC)
    names: List[str] = m.states
    values: Dict[str, float] = m.parameters
    lin: paynter.Linearization = m.linearize()
    b: paynter.Bode = lin.bode(output="v_cap", w_from=10.0, w_to=1000.0, points=5)
    s: paynter.Sweep = m.sweep({"R": (5, 20, 4)}, t_end=0.01, threads=2)
    assert names == ["p_coil", "q_capacitor"] and values["R"] == 10.0
    assert lin.A.shape == (2, 2) and b["omega"].shape == (5,)
    assert s.data.shape[0] == 4 and abs(final_voltage(10.0) - 5.0) < 1.0
