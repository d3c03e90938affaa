"""Model.sweep and Model.fmu against `paynter sweep` and `paynter fmu`, the
arguments' checks, and the drawing of a model with submodels. Run by CTest
(python_module) with PYTHONPATH at the build's python/ and PAYNTER_CLI at the
build's program."""
import csv
import math
import os
import re
import subprocess
import zipfile

import numpy as np
import pytest

import paynter

SOURCE = os.environ.get("PAYNTER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("PAYNTER_CLI", os.path.join(SOURCE, "build", "paynter"))
B1 = os.path.join(SOURCE, "examples", "B1_pendulum.yaml")
RLC = os.path.join(SOURCE, "examples", "rlc.yaml")
MOTOR = os.path.join(SOURCE, "examples", "dc_motor_load.yaml")


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def read_csv(path):
    """Header and rows of a CSV file `paynter sweep` wrote (numbers as floats,
    the error message as text)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_sweep_equals_the_command_bit_for_bit(tmp_path):
    out = tmp_path / "b1.csv"
    p = cli("sweep", B1, "--t-end", "2", "--dt-out", "0.01", "--param", "B=0:20:5", "--threads", "2", "-o", str(out))
    assert p.returncode == 0, p.stderr
    s = paynter.load(B1).sweep({"B": (0, 20, 5)}, t_end=2, dt_out=0.01, threads=2)
    assert len(s) == 5 and s.shape == (5,) and s.names == ["B"] and s.failed == 0 and s.compiled_once
    assert s.coords["B"].tolist() == [0, 5, 10, 15, 20] and s.values[:, 0].tolist() == [0, 5, 10, 15, 20]
    # The rows: the long-format CSV, every number the same double.
    header, rows = read_csv(out)
    frame = s.to_pandas(rows=True)
    assert header == list(frame.columns) == ["run", "t", "gamma", "gammadot", "xG", "yG"]
    assert frame.shape == (len(rows), 6) == (5 * 201, 6)
    assert np.array_equal(frame.to_numpy(), np.array([[float(v) for v in r] for r in rows]))
    # The summary: the same columns and figures.
    header, rows = read_csv(str(out).replace(".csv", ".summary.csv"))
    summary = s.to_pandas()
    assert header == list(summary.columns)
    for k, row in enumerate(rows):
        for name, text in zip(header, row):
            mine = summary[name][k]
            if name == "error":
                assert mine == text
            else:
                assert same(float(mine), float(text)), (name, k, mine, text)
    # Each run is m.simulate(params=...) bit for bit.
    one = paynter.load(B1).simulate(t_end=2, dt_out=0.01, params={"B": 10})
    assert np.array_equal(s.run(2).data, one.data) and s.run(2).stats["params"] == {"B": 10.0}
    assert np.array_equal(s.data[2], one.data)


def test_grid_order_log_ranges_and_xarray(tmp_path):
    m = paynter.load(RLC)
    s = m.sweep({"R": (5, 20, 4), "C": "1e-4:1e-2:3"}, log=["C"], t_end=0.02)
    assert s.shape == (4, 3) and s.names == ["R", "C"]
    assert np.allclose(s.coords["C"], [1e-4, 1e-3, 1e-2], rtol=1e-15)
    # The last range varies fastest, as the command numbers the runs.
    out = tmp_path / "grid.csv"
    assert cli("sweep", RLC, "--t-end", "0.02", "--param", "R=5:20:4", "--param", "C=1e-4:1e-2:3", "--log", "C",
               "-o", str(out)).returncode == 0
    header, rows = read_csv(str(out).replace(".csv", ".summary.csv"))
    assert [[float(r[1]), float(r[2])] for r in rows] == s.values.tolist()
    x = s.to_xarray()
    assert x.dims == ("R", "C", "time", "output") and x.shape == (4, 3, 1001, 4)
    assert np.array_equal(x.sel(R=15, C=s.coords["C"][1], output="v_cap").values, s.run(2 * 3 + 1)["v_cap"])
    assert np.array_equal(x["t"].values, s.run(0).t)
    # The labels hold: the capacitor's charge is C times its voltage in every run.
    for c in s.coords["C"]:
        run = x.sel(C=c)
        assert np.allclose(run.sel(output="charge"), c * run.sel(output="v_cap"), rtol=1e-12, atol=1e-18)


def test_tables_from_a_file_a_dict_and_a_dataframe(tmp_path):
    import pandas as pd

    table = tmp_path / "planets.csv"
    table.write_text("L, g\n1, 9.81\n1, 3.71\n2, 1.62\n")
    m = paynter.load(B1)
    from_file = m.sweep(table=table, t_end=1)
    from_dict = m.sweep(table={"L": [1, 1, 2], "g": [9.81, 3.71, 1.62]}, t_end=1)
    from_frame = m.sweep(table=pd.DataFrame({"L": [1, 1, 2], "g": [9.81, 3.71, 1.62]}), t_end=1)
    for s in (from_file, from_dict, from_frame):
        assert s.names == ["L", "g"] and s.shape == (3,) and not s.compiled_once and s.own_builds == 3
        assert np.array_equal(s.data, from_file.data)
    # Crossed with a range: the table outermost.
    s = m.sweep({"B": (1, 2, 2)}, table={"g": [9.81, 1.62]}, t_end=1)
    assert s.shape == (2, 2) and s.values.tolist() == [[9.81, 1], [9.81, 2], [1.62, 1], [1.62, 2]]
    x = s.to_xarray()
    assert x.dims == ("case", "B", "time", "output") and x["g"].values.tolist() == [9.81, 1.62]


def test_sweep_errors_are_the_commands():
    m = paynter.load(B1)
    p = cli("sweep", B1, "--t-end", "1", "--param", "Bx=0:1:2", "-o", os.devnull + ".csv")
    assert p.returncode == 1
    with pytest.raises(paynter.ModelError) as e:
        m.sweep({"Bx": (0, 1, 2)}, t_end=1)
    assert "Bx" in str(e.value) and "Bx" in p.stderr
    with pytest.raises(paynter.ModelError, match="COUNT is not a whole number of at least 1"):
        m.sweep({"B": (0, 1, 0)}, t_end=1)
    with pytest.raises(paynter.ModelError, match="given twice"):
        m.sweep({"B": (0, 1, 2)}, params={"B": 3}, t_end=1)
    with pytest.raises(paynter.ModelError, match="no --param range"):
        m.sweep({"B": (1, 2, 2)}, log=["g"], t_end=1)
    with pytest.raises(paynter.ModelError):
        m.sweep({"B": "0:1"}, t_end=1)
    with pytest.raises(TypeError, match="COUNT must be a whole number"):
        m.sweep({"B": (0, 1, 2.5)}, t_end=1)
    with pytest.raises(TypeError, match="ranges must be a dict"):
        m.sweep([("B", 0, 1, 2)], t_end=1)
    with pytest.raises(ValueError, match="one value per run"):
        m.sweep(table={"L": [1, 2], "g": [9.81]}, t_end=1)
    with pytest.raises(ValueError, match="not a finite number"):
        m.sweep(table={"L": [float("nan")]}, t_end=1)
    with pytest.raises(paynter.ModelError, match="no rows"):
        m.sweep(table={"L": []}, t_end=1)
    with pytest.raises(paynter.ModelError, match="threads: -1 is below 0"):
        m.sweep({"B": (0, 1, 2)}, t_end=1, threads=-1)


def test_a_failed_run_is_recorded_and_the_others_go_on():
    # A negative pivot inertia (Izz well below -M L^2/4) makes the run blow up
    # or the step budget run out; the other runs are as alone.
    m = paynter.load(B1)
    s = m.sweep({"B": (5, 10, 2)}, table={"Izz": [0.083, -0.25]}, t_end=1, max_steps=2000)
    assert s.values[:, 0].tolist() == [0.083, 0.083, -0.25, -0.25]
    assert s.ok.tolist() == [True, True, False, False] and s.failed == 2
    assert all(s.errors[k] for k in (2, 3)) and not any(s.errors[k] for k in (0, 1))
    assert np.isnan(s.summary["final_gamma"][2]) and not s.to_pandas()["ok"][2]
    assert np.array_equal(s.run(1).data, m.simulate(t_end=1, max_steps=2000, params={"B": 10, "Izz": 0.083}).data)


def test_fmu_as_the_command_writes_it(tmp_path):
    m = paynter.load(RLC)
    info = m.fmu(tmp_path / "rlc.fmu", kind="cs", params={"R": 20})
    p = cli("fmu", RLC, "-o", str(tmp_path / "cli.fmu"), "--kind", "cs", "--param", "R=20")
    assert p.returncode == 0, p.stderr
    counts = re.search(r"(\d+) inputs, (\d+) states, (\d+) outputs, (\d+) parameters \((\d+) tunable, (\d+) calculated\)",
                       p.stdout)
    assert [int(v) for v in counts.groups()] == [info[k] for k in ("inputs", "states", "outputs", "parameters",
                                                                    "tunable", "calculated")]
    assert info["states"] == 2 and info["outputs"] == 4 and info["inputs"] == 1
    assert os.path.getsize(tmp_path / "rlc.fmu") == info["fmu_bytes"] > 0
    with zipfile.ZipFile(tmp_path / "rlc.fmu") as z:
        names = z.namelist()
        assert "modelDescription.xml" in names
        assert "binaries/linux64/%s.so" % info["model_identifier"] in names
        assert "<CoSimulation" in z.read("modelDescription.xml").decode()
    with pytest.raises(paynter.ModelError, match="kind: 'xx'"):
        m.fmu(tmp_path / "bad.fmu", kind="xx")
    assert not (tmp_path / "bad.fmu").exists()
    with pytest.raises(TypeError, match="rtol must be a number"):
        m.fmu(tmp_path / "bad.fmu", rtol="1e-6")
    # FMI 3.0, as --fmi-version 3 writes it
    info3 = m.fmu(tmp_path / "rlc3.fmu", kind="cs", fmi_version=3)
    assert info3["fmi_version"] == 3 and info3["library_path"].startswith("binaries/")
    assert info3["library_path"] != "binaries/linux64/%s.so" % info3["model_identifier"]
    with zipfile.ZipFile(tmp_path / "rlc3.fmu") as z:
        assert info3["library_path"] in z.namelist() and "sources/buildDescription.xml" in z.namelist()
        assert 'fmiVersion="3.0"' in z.read("modelDescription.xml").decode()
    with pytest.raises(paynter.ModelError, match="FMI 4 is not a version paynter exports"):
        m.fmu(tmp_path / "bad.fmu", fmi_version=4)
    assert not (tmp_path / "bad.fmu").exists()


def test_arguments_are_checked_before_anything_runs():
    m = paynter.load(RLC)
    with pytest.raises(TypeError, match=r"t_end must be a number \(seconds\), not str '10'"):
        m.simulate("10")
    with pytest.raises(TypeError, match="rtol must be a number, not str"):
        m.simulate(1, rtol="1e-8")
    with pytest.raises(TypeError, match="max_steps must be a whole number"):
        m.simulate(1, max_steps=10.5)
    with pytest.raises(TypeError, match="method must be a string"):
        m.simulate(1, method=4)
    with pytest.raises(TypeError, match="energy must be True or False"):
        m.simulate(1, energy="yes")
    with pytest.raises(TypeError, match=r"params\['R'\] must be a number"):
        m.simulate(1, params={"R": "5"})
    with pytest.raises(TypeError, match="params must be a dict"):
        m.simulate(1, params="R=5")
    with pytest.raises(TypeError, match="unexpected keyword argument 'rtl'; did you mean 'rtol'"):
        m.simulate(1, rtl=1e-8)
    with pytest.raises(TypeError, match="sweep.. got an unexpected keyword argument 'tend'; did you mean 't_end'"):
        m.sweep({"R": (1, 2, 2)}, tend=1)
    with pytest.raises(TypeError, match="points must be a whole number"):
        m.bode(points="3")
    with pytest.raises(TypeError, match="at must be a number"):
        m.linearize(at="1")
    with pytest.raises(TypeError, match="threads must be a whole number"):
        m.simulate_many([{"R": 1}], t_end=1, threads=1.5)
    with pytest.raises(TypeError, match="load takes a file's path"):
        paynter.load(None)
    # Values of the right type the command line refuses: its message.
    p = cli("simulate", RLC, "--t-end", "1", "--rtol", "-1", "-o", os.devnull + ".csv")
    with pytest.raises(paynter.ModelError) as e:
        m.simulate(1, rtol=-1)
    assert p.returncode == 1 and "a relative tolerance > 0" in p.stderr and "a relative tolerance > 0" in str(e.value)


def test_submodels_are_drawn_as_blocks_with_their_ports(tmp_path):
    m = paynter.load(MOTOR)
    blocks, flat = m.draw(), m.draw(expand=True)
    assert blocks != flat
    for instance in ("supply", "motor", "gear", "load", "friction"):
        assert '"comp:%s"' % instance in blocks and '"comp:%s"' % instance not in flat
    assert "lib:electrical/dc_motor" in blocks
    # Each written bond at a port is one edge labelled with its port(s), as `bonds:` names them.
    assert re.search(r'"comp:motor" -> "comp:gear" \[[^]]*taillabel="shaft", headlabel="p1"', blocks), blocks
    assert re.search(r'"comp:gear" -> "shaft" \[[^]]*taillabel="p2", headlabel=""', blocks), blocks
    assert '"motor.rotor"' not in blocks and '"motor.rotor"' in flat
    # The command draws the same.
    assert cli("draw", MOTOR, "-o", str(tmp_path / "b.dot")).returncode == 0
    assert (tmp_path / "b.dot").read_text() == blocks
    assert cli("draw", MOTOR, "--expand", "-o", str(tmp_path / "f.dot")).returncode == 0
    assert (tmp_path / "f.dot").read_text() == flat
