#!/usr/bin/env python3
"""conv_vs_cudnn.py - tilec's f16 conv2d forward against cuDNN (torch.nn.functional.conv2d).

For each of 14 ResNet-50 convolution layers (batch 32) and each layout (NCHW
with KCYX filters, NHWC with KYXC filters) it runs

    tilec conv2d -F 1 -n 32 -c C -H H -W W -k K -y R -x S -p P -q P -u U -v U \
                 -t f16 --in_layout L --fil_layout F --out_layout O \
                 --target cuda -V 1 --time -i 20 --json

(tilec's time: the median of back-to-back launches after the verified first
run) and torch's conv2d on the same problem (f16, channels_last memory for
NHWC, cuDNN's autotuner on: torch.backends.cudnn.benchmark), timed with CUDA
events per call after a warm-up.  It prints a markdown table (layer, layout,
tilec ms / TFLOP/s, cuDNN ms / TFLOP/s, ratio, verify, perf config) and the
geometric mean of the ratios per layout, and writes it with a JSON copy to
--out (default $OUT/conv_vs_cudnn.md, else bench/out/conv_vs_cudnn.md).

It stops starting new layers after --budget seconds (default 240); each
tilec call gets --timeout seconds (default 60).  --layers 1,3,5 runs a
subset (numbers of the table below), --no-verify times without -V 1 (the
CPU reference of a whole batch-32 layer takes seconds), --dry-run prints
the commands.

Exit status: 0 every layer ran and verified; 1 a tilec run failed, timed
out or did not verify; 2 a bad option or no tilec binary; 3 torch or a CUDA
device is missing (nothing was timed).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_DEVICE = 0, 1, 2, 3

# (C, H=W, K, R=S, stride, pad): the distinct convolutions of ResNet-50 v1.5
# at 224x224 input
LAYERS = [
    (3, 224, 64, 7, 2, 3),      # 1  conv1
    (64, 56, 64, 1, 1, 0),      # 2  res2 1x1 reduce
    (64, 56, 64, 3, 1, 1),      # 3  res2 3x3
    (64, 56, 256, 1, 1, 0),     # 4  res2 1x1 expand (and the projection)
    (256, 56, 64, 1, 1, 0),     # 5  res2 1x1 reduce
    (256, 56, 128, 1, 1, 0),    # 6  res3 first 1x1
    (128, 56, 128, 3, 2, 1),    # 7  res3 3x3 stride 2
    (128, 28, 512, 1, 1, 0),    # 8  res3 1x1 expand
    (256, 56, 512, 1, 2, 0),    # 9  res3 projection, stride 2
    (512, 28, 128, 1, 1, 0),    # 10 res3 1x1 reduce
    (128, 28, 128, 3, 1, 1),    # 11 res3 3x3
    (256, 14, 256, 3, 1, 1),    # 12 res4 3x3
    (1024, 14, 256, 1, 1, 0),   # 13 res4 1x1 reduce
    (512, 7, 512, 3, 1, 1),     # 14 res5 3x3
]
LAYOUTS = {"NCHW": ("NCHW", "KCYX", "NKHW"), "NHWC": ("NHWC", "KYXC", "NHWK")}


def out_size(h, r, u, p):
    return (h + 2 * p - r) // u + 1


def flops(n, layer):
    c, h, k, r, u, p = layer
    ho = out_size(h, r, u, p)
    return 2.0 * n * k * ho * ho * c * r * r


def tilec_cmd(args, layer, layout):
    c, h, k, r, u, p = layer
    i, f, o = LAYOUTS[layout]
    return [args.tilec, "conv2d", "-F", "1", "-n", str(args.batch), "-c", str(c), "-H", str(h),
            "-W", str(h), "-k", str(k), "-y", str(r), "-x", str(r), "-p", str(p), "-q", str(p),
            "-u", str(u), "-v", str(u), "-t", "f16", "--in_layout", i, "--fil_layout", f,
            "--out_layout", o, "--target", "cuda", "-V", "0" if args.no_verify else "1", "--time", "-i", str(args.runs),
            "--json"]


def run_tilec(cmd, timeout):
    """Runs one tilec call; returns (parsed JSON or None, error text)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           universal_newlines=True)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    js = None
    for line in p.stdout.splitlines():
        if line.strip().startswith("{"):
            try:
                js = json.loads(line)
            except ValueError:
                pass
    err = p.stderr.strip()
    if p.returncode != 0 or js is None or not js.get("ok"):
        why = err.splitlines()[-1] if err else "exit %d" % p.returncode
        v = (js or {}).get("verify") or {}
        if v.get("result") == "FAIL":
            why = "verify FAIL: " + v.get("message", "")
        return js, why
    return js, ""


def torch_time(torch, args, layer, layout):
    c, h, k, r, u, p = layer
    dev = torch.device("cuda")
    x = torch.randn((args.batch, c, h, h), device=dev, dtype=torch.float16)
    w = torch.randn((k, c, r, r), device=dev, dtype=torch.float16)
    if layout == "NHWC":
        x = x.to(memory_format=torch.channels_last)
        w = w.to(memory_format=torch.channels_last)
    conv = torch.nn.functional.conv2d
    for _ in range(args.warmup):
        y = conv(x, w, stride=u, padding=p)
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(args.runs)]
    for e0, e1 in ev:
        e0.record()
        y = conv(x, w, stride=u, padding=p)
        e1.record()
    torch.cuda.synchronize()
    del x, w, y
    return statistics.median(e0.elapsed_time(e1) for e0, e1 in ev)


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def geomean(vals):
    vals = [v for v in vals if v]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def write_table(out, device, args, rows):
    lines = ["# tilec f16 conv2d forward vs cuDNN (ResNet-50 layers, N = %d)" % args.batch, "",
             "- device: %s" % device,
             "- date: %s; medians of %d timed runs per side (tilec: back-to-back launches "
             "after the verified first; torch: CUDA events per call after %d warm-up calls, "
             "cudnn.benchmark on)" % (time.strftime("%Y-%m-%d %H:%M"), args.runs, args.warmup),
             "- layer: C, H=W, K, filter, stride, pad; ratio = tilec TFLOP/s / cuDNN TFLOP/s", "",
             "| # | layer | layout | tilec ms | tilec TFLOP/s | cuDNN ms | cuDNN TFLOP/s | ratio "
             "| verify | perf config |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["n"], r["layer"], r["layout"], fmt(r["tilec_ms"], ".4f"),
            fmt(r["tilec_tflops"], ".1f"), fmt(r["cudnn_ms"], ".4f"), fmt(r["cudnn_tflops"], ".1f"),
            fmt(r["ratio"], ".2f"), r["verify"] + (" (%s)" % r["error"] if r["error"] else ""),
            r["perf_config"] or "-"))
    lines.append("")
    for lay in LAYOUTS:
        g = geomean([r["ratio"] for r in rows if r["layout"] == lay])
        lines.append("- geomean ratio %s: %s over %d layers" % (
            lay, fmt(g, ".3f"), len([r for r in rows if r["layout"] == lay and r["ratio"]])))
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump({"device": device, "rows": rows}, f, indent=1)
    return text


def main():
    ap = argparse.ArgumentParser(description="tilec's conv2d vs cuDNN; see the top of this file.")
    ap.add_argument("--tilec", default=os.environ.get("TILEC", "build/tilec"))
    ap.add_argument("--layers", default=None, help="comma-separated layer numbers (1..14)")
    ap.add_argument("--layout", choices=["NCHW", "NHWC", "both"], default="both")
    ap.add_argument("-n", "--batch", type=int, default=32)
    ap.add_argument("-i", "--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--budget", type=float, default=240)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-verify", action="store_true",
                    help="-V 0: time only (bench/cuda_paths.sh verifies the conv kernels)")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    try:
        pick = [int(s) for s in args.layers.split(",")] if args.layers else list(range(1, 15))
    except ValueError:
        ap.error("--layers: comma-separated numbers 1..14")
    if not all(1 <= i <= len(LAYERS) for i in pick) or args.batch < 1 or args.runs < 1:
        ap.error("--layers takes 1..14; -n and -i must be >= 1")
    layouts = list(LAYOUTS) if args.layout == "both" else [args.layout]
    out = args.out or os.path.join(os.environ.get("OUT") or "bench/out", "conv_vs_cudnn.md")
    if args.dry_run:
        for i in pick:
            for lay in layouts:
                print(" ".join(tilec_cmd(args, LAYERS[i - 1], lay)))
        return EXIT_OK
    if not os.access(args.tilec, os.X_OK):
        print("conv_vs_cudnn: %s is not an executable" % args.tilec, file=sys.stderr)
        return EXIT_USAGE
    try:
        import torch
    except Exception as e:
        print("conv_vs_cudnn: cannot import torch (%s); nothing timed" % e, file=sys.stderr)
        return EXIT_NO_DEVICE
    if not torch.cuda.is_available():
        print("conv_vs_cudnn: torch sees no CUDA device; nothing timed", file=sys.stderr)
        return EXIT_NO_DEVICE
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    device = "%s, torch %s, cuDNN %s" % (torch.cuda.get_device_name(0), torch.__version__,
                                         torch.backends.cudnn.version())
    t0, rows, failed = time.time(), [], 0
    for i in pick:
        layer = LAYERS[i - 1]
        for lay in layouts:
            c, h, k, r, u, p = layer
            row = {"n": i, "layer": "%d,%d,%d,%dx%d,s%d,p%d" % (c, h, k, r, r, u, p),
                   "layout": lay, "tilec_ms": None, "tilec_tflops": None, "cudnn_ms": None,
                   "cudnn_tflops": None, "ratio": None, "verify": "-", "perf_config": None,
                   "error": None}
            rows.append(row)
            if time.time() - t0 > args.budget:
                row["error"] = "not run: budget spent"
                continue
            fl = flops(args.batch, layer)
            js, err = run_tilec(tilec_cmd(args, layer, lay), args.timeout)
            if js:
                row["perf_config"] = js.get("perf_config")
                row["tilec_ms"] = (js.get("time") or {}).get("ms")
                row["verify"] = (js.get("verify") or {}).get("result", "-")
            if row["tilec_ms"]:
                row["tilec_tflops"] = fl / (row["tilec_ms"] * 1e9)
            if err:
                row["error"] = "tilec: " + err
            try:
                row["cudnn_ms"] = torch_time(torch, args, layer, lay)
                row["cudnn_tflops"] = fl / (row["cudnn_ms"] * 1e9)
            except Exception as e:
                row["error"] = (row["error"] or "") + " torch: %s" % e
            if row["tilec_tflops"] and row["cudnn_tflops"]:
                row["ratio"] = row["tilec_tflops"] / row["cudnn_tflops"]
            failed += bool(row["error"]) or row["verify"] not in ("PASS", "-")
            write_table(out, device, args, rows)
            print("%2d %-22s %s tilec %s ms  cuDNN %s ms  ratio %s  %s %s" % (
                i, row["layer"], lay, fmt(row["tilec_ms"], ".4f"), fmt(row["cudnn_ms"], ".4f"),
                fmt(row["ratio"], ".2f"), row["verify"], row["error"] or ""), flush=True)
    print()
    print(write_table(out, device, args, rows), end="")
    return EXIT_FAIL if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
