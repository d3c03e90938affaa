"""The Python module against the command line: the same model and options give
the same numbers (bit for bit) and the same texts. Run by CTest (python_module)
with PYTHONPATH at the build's python/ and PAYNTER_CLI at the build's program."""
import os
import subprocess

import numpy as np
import pytest

import paynter

SOURCE = os.environ.get("PAYNTER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("PAYNTER_CLI", os.path.join(SOURCE, "build", "paynter"))
B1 = os.path.join(SOURCE, "examples", "B1_pendulum.yaml")
RLC = os.path.join(SOURCE, "examples", "rlc.yaml")
B1_3D = os.path.join(SOURCE, "examples", "B1_pendulum_3d.yaml")
B1_OPTIONS = dict(t_end=10, rtol=1e-8, atol=1e-10, dt_out=0.01)


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def cli_csv(tmp_path, model, *args):
    """The CSV `paynter simulate` writes, read with Python's float (which reads
    the shortest round-trip form back to the same double)."""
    out = tmp_path / "cli.csv"
    p = cli("simulate", model, *args, "-o", str(out))
    assert p.returncode == 0, p.stderr
    lines = out.read_text().splitlines()
    columns = lines[0].split(",")
    data = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    return columns, data


def test_b1_equals_command_line_bit_for_bit(tmp_path):
    r = paynter.simulate(B1, **B1_OPTIONS)
    columns, data = cli_csv(tmp_path, B1, "--t-end", "10", "--rtol", "1e-8", "--atol", "1e-10", "--dt-out", "0.01")
    assert r.columns == columns == ["t", "gamma", "gammadot", "xG", "yG"]
    assert r.data.shape == data.shape == (1001, 5)
    assert np.array_equal(r.data, data)
    assert np.array_equal(r.t, data[:, 0]) and np.array_equal(r["gamma"], data[:, 1])
    # Overdamped (B = 10 > 2 sqrt(JA M g L/2) = 2.56): it creeps down towards
    # gamma = -pi/2 without passing it.
    g = r["gamma"]
    assert np.all(np.diff(g) <= 0) and -np.pi / 2 < g[-1] < -1.5
    s = r.stats
    assert s["method"] == "dopri5" and s["steps"] > 0 and s["rhs_evals"] >= 6 * s["steps"]
    assert s["backend"] in ("native", "tape", "tiered")
    for key in ("rejected", "jac_evals", "integrate_seconds", "compile_seconds", "ready_seconds"):
        assert key in s


def test_columns_are_views_of_one_buffer():
    r = paynter.simulate(B1, t_end=1)
    g = r["gamma"]
    assert g.base is not None and np.shares_memory(g, r.data) and np.shares_memory(r.t, r.data)
    assert not g.flags.writeable
    with pytest.raises(KeyError, match="no column 'nope'"):
        r["nope"]


def test_parameters_equal_command_line(tmp_path):
    m = paynter.load(B1)
    r = m.simulate(params={"B": 1}, **B1_OPTIONS)
    _, data = cli_csv(tmp_path, B1, "--t-end", "10", "--rtol", "1e-8", "--atol", "1e-10", "--dt-out", "0.01",
                      "--param", "B=1")
    assert np.array_equal(r.data, data)
    # Underdamped (B = 1 < 2.56): it swings past the bottom, which the
    # overdamped file value (B = 10) never does.
    assert r["gamma"].min() < -np.pi / 2 - 0.1
    assert m.simulate(**B1_OPTIONS)["gamma"].min() > -np.pi / 2


def test_rlc_against_its_analytic_solution():
    # Series RLC, voltage step V from rest: the capacitor's charge
    # q(t) = C V (1 - e^{-a t} (cos wd t + a/wd sin wd t)), a = R/2L.
    V, R, L, C = 12.0, 10.0, 0.1, 1e-3  # underdamped: a = 50 < 1/sqrt(LC) = 100
    r = paynter.load(RLC).simulate(t_end=0.1, rtol=1e-10, atol=1e-12, params={"V": V, "R": R})
    a = R / (2 * L)
    wd = np.sqrt(1 / (L * C) - a * a)
    t = r.t
    q = C * V * (1 - np.exp(-a * t) * (np.cos(wd * t) + a / wd * np.sin(wd * t)))
    assert np.max(np.abs(r["charge"] - q)) < 1e-9


@pytest.mark.parametrize("procedure", ["SCAP", "HaCAP", "LaCAP", "LCAP", "RCAP"])
def test_causality_takes_every_procedure_on_every_example(procedure):
    # The report of the command line, or a located error (ModelError, naming
    # the file) or the conflicts' report (Error with .report); never an
    # internal error. LaCAP and LCAP failed with "internal: ... pass a mutable
    # Model" on every model before they were given the model to add their
    # artificial sources to.
    examples = sorted(os.listdir(os.path.join(SOURCE, "examples")))
    for name in [n for n in examples if n.endswith(".yaml")]:
        path = os.path.join(SOURCE, "examples", name)
        expected = cli("causality", path, "--procedure", procedure)
        try:
            text = paynter.load(path).causality(procedure=procedure)
            assert expected.returncode == 0, name
            assert text == expected.stdout, name
        except paynter.ModelError as e:
            assert expected.returncode == 1 and name in expected.stderr, name
            assert e.file and name in e.file and "internal" not in e.message, (name, e.message)
        except paynter.Error as e:
            assert hasattr(e, "report") and expected.returncode == 1 and e.report == expected.stdout, (name, str(e))


def test_reports_equal_command_line():
    m = paynter.load(B1)
    assert m.check() == cli("check", B1).stdout
    assert m.causality() == cli("causality", B1).stdout
    assert m.causality(procedure="RCAP") == cli("causality", B1, "--procedure", "RCAP").stdout
    # The equations print in one order whatever GiNaC's order in this process
    # (it follows addresses): the same text as the command line's.
    assert m.equations() == cli("equations", B1).stdout
    latex = m.equations(form="lagrange2", latex=True)
    assert "\\begin{align}" in latex
    assert latex == cli("equations", B1, "--form", "lagrange2", "--latex").stdout
    b3 = os.path.join(SOURCE, "examples", "B3_quick_return.yaml")
    assert paynter.load(b3).equations(form="lagrange2") == cli("equations", b3, "--form", "lagrange2").stdout


def test_stats_count_tiered_runs(tmp_path, monkeypatch):
    # A cold cache: the run starts on the tape while its code compiles, and
    # its right-hand side runs are counted by tier, as --stats prints them.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    s = paynter.simulate(B1, t_end=50).stats
    assert s["backend"] == "tiered"
    assert s["tape_runs"] >= 1 and s["tape_runs"] + s["native_runs"] == s["rhs_evals"]
    if s["switched_at"] is None:
        assert s["native_runs"] == 0 and s["switch_seconds"] is None
    else:
        assert 0 <= s["switched_at"] <= 50 and s["switch_seconds"] > 0 and s["native_runs"] > 0
    assert s["events"] == 0
    # The tape alone: no tiers.
    t = paynter.simulate(B1, t_end=50, backend="tape").stats
    assert (t["backend"], t["tape_runs"], t["native_runs"], t["switched_at"]) == ("tape", 0, 0, None)
    assert t["rhs_evals"] == s["rhs_evals"]
    # Events are counted too (two rows at each impact).
    ball = paynter.simulate(os.path.join(SOURCE, "examples", "bouncing_ball.yaml"), t_end=3.5).stats
    assert ball["events"] > 0


def test_missing_file():
    with pytest.raises(paynter.ModelError) as e:
        paynter.load("/nonexistent/model.yaml")
    assert isinstance(e.value, paynter.Error)
    assert e.value.file == "/nonexistent/model.yaml"
    assert str(e.value).startswith("/nonexistent/model.yaml")


def test_bad_yaml_names_string_and_line():
    with pytest.raises(paynter.ModelError) as e:
        paynter.loads("name: x\nparameters:\n  a: [1, 2\n")
    err = e.value
    assert err.file == "<string>" and err.line is not None and err.line >= 3
    assert str(err).startswith("<string>:")
    assert "paynter-" not in str(err)  # the private file's path is not shown


def test_unknown_parameter_same_text_as_command_line(tmp_path):
    with pytest.raises(paynter.ModelError) as e:
        paynter.load(B1).simulate(t_end=1, params={"nope": 1})
    err = e.value
    assert "no parameter 'nope'" in err.message
    assert err.file == B1
    assert err.hint or err.expected or err.got  # the diagnostic's parts are there
    p = cli("simulate", B1, "--t-end", "1", "--param", "nope=1", "-o", str(tmp_path / "x.csv"))
    assert p.returncode == 1
    assert str(err) == p.stderr.rstrip("\n")


def test_bad_option_is_a_model_error():
    with pytest.raises(paynter.ModelError, match="method"):
        paynter.load(B1).simulate(t_end=1, method="euler")


def test_bad_choices_are_refused_as_the_command_line_refuses_them():
    m = paynter.load(B1)
    with pytest.raises(paynter.ModelError, match="--backend: 'gpu' is not one of auto, tiered, native, tape"):
        m.simulate(t_end=1, backend="gpu")
    with pytest.raises(paynter.ModelError, match="--block-solve: 'bogus' is not one of auto, dense, sparse"):
        m.simulate(t_end=1, block_solve="bogus")
    with pytest.raises(paynter.ModelError, match="--backend: 'gpu'"):
        m.simulate_many([{"B": 1}], t_end=1, backend="gpu", errors="return")
    with pytest.raises(paynter.ModelError, match="threads: -1 is below 0"):
        m.simulate_many([{"B": 1}], threads=-1, t_end=1)
    # The command line says the same of the same choices.
    for option, value in (("--backend", "gpu"), ("--block-solve", "bogus")):
        p = cli("simulate", B1, "--t-end", "1", option, value, "-o", os.devnull)
        assert p.returncode == 1 and option in p.stderr and value in p.stderr, p.stderr


def test_a_bad_choice_names_the_string_model_not_its_private_file():
    # Found by fuzz/fuzz_python.py: the choice's error named the private file
    # a model from loads is written to, where its other errors name <string>.
    m = paynter.loads(open(B1).read())
    for options in ({"method": "euler"}, {"backend": "gpu"}, {"form": "bogus"}):
        with pytest.raises(paynter.ModelError) as e:
            m.simulate(t_end=1, **options)
        assert str(e.value).startswith("<string>: error:"), str(e.value)
        assert e.value.file == "<string>" and m.path not in str(e.value), str(e.value)
    with pytest.raises(paynter.ModelError) as e:
        m.simulate_many([{}], t_end=1, method="euler")
    assert str(e.value).startswith("<string>: error:"), str(e.value)


def test_threads_give_the_same_results():
    m = paynter.load(B1)
    sets = [{"B": b} for b in (1, 2, 5, 10, 20)]
    one = m.simulate_many(sets, threads=1, t_end=5)
    two = m.simulate_many(sets, threads=2, t_end=5)
    for s, a, b in zip(sets, one, two):
        assert np.array_equal(a.data, b.data)
        assert np.array_equal(a.data, m.simulate(t_end=5, params=s).data)
    # The order is the input's: more damping, slower fall.
    assert one[0]["gamma"][50] < one[-1]["gamma"][50]


def test_simulate_many_errors():
    m = paynter.load(B1)
    out = m.simulate_many([{"B": 1}, {"nope": 2}, {"B": 3}], threads=2, t_end=1, errors="return")
    assert isinstance(out[0], paynter.Result) and isinstance(out[2], paynter.Result)
    assert isinstance(out[1], paynter.ModelError) and out[1].index == 1 and "nope" in out[1].message
    with pytest.raises(paynter.ModelError) as e:
        m.simulate_many([{"B": 1}, {"nope": 2}], threads=2, t_end=1)
    assert e.value.index == 1


def test_mechanism_parameters_prepared_per_value():
    # Every parameter of a mechanism shapes its build (the poses): each distinct
    # value is prepared on its own, and the results equal single runs.
    m = paynter.load(B1_3D)
    sets = [{"B": 4}, {"B": 8}, {"B": 4}]
    many = m.simulate_many(sets, threads=2, t_end=2)
    for s, r in zip(sets, many):
        assert np.array_equal(r.data, m.simulate(t_end=2, params=s).data)
    assert np.array_equal(many[0].data, many[2].data)
    assert not np.array_equal(many[0].data, many[1].data)


RLC_DICT = {
    "name": "rlc",
    "parameters": {"V": 5, "R": 10, "L": 0.1, "C": 1e-3},
    "elements": [
        {"name": "supply", "kind": "Se", "effort": "V"},
        {"name": "loop", "kind": "1"},
        {"name": "coil", "kind": "I", "inertance": "L"},
        {"name": "resistor", "kind": "R", "resistance": "R"},
        {"name": "capacitor", "kind": "C", "capacitance": "C"},
    ],
    "bonds": [
        {"name": "b_supply", "from": "supply", "to": "loop"},
        {"name": "b_coil", "from": "loop", "to": "coil"},
        {"name": "b_res", "from": "loop", "to": "resistor"},
        {"name": "b_cap", "from": "loop", "to": "capacitor"},
    ],
    "outputs": {"current": "f_loop", "v_cap": "e_capacitor", "charge": "q_capacitor", "v_res": "e_resistor"},
}


def test_from_dict_equals_the_file():
    d = paynter.from_dict(RLC_DICT)
    f = paynter.load(RLC)
    a, b = d.simulate(t_end=0.2, rtol=1e-9), f.simulate(t_end=0.2, rtol=1e-9)
    assert a.columns == b.columns and np.array_equal(a.data, b.data)
    assert d.equations() == f.equations()
    assert d.check() == f.check().replace(RLC, "<dict>")  # the report names the file


def test_from_dict_and_loads_refuse_a_bad_model_at_once():
    # An unknown kind (found when the model is built, after reading) is raised
    # by from_dict and loads themselves, not by the first simulate.
    bad = dict(RLC_DICT, elements=RLC_DICT["elements"][:-1] + [{"name": "capacitor", "kind": "Q"}])
    with pytest.raises(paynter.ModelError, match="unknown element kind 'Q'") as e:
        paynter.from_dict(bad)
    assert e.value.file == "<dict>"
    with pytest.raises(paynter.ModelError, match="undefined symbol 'nope'"):
        paynter.loads(paynter.to_yaml(dict(RLC_DICT, outputs={"x": "nope"})))


def test_dict_strings_stay_text():
    # Quotes, a YAML tag, a newline and a non-ASCII letter reach the model as
    # the text they are (here: an element name the model refuses, named back).
    name = 'x": !!python/object y\n\u00e9'
    bad = dict(RLC_DICT, elements=RLC_DICT["elements"] + [{"name": name, "kind": "R", "resistance": "R"}])
    with pytest.raises(paynter.ModelError) as e:
        paynter.from_dict(bad)
    assert e.value.file == "<dict>"
    assert e.value.element == name
    with pytest.raises(TypeError):
        paynter.to_yaml({"name": object()})


def test_to_pandas():
    pytest.importorskip("pandas")
    r = paynter.simulate(B1, t_end=1)
    df = r.to_pandas()
    assert list(df.columns) == r.columns
    assert np.array_equal(df["gamma"].to_numpy(), r["gamma"])


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    r = paynter.simulate(B1, t_end=1)
    path = tmp_path / "b1.png"
    fig = r.plot("gamma", "gammadot", path=path)
    assert [line.get_label() for line in fig.axes[0].lines] == ["gamma", "gammadot"]
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["b1.png"]  # no temporary left


def test_compare_equals_command_line(tmp_path):
    b2 = os.path.join(SOURCE, "examples", "B2_slider_crank_hyperstatic.yaml")
    c = paynter.load(b2).compare(t_end=0.2)
    prefix = tmp_path / "cmp"
    p = cli("compare", b2, "--t-end", "0.2", "-o", str(prefix))
    assert p.returncode == 0, p.stderr
    rows = [line.split(",") for line in (tmp_path / "cmp.csv").read_text().splitlines()]
    header, rows = rows[0], rows[1:]
    assert [r[0] for r in rows] == [m["method"] for m in c.methods] == [
        "minimal-coordinates", "lagrange-multipliers", "parasitic", "zcp"]
    assert c.reference == "minimal-coordinates"
    for row, m in zip(rows, c.methods):
        assert m["failure"] is None, m["failure"]
        figures = dict(zip(header, row))
        # The same runs: the same steps and evaluations, the same drift and differences
        # (the CSV's three digits); only the time taken differs.
        assert int(figures["steps"]) == m["steps"] and int(figures["rhs_evals"]) == m["rhs_evals"]
        assert float(figures["position_drift"]) == float("%.3e" % m["position_drift"])
        assert float(figures["energy_balance"]) == float("%.3e" % m["energy_balance"])
        for out in c.outputs:
            assert float(figures["diff_" + out]) == float("%.3e" % m["max_difference"][out])
    # The rigid methods keep the hyperstatic crank on its constraints; each
    # method's motion is the reference's within the tolerances.
    assert c["lagrange-multipliers"]["position_drift"] < 1e-8
    assert c["minimal-coordinates"]["max_difference"]["v_piston"] == 0
    assert 0 < c["lagrange-multipliers"]["max_difference"]["v_piston"] < 1e-3
    assert c.markdown.splitlines()[0].startswith("| method | time (s) |")
    with pytest.raises(KeyError, match="no method 'bogus'"):
        c["bogus"]


def test_linearize_and_bode_against_the_rlc_closed_form(tmp_path):
    # Series RLC: s^2 + (R/L) s + 1/(LC) = 0, and v_cap / V = 1 / (LC s^2 + RC s + 1).
    R, L, C = 10.0, 0.1, 1e-3
    m = paynter.load(RLC)
    lin = m.linearize()
    assert lin.inputs == ["supply"] and "v_cap" in lin.outputs and lin.A.shape == (2, 2)
    ev = sorted(lin.eigenvalues, key=lambda z: z.imag)
    wn = (1 / (L * C)) ** 0.5
    zeta = R / 2 * (C / L) ** 0.5
    expected = [complex(-zeta * wn, -wn * (1 - zeta**2) ** 0.5), complex(-zeta * wn, wn * (1 - zeta**2) ** 0.5)]
    for got, want in zip(ev, expected):
        assert abs(got - want) < 1e-9 * abs(want)
    # The command line's matrices, written in the shortest form that reads back exactly.
    p = cli("linearize", RLC, "-o", str(tmp_path / "rlc"))
    assert p.returncode == 0, p.stderr
    assert str(lin) == p.stdout
    lines = (tmp_path / "rlc_A.csv").read_text().splitlines()
    assert lines[0].split(",")[1:] == lin.states
    A = np.array([[float(v) for v in line.split(",")[1:]] for line in lines[1:]])
    assert np.array_equal(A, lin.A)
    # Bode of supply -> v_cap: 0 dB and -90 degrees at the natural frequency.
    b = lin.bode(output="v_cap", w_from=10, w_to=1000, points=201)
    assert b["input"] == "supply" and b["output"] == "v_cap" and len(b["omega"]) == 201
    w = b["omega"]
    h = 1 / (L * C * (1j * w) ** 2 + R * C * (1j * w) + 1)
    assert np.max(np.abs(b["magnitude_db"] - 20 * np.log10(np.abs(h)))) < 1e-9
    assert abs(b["phase_deg"][100] + 90) < 1e-9 and abs(w[100] - wn) < 1e-9 * wn
    p = cli("bode", RLC, "--output", "v_cap", "--from", "10", "--to", "1000", "--points", "201",
            "-o", str(tmp_path / "b.csv"))
    assert p.returncode == 0, p.stderr
    rows = [line.split(",") for line in (tmp_path / "b.csv").read_text().splitlines()[1:]]
    assert np.array_equal(np.array([[float(v) for v in r] for r in rows]),
                          np.column_stack([b["omega"], b["magnitude_db"], b["phase_deg"]]))
    # An operating point with a parameter and a state given, and bad choices.
    lin2 = m.linearize(params={"R": 20})
    assert abs(sum(lin2.eigenvalues).real + 20 / L) < 1e-9 * 200  # the trace of A: -R/L
    with pytest.raises(paynter.ModelError, match="'nope' is not an output"):
        m.bode(output="nope")
    with pytest.raises(paynter.ModelError, match="no state 'nope'"):
        m.linearize(states={"nope": 1})
    with pytest.raises(paynter.ModelError, match="exclude each other"):
        m.linearize(at=1, steady=True)


def test_loop_gain_margins_and_poles_as_the_command_line(tmp_path):
    # The PI-controlled motor opened at the controller's input: the same text,
    # margins and loop gain as `paynter linearize/bode --loop-at` (the margins
    # against the closed form: tests/loop_test.cc).
    motor = os.path.join(SOURCE, "examples", "dc_motor_speed_control.yaml")
    m = paynter.load(motor)
    lin = m.linearize(loop_at="ctl.u")
    p = cli("linearize", motor, "--loop-at", "ctl.u")
    assert p.returncode == 0, p.stderr
    assert str(lin) == p.stdout
    loop = lin.loop
    assert loop["signal"] == "ctl.u" and loop["A"].shape == (3, 3) and loop["gain_margin"] is None
    w, pm = loop["phase_margin"]
    assert abs(w - 29.6159) < 1e-4 and abs(pm - 83.8113) < 1e-4
    assert len(lin.eigenvalues) == 3 and all(z.real < 0 for z in lin.eigenvalues)
    assert m.linearize().loop is None
    b = m.bode(loop_at="ctl.u", w_from=1, w_to=1000, points=31)
    assert b["input"] == "ctl.u" and b["phase_margin"] == loop["phase_margin"]
    p = cli("bode", motor, "--loop-at", "ctl.u", "--from", "1", "--to", "1000", "--points", "31",
            "-o", str(tmp_path / "loop.csv"))
    assert p.returncode == 0, p.stderr
    rows = [line.split(",") for line in (tmp_path / "loop.csv").read_text().splitlines()[1:]]
    assert np.array_equal(np.array([[float(v) for v in r] for r in rows]),
                          np.column_stack([b["omega"], b["magnitude_db"], b["phase_deg"]]))
    assert lin.bode(w_from=1, w_to=1000, points=31)["phase_margin"] == loop["phase_margin"]
    with pytest.raises(paynter.ModelError, match="did you mean 'ctl.u'"):
        m.linearize(loop_at="ctl.uu")
    with pytest.raises(paynter.ModelError, match="excludes input and output"):
        m.bode(loop_at="ctl.u", output="speed")


def test_version_and_times_that_are_not_numbers():
    p = cli("--version")
    assert p.returncode == 0 and p.stdout == "paynter %s\n" % paynter.__version__
    m = paynter.load(RLC)
    with pytest.raises(TypeError, match="t_end must be a number"):
        m.simulate("10")
    with pytest.raises(TypeError, match="t0 must be a number"):
        m.simulate(1, t0="0")
    with pytest.raises(TypeError, match="t_end must be a number"):
        m.simulate(True)
    r = m.simulate(np.float64(0.01))
    assert r.t[-1] == 0.01


def test_run_settings_the_model_carries():
    with open(RLC) as f:
        text = f.read()
    m = paynter.loads(text + "simulation:\n  t_end: 0.004\n  dt_out: 0.001\n  method: bdf\n  rtol: 1e-10\n"
                             "  atol: 1e-12\n")
    r = m.simulate()
    given = paynter.load(RLC).simulate(0.004, dt_out=0.001, method="bdf", rtol=1e-10, atol=1e-12)
    assert list(r.t) == list(given.t) == [0, 0.001, 0.002, 0.003, 0.004]
    for name in ("current", "v_cap", "charge", "v_res"):
        assert list(r[name]) == list(given[name])
    # A keyword given wins over the model's setting.
    assert m.simulate(0.002).t[-1] == 0.002
    assert m.simulate(dt_out=0.002).t.tolist() == [0, 0.002, 0.004]
    with pytest.raises(paynter.ModelError, match="no end time for the run"):
        paynter.load(RLC).simulate()
    with pytest.raises(paynter.ModelError, match="the run setting 'method'"):
        paynter.loads(text + "simulation: {t_end: 1, method: euler}\n").simulate()


def test_parameters_states_and_outputs():
    m = paynter.load(RLC)
    assert m.parameters == {"V": 5.0, "R": 10.0, "L": 0.1, "C": 1e-3}
    assert sorted(m.states) == ["p_coil", "q_capacitor"]
    assert m.outputs == ["current", "v_cap", "charge", "v_res"]
    r = m.simulate(0.01)
    assert r.columns == ["t"] + m.outputs
    assert m.describe(params={"R": 20})["parameters"]["R"] == 20.0
    # A mechanism in joint coordinates has its joint coordinates as states.
    b1 = paynter.load(B1_3D)
    assert len(b1.describe(form="lagrange2")["states"]) < len(b1.states)
    with pytest.raises(paynter.ModelError, match="no parameter 'Rx'"):
        m.describe(params={"Rx": 1})


def test_draw_report_and_expand_as_the_commands_do(tmp_path):
    m = paynter.load(RLC)
    # draw: the same DOT the command renders (its .dot output), and a drawing file.
    p = cli("draw", RLC, "-o", str(tmp_path / "cli.dot"))
    assert p.returncode == 0, p.stderr
    assert m.draw() == (tmp_path / "cli.dot").read_text()
    assert m.draw(tmp_path / "rlc.svg") is None
    svg = (tmp_path / "rlc.svg").read_text()
    assert "<svg" in svg and "capacitor" in svg
    assert m._repr_svg_() == svg
    with pytest.raises(paynter.ModelError, match="SCAPX"):
        m.draw(procedure="SCAPX")
    # expand: the command's file, as text.
    for after in (None, "submodels"):
        args = ["expand", RLC, "-o", str(tmp_path / "x.yaml")] + ([] if after is None else ["--after", after])
        assert cli(*args).returncode == 0
        assert m.expand(after) == (tmp_path / "x.yaml").read_text()
    # report: one HTML file with the run's columns.
    m.report(tmp_path / "rlc.html", t_end=0.01)
    page = (tmp_path / "rlc.html").read_text()
    assert "<!DOCTYPE html>" in page and "v_cap" in page
    with pytest.raises(paynter.ModelError, match="no end time for the run"):
        m.report(tmp_path / "none.html")
    assert not (tmp_path / "none.html").exists()


def test_result_displays_as_a_table():
    r = paynter.load(RLC).simulate(0.01)
    page = r._repr_html_()
    assert page.count("<tr>") == 1 + 5 + 1 + 5  # header, first 5, ellipsis, last 5
    assert "<th>v_cap</th>" in page and "1001 rows &times; 5 columns" in page


def test_ctrl_c_stops_a_long_run():
    # rk4 at its 1 ms step to t = 1e9: 1e12 steps, hours. SIGINT (Ctrl-C),
    # sent from another thread once the run has started, ends it with
    # KeyboardInterrupt (whenever it comes: the run looks at the signals
    # while it integrates), and the module works on afterwards.
    import signal
    import threading
    m = paynter.load(RLC)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            m.simulate(t_end=1e9, method="rk4", max_steps=10**13)
    finally:
        timer.cancel()
    r = m.simulate(t_end=0.1)
    assert r.t[-1] == 0.1


def test_project_energy_as_the_command_line(tmp_path):
    """project_energy=True is --project-energy: the same numbers bit for bit,
    the energy columns added; a model's run setting turns it on, False (as
    --no-project-energy) off; a value that is not a bool is refused."""
    fourbar = os.path.join(SOURCE, "examples", "fourbar.yaml")
    options = dict(t_end=0.5, dt_out=0.01, constraints="lagrange-multipliers")
    r = paynter.load(fourbar).simulate(project_energy=True, **options)
    columns, data = cli_csv(tmp_path, fourbar, "--t-end", "0.5", "--dt-out", "0.01", "--constraints",
                            "lagrange-multipliers", "--project-energy")
    assert r.columns == columns and "energy_stored" in columns
    assert np.array_equal(r.data, data)
    plain = paynter.load(fourbar).simulate(energy=True, **options)
    assert not np.array_equal(plain.data, r.data)
    with open(fourbar) as f:
        text = f.read()
    m = paynter.loads(text + "simulation: {project_energy: true}\n")
    assert np.array_equal(m.simulate(**options).data, r.data)
    assert np.array_equal(m.simulate(project_energy=False, energy=True, **options).data, plain.data)
    with pytest.raises(TypeError, match="project_energy must be True or False"):
        paynter.load(fourbar).simulate(project_energy="yes", **options)
    with pytest.raises(paynter.ModelError, match="--project-energy applies to --constraints lagrange-multipliers"):
        paynter.load(fourbar).simulate(0.1, constraints="zcp", project_energy=True)
