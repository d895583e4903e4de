"""hgexport - what users look at: a merged trace.dat for trace-cmd and
KernelShark (tracedat.py writes the format, kernelshark.py fills it)."""
