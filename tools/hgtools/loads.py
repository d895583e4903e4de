"""loads - the user's workloads that `hourglass record --load` runs beside
hourglass: started each in a process group of its own, watched through
/proc, stopped (SIGTERM to the group, SIGKILL after a grace period), and
named for the merger (`hgmerge --label`).

What is kept for record.json, per load: the command, its pid, its name (the
label the report shows), every task of it and of its descendants seen (pid,
comm), how it ended, and /proc/PID/sched counters of those tasks just before
hourglass started and just after it ended. Beside them, the machine's
/proc/interrupts and /proc/softirqs at the same two moments: counters the
module does not produce, from which an expectation can be computed.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Dict, IO, List, Optional, Set

from .engine import LABEL_RE

# comms too common to name a load by (another task of the same comm would be taken for it)
GENERIC_COMMS = {"sh", "bash", "dash", "env", "python3", "python", "perl", "hourglass", "hgtrace",
                 "timeout", "taskset", "chrt", "nice", "sleep", "trace-cmd"}
SHELLS = {"sh", "bash", "dash"}
# /proc/PID/sched lines worth keeping: how often the task ran, migrated, and for how long
SCHED_KEYS = ("nr_switches", "nr_voluntary_switches", "nr_involuntary_switches", "se.nr_migrations",
              "se.sum_exec_runtime")
# a label per pid up to this many tasks a load; beyond, its comms name it
MAX_PID_LABELS = 512


def valid_label(spec: str) -> bool:
    """Whether @spec is what hgmerge --label takes: PID=NAME, comm:PREFIX=NAME or irq:N=NAME."""
    return bool(LABEL_RE.match(spec))


def proc_read(path: str) -> Optional[str]:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def comm_of(pid: int, tid: Optional[int] = None) -> Optional[str]:
    path = f"/proc/{pid}/task/{tid}/comm" if tid else f"/proc/{pid}/comm"
    c = proc_read(path)
    return c.rstrip("\n") if c is not None else None


def _stat_fields(pid: int) -> Optional[List[str]]:
    """/proc/PID/stat's fields from the state on (the comm may hold spaces and parentheses:
    they start after the last ')')."""
    st = proc_read(f"/proc/{pid}/stat")
    if not st:
        return None
    return st[st.rfind(")") + 2:].split()


def parent_map() -> Dict[int, "tuple[int, int]"]:
    """pid -> (ppid, session) of every process now."""
    out: Dict[int, "tuple[int, int]"] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        f = _stat_fields(int(name))
        if f and len(f) > 3:
            out[int(name)] = (int(f[1]), int(f[3]))
    return out


def members(root: int, procs: Dict[int, "tuple[int, int]"]) -> List[int]:
    """The processes of the load whose shell is @root: @root, every process below it, and every
    process of its session (started in one of its own: what was put in the background and
    outlived its parent stays in it), in order."""
    children: Dict[int, List[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        p = todo.pop(0)
        if p in procs and p not in out:
            out.append(p)
        todo += sorted(children.get(p, []))
    out += sorted(pid for pid, (_, sid) in procs.items() if sid == root and pid not in out)
    return out


def tasks_of(pid: int) -> List[int]:
    try:
        return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return []


def sched_counters(pid: int, tid: int) -> Optional[Dict[str, float]]:
    """The kept lines of /proc/PID/task/TID/sched (None if the task is gone)."""
    text = proc_read(f"/proc/{pid}/task/{tid}/sched")
    if text is None:
        return None
    out: Dict[str, float] = {}
    for line in text.splitlines():
        k, sep, v = line.partition(":")
        k = k.strip()
        if sep and k in SCHED_KEYS:
            try:
                out[k] = float(v.strip())
            except ValueError:
                pass
    return out


def irq_table(text: Optional[str]) -> Dict[str, Any]:
    """/proc/interrupts or /proc/softirqs as {"cpus": [0, 1], "rows": {key: {"counts": [...], "name": str}}}."""
    if not text:
        return {"cpus": [], "rows": {}}
    lines = text.splitlines()
    cpus = [int(c[3:]) for c in lines[0].split() if c.startswith("CPU")]
    rows: Dict[str, Any] = {}
    for line in lines[1:]:
        key, sep, rest = line.partition(":")
        if not sep:
            continue
        parts = rest.split()
        counts = []
        for p in parts[:len(cpus)]:
            if not p.isdigit():
                break
            counts.append(int(p))
        rows[key.strip()] = {"counts": counts, "name": " ".join(parts[len(counts):])}
    return {"cpus": cpus, "rows": rows}


def counters_now() -> Dict[str, Any]:
    """The machine's interrupt and softirq counters, stamped on CLOCK_MONOTONIC."""
    t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    return {"monotonic_ns": t, "interrupts": irq_table(proc_read("/proc/interrupts")),
            "softirqs": irq_table(proc_read("/proc/softirqs"))}


def default_name(command: str) -> str:
    """A name from the command line, until the load runs and its comm is known: its first word
    that is not an assignment or a wrapper, without directories."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for w in words:
        if "=" in w.split("/")[0] or w.startswith("-") or w.isdigit():
            continue
        base = safe_name(os.path.basename(w))
        if base and base not in GENERIC_COMMS | {"exec", "nohup", "stdbuf", "ionice"}:
            return base[:15]
    return "load"


def safe_name(text: str) -> str:
    """@text with only the characters a label's name keeps in every output (no '=', no spaces)."""
    return re.sub(r"[^A-Za-z0-9_.+:/-]", "", text)


@dataclass
class Load:
    """One --load: its command, and what was seen of it."""
    index: int
    command: str
    proc: Optional["subprocess.Popen[bytes]"] = None
    name: str = ""
    tasks: Dict[int, Dict[str, Any]] = field(default_factory=dict)   # tid -> {"pid", "comm"}
    sched_before: Dict[str, Dict[str, float]] = field(default_factory=dict)
    sched_after: Dict[str, Dict[str, float]] = field(default_factory=dict)
    exit: Optional[int] = None
    ended: str = ""          # "exited early", "exited", "SIGTERM", "SIGKILL"
    started_ns: int = 0
    last_seen: Set[int] = field(default_factory=set)   # the tids the latest watch found

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc else None

    def start(self, run_dir: str, log: IO[bytes]) -> None:
        """Start the command in a shell, in a new session (its own process group: a terminal's
        Ctrl-C does not reach it, record stops it), with HOURGLASS_RUN_DIR and HOURGLASS_LOAD
        in its environment."""
        env = dict(os.environ, HOURGLASS_RUN_DIR=os.path.abspath(run_dir), HOURGLASS_LOAD=str(self.index))
        self.started_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        self.proc = subprocess.Popen(["/bin/sh", "-c", self.command], stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.name = self.name or default_name(self.command)

    def watch(self, procs: Optional[Dict[int, "tuple[int, int]"]] = None) -> List[int]:
        """Note every task of the load now (its processes and their threads); their pids."""
        if not self.proc:
            return []
        pids = members(self.proc.pid, procs if procs is not None else parent_map())
        self.last_seen = set()
        for pid in pids:
            for tid in tasks_of(pid) or [pid]:
                c = comm_of(pid, tid)
                if c is not None:
                    self.tasks.setdefault(tid, {"pid": pid, "comm": c})["comm"] = c
                    self.last_seen.add(tid)
        return pids

    def main_comm(self) -> Optional[str]:
        """The comm of the first of its processes that is not a shell (what `sh -c` ran), of
        those the latest watch found first: a sample taken while the shell still ran the
        command's first steps can hold a child gone a moment later (a `$(date)`), which the
        next sample, once the load runs, does not."""
        procs = [(tid, t) for tid, t in sorted(self.tasks.items()) if t["pid"] == tid and t["comm"] not in SHELLS]
        for tid, t in [x for x in procs if x[0] in self.last_seen] + procs:
            return str(t["comm"])
        return None

    def sample_sched(self) -> Dict[str, Dict[str, float]]:
        out: Dict[str, Dict[str, float]] = {}
        for tid, t in sorted(self.tasks.items()):
            c = sched_counters(t["pid"], tid)
            if c is not None:
                out[str(tid)] = c
        return out

    def alive_tasks(self) -> bool:
        """Whether a process of the load is still running."""
        return _alive(self)

    def early_exit(self) -> Optional[int]:
        """Its exit status if it already ended."""
        return self.proc.poll() if self.proc else None

    def stop(self, grace_s: float) -> None:
        """SIGTERM to its process group (and to any task of it that left the group), SIGKILL to
        what is left after @grace_s."""
        if not self.proc:
            return
        if self.proc.poll() is not None:
            self.exit, self.ended = self.proc.returncode, self.ended or "exited"
            _kill_rest(self, signal.SIGKILL)
            return
        # what it forked since the last look (a Ctrl-C can come before the first): known, so
        # recorded and stopped even if it left the group
        self.watch()
        _signal_all(self, signal.SIGTERM)
        self.ended = "SIGTERM"
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None and not _alive(self):
                break
            time.sleep(0.02)
        if self.proc.poll() is None or _alive(self):
            _signal_all(self, signal.SIGKILL)
            self.ended = "SIGKILL"
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.exit = self.proc.returncode

    def record(self) -> Dict[str, Any]:
        """What record.json keeps of it."""
        return {"index": self.index, "command": self.command, "pid": self.pid, "name": self.name,
                "tasks": [{"tid": tid, "pid": t["pid"], "comm": t["comm"]} for tid, t in sorted(self.tasks.items())],
                "comms": sorted({str(t["comm"]) for t in self.tasks.values()}),
                "sched_before": self.sched_before, "sched_after": self.sched_after,
                "exit": self.exit, "ended": self.ended}


def _processes(load: Load) -> Set[int]:
    return {int(t["pid"]) for t in load.tasks.values()} | ({load.proc.pid} if load.proc else set())


def _alive(load: Load) -> bool:
    """Whether any process of @load other than a zombie is left."""
    for pid in _processes(load):
        f = _stat_fields(pid)
        if f and f[0] not in ("Z", "X"):
            return True
    return False


def _signal_all(load: Load, sig: int) -> None:
    assert load.proc is not None
    try:
        os.killpg(load.proc.pid, sig)
    except OSError:
        pass
    _kill_rest(load, sig)


def _kill_rest(load: Load, sig: int) -> None:
    """@sig to the processes of @load seen that may have left its group (setsid, setpgid)."""
    for pid in _processes(load):
        if load.proc and pid == load.proc.pid:
            continue
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def name_loads(loads: List[Load]) -> None:
    """Give each load the comm of what its shell ran, unique among the loads."""
    seen: Set[str] = set()
    for ld in loads:
        base = safe_name(ld.main_comm() or "") or ld.name or f"load{ld.index}"
        name, k = base, 2
        while name in seen:
            name, k = f"{base}-{k}", k + 1
        seen.add(name)
        ld.name = name


def labels(loads: List[Load], others: Dict[int, str]) -> List[str]:
    """hgmerge --label options naming each load: every task seen by pid, and each of its comms as
    a prefix (forked workers seen by no sample share them) unless a task outside the loads
    (@others: pid -> comm, sampled at the same moments) or a generic comm would match it."""
    out: List[str] = []
    foreign = set(others.values())
    for ld in loads:
        tids = sorted(ld.tasks)
        for tid in tids[:MAX_PID_LABELS]:
            out.append(f"{tid}={ld.name}")
        for c in sorted({str(t["comm"]) for t in ld.tasks.values()}):
            if c in GENERIC_COMMS or "=" in c or not c or any(f.startswith(c) for f in foreign):
                continue
            out.append(f"comm:{c}={ld.name}")
    return out


def foreign_tasks(loads: List[Load], procs: Optional[Dict[int, "tuple[int, int]"]] = None) -> Dict[int, str]:
    """tid -> comm of every task that is no load's (kernel threads included)."""
    mine: Set[int] = set()
    for ld in loads:
        mine |= _processes(ld)
    out: Dict[int, str] = {}
    for pid in (procs if procs is not None else parent_map()):
        if pid in mine:
            continue
        for tid in tasks_of(pid) or [pid]:
            c = comm_of(pid, tid)
            if c is not None:
                out[tid] = c
    return out
