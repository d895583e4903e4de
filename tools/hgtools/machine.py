"""machine - what a run's hourglass.json says of the machine it ran on: the kernel, its
PREEMPT_RT, the CPUs, the hypervisor and the TSC. A profile (learn) must match it; hourglass
results files each run's row under it."""
from __future__ import annotations

from typing import Any, Dict


def machine_of(info: Dict[str, Any]) -> Dict[str, Any]:
    """The machine of the run whose hourglass.json is @info."""
    k = info.get("kernel") or {}
    tsc = info.get("tsc") or {}
    return {"kernel": str(k.get("release", "")).split(" ")[0], "preempt_rt": bool(k.get("preempt_rt")),
            "cpus": k.get("cpus_online"), "hypervisor": tsc.get("hypervisor"),
            "tsc_mhz": round(float(tsc.get("hz") or 0) / 1e6, 1)}
