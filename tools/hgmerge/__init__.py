"""hgmerge - one timeline from hourglass's trace and the kernel's events.

    load.py    read both sides (streaming the kernel's), check they share a clock
    truth.py   the kernel's account of every gap: what ran, for how long, why
    infer.py   the paper's gray-box inferences, from hourglass's data alone
    judge.py   inferred against actual: confusion matrix, costs, durations
    report.py  text and JSON report; `python3 -m hgmerge DIR` runs it all
"""
