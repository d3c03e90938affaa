"""paynter from Python: bond graph models in, simulations out.

    import paynter
    m = paynter.load("examples/B1_pendulum.yaml")
    print(m.check())
    r = m.simulate(t_end=10, rtol=1e-8, atol=1e-10, dt_out=0.01, params={"B": 5})
    r.t, r["gamma"]            # numpy arrays (views of the run's one buffer)
    r.plot("gamma", path="gamma.png")

Every function runs the command line's own code (paynter/run.h): the same
model and options give the same report text and the same numbers as
`paynter check|causality|equations|simulate`. See docs/python.md.
"""

import atexit
import hashlib
import math
import numbers
import os
import shutil
import sys
import tempfile

from . import _paynter

__all__ = ["Error", "ModelError", "Model", "Result", "Comparison", "Linearization", "load", "loads", "from_dict",
           "to_yaml", "simulate"]

#: The version of paynter (that of `paynter --version`).
__version__ = _paynter.version

#: Every failure of paynter (a failure outside the model: an internal error).
Error = _paynter.Error
#: A failure with a diagnostic (paynter::Diagnostic): the model file's errors,
#: and every error of a run. Attributes file, line, column, element, bond,
#: message, expected, got, hint (None where the diagnostic has none); str() is
#: the text the command line prints.
ModelError = _paynter.ModelError


# ---- models from text and dicts -------------------------------------------------

_text_dir = None


def _private_file(text):
    """A file holding `text`, in a directory of this process's own (mode 0700,
    removed at exit), named by the text's digest: the stage cache and the
    messages need a file."""
    global _text_dir
    if _text_dir is None:
        _text_dir = tempfile.mkdtemp(prefix="paynter-")
        atexit.register(shutil.rmtree, _text_dir, True)
    data = text.encode("utf-8")
    path = os.path.join(_text_dir, "model_%s.yaml" % hashlib.sha256(data).hexdigest()[:24])
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=_text_dir, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def _quoted(text):
    """A YAML double-quoted scalar: every character that is not plain printable
    ASCII is escaped, so the text reads back exactly and is never a tag, an
    anchor, a number or a key."""
    out = ['"']
    for ch in text:
        c = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 0x20 <= c < 0x7F:
            out.append(ch)
        elif c <= 0xFF:
            out.append("\\x%02x" % c)
        elif c <= 0xFFFF:
            out.append("\\u%04x" % c)
        else:
            out.append("\\U%08x" % c)
    out.append('"')
    return "".join(out)


def _scalar(value, where):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("%s: %r is not a finite number" % (where, value))
        return repr(value)
    if isinstance(value, str):
        return _quoted(value)
    raise TypeError("%s: a model holds strings, numbers, booleans, lists and dicts, not %s"
                    % (where, type(value).__name__))


def _emit(value, indent, where, lines):
    """Appends the block-style YAML lines of a dict or list value."""
    pad = "  " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError("%s: keys are strings, not %s" % (where, type(key).__name__))
            here = "%s.%s" % (where, key)
            if isinstance(item, (dict, list, tuple)) and item:
                lines.append("%s%s:" % (pad, _quoted(key)))
                _emit(item, indent + 1, here, lines)
            else:
                lines.append("%s%s: %s" % (pad, _quoted(key), _inline(item, here)))
    else:
        for i, item in enumerate(value):
            here = "%s[%d]" % (where, i)
            if isinstance(item, (dict, list, tuple)) and item:
                lines.append("%s-" % pad)
                _emit(item, indent + 1, here, lines)
            else:
                lines.append("%s- %s" % (pad, _inline(item, here)))


def _inline(value, where):
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    return _scalar(value, where)


def to_yaml(model):
    """The YAML text of a model given as a dict (the model file's structure:
    docs/model-format.md). Every string is double-quoted and escaped, keys
    too; no tags, anchors or aliases are written."""
    if not isinstance(model, dict):
        raise TypeError("a model is a dict, not %s" % type(model).__name__)
    lines = ["# written by paynter.to_yaml"]
    _emit(model, 0, "model", lines)
    return "\n".join(lines) + "\n"


# ---- results ------------------------------------------------------------------


class Result:
    """One run: the output columns over time.

    r.t, r["name"]: numpy arrays, read-only views of one row-major buffer (no
    copy); r.data: the whole (rows, columns) array; r.columns: "t", then the
    outputs; r.stats: steps, rejected, rhs_evals, jac_evals, projections,
    integrate_seconds, compile_seconds, ready_seconds, backend, method,
    constraints, stiff_at; r.report: the constraint method's report
    (mechanisms), else "".
    """

    def __init__(self, raw):
        self.data = raw["data"]
        self.data.flags.writeable = False
        self.columns = list(raw["columns"])
        self.stats = dict(raw["stats"])
        self.report = raw["report"]
        self._index = {name: i for i, name in enumerate(self.columns)}

    @property
    def t(self):
        return self.data[:, 0]

    def __getitem__(self, name):
        try:
            return self.data[:, self._index[name]]
        except KeyError:
            raise KeyError("no column %r; the columns are %s" % (name, ", ".join(self.columns))) from None

    def __contains__(self, name):
        return name in self._index

    def __len__(self):
        return self.data.shape[0]

    def keys(self):
        return list(self.columns)

    def __repr__(self):
        return "<paynter.Result: %d rows, columns %s>" % (len(self), ", ".join(self.columns))

    def _repr_html_(self):
        """A table of the first and last rows, for Jupyter (names escaped)."""
        import html

        rows = list(range(len(self))) if len(self) <= 10 else list(range(5)) + [None] + list(range(len(self) - 5, len(self)))
        out = ["<table><thead><tr>"] + ["<th>%s</th>" % html.escape(c) for c in self.columns] + ["</tr></thead><tbody>"]
        for i in rows:
            if i is None:
                out.append("<tr>" + "<td>&hellip;</td>" * len(self.columns) + "</tr>")
            else:
                out.append("<tr>" + "".join("<td>%.6g</td>" % v for v in self.data[i]) + "</tr>")
        out.append("</tbody></table><p>%d rows &times; %d columns</p>" % (len(self), len(self.columns)))
        return "".join(out)

    def to_pandas(self):
        """A pandas DataFrame of the columns (needs pandas)."""
        import pandas

        return pandas.DataFrame(self.data, columns=self.columns)

    def plot(self, *names, x="t", path=None, title=None):
        """Plots the named columns (default: every output) against `x` with
        matplotlib and returns the figure; `path` also saves it (written to a
        temporary and renamed). Without a display, matplotlib's Agg backend is
        used."""
        import matplotlib

        if "matplotlib.pyplot" not in sys.modules and not (
                os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = list(names) or [c for c in self.columns if c != x]
        fig, ax = plt.subplots()
        for name in names:
            ax.plot(self[x], self[name], label=name)
        ax.set_xlabel(x)
        ax.legend()
        ax.grid(True)
        if title:
            ax.set_title(title)
        if path is not None:
            path = os.fspath(path)
            base, ext = os.path.splitext(path)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=ext or ".png")
            os.close(fd)
            try:
                fig.savefig(tmp, format=(ext[1:] if ext else "png"))
                mask = os.umask(0)  # mkstemp made it 0600: the mode a new file gets
                os.umask(mask)
                os.chmod(tmp, 0o666 & ~mask)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        return fig


class Comparison:
    """Every constraint method on one model, as `paynter compare` tabulates it.

    methods: a list of dicts, one per method (minimal-coordinates,
    lagrange-multipliers, parasitic, zcp): "method", "failure" (None when it
    ran, else the reason), "integrate_seconds", "steps", "rhs_evals",
    "position_drift", "velocity_drift" (None for parasitic), "energy_balance",
    "max_difference" (output -> largest difference to the reference).
    reference: the method the differences are to; markdown and csv: the
    table's texts (those `paynter compare` prints and writes).
    """

    def __init__(self, raw):
        self.methods = [dict(m) for m in raw["methods"]]
        self.reference = raw["reference"]
        self.outputs = list(raw["outputs"])
        self.markdown = raw["markdown"]
        self.csv = raw["csv"]

    def __getitem__(self, method):
        for m in self.methods:
            if m["method"] == method:
                return m
        raise KeyError("no method %r; the methods are %s" % (method, ", ".join(m["method"] for m in self.methods)))

    def __repr__(self):
        return self.markdown

    def _repr_markdown_(self):
        return self.markdown


class Linearization:
    """A model linearized at an operating point, as `paynter linearize` finds it:
    dx' = A dx + B du, dy = C dx + D du.

    A, B, C, D: numpy arrays; states, inputs, outputs: their names; t, x, dx,
    y: the operating point, its derivatives and outputs; modes: a list of
    (eigenvalue, damping ratio, natural frequency in rad/s); how: how the
    operating point was found. Mechanisms: states are the independent
    coordinates; all_states, all_x, dependent and V (all states' deviations
    from the independent ones) as in docs/linear.md. str() is the text of
    `paynter linearize`.

    loop: None, or (linearized with loop_at=SIGNAL) the loop opened there as
    a dict: "signal"; "A", "B", "C", "D" of the loop opened, whose transfer
    function is the loop gain L (closed loop 1/(1 + L)); "states"; "poles"
    (its eigenvalues; the closed-loop poles are this object's eigenvalues);
    "gain_crossovers" [(w, phase margin in degrees)], "phase_crossovers"
    [(w, gain margin in dB)], "phase_margin" and "gain_margin" (the smallest,
    (w, margin) or None) and "margin_range" (the range searched, rad/s).
    """

    def __init__(self, raw, model, point):
        for key in ("A", "B", "C", "D", "V", "t", "how", "text"):
            setattr(self, key, raw[key])
        for key in ("states", "inputs", "outputs", "x", "dx", "y", "all_states", "dependent", "all_x", "modes"):
            setattr(self, key, list(raw[key]))
        self.loop = raw["loop"]
        self._model, self._point = model, point

    @property
    def eigenvalues(self):
        return [m[0] for m in self.modes]

    def bode(self, input=None, output=None, w_from=0.0, w_to=0.0, points=200):
        """The frequency response of `input` to `output` (either may be left
        out when the model has only one) at this operating point: a dict of
        numpy arrays "omega" (rad/s), "magnitude_db", "phase_deg" and the
        names "input", "output". w_from/w_to = 0: the range from the
        eigenvalues, as `paynter bode`. Linearized with loop_at and neither
        input nor output given: the loop gain, with the margins as in
        `loop`."""
        point = self._point if input is None and output is None else self._point[:4] + ("",)
        return self._model._bode(point, input or "", output or "", float(w_from), float(w_to), int(points))

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<paynter.Linearization: %d states, %d inputs, %d outputs at t = %g>" % (
            len(self.states), len(self.inputs), len(self.outputs), self.t)


# ---- models -------------------------------------------------------------------


def _run_options(source, t_end=None, t0=None, method=None, rtol=None, atol=None, dt_out=None, step=None,
                 max_steps=None, params=None, form=None, constraints=None, backend="auto", block_solve="auto",
                 parasitic_stiffness=0.0, parasitic_damping=0.0, assemble=False, stabilize=True, energy=False,
                 stage_cache=True, drift_tolerance=None, require_t_end=True):
    """RunOptions from simulate's keywords; the run settings the model
    carries (its `simulation:` section) fill those left as None."""
    for name, value in (("t_end", t_end), ("t0", t0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise TypeError("%s must be a number (seconds), not %s" % (name, type(value).__name__))
    o = _paynter.RunOptions()
    # A bad choice's error names the model as its other errors do ("<string>"
    # for a model from loads, not the private file it is written to).
    o.file = source.display or source.path
    given = [name for name, value in (("t_end", t_end), ("t0", t0), ("method", method), ("rtol", rtol),
                                      ("atol", atol), ("dt_out", dt_out), ("step", step), ("max_steps", max_steps),
                                      ("form", form), ("constraints", constraints),
                                      ("drift_tolerance", drift_tolerance)) if value is not None]
    o.t0 = 0.0 if t0 is None else float(t0)
    o.t_end = 0.0 if t_end is None else float(t_end)
    o.method = "dopri5" if method is None else method
    o.method_given = method is not None
    o.rtol = 1e-6 if rtol is None else float(rtol)
    o.atol = 1e-9 if atol is None else float(atol)
    o.dt_out = 0.0 if dt_out is None else float(dt_out)
    o.step = 1e-3 if step is None else float(step)
    if max_steps is not None:
        o.max_steps, o.max_steps_given = int(max_steps), True
    o.params = _param_list(params)
    o.form = "state" if form is None else form
    o.constraints = "auto" if constraints is None else constraints
    o.backend, o.block_solve = backend, block_solve
    o.parasitic_stiffness, o.parasitic_damping = float(parasitic_stiffness), float(parasitic_damping)
    o.assemble, o.stabilize, o.energy, o.stage_cache = bool(assemble), bool(stabilize), bool(energy), bool(stage_cache)
    if drift_tolerance is not None:
        o.drift_tolerance = float(drift_tolerance)
    o.progress = False
    o.file = source.path
    _paynter.apply_model_settings(source, o, given, bool(require_t_end))
    return o


def _param_list(params):
    if params is None:
        return []
    items = params.items() if isinstance(params, dict) else params
    return [(str(name), float(value)) for name, value in items]


class Model:
    """A model file (or a text or dict written to a private file). The file is
    read again by every call, as the commands read it."""

    def __init__(self, path, display="", build=False):
        self.path = path
        self._source = _paynter.Source(path, display)
        self.name = _paynter.read(self._source, bool(build))

    def __repr__(self):
        return "<paynter.Model %r from %s>" % (self.name, self._source.display or self.path)

    def check(self):
        """The report of `paynter check`; raises ModelError where it fails."""
        return _paynter.check(self._source)

    def causality(self, procedure="SCAP", constraints="auto"):
        """The report of `paynter causality`; raises ModelError where the
        command fails, and Error (the report as its message, and as its
        attribute `report`) where causal conflicts remain (exit status 1)."""
        status, text = _paynter.causality(self._source, procedure, constraints)
        if status != 0:
            e = Error(text)
            e.report = text
            raise e
        return text

    def equations(self, form="state", latex=False, explain=False, constraints="auto"):
        """The text of `paynter equations` (LaTeX with latex=True)."""
        return _paynter.equations(self._source, bool(latex), form, bool(explain), constraints)

    def simulate(self, t_end=None, **options):
        """Simulates as `paynter simulate` does, with the same options (as
        keywords: t0, method, rtol, atol, dt_out, step, max_steps, params
        (a dict NAME -> value), form, constraints, backend, block_solve,
        parasitic_stiffness, parasitic_damping, assemble, stabilize, energy,
        stage_cache) and returns a Result. A setting not given comes from
        the model's run settings (its `simulation:` section), if it has them:

            r = paynter.load("examples/rlc.yaml").simulate(0.1, rtol=1e-8)
        """
        return Result(_paynter.simulate(self._source, _run_options(self._source, t_end, **options)))

    def simulate_many(self, param_sets, t_end=None, threads=None, errors="raise", **options):
        """Runs once per dict of parameter values in `param_sets` (over
        options' `params`), in parallel on `threads` threads (default: the
        CPUs) without the GIL, and returns the Results in the input order.
        The model is prepared once (once per distinct value of a parameter
        the build computes numbers from). A run that fails: errors="raise"
        raises its error (the first in input order, after every run has
        ended, with its index as attribute `index`); errors="return" puts the
        exception object in its place."""
        if errors not in ("raise", "return"):
            raise ValueError("errors is 'raise' or 'return', not %r" % (errors,))
        sets = [_param_list(p) for p in param_sets]
        if threads is None or threads == 0:
            threads = os.cpu_count() or 1
        options = _run_options(self._source, t_end, **options)
        out = _paynter.simulate_many(self._source, options, sets, int(threads))
        results = []
        for i, item in enumerate(out):
            if isinstance(item, BaseException):
                item.index = i
                if errors == "raise":
                    raise item
                results.append(item)
            else:
                results.append(Result(item))
        return results

    def describe(self, **options):
        """The model as a run with these options (simulate's keywords: form,
        constraints, params, ...) sees it: a dict of "parameters" (name ->
        value, derived parameters included), "states" and "outputs" (names,
        in the order of a Result's columns)."""
        d = _paynter.describe(self._source, _run_options(self._source, 1.0, require_t_end=False, **options))
        return {"parameters": dict(d["parameters"]), "states": list(d["states"]), "outputs": list(d["outputs"])}

    @property
    def parameters(self):
        """The parameters' values, as the model file gives them (derived ones included)."""
        return self.describe()["parameters"]

    @property
    def states(self):
        """The names of the state variables (state form)."""
        return self.describe()["states"]

    @property
    def outputs(self):
        """The names of the outputs, as a Result's columns after t."""
        return self.describe()["outputs"]

    def draw(self, path=None, procedure="SCAP", constraints="auto", expand=False, highlight=0):
        """Draws the bond graph with its causal strokes, as `paynter draw`
        does: into `path` (.svg, .png, .pdf or .dot; Graphviz) when given,
        else returns the Graphviz source. A model with submodels, vector bonds
        or a multibody section is drawn as its components unless expand=True;
        `highlight` marks zero-order causal path N.

            paynter.load("examples/rlc.yaml").draw("rlc.svg")
        """
        dot = _paynter.drawing_dot(self._source, procedure, constraints, bool(expand), int(highlight))
        if path is None:
            return dot
        _paynter.render_dot(self._source, dot, os.fspath(path))
        return None

    def _repr_svg_(self):
        """The drawing, for Jupyter (None when Graphviz is missing or the
        model cannot be drawn)."""
        directory = tempfile.mkdtemp(prefix="paynter-draw-")
        try:
            path = os.path.join(directory, "model.svg")
            self.draw(path)
            with open(path) as f:
                return f.read()
        except Exception:
            return None
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def report(self, path, t_end=None, procedure="SCAP", **options):
        """Simulates (simulate's keywords) and writes the interactive HTML
        report to `path`, as `paynter report` does."""
        _paynter.report(self._source, _run_options(self._source, t_end, **options), procedure, os.fspath(path))

    def expand(self, after=None):
        """The model as YAML after the front end's passes, as `paynter expand`
        writes it: the scalar model (every pass), or the model after the pass
        `after` ("submodels", "overrides", "poses", "multibody",
        "vector-bonds", "parasitic", "energy")."""
        return _paynter.expand(self._source, "" if after is None else after)

    def compare(self, t_end=None, **options):
        """Simulates by every constraint method, as `paynter compare` does
        (simulate's options as keywords; the energy accounting is added for the
        balance column), and returns a Comparison."""
        return Comparison(_paynter.compare(self._source, _run_options(self._source, t_end, **options)))

    def linearize(self, at=None, steady=False, states=None, params=None, loop_at=None):
        """Linearizes at an operating point, as `paynter linearize` does: the
        initial state, the state reached at time `at`, or a steady state
        (steady=True); `states` (a dict NAME -> value) gives states' values,
        `params` overrides parameters. `loop_at` (a signal, "ctl.u") also
        opens the loop there, as `--loop-at`: see Linearization.loop.
        Returns a Linearization."""
        point = (_param_list(params), _param_list(states), None if at is None else float(at), bool(steady),
                 loop_at or "")
        return Linearization(_paynter.linearize(self._source, *point), self, point)

    def bode(self, input=None, output=None, w_from=0.0, w_to=0.0, points=200, at=None, steady=False, states=None,
             params=None, loop_at=None):
        """The frequency response of `input` to `output`, as `paynter bode`
        computes it (see Linearization.bode; the operating point as for
        linearize). With `loop_at` (and no input or output): the loop gain
        at that signal, as `paynter bode --loop-at`, the dict also holding
        "gain_crossovers", "phase_crossovers", "phase_margin", "gain_margin"
        and "margin_range" as Linearization.loop does."""
        point = (_param_list(params), _param_list(states), None if at is None else float(at), bool(steady),
                 loop_at or "")
        return self._bode(point, input or "", output or "", float(w_from), float(w_to), int(points))

    def _bode(self, point, input, output, w_from, w_to, points):
        raw = _paynter.bode(self._source, *point, input, output, w_from, w_to, points)
        keys = ["omega", "magnitude_db", "phase_deg", "input", "output"]
        if "phase_margin" in raw:
            keys += ["gain_crossovers", "phase_crossovers", "phase_margin", "gain_margin", "margin_range"]
        return {k: raw[k] for k in keys}

def load(path):
    """The model in a YAML file (docs/model-format.md); raises ModelError if it
    cannot be read."""
    return Model(os.fspath(path))


def loads(text):
    """A model from YAML text. It is written to a file in a private temporary
    directory of this process (removed at exit); its errors name "<string>".
    The model is built at once, as `check` builds it: an error in it (an
    unknown kind, an undefined name) raises ModelError here."""
    if not isinstance(text, str):
        raise TypeError("loads takes the model's YAML text (str), not %s" % type(text).__name__)
    return Model(_private_file(text), "<string>", build=True)


def from_dict(model):
    """A model from a dict with the model file's structure (name, parameters,
    elements, bonds, displacements, outputs, ...), written as YAML by
    to_yaml; its errors name "<dict>" (the lines are those of to_yaml(model)).
    The model is built at once: an error in it raises ModelError here, not at
    the first simulate.

        m = paynter.from_dict({"elements": [{"name": "S", "kind": "Se", "effort": 1},
                                            {"name": "J", "kind": "1"},
                                            {"name": "M", "kind": "I", "inertance": 2}],
                               "bonds": [["S", "J"], ["J", "M"]]})
    """
    return Model(_private_file(to_yaml(model)), "<dict>", build=True)


def simulate(path, t_end=None, **options):
    """paynter.load(path).simulate(t_end, **options)."""
    return load(path).simulate(t_end, **options)
