"""hourglass export DIR --kernelshark OUT.dat"""
import argparse
import sys

from hgmerge.load import RunError

from . import kernelshark


def main(argv=None):
    ap = argparse.ArgumentParser(prog="hourglass export",
                                 description="Export a merged run for viewers: a trace.dat that trace-cmd and "
                                             "KernelShark open, with the kernel's events and hourglass's.")
    ap.add_argument("dir", help="run directory (hourglass record -o DIR)")
    ap.add_argument("--kernelshark", metavar="OUT.dat", required=True,
                    help="write a trace.dat: the ground truth, and a buffer 'hourglass' with intervals, gaps "
                         "(inferred and actual causes), jobs, deadline misses and wake-ups")
    ap.add_argument("--kernel", metavar="FILE", help="ground truth other than DIR/kernel.hgt (see report)")
    a = ap.parse_args(argv)
    try:
        r = kernelshark.export(a.dir, a.kernelshark, a.kernel)
    except (RunError, ValueError) as e:
        print(f"hourglass export: {e}", file=sys.stderr)
        return 3
    print(f"hourglass export: {r['path']}: {r['kernel_events']} kernel events, {r['hourglass_events']} hourglass "
          f"events ({r['gaps']} gaps) on {r['cpus']} CPUs", file=sys.stderr)
    return 0


sys.exit(main())
