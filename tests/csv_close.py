#!/usr/bin/env python3
"""Whether two CSV files of paynter's hold the same table to a relative
tolerance: the same header and rows, every number within REL of its column's
largest magnitude (in the golden file). Prints the largest deviation found.
   usage: csv_close.py GOLDEN GOT REL      exit 0: close; 1: not."""
import sys


def rows(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return lines[0], [[float(v) for v in line.split(",")] for line in lines[1:]]


def main():
    golden, got, rel = sys.argv[1], sys.argv[2], float(sys.argv[3])
    head_a, a = rows(golden)
    head_b, b = rows(got)
    if head_a != head_b:
        print("the header differs: %s / %s" % (head_a, head_b))
        return 1
    if len(a) != len(b) or any(len(r) != len(s) for r, s in zip(a, b)):
        print("the number of rows or values differs: %d / %d rows" % (len(a), len(b)))
        return 1
    scale = [max(abs(r[c]) for r in a) for c in range(len(a[0]))] if a else []
    worst, where = 0.0, ""
    for i, (r, s) in enumerate(zip(a, b)):
        for c, (x, y) in enumerate(zip(r, s)):
            if x != x or y != y:  # NaN: equal only to NaN
                if (x != x) != (y != y):
                    print("row %d, column %d: %r / %r" % (i + 1, c + 1, x, y))
                    return 1
                continue
            d = abs(x - y) / scale[c] if scale[c] > 0 else abs(x - y)
            if d > worst:
                worst, where = d, "row %d, column %s" % (i + 1, head_a.split(",")[c])
    print("largest deviation %.2e of the column's scale%s" % (worst, " (" + where + ")" if where else ""))
    return 0 if worst <= rel else 1


if __name__ == "__main__":
    sys.exit(main())
