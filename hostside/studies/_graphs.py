"""Study ``graphs``: host cost per kernel of a graph launch against graph size, beside stream launches.

The claim (docs/graphs.md, README *Benchmarks*): a graph launch costs the host a small fraction of a
stream launch per kernel (one reservation, one copy of pre-built packets, one doorbell per lane),
and the per-kernel cost falls with the graph's size until the copy dominates. Measured as
``scripts/bench_graph.py`` does, for every size: N empty-kernel stream launches timed without their
sync, and one ``hipGraphLaunch`` of an N-node chain captured from the stream, on an idle stream.
"""
from __future__ import annotations

import statistics
import time

from hostside import hip, hsa
from hostside.platform import write_trace

from ._common import Progress, Study

__all__ = ["run"]

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("")
def empty(ctx):
    pass
'''
CLAIM = "a graph launch costs the host <= 1/10 of a stream launch per kernel at 100 nodes"


def run(st: Study) -> dict:
    sizes = (1, 10, 100) if st.small else (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
    samples = 15 if st.small else 120
    prog = Progress("graphs", len(sizes) + 1)
    hsa.configure({"agents": 1})
    rows = []
    try:
        mod = hip.hipModuleLoadData(KERNELS, "studies_graphs.py")
        f = hip.hipModuleGetFunction(mod, "empty")
        s = hip.hipStreamCreate()

        def launch():
            hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])

        for _ in range(300):
            launch()
        hip.hipStreamSynchronize(s)
        prog.step("warm-up")
        for n in sizes:
            per = []
            for _ in range(max(3, samples // max(1, n // 20 + 1))):
                t = time.perf_counter_ns()
                for _ in range(n):
                    launch()
                per.append((time.perf_counter_ns() - t) / n / 1e3)
                hip.hipStreamSynchronize(s)
            hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
            for _ in range(n):
                launch()
            g = hip.hipStreamEndCapture(s)
            t = time.perf_counter_ns()
            ex = hip.hipGraphInstantiate(g)
            inst_us = (time.perf_counter_ns() - t) / 1e3
            for _ in range(5):
                hip.hipGraphLaunch(ex, s)
                hip.hipStreamSynchronize(s)
            host, total = [], []
            for _ in range(samples):
                t = time.perf_counter_ns()
                hip.hipGraphLaunch(ex, s)
                t1 = time.perf_counter_ns()
                hip.hipStreamSynchronize(s)
                t2 = time.perf_counter_ns()
                host.append((t1 - t) / n / 1e3)
                total.append((t2 - t) / n / 1e3)
            hip.hipGraphExecDestroy(ex)
            hip.hipGraphDestroy(g)
            sh, gh = statistics.median(per), statistics.median(host)
            rows.append({"nodes": n, "stream_host_us_per_kernel": round(sh, 3),
                         "graph_host_us_per_kernel": round(gh, 3),
                         "graph_host_us_per_kernel_p90": round(sorted(host)[int(0.9 * (len(host) - 1))], 3),
                         "graph_total_us_per_kernel": round(statistics.median(total), 3),
                         "graph_vs_stream": round(gh / sh, 4), "instantiate_us": round(inst_us, 1)})
            prog.step(f"{n} nodes: graph {gh:.2f} us/kernel, stream {sh:.2f}")
        hip.hipStreamDestroy(s)
        write_trace(hsa.runtime().pm, st.path("trace.json"))
    finally:
        hip.hipDeviceReset()
        hsa.configure(None)
        prog.close()
    st.write_csv("graphs.csv", rows)
    fig, ax = st.figure()
    a = ax[0][0]
    ns = [r["nodes"] for r in rows]
    a.loglog(ns, [r["stream_host_us_per_kernel"] for r in rows], "o-", label="stream launch (host)")
    a.loglog(ns, [r["graph_host_us_per_kernel"] for r in rows], "s-", label="hipGraphLaunch (host)")
    a.loglog(ns, [r["graph_total_us_per_kernel"] for r in rows], "^--", label="hipGraphLaunch + sync")
    a.set_xlabel("kernels per graph (= stream launches compared)")
    a.set_ylabel("us per kernel")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8)
    st.save(fig, "graphs.png", "graphs vs streams: host cost per kernel")
    at = min(rows, key=lambda r: abs(r["nodes"] - 100))
    figures = {"nodes": at["nodes"], "graph_host_us_per_kernel": at["graph_host_us_per_kernel"],
               "stream_host_us_per_kernel": at["stream_host_us_per_kernel"],
               "graph_vs_stream": at["graph_vs_stream"],
               "largest_graph_host_us_per_kernel": rows[-1]["graph_host_us_per_kernel"]}
    return st.finish(figures, CLAIM, at["graph_vs_stream"] <= 0.1)
