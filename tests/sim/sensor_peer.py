#!/usr/bin/env python3
"""sensor_peer.py MODEL SENSOR_TRACE [STEPS]: MuJoCo 3 and rltrain's sensors (tests/sim/sensor_trace.cpp)
from the same start (qpos0 at rest, a fixed ctrl held), compared step by step: every sensor's output
within 1e-6 relative (max(1, |value|) scale) in double. Exit 0 pass, 1 mismatch, 77 no mujoco.
MODEL may be dm_control:PATH, a file of the installed dm_control package (77 without it)."""
import importlib.util, json, os, subprocess, sys, tempfile

try:
    import mujoco
    import numpy as np
except ImportError:
    sys.exit(77)


def main():
    model_path, trace = sys.argv[1], sys.argv[2]
    if model_path.startswith("dm_control:"):
        spec = importlib.util.find_spec("dm_control")
        if spec is None or not spec.submodule_search_locations:
            print("dm_control is not installed: skipped")
            return 77
        model_path = os.path.join(list(spec.submodule_search_locations)[0], model_path[len("dm_control:"):])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # MuJoCo writes MUJOCO_LOG.TXT
        m = mujoco.MjModel.from_xml_path(model_path)
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
        d = mujoco.MjData(m)
        ctrl = [0.3 + 0.2 * i for i in range(m.nu)]
        d.ctrl[:] = ctrl
        out = subprocess.run([trace, model_path, str(steps)] + [repr(c) for c in ctrl],
                             check=True, capture_output=True, text=True).stdout
    ours = json.loads(out)
    worst, worst_at, per = 0.0, None, {}
    for s in range(steps):
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
