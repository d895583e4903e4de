"""hgtools.lab - the truth lab: scenarios run in guests (or on a farm's devices) whose loads
say what the kernel must have done, judged against what hourglass inferred (docs/lab.md).

Each program is a module run with `python3 -m hgtools.lab.NAME` (tools/ on PYTHONPATH, or
hgtools installed); scripts/lab, scripts/lab-check and scripts/lava-* run them so:
    guest_run       in the guest: each scenario recorded (`hourglass record`), TAP a scenario
    analyse         on the host: each run merged, its expectations and class figures judged
    check           the targets asserted on OUT/lab.json, as TAP (make check's quick lab)
    profiles        a profile learned per kernel and guest, measured on runs it never saw
    gapstats        what user space saw of each actual class, for the rules' author
    allowances      the known misreads' table in docs/lab.md
    lava_jobs       LAVA job definitions (make lava-jobs); lava_cases, lava_results and
                    lava_artifacts: a job's test cases, what the dispatcher said, its file store
and the modules they share: scenario (scenarios/*.toml), expect, labtable, labsummary,
kernel. Data beside them: scenarios/ (the scenario files), progs/ (the loads, C, built into
build/lab), setup/ (the scenarios' setup commands), lava/ (a device template and a scenario
that fails on purpose). The lab imports hgtools; nothing in hgtools imports the lab.
"""
