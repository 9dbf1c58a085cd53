#!/usr/bin/env python3
"""gemm_vs_cublas.py - tilec's bf16 GEMM against cuBLAS (torch.matmul) on an H100.

For each shape it runs

    tilec gemm -M M -N N -K K -t bf16 --transA a --transB b --target cuda \
               --time -i 20 --json [-V 1]

(tilec's time: the median of 20 launches run back to back on one loaded
module and one copy of the inputs, each between its own pair of CUDA events,
after the first launch, whose C -V 1 verifies; compiling, loading and the
copies are not timed) and torch.matmul on the same shape
and layout (bf16 in, f32 accumulation: allow_bf16_reduced_precision_reduction
is turned off), timed with CUDA events per call after a warm-up, median of
the same number of runs.  It prints a markdown table (shape, tilec ms and
TFLOP/s, cuBLAS ms and TFLOP/s, tilec / cuBLAS, verify, perf config) and
writes it with a JSON copy to --out (default $OUT/gemm_vs_cublas.md if $OUT
is set, else bench/out/gemm_vs_cublas.md).

Verification: every shape runs with tilec's -V 1, which checks C against a
double-precision host reference: every element up to 2^30 multiply-adds,
past that one pseudo-random element in each square cell of C (about 2^30 /
K cells, about a second of CPU time); the verify column gives the number
of elements checked.

Shapes (default): 8192^3; M = 64, 128, 256 with N = K = 8192; 8192^3 with
transA, transB and both; squares 1024, 2048, 4096.  --shape M,N,K[,tA,tB]
(repeatable) replaces them; --quick keeps 8192^3, M=64 and 1024^3.

It stops starting new shapes after --budget seconds (default 300) and gives
each tilec call --timeout seconds (default 150), so one hang cannot eat a
10-minute slot.  --dry-run prints the commands and exits.  --target opencl
runs the tilec side on OpenCL (PoCL) without torch, to test this script
where there is no GPU.

Exit status: 0 every shape ran (and verified where checked); 1 a tilec run
failed, timed out or did not verify; 2 a bad option or no tilec binary;
3 torch or a CUDA device is missing (nothing was timed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_DEVICE = 0, 1, 2, 3


def default_shapes(quick):
    s = [(8192, 8192, 8192, 0, 0), (64, 8192, 8192, 0, 0), (128, 8192, 8192, 0, 0),
         (256, 8192, 8192, 0, 0), (8192, 8192, 8192, 1, 0), (8192, 8192, 8192, 0, 1),
         (8192, 8192, 8192, 1, 1), (1024, 1024, 1024, 0, 0), (2048, 2048, 2048, 0, 0),
         (4096, 4096, 4096, 0, 0)]
    if quick:
        s = [s[0], s[1], s[7]]
    return s


def parse_shape(text):
    parts = text.split(",")
    try:
        v = [int(p) for p in parts]
    except ValueError:
        v = []
    if len(v) not in (3, 5) or min(v[:3]) < 1 or (len(v) == 5 and not set(v[3:]) <= {0, 1}):
        raise argparse.ArgumentTypeError(
            "--shape '%s': expected M,N,K or M,N,K,transA,transB (transposes 0 or 1)" % text)
    return tuple(v) if len(v) == 5 else tuple(v) + (0, 0)


def shape_name(s):
    m, n, k, ta, tb = s
    return "%dx%dx%d %s%s" % (m, n, k, "t" if ta else "n", "t" if tb else "n")


def fail_no_device(msg):
    print("gemm_vs_cublas: %s; nothing was timed (exit %d)" % (msg, EXIT_NO_DEVICE), file=sys.stderr)
    sys.exit(EXIT_NO_DEVICE)


def run_tilec(args, m, n, k, ta, tb, extra, timeout):
    """Runs tilec gemm with --json; returns (parsed JSON or None, error text, seconds)."""
    cmd = [args.tilec, "gemm", "-M", str(m), "-N", str(n), "-K", str(k), "-t", "bf16",
           "--transA", str(ta), "--transB", str(tb), "--target", args.target, "--json"] + extra
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           universal_newlines=True)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s: %s" % (timeout, " ".join(cmd)), time.time() - t0
    dt = time.time() - t0
    js = None
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                js = json.loads(line)
            except ValueError:
                pass
    err = p.stderr.strip()
    if p.returncode != 0 or js is None or not js.get("ok"):
        why = err.splitlines()[-1] if err else "exit %d" % p.returncode
        if js and js.get("verify") and js["verify"].get("result") == "FAIL":
            why = "verify FAIL: " + js["verify"].get("message", "")
        return js, why, dt
    return js, "", dt


def torch_time(torch, m, n, k, ta, tb, runs, warmup):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1234)
    a = torch.randn((k, m) if ta else (m, k), device=dev, dtype=torch.bfloat16, generator=g)
    b = torch.randn((n, k) if tb else (k, n), device=dev, dtype=torch.bfloat16, generator=g)
    a = a.t() if ta else a
    b = b.t() if tb else b
    c = torch.empty((m, n), device=dev, dtype=torch.bfloat16)
    for _ in range(warmup):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(runs)]
    for e0, e1 in ev:
        e0.record()
        torch.matmul(a, b, out=c)
        e1.record()
    torch.cuda.synchronize()
    times = [e0.elapsed_time(e1) for e0, e1 in ev]
    # a spot check that cuBLAS computed this product (f32 on a few rows)
    rows = min(m, 4)
    ref = a[:rows].float() @ b.float()
    err = (c[:rows].float() - ref).abs().max().item()
    scale = ref.abs().max().item() + 1e-6
    del a, b, c, ref
    torch.cuda.empty_cache()
    return statistics.median(times), err / scale


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e9) if ms and ms > 0 else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def write_table(args, out, device, rows, nshapes):
    """Writes the markdown table (and the JSON) of the rows so far; returns (text, written)."""
    lines = ["# tilec bf16 GEMM vs cuBLAS", "",
             "- device: %s" % device,
             "- date: %s; tilec: %s; %d timed runs per side, medians (tilec: back-to-back launches "
             "of one loaded kernel after the verified first, %s per launch; torch.matmul: CUDA "
             "events per call after %d warm-up calls)"
             % (time.strftime("%Y-%m-%d %H:%M"), args.tilec, args.runs,
                "CUDA events" if args.target == "cuda" else "OpenCL profiling events (CPU)",
                args.warmup),
             "- TFLOP/s = 2 M N K / time; ratio = tilec / cuBLAS; shape M x N x K with the "
             "transposes of A and B (n: as stored [M,K] / [K,N], t: transposed)",
             "- %d of %d shapes" % (len(rows), nshapes), "",
             "| shape | tilec ms | tilec TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | ratio | verify "
             "| perf config |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["shape"], fmt(r["tilec_ms"], ".4f"), fmt(r["tilec_tflops"], ".1f"),
            fmt(r["cublas_ms"], ".4f"), fmt(r["cublas_tflops"], ".1f"), fmt(r["ratio"], ".2f"),
            r["verify"] + (" (error: %s)" % r["error"] if r["error"] else ""),
            r["perf_config"] or "-"))
    text = "\n".join(lines) + "\n"
    try:
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        with open(out + ".tmp", "w") as f:
            f.write(text)
        os.replace(out + ".tmp", out)
        with open(os.path.splitext(out)[0] + ".json", "w") as f:
            json.dump({"device": device, "runs": args.runs, "rows": rows}, f, indent=1)
    except OSError as e:
        print("gemm_vs_cublas: cannot write %s: %s" % (out, e), file=sys.stderr)
        return text, False
    return text, True


def main():
    ap = argparse.ArgumentParser(
        description="tilec's bf16 GEMM against cuBLAS (torch.matmul); see the top of this file.")
    ap.add_argument("--tilec", default=os.environ.get("TILEC", "build/tilec"),
                    help="the tilec binary (default $TILEC or build/tilec)")
    ap.add_argument("--shape", action="append", type=parse_shape, default=None,
                    help="M,N,K[,transA,transB]; repeatable (replaces the default list)")
    ap.add_argument("--quick", action="store_true", help="only 8192^3, 64x8192x8192 and 1024^3")
    ap.add_argument("-i", "--runs", type=int, default=20, help="timed runs per side (default 20)")
    ap.add_argument("--warmup", type=int, default=5, help="torch warm-up calls (default 5)")
    ap.add_argument("--budget", type=float, default=300, help="start no shape after this many s (300)")
    ap.add_argument("--timeout", type=int, default=150, help="seconds per tilec call (default 150)")
    ap.add_argument("--target", choices=["cuda", "opencl"], default="cuda",
                    help="cuda (default); opencl runs tilec on PoCL without torch (a script test)")
    ap.add_argument("--out", default=None, help="the markdown file (a .json is written next to it)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0 or args.timeout < 1:
        ap.error("-i, --timeout must be >= 1 and --warmup >= 0")
    shapes = args.shape or default_shapes(args.quick)
    out = args.out or os.path.join(os.environ.get("OUT") or "bench/out", "gemm_vs_cublas.md")

    if args.dry_run:
        for s in shapes:
            m, n, k, ta, tb = s
            print("%s -M %d -N %d -K %d -t bf16 --transA %d --transB %d --target %s --time -i %d "
                  "--json -V 1" % (args.tilec + " gemm", m, n, k, ta, tb, args.target, args.runs))
        return EXIT_OK
    if not (os.path.isfile(args.tilec) and os.access(args.tilec, os.X_OK)):
        print("gemm_vs_cublas: %s is not an executable (run make, or pass --tilec)" % args.tilec,
              file=sys.stderr)
        return EXIT_USAGE

    torch = None
    device = "OpenCL (tilec only)"
    if args.target == "cuda":
        try:
            import torch  # noqa: F811
        except Exception as e:  # ImportError, or a broken install
            fail_no_device("cannot import torch (%s: %s): cuBLAS is timed through torch.matmul"
                           % (type(e).__name__, e))
        if not torch.cuda.is_available():
            fail_no_device("torch %s sees no CUDA device" % torch.__version__)
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        device = "%s, torch %s, CUDA %s" % (torch.cuda.get_device_name(0), torch.__version__,
                                            torch.version.cuda)

    t_start = time.time()
    rows, failed = [], 0
    for s in shapes:
        m, n, k, ta, tb = s
        row = {"shape": shape_name(s), "m": m, "n": n, "k": k, "transA": ta, "transB": tb,
               "tilec_ms": None, "tilec_tflops": None, "cublas_ms": None, "cublas_tflops": None,
               "ratio": None, "verify": "-", "perf_config": None, "error": None}
        rows.append(row)
        if time.time() - t_start > args.budget:
            row["error"] = "not run: the %d s budget was spent" % args.budget
            print("%-22s %s" % (row["shape"], row["error"]), flush=True)
            continue
        extra = ["--time", "-i", str(args.runs), "-V", "1"]
        js, err, dt = run_tilec(args, m, n, k, ta, tb, extra, args.timeout)
        if (js is None or not js.get("kernels")) and "no CUDA device" in err:
            fail_no_device("tilec: " + err)
        if js:
            row["perf_config"] = js.get("perf_config")
            t = js.get("time") or {}
            row["tilec_ms"] = t.get("ms")
            row["tilec_tflops"] = tflops(m, n, k, row["tilec_ms"])
            v = js.get("verify")
            if v:
                row["verify"] = v.get("result", "?")
                if v.get("checked_elements", m * n) < m * n:
                    row["verify"] += " (%d of %d elements)" % (v["checked_elements"], m * n)
        if err:
            row["error"] = "tilec: " + err
            if row["verify"] == "-":
                row["verify"] = "ERROR"
        if torch is not None:
            try:
                ms, rel = torch_time(torch, m, n, k, ta, tb, args.runs, args.warmup)
                row["cublas_ms"], row["cublas_tflops"] = ms, tflops(m, n, k, ms)
                if rel > 0.05:
                    row["error"] = (row["error"] + "; " if row["error"] else "") + \
                        "torch spot check: relative error %.3g" % rel
            except Exception as e:  # out of memory, a CUDA error
                row["error"] = (row["error"] + "; " if row["error"] else "") + "torch: %s" % e
        if row["tilec_tflops"] and row["cublas_tflops"]:
            row["ratio"] = row["tilec_tflops"] / row["cublas_tflops"]
        bad = bool(row["error"]) or row["verify"].startswith(("FAIL", "ERROR"))
        failed += bad
        write_table(args, out, device, rows, len(shapes))  # so far: a kill keeps what ran
        print("%-22s tilec %s ms (%s TFLOP/s, %s)  cuBLAS %s ms (%s TFLOP/s)  ratio %s  verify %s%s"
              % (row["shape"], fmt(row["tilec_ms"], ".4f"), fmt(row["tilec_tflops"], ".1f"),
                 row["perf_config"], fmt(row["cublas_ms"], ".4f"), fmt(row["cublas_tflops"], ".1f"),
                 fmt(row["ratio"], ".2f"), row["verify"],
                 "  ERROR: " + row["error"] if row["error"] else ""), flush=True)

    text, written = write_table(args, out, device, rows, len(shapes))
    print()
    print(text, end="")
    if written:
        print("written: %s (and .json)" % out)
    else:
        failed += 1
    return EXIT_FAIL if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
