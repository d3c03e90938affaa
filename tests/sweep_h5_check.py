"""Reads a sweep's HDF5 file with h5py and pandas and checks it against the
same sweep written as CSV (paynter sweep ... -o X.csv): every run's rows, the
parameters and the summary must agree to the bit. Run by sweep_test.

usage: sweep_h5_check.py RESULTS.h5 RESULTS.csv RESULTS.summary.csv
"""
import math
import sys

import h5py
import numpy as np
import pandas as pd


def main(h5_path, csv_path, summary_path):
    # round_trip: the exact double of each shortest text (pandas' default parser rounds)
    data_csv = pd.read_csv(csv_path, float_precision="round_trip")
    summary_csv = pd.read_csv(summary_path, keep_default_na=False, na_values=["nan"], float_precision="round_trip")
    with h5py.File(h5_path, "r") as f:
        for attr in ("model_file", "paynter_version", "options", "parameters", "fixed_parameters"):
            assert attr in f.attrs, attr
        names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["parameters"]]
        columns = [c.decode() if isinstance(c, bytes) else c for c in f["data"].attrs["columns"]]
        data = f["data"][...]
        params = pd.DataFrame(f["parameters"][...])
        summary = pd.DataFrame(f["summary"][...])
    runs = data.shape[0]
    assert columns == list(data_csv.columns[1:]), (columns, list(data_csv.columns))
    assert data.shape[2] == len(columns)
    assert list(params.columns) == names, (list(params.columns), names)
    assert len(summary) == runs == len(summary_csv)
    for name in names:
        assert np.array_equal(params[name].to_numpy(), summary_csv[name].to_numpy()), name
    for k in range(runs):
        rows = data_csv[data_csv["run"] == k][columns].to_numpy()
        n = int(summary["rows"][k])
        assert rows.shape[0] == n, (k, rows.shape, n)
        assert np.array_equal(data[k, :n, :], rows), k
        assert np.isnan(data[k, n:, :]).all(), k  # padding after a run's last row
    for col in summary.columns:
        h5 = summary[col].to_numpy()
        if col == "error":
            h5 = np.array([e.decode() if isinstance(e, bytes) else e for e in h5])
            assert list(h5) == list(summary_csv[col]), col
            continue
        csv = summary_csv[col].to_numpy()
        assert np.array_equal(h5.astype(float), csv.astype(float), equal_nan=True), col
    ok = summary["ok"].to_numpy() == 1
    failed = int((~ok).sum())
    # A failed run has its error and no final values; an ok run the reverse.
    for k in range(runs):
        err = summary["error"][k]
        err = err.decode() if isinstance(err, bytes) else err
        assert (err == "") == bool(ok[k]), k
        assert math.isnan(summary[f"final_{columns[1]}"][k]) != bool(ok[k]), k
    print(f"h5 matches csv: {runs} runs, {failed} failed")


if __name__ == "__main__":
    main(*sys.argv[1:4])
