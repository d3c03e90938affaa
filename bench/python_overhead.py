"""Python's overhead per run against the command line, on B1 (10 s,
rtol 1e-8, atol 1e-10, dt_out 0.01), in CPU time, warm caches, in one run:
  /usr/bin/python3 bench/python_overhead.py [build/paynter] [repeats]
- the whole `paynter simulate` process (user + system CPU of the child),
- m.simulate in this process (this process's CPU time around the call),
- simulate_many of 2*repeats runs on 1 and on 2 threads (CPU and wall time)."""
import os
import resource
import subprocess
import sys
import tempfile
import time

import paynter

here = os.path.dirname(os.path.abspath(__file__))
cli = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "paynter")
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
model = os.path.join(here, "..", "examples", "B1_pendulum.yaml")
opts = dict(t_end=10, rtol=1e-8, atol=1e-10, dt_out=0.01)
args = ["--t-end", "10", "--rtol", "1e-8", "--atol", "1e-10", "--dt-out", "0.01"]


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "b1.csv")
    subprocess.run([cli, "simulate", model, *args, "-o", out], check=True)  # warm the caches
    c0 = child_cpu()
    for _ in range(repeats):
        subprocess.run([cli, "simulate", model, *args, "-o", out], check=True)
    cli_cpu = (child_cpu() - c0) / repeats

m = paynter.load(model)
r = m.simulate(**opts)
p0 = time.process_time()
for _ in range(repeats):
    r = m.simulate(**opts)
py_cpu = (time.process_time() - p0) / repeats
integrate = r.stats["integrate_seconds"]

sets = [{"B": 5 + i % 10} for i in range(2 * repeats)]
many = {}
for threads in (1, 2):
    m.simulate_many(sets[:2], threads=threads, **opts)
    w0, p0 = time.perf_counter(), time.process_time()
    m.simulate_many(sets, threads=threads, **opts)
    many[threads] = ((time.process_time() - p0) / len(sets), len(sets) / (time.perf_counter() - w0))

print(f"B1 10 s, {len(r)} rows, {r.stats['steps']} steps, backend {r.stats['backend']}")
print(f"paynter simulate (whole process, CPU): {cli_cpu * 1e3:.2f} ms per run")
print(f"m.simulate (in process, CPU):          {py_cpu * 1e3:.2f} ms per run "
      f"(integration alone {integrate * 1e3:.2f} ms)")
print(f"ratio process / in-process:            {cli_cpu / py_cpu:.1f}")
for threads, (cpu, rate) in many.items():
    print(f"simulate_many, {threads} thread(s):         {cpu * 1e3:.2f} ms CPU per run, {rate:.0f} runs per wall second")
print(f"CPUs online: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
