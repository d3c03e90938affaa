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
import difflib
import hashlib
import math
import numbers
import os
import shutil
import sys
import tempfile
import typing

import numpy

from . import _paynter

__all__ = ["Error", "ModelError", "Model", "Result", "Comparison", "Linearization", "Sweep", "Description", "Bode",
           "FmuInfo", "load", "loads", "from_dict", "to_yaml", "simulate", "RUN_OPTIONS", "__version__"]

#: The version of paynter (that of `paynter --version`).
__version__ = _paynter.version

#: Every failure of paynter (a failure outside the model: an internal error).
Error = _paynter.Error
#: A failure with a diagnostic (paynter::Diagnostic): the model file's errors,
#: and every error of a run. Attributes file, line, column, element, bond,
#: message, expected, got, hint (None where the diagnostic has none); str() is
#: the text the command line prints.
ModelError = _paynter.ModelError


class Description(typing.TypedDict):
    """What Model.describe returns (for type annotations).

    Example:

    >>> d: paynter.Description = paynter.load("examples/rlc.yaml").describe()
    >>> sorted(d)
    ['outputs', 'parameters', 'states']
    """
    parameters: typing.Dict[str, float]
    states: typing.List[str]
    outputs: typing.List[str]


class Bode(typing.TypedDict):
    """What Model.bode and Linearization.bode return: the frequency response
    as numpy arrays and the names of its input and output.

    Example:

    >>> b: paynter.Bode = paynter.load("examples/rlc.yaml").bode(output="v_cap", points=2, w_from=1, w_to=10)
    >>> b["omega"].tolist()
    [1.0, 10.0]
    """
    omega: numpy.ndarray
    magnitude_db: numpy.ndarray
    phase_deg: numpy.ndarray
    input: str
    output: str


class FmuInfo(typing.TypedDict):
    """What Model.fmu returns: what `paynter fmu` prints about the FMU.

    Example:

    >>> sorted(paynter.FmuInfo.__annotations__)[:4]      # Model.fmu's example makes one
    ['calculated', 'compile_seconds', 'fmu_bytes', 'form']
    """
    path: str
    model_identifier: str
    guid: str
    form: str
    states: int
    inputs: int
    outputs: int
    parameters: int
    tunable: int
    calculated: int
    compile_seconds: float
    library_bytes: int
    fmu_bytes: int


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
    too; no tags, anchors or aliases are written.

    Example:

    >>> print(paynter.to_yaml({"name": "one", "parameters": {"k": 2}}))
    # written by paynter.to_yaml
    "name": "one"
    "parameters":
      "k": 2
    <BLANKLINE>
    """
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

    Example:

    >>> r = paynter.load("examples/rlc.yaml").simulate(0.1)
    >>> r.data.shape, "v_cap" in r
    ((1001, 5), True)
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
        """The times of the rows (column 0), a read-only view.

        Example:

        >>> paynter.load("examples/rlc.yaml").simulate(0.1, dt_out=0.05).t.tolist()
        [0.0, 0.05, 0.1]
        """
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
        """The column names ("t", then the outputs).

        Example:

        >>> paynter.load("examples/rlc.yaml").simulate(0.1).keys()
        ['t', 'current', 'v_cap', 'charge', 'v_res']
        """
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
        """A pandas DataFrame of the columns (a copy; needs pandas).

        Example:

        >>> df = paynter.load("examples/rlc.yaml").simulate(0.1).to_pandas()
        >>> df.shape
        (1001, 5)
        """
        import pandas

        return pandas.DataFrame(self.data, columns=self.columns)

    def plot(self, *names, x="t", path=None, title=None):
        """Plots the named columns (default: every output) against `x` with
        matplotlib and returns the figure; `path` also saves it (written to a
        temporary and renamed). Without a display, matplotlib's Agg backend is
        used.

        Example:

        >>> fig = paynter.load("examples/rlc.yaml").simulate(0.1).plot("v_cap", path="v_cap.png")
        """
        import matplotlib

        # Without a display, Agg, unless pyplot is in use already, a backend
        # was chosen (MPLBACKEND) or this is a Jupyter kernel (its inline
        # backend shows the figure in the notebook).
        if "matplotlib.pyplot" not in sys.modules and "ipykernel" not in sys.modules and not (
                os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("MPLBACKEND")):
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

    Example:

    >>> c = paynter.load("examples/B1_pendulum_3d.yaml").compare(1)
    >>> [m["method"] for m in c.methods]
    ['minimal-coordinates', 'lagrange-multipliers', 'parasitic', 'zcp']
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

    Example:

    >>> lin = paynter.load("examples/rlc.yaml").linearize()
    >>> lin.inputs, lin.outputs
    (['supply'], ['current', 'v_cap', 'charge', 'v_res'])
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
        """The eigenvalues of A (those of `modes`).

        Example:

        >>> [(round(e.real, 3), round(abs(e.imag), 3))     # -R/2L +- j sqrt(1/LC - (R/2L)^2)
        ...  for e in paynter.load("examples/rlc.yaml").linearize().eigenvalues]
        [(-50.0, 86.603), (-50.0, 86.603)]
        """
        return [m[0] for m in self.modes]

    def bode(self, input=None, output=None, w_from=0.0, w_to=0.0, points=200):
        """The frequency response of `input` to `output` (either may be left
        out when the model has only one) at this operating point: a dict of
        numpy arrays "omega" (rad/s), "magnitude_db", "phase_deg" and the
        names "input", "output". w_from/w_to = 0: the range from the
        eigenvalues, as `paynter bode`. Linearized with loop_at and neither
        input nor output given: the loop gain, with the margins as in
        `loop`.

        Example:

        >>> b = paynter.load("examples/rlc.yaml").linearize().bode(output="v_cap", w_from=10, w_to=1000)
        >>> b["input"], len(b["omega"])
        ('supply', 200)
        """
        point = self._point if input is None and output is None else self._point[:4] + ("",)
        return self._model._bode(point, input, output, w_from, w_to, points)

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<paynter.Linearization: %d states, %d inputs, %d outputs at t = %g>" % (
            len(self.states), len(self.inputs), len(self.outputs), self.t)


class Sweep:
    """Many runs of one model (Model.sweep), as `paynter sweep` gathers them
    (docs/sweeps.md), in memory.

    data: a float64 array [runs, rows, columns] (column 0 is t, then the
    outputs; a failed run's missing rows are NaN); columns: their names;
    names: the varied parameters (the table's, then the ranges'); values:
    [runs, names] their values per run; summary: a numpy structured array,
    one record per run, with the fields of `paynter sweep`'s summary (run,
    the varied parameters, ok, error, t_final, rows, steps, rejected,
    rhs_evals, jac_evals, own_build, final_/min_/max_<output>); ok: a bool
    array; errors: the failed runs' messages ("" for a run that ran);
    shape: the grid's shape (the table's rows, then each range's count; a
    run's index is its position in that grid, the last range fastest);
    coords: each range's values. s.run(k) is run k as a Result;
    s.to_pandas() the summary as a DataFrame, s.to_pandas(rows=True) the
    rows in long format (the CSV `paynter sweep -o OUT.csv` writes);
    s.to_xarray() a labelled DataArray (needs xarray).

    Example:

    >>> s = paynter.load("examples/rlc.yaml").sweep({"R": (5, 20, 4)}, t_end=0.05)
    >>> s.coords["R"].tolist(), s.data.shape
    ([5.0, 10.0, 15.0, 20.0], (4, 1001, 5))
    """

    def __init__(self, raw, model_name=""):
        self.model_name = model_name
        self.columns = list(raw["columns"])
        self.names = list(raw["names"])
        self.values = raw["values"]
        self.data = raw["data"]
        self.failed = raw["failed"]
        self.own_builds = raw["own_builds"]
        self.compiled_once = raw["compiled_once"]
        self.threads = raw["threads"]
        runs = self.data.shape[0]
        table_rows = raw["table_rows"]
        self.coords = {name: numpy.asarray(values, dtype=float) for name, values in raw["ranges"]}
        self.shape = ((table_rows,) if table_rows else ()) + tuple(len(v) for v in self.coords.values())
        raw_summary = raw["summary"]
        counts = ("ok", "rows", "steps", "rejected", "rhs_evals", "jac_evals", "own_build")
        fields = [("run", "i8")] + [(n, "f8") for n in self.names]
        for name in raw["summary_columns"]:
            fields.append((name, "O" if name == "error" else "i8" if name in counts else "f8"))
        summary = numpy.zeros(runs, dtype=fields)
        summary["run"] = numpy.arange(runs)
        for j, name in enumerate(self.names):
            summary[name] = self.values[:, j]
        for name in raw["summary_columns"]:
            summary[name] = raw_summary[name]
        self.summary = summary
        self.ok = summary["ok"].astype(bool)
        self.errors = list(raw_summary["error"])

    def __len__(self):
        return self.data.shape[0]

    def __repr__(self):
        return "<paynter.Sweep: %d runs over %s (%d failed), columns %s>" % (
            len(self), ", ".join(self.names) or "no parameter", self.failed, ", ".join(self.columns))

    def run(self, k):
        """Run k (0 <= k < len(s)) as a Result: its recorded rows (those before
        the failure for a failed run) and its solver statistics.

        Example:

        >>> s = paynter.load("examples/rlc.yaml").sweep({"R": (5, 20, 4)}, t_end=0.05)
        >>> s.run(1)["v_cap"].shape
        (1001,)
        """
        k = _whole("k", k)
        if not -len(self) <= k < len(self):
            raise IndexError("run %d: the sweep has %d runs" % (k, len(self)))
        k %= len(self)
        rows = int(self.summary["rows"][k])
        stats = {key: int(self.summary[key][k]) for key in ("steps", "rejected", "rhs_evals", "jac_evals")}
        stats["params"] = dict(zip(self.names, self.values[k].tolist()))
        stats["error"] = self.errors[k] or None
        return Result({"data": self.data[k, :rows, :], "columns": self.columns, "stats": stats, "report": ""})

    def to_pandas(self, rows=False):
        """The summary as a pandas DataFrame (one line per run, the columns of
        `paynter sweep`'s OUT.summary.csv); with rows=True every run's rows in
        long format: run, t, the outputs (OUT.csv).

        Example:

        >>> s = paynter.load("examples/rlc.yaml").sweep({"R": (5, 20, 4)}, t_end=0.05)
        >>> list(s.to_pandas().columns[:4])
        ['run', 'R', 'ok', 'error']
        >>> s.to_pandas(rows=True).shape
        (4004, 6)
        """
        import pandas

        if not rows:
            frame = pandas.DataFrame(self.summary)
            frame["ok"] = frame["ok"].astype(bool)
            frame["own_build"] = frame["own_build"].astype(bool)
            return frame
        counts = self.summary["rows"].astype(int)
        keep = numpy.arange(self.data.shape[1])[None, :] < counts[:, None]
        flat = self.data[keep]
        frame = pandas.DataFrame(flat, columns=self.columns)
        frame.insert(0, "run", numpy.repeat(numpy.arange(len(self)), counts))
        return frame

    def to_xarray(self):
        """The runs as an xarray DataArray with one dimension per range
        (its values as coordinates; a table adds the dimension "case", its
        parameters as coordinates along it), then "time" (the output rows,
        coordinate t) and "output". Needs xarray (Debian's python3-xarray).

        Example:

        >>> s = paynter.load("examples/rlc.yaml").sweep({"R": (5, 20, 4)}, t_end=0.05)
        >>> float(s.to_xarray().sel(R=10, output="v_cap").isel(time=-1)) == s.run(1)["v_cap"][-1]
        True
        """
        import xarray

        dims = list(self.coords)
        coords = {name: values for name, values in self.coords.items()}
        table = len(self.shape) > len(self.coords)
        if table:
            dims.insert(0, "case")
            step = int(numpy.prod([len(v) for v in self.coords.values()])) if self.coords else 1
            ntable = len(self.names) - len(self.coords)
            for j, name in enumerate(self.names[:ntable]):
                coords[name] = ("case", self.values[::step, j])
        longest = int(numpy.argmax(self.summary["rows"])) if len(self) else 0
        t = self.data[longest, :, 0] if len(self) else numpy.zeros(0)
        data = self.data[:, :, 1:].reshape(self.shape + self.data.shape[1:2] + (len(self.columns) - 1,))
        coords["t"] = ("time", t)
        coords["output"] = self.columns[1:]
        return xarray.DataArray(data, dims=dims + ["time", "output"], coords=coords, name=self.model_name or None)

    def _repr_html_(self):
        """The summary's first columns, for Jupyter."""
        import html

        keep = ["run"] + self.names + ["ok", "steps"] + ["final_" + c for c in self.columns[1:]]
        out = ["<table><thead><tr>"] + ["<th>%s</th>" % html.escape(c) for c in keep] + ["</tr></thead><tbody>"]
        for k in range(min(len(self), 20)):
            out.append("<tr>" + "".join("<td>%s</td>" % html.escape("%.6g" % v if isinstance(v, float) else str(v))
                                        for v in (self.summary[c][k].item() for c in keep)) + "</tr>")
        out.append("</tbody></table><p>%d runs, %d failed</p>" % (len(self), self.failed))
        return "".join(out)


# ---- models -------------------------------------------------------------------


_NUMBERS = ("t_end", "t0", "rtol", "atol", "dt_out", "step", "parasitic_stiffness", "parasitic_damping",
            "drift_tolerance")
_CHOICES = ("method", "form", "constraints", "backend", "block_solve")
_FLAGS = ("assemble", "stabilize", "energy", "stage_cache")
#: simulate's keywords (besides t_end), as the command line's options.
RUN_OPTIONS = ("t0", "method", "rtol", "atol", "dt_out", "step", "max_steps", "params", "form", "constraints",
               "backend", "block_solve", "parasitic_stiffness", "parasitic_damping", "assemble", "stabilize",
               "energy", "stage_cache", "drift_tolerance", "project_energy")


def _type_name(value):
    return type(value).__name__


def _number(name, value, what="a number"):
    """`value` as a float; a bool, a string or anything else that is not a real
    number raises TypeError naming the argument (the command line says
    "Could not convert" of the same)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be %s, not %s %r" % (name, what, _type_name(value), value))
    return float(value)


def _whole(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be a whole number, not %s %r" % (name, _type_name(value), value))
    return int(value)


def _text(name, value):
    if not isinstance(value, str):
        raise TypeError("%s must be a string, not %s %r" % (name, _type_name(value), value))
    return value


def _flag(name, value):
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise TypeError("%s must be True or False, not %s %r" % (name, _type_name(value), value))
    return bool(value)


def _check_keywords(caller, options, named=("t_end",)):
    """An unknown keyword raises TypeError with the nearest known one (of
    simulate's options and the method's own arguments `named`), as the
    command line suggests an option."""
    for key in options:
        if key not in RUN_OPTIONS:
            known = list(named) + list(RUN_OPTIONS)
            near = difflib.get_close_matches(key, known, n=1)
            raise TypeError("%s() got an unexpected keyword argument %r%s" % (
                caller, key, "; did you mean %r?" % near[0] if near else "; the keywords are " + ", ".join(known)))


def _run_options(source, t_end=None, t0=None, method=None, rtol=None, atol=None, dt_out=None, step=None,
                 max_steps=None, params=None, form=None, constraints=None, backend="auto", block_solve="auto",
                 parasitic_stiffness=0.0, parasitic_damping=0.0, assemble=False, stabilize=True, energy=False,
                 stage_cache=True, drift_tolerance=None, project_energy=None, require_t_end=True):
    """RunOptions from simulate's keywords; the run settings the model
    carries (its `simulation:` section) fill those left as None."""
    given = dict(t_end=t_end, t0=t0, method=method, rtol=rtol, atol=atol, dt_out=dt_out, step=step,
                 max_steps=max_steps, form=form, constraints=constraints, drift_tolerance=drift_tolerance,
                 project_energy=project_energy)
    for name in _NUMBERS:
        value = locals()[name]
        if value is not None:
            _number(name, value, "a number (seconds)" if name in ("t_end", "t0") else "a number")
    for name in _CHOICES:
        if locals()[name] is not None:
            _text(name, locals()[name])
    for name in _FLAGS:
        _flag(name, locals()[name])
    if project_energy is not None:
        _flag("project_energy", project_energy)
    if max_steps is not None:
        _whole("max_steps", max_steps)
    o = _paynter.RunOptions()
    # A bad choice's error names the model as its other errors do ("<string>"
    # for a model from loads, not the private file it is written to).
    o.file = source.display or source.path
    given = [name for name, value in given.items() if value is not None]
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
    if project_energy is not None:
        o.project_energy = bool(project_energy)
    o.progress = False
    o.file = source.path
    _paynter.apply_model_settings(source, o, given, bool(require_t_end))
    return o


def _param_list(params, name="params"):
    """NAME -> value pairs from a dict (or a list of pairs); names must be
    strings and values numbers."""
    if params is None:
        return []
    if isinstance(params, dict):
        items = params.items()
    elif isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise TypeError("%s must be a dict of NAME -> value, not %s %r" % (name, _type_name(params), params))
    else:
        items = params
    out = []
    for item in items:
        try:
            key, value = item
        except (TypeError, ValueError):
            raise TypeError("%s must be a dict of NAME -> value, not a list holding %r" % (name, item)) from None
        out.append((_text("%s key" % name, key), _number("%s[%r]" % (name, key), value)))
    return out


class Model:
    """A model file (or a text or dict written to a private file). The file is
    read again by every call, as the commands read it. Made by load, loads
    and from_dict.

    Example:

    >>> m = paynter.load("examples/rlc.yaml")
    >>> m.name, m.states, m.outputs
    ('rlc', ['p_coil', 'q_capacitor'], ['current', 'v_cap', 'charge', 'v_res'])
    """

    def __init__(self, path, display="", build=False):
        self.path = path
        self._source = _paynter.Source(path, display)
        self.name = _paynter.read(self._source, bool(build))

    def __repr__(self):
        return "<paynter.Model %r from %s>" % (self.name, self._source.display or self.path)

    def check(self):
        """The report of `paynter check`; raises ModelError where it fails.

        Example:

        >>> print(paynter.load("examples/rlc.yaml").check())   # doctest: +ELLIPSIS
        model 'rlc' (examples/rlc.yaml): 5 elements (1 Se, 1 C, 1 I, 1 R, 1 1), 4 bonds, ...
        ok
        <BLANKLINE>
        """
        return _paynter.check(self._source)

    def causality(self, procedure="SCAP", constraints="auto"):
        """The report of `paynter causality`; raises ModelError where the
        command fails, and Error (the report as its message, and as its
        attribute `report`) where causal conflicts remain (exit status 1).

        Example:

        >>> text = paynter.load("examples/rlc.yaml").causality(procedure="SCAP")
        >>> "causal conflicts: none" in text
        True
        """
        status, text = _paynter.causality(self._source, _text("procedure", procedure),
                                          _text("constraints", constraints))
        if status != 0:
            e = Error(text)
            e.report = text
            raise e
        return text

    def equations(self, form="state", latex=False, explain=False, constraints="auto"):
        """The text of `paynter equations` (LaTeX with latex=True).

        Example:

        >>> eqs = paynter.load("examples/rlc.yaml").equations(form="state")
        >>> "q_capacitor" in eqs
        True
        """
        return _paynter.equations(self._source, _flag("latex", latex), _text("form", form),
                                  _flag("explain", explain), _text("constraints", constraints))

    def simulate(self, t_end=None, **options):
        """Simulates as `paynter simulate` does, with the same options (as
        keywords: t0, method, rtol, atol, dt_out, step, max_steps, params
        (a dict NAME -> value), form, constraints, backend, block_solve,
        parasitic_stiffness, parasitic_damping, assemble, stabilize, energy,
        stage_cache, drift_tolerance, project_energy) and returns a Result. A setting not
        given comes from the model's run settings (its `simulation:`
        section), if it has them. Arguments of the wrong type raise
        TypeError (m.simulate("10") is refused); values the command line
        refuses raise ModelError with its message.

        Example:

        >>> r = paynter.load("examples/rlc.yaml").simulate(0.1, rtol=1e-8, params={"R": 20})
        >>> r.columns
        ['t', 'current', 'v_cap', 'charge', 'v_res']
        >>> round(float(r["v_cap"][-1]), 2)      # charged to the supply's 5 V
        5.0
        """
        _check_keywords("simulate", options)
        return Result(_paynter.simulate(self._source, _run_options(self._source, t_end, **options)))

    def simulate_many(self, param_sets, t_end=None, threads=None, errors="raise", **options):
        """Runs once per dict of parameter values in `param_sets` (over
        options' `params`), in parallel on `threads` threads (default: the
        CPUs) without the GIL, and returns the Results in the input order.
        The model is prepared once (once per distinct value of a parameter
        the build computes numbers from). A run that fails: errors="raise"
        raises its error (the first in input order, after every run has
        ended, with its index as attribute `index`); errors="return" puts the
        exception object in its place.

        Example:

        >>> runs = paynter.load("examples/rlc.yaml").simulate_many([{"R": 5}, {"R": 50}], t_end=0.1)
        >>> [len(r) for r in runs]
        [1001, 1001]
        """
        _check_keywords("simulate_many", options, ("param_sets", "t_end", "threads", "errors"))
        if errors not in ("raise", "return"):
            raise ValueError("errors is 'raise' or 'return', not %r" % (errors,))
        if isinstance(param_sets, (dict, str, bytes)) or not hasattr(param_sets, "__iter__"):
            raise TypeError("param_sets must be a list of dicts NAME -> value, not %s" % _type_name(param_sets))
        sets = [_param_list(p, "param_sets[%d]" % i) for i, p in enumerate(param_sets)]
        threads = 0 if threads is None else _whole("threads", threads)
        if threads == 0:
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

    def sweep(self, ranges=None, *, log=(), table=None, t_end=None, threads=None, **options):
        """Simulates the model over a grid or a table of parameter values, as
        `paynter sweep` does, and returns a Sweep (every run's rows as one
        array, the summary as a table, pandas and xarray views).

        ranges: a dict NAME -> (START, STOP, COUNT) or "START:STOP:COUNT"
        (--param NAME=START:STOP:COUNT; several form a grid, the last
        varying fastest); log: the names of ranges spaced evenly in the
        logarithm (--log); table: the runs as a CSV file's path (--params)
        or as values, a dict NAME -> list of values or a pandas DataFrame
        (one run per row, crossed with the grid); params (a keyword of
        simulate's): values fixed for every run (--param NAME=VALUE);
        threads: as --threads (None or 0: every hardware thread). The other
        keywords are simulate's. A run gives the numbers of
        m.simulate(params=...) bit for bit; a run that fails is recorded
        (Sweep.ok, Sweep.errors) and the others go on.

        Example:

        >>> s = paynter.load("examples/B1_pendulum.yaml").sweep({"B": (0, 20, 11)}, t_end=5)
        >>> s.shape, s.names, len(s)
        ((11,), ['B'], 11)
        >>> float(s.summary["B"][3]), bool(s.ok.all())
        (6.0, True)
        """
        _check_keywords("sweep", options, ("ranges", "log", "table", "t_end", "threads"))
        texts = []
        if ranges is not None:
            if not isinstance(ranges, dict):
                raise TypeError("ranges must be a dict NAME -> (START, STOP, COUNT), not %s" % _type_name(ranges))
            for name, spec in ranges.items():
                texts.append("%s=%s" % (_text("ranges key", name), _range_text(name, spec)))
        if isinstance(log, str) or not hasattr(log, "__iter__"):
            raise TypeError("log must be a list of range names, not %s %r" % (_type_name(log), log))
        log = [_text("log", name) for name in log]
        table_path, names, rows, where = "", [], [], "<table>"
        if isinstance(table, (str, os.PathLike)):
            table_path = os.fspath(table)
        elif table is not None:
            names, rows = _table_values(table)
        threads = 0 if threads is None else _whole("threads", threads)
        options = _run_options(self._source, t_end, **options)
        raw = _paynter.sweep(self._source, options, texts, log, table_path, names, rows, where, threads)
        return Sweep(raw, self.name)

    def describe(self, **options):
        """The model as a run with these options (simulate's keywords: form,
        constraints, params, ...) sees it: a dict of "parameters" (name ->
        value, derived parameters included), "states" and "outputs" (names,
        in the order of a Result's columns).

        Example:

        >>> paynter.load("examples/rlc.yaml").describe(params={"R": 20})["parameters"]["R"]
        20.0
        """
        _check_keywords("describe", options, ())
        d = _paynter.describe(self._source, _run_options(self._source, 1.0, require_t_end=False, **options))
        return {"parameters": dict(d["parameters"]), "states": list(d["states"]), "outputs": list(d["outputs"])}

    @property
    def parameters(self):
        """The parameters' values, as the model file gives them (derived ones included).

        Example:

        >>> paynter.load("examples/rlc.yaml").parameters
        {'V': 5.0, 'R': 10.0, 'L': 0.1, 'C': 0.001}
        """
        return self.describe()["parameters"]

    @property
    def states(self):
        """The names of the state variables (state form).

        Example:

        >>> paynter.load("examples/rlc.yaml").states
        ['p_coil', 'q_capacitor']
        """
        return self.describe()["states"]

    @property
    def outputs(self):
        """The names of the outputs, as a Result's columns after t.

        Example:

        >>> paynter.load("examples/rlc.yaml").outputs
        ['current', 'v_cap', 'charge', 'v_res']
        """
        return self.describe()["outputs"]

    def draw(self, path=None, procedure="SCAP", constraints="auto", expand=False, highlight=0):
        """Draws the bond graph with its causal strokes, as `paynter draw`
        does: into `path` (.svg, .png, .pdf or .dot; Graphviz) when given,
        else returns the Graphviz source. A model with submodels is drawn
        at the level it is written (each submodel a block with its ports),
        vector bonds and a multibody section as their components, unless
        expand=True (the flat scalar graph); `highlight` marks zero-order
        causal path N.

        Example:

        >>> dot = paynter.load("examples/rlc.yaml").draw()
        >>> dot.startswith("digraph")
        True
        """
        dot = _paynter.drawing_dot(self._source, _text("procedure", procedure), _text("constraints", constraints),
                                   _flag("expand", expand), _whole("highlight", highlight))
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
        report to `path`, as `paynter report` does.

        Example:

        >>> paynter.load("examples/rlc.yaml").report("rlc_report.html", t_end=0.01)
        """
        _check_keywords("report", options, ("path", "t_end", "procedure"))
        _paynter.report(self._source, _run_options(self._source, t_end, **options), _text("procedure", procedure),
                        os.fspath(path))

    def fmu(self, path, kind="both", form=None, constraints="auto", params=None, method="dopri5", rtol=1e-6,
            atol=1e-9, step=1e-3, parasitic_stiffness=0.0, parasitic_damping=0.0, fmi_version=2):
        """Exports the model as an FMU into `path`, as `paynter fmu` does
        (docs/fmi.md): fmi_version 2 (FMI 2.0) or 3 (FMI 3.0); kind "me" (model exchange), "cs"
        (co-simulation) or "both"; form (default: lagrange2 for a mechanism
        under multibody:, else state); constraints "auto" or "parasitic";
        params: values fixed in the FMU (--param); method, rtol, atol, step:
        the co-simulation's integrator. Returns what the command prints, as
        a dict: "path", "fmi_version", "model_identifier", "guid", "form",
        "states", "inputs", "outputs", "parameters", "tunable", "calculated",
        "library_path" (the shared object's path in the FMU),
        "compile_seconds", "library_bytes", "fmu_bytes".

        Example:

        >>> info = paynter.load("examples/rlc.yaml").fmu("rlc.fmu", kind="cs")
        >>> info["states"], info["outputs"]
        (2, 4)
        """
        return _paynter.fmu(self._source, os.fspath(path), _text("kind", kind),
                            "" if form is None else _text("form", form), _text("constraints", constraints),
                            _number("parasitic_stiffness", parasitic_stiffness),
                            _number("parasitic_damping", parasitic_damping), _param_list(params),
                            _text("method", method), _number("rtol", rtol), _number("atol", atol),
                            _number("step", step), _whole("fmi_version", fmi_version))

    def expand(self, after=None):
        """The model as YAML after the front end's passes, as `paynter expand`
        writes it: the scalar model (every pass), or the model after the pass
        `after` ("submodels", "overrides", "poses", "multibody",
        "vector-bonds", "parasitic", "energy").

        Example:

        >>> print(paynter.load("examples/rlc.yaml").expand())   # doctest: +ELLIPSIS
        # expanded by paynter: scalar bonds only
        name: rlc
        ...
        """
        return _paynter.expand(self._source, "" if after is None else _text("after", after))

    def compare(self, t_end=None, **options):
        """Simulates by every constraint method, as `paynter compare` does
        (simulate's options as keywords; the energy accounting is added for the
        balance column), and returns a Comparison.

        Example:

        >>> c = paynter.load("examples/B1_pendulum_3d.yaml").compare(1)
        >>> c.reference, c["zcp"]["failure"] is None
        ('minimal-coordinates', True)
        """
        _check_keywords("compare", options)
        return Comparison(_paynter.compare(self._source, _run_options(self._source, t_end, **options)))

    def _point(self, at, steady, states, params, loop_at=None):
        return (_param_list(params), _param_list(states, "states"), None if at is None else _number("at", at),
                _flag("steady", steady), "" if loop_at is None else _text("loop_at", loop_at))

    def linearize(self, at=None, steady=False, states=None, params=None, loop_at=None):
        """Linearizes at an operating point, as `paynter linearize` does: the
        initial state, the state reached at time `at`, or a steady state
        (steady=True); `states` (a dict NAME -> value) gives states' values,
        `params` overrides parameters. `loop_at` (a signal, "ctl.u") also
        opens the loop there, as `--loop-at`: see Linearization.loop.
        Returns a Linearization.

        Example:

        >>> lin = paynter.load("examples/rlc.yaml").linearize()
        >>> lin.A.shape, lin.states
        ((2, 2), ['p_coil', 'q_capacitor'])
        """
        point = self._point(at, steady, states, params, loop_at)
        return Linearization(_paynter.linearize(self._source, *point), self, point)

    def bode(self, input=None, output=None, w_from=0.0, w_to=0.0, points=200, at=None, steady=False, states=None,
             params=None, loop_at=None):
        """The frequency response of `input` to `output`, as `paynter bode`
        computes it (see Linearization.bode; the operating point as for
        linearize). With `loop_at` (and no input or output): the loop gain
        at that signal, as `paynter bode --loop-at`, the dict also holding
        "gain_crossovers", "phase_crossovers", "phase_margin", "gain_margin"
        and "margin_range" as Linearization.loop does.

        Example:

        >>> b = paynter.load("examples/rlc.yaml").bode(output="v_cap", w_from=10, w_to=1000, points=3)
        >>> b["omega"].tolist()
        [10.0, 100.0, 1000.0]
        """
        return self._bode(self._point(at, steady, states, params, loop_at), input, output, w_from, w_to, points)

    def _bode(self, point, input, output, w_from, w_to, points):
        raw = _paynter.bode(self._source, *point, "" if input is None else _text("input", input),
                            "" if output is None else _text("output", output), _number("w_from", w_from),
                            _number("w_to", w_to), _whole("points", points))
        keys = ["omega", "magnitude_db", "phase_deg", "input", "output"]
        if "phase_margin" in raw:
            keys += ["gain_crossovers", "phase_crossovers", "phase_margin", "gain_margin", "margin_range"]
        return {k: raw[k] for k in keys}


def _range_text(name, spec):
    """A range as the command line's text START:STOP:COUNT (numbers in their
    shortest exact form), so that it is read and refused as --param reads it."""
    if isinstance(spec, str):
        return spec
    try:
        start, stop, count = spec
    except (TypeError, ValueError):
        raise TypeError("ranges[%r] must be (START, STOP, COUNT) or 'START:STOP:COUNT', not %r" % (name, spec)) \
            from None
    def text(value, what):
        _number("ranges[%r] %s" % (name, what), value)
        return str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))

    return "%s:%s:%d" % (text(start, "START"), text(stop, "STOP"), _whole("ranges[%r] COUNT" % name, count))


def _table_values(table):
    """(names, rows) of a table given as a dict NAME -> values or a DataFrame."""
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):
        names = [str(c) for c in table.columns]
        columns = [table[c].tolist() for c in table.columns]
    elif isinstance(table, dict):
        names = list(table)
        columns = [list(table[n]) for n in names]
    else:
        raise TypeError("table must be a CSV file's path, a dict NAME -> values or a pandas DataFrame, not %s"
                        % _type_name(table))
    for name, column in zip(names, columns):
        _text("table key", name)
        if len(column) != len(columns[0]):
            raise ValueError("table: %r has %d values, %r has %d: every name needs one value per run"
                             % (names[0], len(columns[0]), name, len(column)))
    rows = [[_number("table[%r][%d]" % (n, i), c[i]) for n, c in zip(names, columns)]
            for i in range(len(columns[0]) if columns else 0)]
    for row in rows:
        for name, v in zip(names, row):
            if not math.isfinite(v):
                raise ValueError("table[%r]: %r is not a finite number" % (name, v))
    return names, rows


def load(path):
    """The model in a YAML file (docs/model-format.md); raises ModelError if it
    cannot be read.

    Example:

    >>> paynter.load("examples/B1_pendulum.yaml")
    <paynter.Model 'B1_pendulum' from examples/B1_pendulum.yaml>
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("load takes a file's path, not %s; for YAML text use loads, for a dict from_dict"
                        % _type_name(path))
    return Model(os.fspath(path))


def loads(text):
    """A model from YAML text. It is written to a file in a private temporary
    directory of this process (removed at exit); its errors name "<string>".
    The model is built at once, as `check` builds it: an error in it (an
    unknown kind, an undefined name) raises ModelError here.

    Example:

    >>> m = paynter.loads(open("examples/rlc.yaml").read())
    >>> m.name
    'rlc'
    """
    if not isinstance(text, str):
        raise TypeError("loads takes the model's YAML text (str), not %s" % type(text).__name__)
    return Model(_private_file(text), "<string>", build=True)


def from_dict(model):
    """A model from a dict with the model file's structure (name, parameters,
    elements, bonds, displacements, outputs, ...), written as YAML by
    to_yaml; its errors name "<dict>" (the lines are those of to_yaml(model)).
    The model is built at once: an error in it raises ModelError here, not at
    the first simulate.

    Example:

    >>> m = paynter.from_dict({"elements": [{"name": "S", "kind": "Se", "effort": 1},
    ...                                     {"name": "J", "kind": "1"},
    ...                                     {"name": "M", "kind": "I", "inertance": 2}],
    ...                        "bonds": [["S", "J"], ["J", "M"]]})
    >>> m.states
    ['p_M']
    """
    return Model(_private_file(to_yaml(model)), "<dict>", build=True)


def simulate(path, t_end=None, **options):
    """paynter.load(path).simulate(t_end, **options).

    Example:

    >>> r = paynter.simulate("examples/B1_pendulum.yaml", t_end=10, dt_out=0.01)
    >>> r.columns, len(r)
    (['t', 'gamma', 'gammadot', 'xG', 'yG'], 1001)
    """
    _check_keywords("simulate", options)
    return load(path).simulate(t_end, **options)
