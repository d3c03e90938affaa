"""Checks what the executed tutorial notebook (docs/tutorial.ipynb, run by
notebook_test.sh) computed and showed: the model's drawing, the result's
table, the plots, the linearization against the closed form and against the
simulation's decay, and the sweep's table of 11 runs."""
import json
import re
import sys

with open(sys.argv[1]) as f:
    nb = json.load(f)
cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
assert not errors, errors


def outputs_of(marker):
    """The outputs of the code cell whose source holds `marker`."""
    found = [c for c in cells if marker in "".join(c["source"])]
    assert len(found) == 1, marker
    return found[0]["outputs"]


def data(outputs, kind):
    return ["".join(o["data"][kind]) for o in outputs if kind in o.get("data", {})]


def text(outputs):
    return "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")


svg = data(outputs_of('m = paynter.load("examples/B1_pendulum.yaml")'), "image/svg+xml")
assert svg and "<svg" in svg[0] and "damper" in svg[0], "the model is not drawn"
table = data(outputs_of("r = m.simulate("), "text/html")
assert table and "gammadot" in table[0] and "1001 rows" in table[0], "the result is not shown as a table"
assert data(outputs_of("r.plot("), "image/png"), "no plot of the run"
assert data(outputs_of("runs = s.to_xarray()"), "image/png"), "no plot of the sweep"

numbers = r"(-?[0-9.]+(?:e[-+]?[0-9]+)?)"
lin = text(outputs_of("analytic = np.roots"))
m = re.search(r"eigenvalues: \[%s, %s\]\s+analytic: \[%s, %s\]" % ((numbers,) * 4), lin.replace("np.float64(", "")
              .replace(")", ""))
assert m, lin
eig, exact = [float(m.group(1)), float(m.group(2))], [float(m.group(3)), float(m.group(4))]
for a, b in zip(eig, exact):
    assert abs(a - b) <= 1e-6 * abs(b), (eig, exact)
m = re.search(r"decay rate from the simulation: %s\s+slow eigenvalue: %s" % (numbers, numbers), lin)
assert m, lin
measured, slow = float(m.group(1)), float(m.group(2))
assert abs(measured - slow) <= 0.02 * abs(slow), (measured, slow)

sweep = data(outputs_of("summary = s.to_pandas()"), "text/html")
assert sweep and sweep[0].count("<tr") == 12, "the sweep's table has not 11 runs"
print("tutorial: eigenvalues %s (closed form %s), decay %.5f vs %.5f, sweep of 11 runs" % (eig, exact, measured,
                                                                                       slow))
