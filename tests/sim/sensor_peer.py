#!/usr/bin/env python3
"""sensor_peer.py MODEL SENSOR_TRACE [STEPS] [--random SEED] [--ctrl-scale S]: MuJoCo 3 and rltrain's
sensors (tests/sim/sensor_trace.cpp) from the same start (qpos0 at rest, a fixed ctrl held; with
--random, random controls: each step's uniform in each actuator's ctrlrange ([-1, 1] where not
ctrllimited) widened about its middle by the factor S, default 1, so S > 1 also drives ctrl outside
the range), compared step by step: every sensor's output within 1e-6 relative (max(1, |value|)
scale) in double. Exit 0 pass, 1 mismatch, 77 no mujoco.
MODEL may be dm_control:PATH, a file of the installed dm_control package (77 without it)."""
import importlib.util, json, os, subprocess, sys, tempfile

try:
    import mujoco
    import numpy as np
except ImportError:
    sys.exit(77)


def main():
    model_path, trace = sys.argv[1], os.path.abspath(sys.argv[2])
    if model_path.startswith("dm_control:"):
        spec = importlib.util.find_spec("dm_control")
        if spec is None or not spec.submodule_search_locations:
            print("dm_control is not installed: skipped")
            return 77
        model_path = os.path.join(list(spec.submodule_search_locations)[0], model_path[len("dm_control:"):])
    args = sys.argv[3:]
    seed, scale = None, 1.0
    if "--random" in args:
        k = args.index("--random")
        seed = int(args[k + 1])
        del args[k:k + 2]
    if "--ctrl-scale" in args:
        k = args.index("--ctrl-scale")
        scale = float(args[k + 1])
        del args[k:k + 2]
    steps = int(args[0]) if args else 200
    model_path = os.path.abspath(model_path)
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # MuJoCo writes MUJOCO_LOG.TXT
        m = mujoco.MjModel.from_xml_path(model_path)
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
        d = mujoco.MjData(m)
        if seed is None:
            ctrls = np.tile([0.3 + 0.2 * i for i in range(m.nu)], (steps, 1))
            ctrl_args = [repr(float(c)) for c in ctrls[0]] if m.nu else []
        else:
            rng = np.random.default_rng(seed)
            lo = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 0], -1.0)
            hi = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 1], 1.0)
            mid, half = (lo + hi) / 2, (hi - lo) / 2 * scale
            ctrls = rng.uniform(mid - half, mid + half, size=(steps, m.nu))
            with open("ctrl.txt", "w") as f:
                for row in ctrls:
                    f.write(" ".join(repr(float(c)) for c in row) + "\n")
            ctrl_args = ["@" + os.path.join(tmp, "ctrl.txt")]
        out = subprocess.run([trace, model_path, str(steps)] + ctrl_args,
                             check=True, capture_output=True, text=True).stdout
    ours = json.loads(out)
    worst, worst_at, per = 0.0, None, {}
    for s in range(steps):
        if m.nu:
            d.ctrl[:] = ctrls[s]
        mujoco.mj_step(m, d)
        got = np.array(ours["steps"][s]["sensordata"])
        if got.shape != d.sensordata.shape:
            print("sensordata sizes differ:", got.shape, d.sensordata.shape)
            return 1
        err = np.abs(got - d.sensordata) / np.maximum(1.0, np.abs(d.sensordata))
        for i, name in enumerate(ours["names"]):
            a, n = ours["adr"][i], ours["dim"][i]
            e = float(err[a:a + n].max())
            per[name] = max(per.get(name, 0.0), e)
            if e > worst:
                worst, worst_at = e, (s, name, got[a:a + n].tolist(), d.sensordata[a:a + n].tolist())
    print("  per sensor: " + ", ".join(f"{k} {v:.2g}" for k, v in per.items()))
    print(f"{len(ours['names'])} sensors, {steps} steps: worst relative difference {worst:.3g}")
    if worst_at:
        print("  at step %d, sensor %s: rltrain %s, mujoco %s" % worst_at)
    return 0 if worst <= 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
