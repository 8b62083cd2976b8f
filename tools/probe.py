#!/usr/bin/env python3
"""A hostile user's campaign against the rltrain CLI (issue "Nothing lost, nothing silent").

Generates bad input of each class, runs rltrain on it under a timeout and checks that it was
handled as the README promises:
  - it ends (no hang: each probe has a time limit) and is not killed by a signal;
  - the exit code is one the README documents for the case (0 where the input happens to be valid,
    2 bad input, 3 stopped by a signal, 4 diverged, 5 a write failed or memory ran out);
  - a failure prints exactly one `rltrain: error:` line on stderr, naming the file it is about;
  - a failed `train --resume` changes no byte of the run directory;
  - what a signal stopped has a checkpoint and a summary, and resumes.
Prints the table of docs/RESULTS.md (class, tried, handled) and every unhandled probe in full.

  tools/probe.py [--rltrain build/rltrain] [--seed 1] [--scale 1.0] [--classes config,mjcf,...]
                 [--json out.json]
--scale multiplies the number of generated probes per class (1.0: about 1,300 in all).
Exit status: 0 when every probe was handled, 1 otherwise.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

# Values a hostile user puts where a number, a string or a list belongs.
BAD_VALUES = [
    "-1", "0", "-0.0", "1e30", "-1e30", "1e400", "nan", "inf", "-inf", "9223372036854775808",
    "-9223372036854775809", "4294967297", "2147483648", "1.5", '"text"', '""', "true", "[1, 2]",
    "[]", "{a = 1}", "0x7fffffff", "1e-300", "3", "100000000",
]
MJCF_BAD_VALUES = [
    "-1", "0", "1e30", "-1e30", "1e400", "nan", "inf", "-inf", "1 2", "1 2 3 4 5 6 7 8 9 10", "x",
    "", "4294967297", "-2147483649", "9e18", "1e-300", "0 0 0", "0 0 0 0", "true", "../../etc/passwd",
]
CLI_BAD_VALUES = [
    "-1", "0", "nan", "inf", "1e30", "99999999999999999999", "18446744073709551616", "4294967296",
    "", "x", "-", "1.5", "--", "/dev/zero", "/nonexistent/dir/file", "/", "2147483648",
]


@dataclass
class Outcome:
    handled: bool
    why: str = ""


@dataclass
class ClassStats:
    tried: int = 0
    handled: int = 0
    exit_codes: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)


class Campaign:
    def __init__(self, rltrain: Path, rng: random.Random, work: Path):
        self.rltrain = str(rltrain)
        self.rng = rng
        self.work = work
        self.stats: dict[str, ClassStats] = {}
        self.counter = 0

    # ---- running and judging -------------------------------------------------------------------
    def run(self, args: list[str], timeout: float = 60, stdout=subprocess.DEVNULL, **kw) -> tuple:
        start = time.monotonic()
        try:
            p = subprocess.run([self.rltrain] + args, stdout=stdout, stderr=subprocess.PIPE,
                               timeout=timeout, cwd=self.work, **kw)
        except subprocess.TimeoutExpired as e:
            return None, (e.stderr or b"").decode(errors="replace"), time.monotonic() - start
        return p.returncode, p.stderr.decode(errors="replace"), time.monotonic() - start

    @staticmethod
    def judge(rc, err: str, allowed: set[int], names: list[str] | None = None) -> Outcome:
        """allowed: the exit codes that are right here; names: one of them must be in the error line."""
        if rc is None:
            return Outcome(False, "hang: the time limit ran out")
        if rc < 0:
            return Outcome(False, f"killed by signal {-rc}")
        if rc not in allowed:
            return Outcome(False, f"exit code {rc}, expected one of {sorted(allowed)}")
        if rc == 0:
            return Outcome(True)
        if rc in (3, 4):  # stopped by a signal, diverged: one line saying so, not an error
            said = [line for line in err.splitlines() if "stopped" in line or "diverged" in line]
            return Outcome(len(said) == 1, "" if len(said) == 1 else f"{len(said)} lines say why it stopped")
        errors = [line for line in err.splitlines() if "error" in line.lower() or "Sanitizer" in line]
        if len(errors) != 1 or not errors[0].startswith("rltrain"):
            return Outcome(False, f"{len(errors)} error lines")
        if "runtime error" in err or "AddressSanitizer" in err:
            return Outcome(False, "a sanitizer report")
        if names and rc == 2 and not any(n in errors[0] for n in names):
            return Outcome(False, "the error line names none of " + ", ".join(names))
        return Outcome(True)

    def record(self, cls: str, what: str, rc, err: str, outcome: Outcome):
        s = self.stats.setdefault(cls, ClassStats())
        s.tried += 1
        key = "hang" if rc is None else str(rc)
        s.exit_codes[key] = s.exit_codes.get(key, 0) + 1
        if outcome.handled:
            s.handled += 1
        else:
            s.failures.append({"probe": what, "why": outcome.why, "stderr": err.strip()[-600:]})

    def tmp(self, suffix: str = "") -> Path:
        self.counter += 1
        return self.work / f"p{self.counter:05d}{suffix}"

    # ---- 1. configs ----------------------------------------------------------------------------
    def configs(self, n: int):
        sources = sorted((ROOT / "configs").glob("*.toml"))
        for _ in range(n):
            src = self.rng.choice(sources)
            text = src.read_text()
            kind, bad = self.mutate_toml(text)
            cfg = self.tmp(".toml")
            cfg.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
            run_dir = self.tmp("_run")
            # Small and short: one iteration of 8 envs x 8 steps, unless the mutation is in those keys.
            small = [] if "num_envs" in kind or "num_steps" in kind else \
                ["--set", "env.num_envs=8", "--set", "ppo.num_steps=8", "--set", "ppo.num_minibatches=1"]
            rc, err, _ = self.run(["train", "--config", str(cfg), "--run-dir", str(run_dir), "--iterations", "1",
                                   "--quiet"] + small, timeout=120)
            outcome = self.judge(rc, err, {0, 2, 4, 5}, [cfg.name])
            if outcome.handled and rc == 2 and run_dir.exists():
                outcome = Outcome(False, "bad input, yet the run directory was created")
            self.record("config file (mutated shipped configs)", f"{src.name} {kind}: {cfg}", rc, err, outcome)
        # Special files where a config belongs.
        fifo = self.tmp(".fifo")
        os.mkfifo(fifo)
        huge = self.tmp(".toml")
        with open(huge, "wb") as f:
            f.truncate(300 << 20)
        for path in [fifo, Path("/dev/zero"), Path("/dev/null"), Path("/"), huge, self.tmp(".missing")]:
            rc, err, _ = self.run(["train", "--config", str(path), "--run-dir", str(self.tmp("_run"))], timeout=30)
            self.record("special files as config/checkpoint/model", f"--config {path}", rc, err,
                        self.judge(rc, err, {2}, [str(path)]))
            rc, err, _ = self.run(["eval", "--checkpoint", str(path)], timeout=30)
            self.record("special files as config/checkpoint/model", f"--checkpoint {path}", rc, err,
                        self.judge(rc, err, {2}, [str(path)]))
            rc, err, _ = self.run(["inspect", "--model", str(path)], timeout=30)
            self.record("special files as config/checkpoint/model", f"--model {path}", rc, err,
                        self.judge(rc, err, {2}, [str(path)]))

    def mutate_toml(self, text: str):
        lines = text.splitlines()
        value_lines = [i for i, l in enumerate(lines) if re.match(r"^\s*[A-Za-z_]+\s*=", l)]
        r = self.rng.random()
        if r < 0.55 and value_lines:
            i = self.rng.choice(value_lines)
            key = lines[i].split("=")[0].strip()
            value = self.rng.choice(BAD_VALUES)
            lines[i] = f"{key} = {value}"
            return f"{key} = {value}", "\n".join(lines) + "\n"
        if r < 0.65 and value_lines:
            i = self.rng.choice(value_lines)
            kind = "drop " + lines[i].split("=")[0].strip()
            del lines[i]
            return kind, "\n".join(lines) + "\n"
        if r < 0.72:
            section = self.rng.choice(["env", "ppo", "train", "policy", "nonsense"])
            return f"unknown key in [{section}]", text + f"\n[{section}]\nno_such_key = 1\n"
        if r < 0.9:
            return self.truncate_or_flip(text, r < 0.8)
        return "a section twice", text + "\n[ppo]\nnum_steps = 8\n"

    def truncate_or_flip(self, text: str, truncate: bool):
        """The text cut at a random byte, or with one to four random bytes overwritten."""
        if truncate:
            cut = self.rng.randrange(len(text))
            return f"truncated at byte {cut}", text[:cut]
        data = bytearray(text.encode())
        for _ in range(self.rng.randint(1, 4)):
            data[self.rng.randrange(len(data))] = self.rng.randrange(256)
        return "bytes flipped", bytes(data)

    # ---- 2. MJCF models ------------------------------------------------------------------------
    def mjcf(self, n: int):
        import xml.etree.ElementTree as ET
        models = sorted((ROOT / "envs/assets").glob("*.xml"))
        try:
            import mjcf_corpus
            models += [Path(p) for p in mjcf_corpus.locate_corpus()]
        except Exception:
            pass
        for _ in range(n):
            src = self.rng.choice(models)
            text = src.read_text(errors="replace")
            kind, bad = self.mutate_xml(text)
            # Next to the original, so that its includes, meshdir and assets resolve as they would.
            path = src.parent / f".rltrain_probe_{os.getpid()}_{self.counter}.xml"
            self.counter += 1
            try:
                path.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
                rc, err, _ = self.run(["rollout", "--model", str(path), "--steps", "5", "--ctrl", "random",
                                       "--out", os.devnull], timeout=60)
            finally:
                path.unlink(missing_ok=True)
            self.record("MJCF model (mutated shipped and corpus files)", f"{src} {kind}", rc, err,
                        self.judge(rc, err, {0, 2}, [path.name]))
        # Include loops and a garbage mesh.
        loop = self.tmp("_loop.xml")
        loop.write_text(f'<mujoco><include file="{loop.name}"/><worldbody/></mujoco>')
        rc, err, _ = self.run(["inspect", "--model", str(loop), "--out", os.devnull], timeout=30)
        self.record("MJCF model (mutated shipped and corpus files)", "an include loop", rc, err,
                    self.judge(rc, err, {2}, [loop.name]))
        for mesh_bytes, ext in [(os.urandom(300), "stl"), (b"solid x\nfacet normal 0 0 1\n", "stl"),
                                (b"v 0 0 0\nf 1 2 3\n", "obj"), (b"", "obj"), (struct.pack("<80sI", b"", 10**8), "stl")]:
            mesh = self.tmp("." + ext)
            mesh.write_bytes(mesh_bytes)
            model = self.tmp(".xml")
            model.write_text(f'<mujoco><asset><mesh name="m" file="{mesh.name}"/></asset><worldbody><body>'
                             f'<freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
            rc, err, _ = self.run(["inspect", "--model", str(model), "--out", os.devnull], timeout=30)
            self.record("MJCF model (mutated shipped and corpus files)", f"a bad {ext} mesh", rc, err,
                        self.judge(rc, err, {2}, [mesh.name, model.name]))

    def mutate_xml(self, text: str):
        attrs = list(re.finditer(r'(\s)([A-Za-z_]+)="([^"]*)"', text))
        r = self.rng.random()
        if r < 0.7 and attrs:
            m = self.rng.choice(attrs)
            value = self.rng.choice(MJCF_BAD_VALUES)
            return (f'{m.group(2)}="{m.group(3)}" -> "{value}"',
                    text[:m.start()] + f'{m.group(1)}{m.group(2)}="{value}"' + text[m.end():])
        if r < 0.9:
            return self.truncate_or_flip(text, r < 0.8)
        tags = list(re.finditer(r"<(body|geom|joint|motor|position|include|default)\b[^>]*/>", text))
        if not tags:
            return "unchanged", text
        m = self.rng.choice(tags)
        return f"element removed: {m.group(0)[:60]}", text[:m.start()] + text[m.end():]

    # ---- 3. checkpoints ------------------------------------------------------------------------
    def checkpoints(self, n: int):
        base = self.tmp("_ckpt_run")
        rc, err, _ = self.run(["train", "--config", str(ROOT / "configs/cartpole.toml"), "--run-dir", str(base),
                               "--iterations", "3", "--quiet", "--set", "train.checkpoint_every=1"], timeout=120)
        if rc != 0:
            raise SystemExit(f"probe: could not make the checkpoint to mutate: {err}")
        ckpt = (base / "checkpoints/latest.safetensors").read_bytes()
        header_len = struct.unpack("<Q", ckpt[:8])[0]
        for i in range(n):
            kind, bad = self.mutate_safetensors(ckpt, header_len)
            run = self.tmp("_resume")
            shutil.copytree(base, run)
            (run / "checkpoints/latest.safetensors").write_bytes(bad)
            before = tree_digest(run)
            if i % 2 == 0:
                rc, err, _ = self.run(["eval", "--checkpoint", str(run / "checkpoints/latest.safetensors"),
                                       "--episodes", "2"], timeout=60)
                what = "eval"
            else:
                rc, err, _ = self.run(["train", "--resume", str(run), "--iterations", "1", "--quiet"], timeout=60)
                what = "train --resume"
            outcome = self.judge(rc, err, {0, 2}, ["latest.safetensors", str(run)])
            if outcome.handled and rc != 0 and tree_digest(run) != before:
                outcome = Outcome(False, "a failed resume changed the run directory")
            self.record("checkpoint (mutated safetensors)", f"{what} {kind}", rc, err, outcome)

    def mutate_safetensors(self, data: bytes, header_len: int):
        b = bytearray(data)
        r = self.rng.random()
        if r < 0.3:
            at = self.rng.randrange(8 + header_len, len(b))
            b[at] ^= 1 << self.rng.randrange(8)
            return f"one bit flipped in the tensor data at {at}", bytes(b)
        if r < 0.5:
            at = self.rng.randrange(8, 8 + header_len)
            b[at] = self.rng.randrange(32, 127)
            return f"header byte {at} changed", bytes(b)
        if r < 0.65:
            cut = self.rng.randrange(len(b))
            return f"truncated at byte {cut}", bytes(b[:cut])
        if r < 0.75:
            b[0:8] = struct.pack("<Q", self.rng.choice([0, 1, header_len + 1, 2**63, len(b) * 2]))
            return "header length changed", bytes(b)
        # A number in the header JSON (shapes, offsets, counters in the metadata) made hostile.
        header = b[8:8 + header_len].decode()
        numbers = list(re.finditer(r"-?\d+(\.\d+)?(e-?\d+)?", header))
        m = self.rng.choice(numbers)
        value = self.rng.choice(["-1", "0", "99999999999999999999", "1e308", "4294967296", "7"])
        new_header = (header[:m.start()] + value + header[m.end():]).encode()
        return (f"header number {m.group(0)} -> {value}",
                struct.pack("<Q", len(new_header)) + new_header + bytes(b[8 + header_len:]))

    # ---- 4. command lines ----------------------------------------------------------------------
    def cli(self, n: int):
        cfg = str(ROOT / "configs/cartpole.toml")
        ckpt_run = self.tmp("_cli_run")
        self.run(["train", "--config", cfg, "--run-dir", str(ckpt_run), "--iterations", "1", "--quiet"])
        model = str(ROOT / "envs/assets/ant.xml")
        commands = {
            "train": (["--config", cfg, "--iterations", "1", "--quiet"],
                      ["--seed", "--iterations", "--device", "--set", "--mpi-timeout", "--run-dir"]),
            "eval": (["--checkpoint", str(ckpt_run), "--episodes", "2"],
                     ["--episodes", "--seed", "--device", "--config", "--checkpoint"]),
            "bench": (["--env", "cartpole", "--num-envs", "16", "--steps", "10", "--no-ppo"],
                      ["--num-envs", "--steps", "--threads", "--device", "--env", "--json"]),
            "rollout": (["--model", model, "--steps", "3", "--out", os.devnull],
                        ["--steps", "--seed", "--timestep", "--substeps", "--key", "--ctrl", "--model"]),
            "inspect": (["--model", model, "--out", os.devnull], ["--key", "--model", "--out"]),
            "export": (["--checkpoint", str(ckpt_run), "--out", str(self.tmp(".onnx"))], ["--checkpoint", "--out"]),
        }
        for _ in range(n):
            sub = self.rng.choice(sorted(commands))
            args, flags = commands[sub]
            flag = self.rng.choice(flags + ["--no-such-flag"])
            value = self.rng.choice(CLI_BAD_VALUES)
            if flag == "--set":
                value = self.rng.choice(["env.num_envs", "ppo.num_steps", "train.seed", "no.such", "=", "ppo.gamma"]) + \
                        "=" + value
            argv = [sub] + drop_flag(args, flag) + [flag, value]
            if sub == "train":
                argv += ["--run-dir", str(self.tmp("_run"))] if flag != "--run-dir" else []
            rc, err, _ = self.run(argv, timeout=60)
            # An output path that cannot be written (--out /nonexistent/dir/x) is a write failure (5).
            allowed = {0, 2, 5} if flag in ("--out", "--json", "--run-dir") else {0, 2}
            self.record("command line (bad flag values)", " ".join(argv), rc, err, self.judge(rc, err, allowed))

    # ---- 5. signals ----------------------------------------------------------------------------
    def signals(self, n: int):
        cfg = str(ROOT / "configs/cartpole.toml")
        for i in range(n):
            sig = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP][i % 3]
            twice = i % 2 == 1
            run = self.tmp("_sig")
            p = subprocess.Popen([self.rltrain, "train", "--config", cfg, "--run-dir", str(run), "--quiet",
                                  "--set", "train.total_env_steps=100000000", "--set", "train.stop_at_target=false"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.work)
            wait_for_rows(run / "metrics.csv", 3 + self.rng.randrange(20))
            p.send_signal(sig)
            if twice:
                time.sleep(0.05)
                p.send_signal(sig)
            try:
                _, err = p.communicate(timeout=60)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
                rc = None
            err = err.decode(errors="replace")
            what = f"{signal.Signals(sig).name}{' twice, 50 ms apart' if twice else ''}"
            outcome = self.judge(rc, err, {3})
            if outcome.handled:
                summary = json.loads((run / "summary.json").read_text())
                if summary.get("stopped_by") != signal.Signals(sig).name:
                    outcome = Outcome(False, f"summary says stopped_by {summary.get('stopped_by')}")
                elif not (run / "checkpoints/latest.safetensors").exists():
                    outcome = Outcome(False, "no checkpoint")
                else:
                    rc2, err2, _ = self.run(["train", "--resume", str(run), "--iterations", "1", "--quiet"])
                    if rc2 != 0:
                        outcome = Outcome(False, f"resume failed: {err2.strip()}")
            self.record("signals (SIGINT/SIGTERM/SIGHUP, once and twice)", what, rc, err, outcome)
        # kill -9, then resume from the timed/periodic checkpoint.
        run = self.tmp("_kill")
        p = subprocess.Popen([self.rltrain, "train", "--config", cfg, "--run-dir", str(run), "--quiet",
                              "--set", "train.checkpoint_every=5", "--set", "train.stop_at_target=false"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.work)
        wait_for_rows(run / "metrics.csv", 12)
        p.kill()
        p.wait()
        rc, err, _ = self.run(["train", "--resume", str(run), "--iterations", "1", "--quiet"])
        self.record("signals (SIGINT/SIGTERM/SIGHUP, once and twice)", "SIGKILL, then --resume", rc, err,
                    self.judge(rc, err, {0}))

    # ---- 6. write failures ---------------------------------------------------------------------
    def writes(self):
        cfg = str(ROOT / "configs/cartpole.toml")
        ckpt_run = self.tmp("_w_run")
        self.run(["train", "--config", cfg, "--run-dir", str(ckpt_run), "--iterations", "1", "--quiet"])
        cases = []
        for limit_kb in [1, 8, 64]:  # a file-size limit (RLIMIT_FSIZE) hits metrics.csv or the checkpoint
            cases.append((f"train under a {limit_kb} KiB file-size limit",
                          ["train", "--config", cfg, "--run-dir", str(self.tmp("_fs")), "--quiet"], limit_kb, None))
        cases.append(("eval with stdout on /dev/full", ["eval", "--checkpoint", str(ckpt_run), "--episodes", "2"],
                      None, "/dev/full"))
        cases.append(("envs with stdout on /dev/full", ["envs"], None, "/dev/full"))
        cases.append(("inspect --out /dev/full", ["inspect", "--model", str(ROOT / "envs/assets/ant.xml"),
                                                  "--out", "/dev/full"], None, None))
        cases.append(("bench --json into a missing folder", ["bench", "--env", "cartpole", "--num-envs", "16",
                                                             "--steps", "10", "--no-ppo", "--json",
                                                             "/nonexistent/b.json"], None, None))
        import stat
        dev_full = os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)
        for what, argv, limit_kb, out in cases:
            if "/dev/full" in what and not dev_full:
                print(f"probe: no /dev/full device here; not tried: {what}", file=sys.stderr)
                continue
            def limit(kb=limit_kb):
                import resource
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                if kb:
                    resource.setrlimit(resource.RLIMIT_FSIZE, (kb << 10, kb << 10))
            with open(out or os.devnull, "r+b" if out else "wb") as sink:
                rc, err, _ = self.run(argv, stdout=sink, preexec_fn=limit, timeout=120)
            allowed = {2, 5} if "missing folder" in what else {5}
            self.record("write failures (file-size limit, /dev/full, missing folder)", what, rc, err,
                        self.judge(rc, err, allowed))

    # ---- 7. divergence and size ----------------------------------------------------------------
    def divergence(self):
        for lr in ["1e6", "1e12"]:
            run = self.tmp("_div")
            rc, err, _ = self.run(["train", "--config", str(ROOT / "configs/pendulum.toml"), "--run-dir", str(run),
                                   "--quiet", "--set", f"ppo.learning_rate={lr}", "--set", "ppo.max_grad_norm=1e30",
                                   "--set", "train.total_env_steps=400000"], timeout=300)
            outcome = self.judge(rc, err, {0, 4})
            self.record("divergence (a learning rate that blows up)", f"pendulum at lr {lr}", rc, err, outcome)
        for key, value in [("env.num_envs", "1000000000"), ("policy.hidden", "[1000000, 1000000]"),
                           ("ppo.num_steps", "100000000")]:
            run = self.tmp("_big")
            rc, err, _ = self.run(["train", "--config", str(ROOT / "configs/ant.toml"), "--run-dir", str(run),
                                   "--quiet", "--iterations", "1", "--set", f"{key}={value}"], timeout=120)
            self.record("sizes beyond memory (envs, policy, rollout)", f"{key} = {value}", rc, err,
                        self.judge(rc, err, {2}, [key]))
        for argv in (["bench", "--env", "ant", "--num-envs", "99999999999", "--no-ppo", "--steps", "1"],
                     ["eval", "--checkpoint", str(self.work), "--episodes", "2000000000000"]):
            rc, err, _ = self.run(argv, timeout=120)
            self.record("sizes beyond memory (envs, policy, rollout)", " ".join(argv), rc, err,
                        self.judge(rc, err, {2}))


def drop_flag(args: list[str], flag: str) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == flag:
            skip = True
            continue
        out.append(a)
    return out


def wait_for_rows(metrics: Path, rows: int, limit: float = 60):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if metrics.read_text().count("\n") >= rows + 1:
                return
        except FileNotFoundError:
            pass
        time.sleep(0.01)


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rltrain", default=str(ROOT / "build/rltrain"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--classes", default="config,mjcf,checkpoint,cli,signals,writes,divergence")
    ap.add_argument("--json")
    a = ap.parse_args()
    classes = a.classes.split(",")
    with tempfile.TemporaryDirectory(prefix="rltrain_probe_") as work:
        c = Campaign(Path(a.rltrain).resolve(), random.Random(a.seed), Path(work))
        n = lambda k: max(1, int(k * a.scale))
        started = time.monotonic()
        if "config" in classes:
            c.configs(n(400))
        if "mjcf" in classes:
            c.mjcf(n(450))
        if "checkpoint" in classes:
            c.checkpoints(n(200))
        if "cli" in classes:
            c.cli(n(250))
        if "signals" in classes:
            c.signals(12)
        if "writes" in classes:
            c.writes()
        if "divergence" in classes:
            c.divergence()
        elapsed = time.monotonic() - started
    print("| probe class | tried | handled | exit codes |")
    print("|---|---|---|---|")
    for cls, s in c.stats.items():
        codes = ", ".join(f"{k}: {v}" for k, v in sorted(s.exit_codes.items()))
        print(f"| {cls} | {s.tried} | {s.handled} | {codes} |")
    total = sum(s.tried for s in c.stats.values())
    handled = sum(s.handled for s in c.stats.values())
    print(f"\n{handled} of {total} probes handled, {elapsed:.0f} s")
    for cls, s in c.stats.items():
        for f in s.failures:
            print(f"\nUNHANDLED [{cls}] {f['probe']}\n  {f['why']}\n  stderr: {f['stderr']}")
    if a.json:
        Path(a.json).write_text(json.dumps({k: vars(v) for k, v in c.stats.items()}, indent=1))
    return 0 if handled == total else 1


if __name__ == "__main__":
    sys.exit(main())
