#!/usr/bin/env python3
"""rltrain.Physics: N copies of an MJCF model stepped from Python, state as NumPy arrays.

Two short runs:
  1. Go1 (Menagerie, envs/assets, or --model FILE with a keyframe --key): every env from the keyframe,
     each holding its own noisy joint targets for --seconds; prints the trunk heights and steps/s
     (only the feet of this MJX model collide: a Go1 that falls sinks through the floor).
  2. Mocap: a box welded to a mocap "hand" (an MJCF string below); each env's hand circles at its
     own radius, set from Python every step; prints how closely the boxes follow their hands.
  3. Domain randomization and pushes: the Go1 again, each env with its own trunk mass (x U(0.8, 1.2))
     and floor friction (U(0.4, 1.0)) through set_param, pushed sideways for 0.1 s by a force on its
     trunk's centre of mass (xfrc_applied); prints the trunk's sideways speeds after the push.

    PYTHONPATH=build/python python3 examples/physics_batch.py --num-envs 256
"""
import argparse
import pathlib
import time

import numpy as np

import rltrain

HAND_AND_BOX = """
<mujoco model="hand_and_box">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1"/>
    <body name="hand" mocap="true" pos="0 0 0.5">
      <geom type="sphere" size="0.03" contype="0" conaffinity="0"/>
    </body>
    <body name="box" pos="0 0 0.4">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5"/>
    </body>
  </worldbody>
  <equality>
    <weld body1="box" body2="hand" relpose="0 0 0.1 1 0 0 0" solref="0.02 1"/>
  </equality>
</mujoco>
"""


def go1(args):
    phys = rltrain.Physics(args.model, num_envs=args.num_envs, num_threads=args.threads, precision=args.precision)
    print(phys)
    phys.reset(key=args.key)
    rng = np.random.default_rng(0)
    targets = phys.ctrl + rng.normal(0.0, 0.05, phys.ctrl.shape)  # each env its own targets
    phys.ctrl = np.clip(targets, phys.ctrlrange[:, 0], phys.ctrlrange[:, 1])
    steps = int(round(args.seconds / phys.timestep))
    start = time.perf_counter()
    phys.step(steps)
    wall = time.perf_counter() - start
    trunk = phys.body(phys.body_names[1])  # the first body under the world
    z = trunk.xpos[:, 2]
    print(f"go1: {steps} steps of {phys.num_envs} envs in {wall:.2f} s ({steps * phys.num_envs / wall:,.0f} physics "
          f"steps/s); {trunk.name} height min {z.min():.3f} mean {z.mean():.3f} max {z.max():.3f} m; "
          f"contacts per env {phys.ncon.mean():.1f}")


def mocap(args):
    phys = rltrain.Physics.from_xml_string(HAND_AND_BOX, num_envs=args.num_envs, num_threads=args.threads,
                                           precision=args.precision, source_name="hand_and_box")
    hand, box = phys.body("hand"), phys.body("box")
    radius = np.linspace(0.1, 0.5, phys.num_envs)  # env i circles at radius[i]
    worst = 0.0
    for t in range(int(round(4.0 / phys.timestep))):  # 4 s, a turn every 2 s
        angle = np.pi * t * phys.timestep
        hand.mocap_pos[:, 0] = radius * np.cos(angle)  # hand.mocap_pos is a view of phys.mocap_pos
        hand.mocap_pos[:, 1] = radius * np.sin(angle)
        phys.step()
        if t * phys.timestep >= 2.0:  # over the second turn: how far each box lags its hand
            worst = max(worst, float(np.max(np.linalg.norm(box.xpos - hand.xpos + [0, 0, 0.1], axis=1))))
    r_box = np.linalg.norm(box.xpos[:, :2], axis=1)
    print(f"mocap: {phys.num_envs} hands circling at 0.1 to 0.5 m; the boxes circle at {r_box.min():.3f} to "
          f"{r_box.max():.3f} m, at most {worst:.3f} m from their welded pose over the second turn")


def randomized_pushes(args):
    phys = rltrain.Physics(args.model, num_envs=args.num_envs, num_threads=args.threads, precision=args.precision)
    rng = np.random.default_rng(1)
    trunk = phys.body_names[1]  # the first body under the world
    b = phys.body_id(trunk)
    mass = phys.get_param("body_mass")  # (num_envs, nbody), a copy
    mass[:, b] *= rng.uniform(0.8, 1.2, phys.num_envs)
    phys.set_param("body_mass", mass)  # each env its own row; inverse weights recomputed as mj_setConst
    friction = phys.get_param("geom_friction")
    friction[:, 0, 0] = rng.uniform(0.4, 1.0, phys.num_envs)  # geom 0: the floor's sliding friction
    phys.set_param("geom_friction", friction)
    phys.reset(key=args.key)
    steps = int(round(0.1 / phys.timestep))
    phys.xfrc_applied[:, b, 1] = 0.5 * mass[:, b] * 9.81  # sideways, world y, at the trunk's com
    phys.step(steps)
    phys.xfrc_applied = np.zeros((phys.nbody, 6))  # off again (one env's shape: to every env)
    phys.step(steps)
    vy = phys.qvel[:, 1]  # the free joint's world y velocity
    print(f"randomized pushes: trunk mass {mass[:, b].min():.2f} to {mass[:, b].max():.2f} kg, floor friction "
          f"{friction[:, 0, 0].min():.2f} to {friction[:, 0, 0].max():.2f}; sideways speed 0.1 s after a 0.1 s "
          f"push of half the trunk's weight: {vy.min():.3f} to {vy.max():.3f} m/s")


def main():
    root = pathlib.Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(root / "envs" / "assets" / "go1" / "scene_mjx_feetonly_flat_terrain.xml"))
    ap.add_argument("--key", default="home", help="the keyframe the model's envs start from")
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: one per core)")
    ap.add_argument("--precision", choices=("float", "double"), default="float")
    ap.add_argument("--seconds", type=float, default=1.0, help="simulated time of the Go1 run")
    args = ap.parse_args()
    go1(args)
    mocap(args)
    randomized_pushes(args)


if __name__ == "__main__":
    main()
