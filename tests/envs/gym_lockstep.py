#!/usr/bin/env python3
"""Steps rltrain's classic-control envs in lockstep with Gymnasium itself.

Usage: gym_lockstep.py PATH/TO/env_trace

For each env (cartpole, pendulum, acrobot, mountaincar_continuous) two checks run:

1. Re-synchronised, every step (the main check). Gymnasium runs a policy that reaches the places
   where the rules matter (termination, velocity and force clipping, angle wrapping, the wall),
   restarting at termination, followed by single steps from states drawn over the whole state
   space. Before every step Gymnasium's state is rounded to float32 and env_trace starts the same
   step from that same state. Each comparison therefore sees one step of our float32 arithmetic
   against Gymnasium's float64 and nothing else, so the tolerances can be tight (a few float32
   ulps of each quantity) and still never flake, and every step of a long run is checked.
   A free run over hundreds of steps could not do that: Acrobot is chaotic and Pendulum and
   CartPole near upright amplify rounding exponentially (Acrobot's float/double gap is O(1)
   after ~400 steps), so it would test chaos rather than equations.

2. Free-running over a short horizon from Gymnasium's reset states: our env carries its own
   float32 state from step to step, which checks that the state is chained the way Gymnasium
   chains it. The horizon is short enough that the float/double gap stays far below the
   (looser) tolerance.

Termination flags must agree exactly, except on steps that end within 1e-6 of a threshold or of
the mountain car's wall, where rounding may legitimately put float32 and float64 on different
sides; such steps are counted, printed and skipped. Truncation is not compared (Gymnasium's
TimeLimit is stripped by .unwrapped); the C++ tests check it through VecEnvT.

Exit status: 0 all agree, 1 a mismatch (the first few are printed), 77 gymnasium not importable.
"""
import json
import math
import subprocess
import sys

try:
    import numpy as np
    import gymnasium as gym
except Exception as e:  # ImportError, or a broken install
    print(f"SKIP: cannot import gymnasium/numpy ({e!r}); `pip install gymnasium` to run this check")
    sys.exit(77)

EDGE = 1e-6  # distance to a discontinuity below which float32 vs float64 may disagree


class Case:
    """One env: Gymnasium id, our name, policies, tolerances and the edges of its rules."""

    def extra_atol(self, env, pre, a):
        """Absolute tolerance added for one re-synchronised step from `pre` (default none)."""
        return 0.0


class CartPoleCase(Case):
    name, gym_id = "cartpole", "CartPole-v1"
    state_dtype = np.float64
    # One explicit Euler step: values up to ~3, float32 ulp 2.4e-7 (observed max error 2.4e-7).
    obs_tol = (2e-6, 2e-6)  # (atol, rtol)
    reward_tol = (0.0, 0.0)  # +1 every step, exactly
    # Unstable upright: over 40 steps the float/double gap stays below 1.2e-6.
    free_horizon, free_tol = 40, (2e-5, 2e-5)
    needs_termination = True
    theta_threshold = 12 * 2 * math.pi / 360

    def policy(self, s, rng):
        return int(rng.integers(2))

    def wide_state(self, rng):
        return [rng.uniform(-2.4, 2.4), rng.uniform(-3, 3), rng.uniform(-0.2, 0.2), rng.uniform(-3, 3)]

    def wide_action(self, rng):
        return self.policy(None, rng)

    def gym_action(self, a):
        return a

    def near_edge(self, pre, a, post):
        return (abs(abs(post[0]) - 2.4) < EDGE) or (abs(abs(post[2]) - self.theta_threshold) < EDGE)


class PendulumCase(Case):
    name, gym_id = "pendulum", "Pendulum-v1"
    state_dtype = np.float64
    # One step: cos/sin of a float32 theta up to |12| (ulp 1e-6), theta_dot up to 8.
    obs_tol = (1e-5, 1e-5)
    reward_tol = (1e-5, 1e-5)
    # Near upright errors grow by e^{sqrt(15) t} (t in seconds): over 20 steps the gap stays
    # below 4e-6 (2e-4 after 40, 4e-2 after 200 steps).
    free_horizon, free_tol = 20, (1e-4, 1e-4)
    needs_termination = False

    def policy(self, s, rng):
        return float(np.float32(rng.uniform(-3.0, 3.0)))  # beyond +-2: clipping is exercised

    def wide_state(self, rng):
        return [rng.uniform(-12, 12), rng.uniform(-8, 8)]

    def wide_action(self, rng):
        return self.policy(None, rng)

    def gym_action(self, a):
        return np.array([a], dtype=np.float32)

    def near_edge(self, pre, a, post):
        return False  # obs and reward are continuous in the state (clipping is continuous)


class AcrobotCase(Case):
    name, gym_id = "acrobot", "Acrobot-v1"
    state_dtype = np.float64
    # One RK4 step: the float32 error follows the largest intermediate quantity, dt * max|stage
    # derivative| (the "scale", up to ~4e3 near the velocity limits, ~1-10 near rest), at most
    # 6e-6 of it; the tolerance is 1e-5 + 3e-5 * scale (see tests/envs/test_acrobot.cpp).
    obs_tol = (1e-5, 0.0)
    scale_tol = 3e-5
    reward_tol = (0.0, 0.0)  # -1 or 0, exactly
    # Chaotic: over 40 steps the float/double gap stays below 5e-6 (1e-5 after 60, 2e-3 after 100).
    free_horizon, free_tol = 40, (1e-4, 1e-4)
    needs_termination = True

    def policy(self, s, rng):
        # Swing-up: torque with the sign of dtheta2 reaches the goal in ~60-120 steps; 20%
        # random actions keep the visited states varied.
        if rng.random() < 0.2:
            return int(rng.integers(3))
        return 2 if s[3] > 0 else 0

    def wide_state(self, rng):
        p = math.pi
        return [rng.uniform(-p, p), rng.uniform(-p, p), rng.uniform(-4 * p, 4 * p), rng.uniform(-9 * p, 9 * p)]

    def wide_action(self, rng):
        return int(rng.integers(3))

    def gym_action(self, a):
        return a

    def near_edge(self, pre, a, post):
        height = -math.cos(post[0]) - math.cos(post[1] + post[0])
        return abs(height - 1.0) < EDGE

    def extra_atol(self, env, pre, a):
        # Gymnasium's own _dsdt over the RK4 stages from `pre` gives the step's scale.
        dt = env.dt
        y0 = np.append(np.asarray(pre, dtype=np.float64), env.AVAIL_TORQUE[a])
        k1 = np.asarray(env._dsdt(y0))
        k2 = np.asarray(env._dsdt(y0 + dt / 2 * k1))
        k3 = np.asarray(env._dsdt(y0 + dt / 2 * k2))
        k4 = np.asarray(env._dsdt(y0 + dt * k3))
        return self.scale_tol * dt * float(np.max(np.abs(np.concatenate([k1, k2, k3, k4]))))


class MountainCarCase(Case):
    name, gym_id = "mountaincar_continuous", "MountainCarContinuous-v0"
    state_dtype = np.float32  # Gymnasium stores this env's state as float32
    # Both sides round the state to float32 each step: observed 1 ulp (position ulp 6e-8 at 0.5,
    # velocity ulp 7e-9 at 0.07); ~15 ulps allowed. A wrong power (0.0016) moves velocity by 1e-4.
    obs_tol = (np.array([1e-6, 1e-7]), 0.0)
    reward_tol = (1e-5, 1e-6)  # ulp of 100 is 7.6e-6
    # Not chaotic: a whole episode. Gymnasium (under NumPy 2) rounds velocity in float32 in
    # another order than we do; the position gap stays below 1.2e-6.
    free_horizon, free_tol = 999, (np.array([1e-5, 1e-6]), 0.0)
    needs_termination = True

    def policy(self, s, rng):
        # Energy pumping (push along the velocity) with magnitudes beyond 1, plus 10% random.
        if rng.random() < 0.1:
            return float(np.float32(rng.uniform(-2.0, 2.0)))
        sign = 1.0 if s[1] >= 0 else -1.0
        return float(np.float32(sign * rng.uniform(0.5, 1.6)))

    def wide_state(self, rng):
        return [rng.uniform(-1.2, 0.6), rng.uniform(-0.07, 0.07)]

    def wide_action(self, rng):
        return float(np.float32(rng.uniform(-2.0, 2.0)))

    def gym_action(self, a):
        return np.array([a], dtype=np.float32)

    def near_edge(self, pre, a, post):
        # The wall: where the unclipped position lands within EDGE of -1.2, clipping (and the
        # velocity reset) may happen on one side only.
        force = min(max(a, -1.0), 1.0)
        v = min(max(pre[1] + force * 0.0015 - 0.0025 * math.cos(3 * pre[0]), -0.07), 0.07)
        if abs(pre[0] + v + 1.2) < EDGE:
            return True
        # The goal: position >= 0.45 and velocity >= 0.
        if abs(post[0] - 0.45) < EDGE:
            return True
        return post[0] >= 0.45 and abs(post[1]) < EDGE


CASES = [CartPoleCase(), PendulumCase(), AcrobotCase(), MountainCarCase()]


def as_f32_list(x):
    return [float(np.float32(v)) for v in x]


def run_trace(trace, request):
    proc = subprocess.run([trace], input=json.dumps(request), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"env_trace failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


class Comparison:
    """Collects per-step differences for one env and one mode; keeps the first few failures."""

    def __init__(self, case, mode, obs_tol, reward_tol):
        self.case, self.mode = case, mode
        self.obs_tol, self.reward_tol = obs_tol, reward_tol
        self.steps = self.terminations = self.edges = 0
        self.max_obs_err = None
        self.max_reward_err = 0.0
        self.max_frac = 0.0  # largest error / tolerance seen
        self.failures = []

    def fail(self, msg):
        self.failures.append(msg if len(self.failures) < 5 else None)

    def step(self, where, ours, gym_obs, gym_reward, gym_term, edge, extra_atol=0.0):
        """Returns False where the two sides ended on different sides of an edge."""
        if edge:
            self.edges += 1
            if bool(ours["terminated"]) != gym_term:
                return False
        self.steps += 1
        self.terminations += gym_term
        o = np.asarray(ours["obs"], dtype=np.float64)
        g = np.asarray(gym_obs, dtype=np.float64)
        err = np.abs(o - g)
        self.max_obs_err = err if self.max_obs_err is None else np.maximum(self.max_obs_err, err)
        atol, rtol = self.obs_tol
        tol = atol + extra_atol + rtol * np.abs(g)
        self.max_frac = max(self.max_frac, float(np.max(err / tol)))
        bad = err > tol
        if np.any(bad):
            k = int(np.argmax(bad))
            self.fail(f"{where}: obs[{k}] = {o[k]!r}, Gymnasium {g[k]!r} (ours {o.tolist()}, Gymnasium {g.tolist()})")
        rerr = abs(ours["reward"] - gym_reward)
        self.max_reward_err = max(self.max_reward_err, rerr)
        rtol_abs = self.reward_tol[0] + self.reward_tol[1] * abs(gym_reward)
        if rtol_abs > 0:
            self.max_frac = max(self.max_frac, rerr / rtol_abs)
        if rerr > rtol_abs:
            self.fail(f"{where}: reward {ours['reward']!r}, Gymnasium {gym_reward!r}")
        if bool(ours["terminated"]) != gym_term:
            self.fail(f"{where}: terminated {ours['terminated']}, Gymnasium {gym_term}")
        return True

    def report(self):
        errs = ", ".join(f"{e:.1e}" for e in (self.max_obs_err if self.max_obs_err is not None else []))
        print(f"  {self.mode:<6} {self.steps:5d} steps, {self.terminations:3d} terminations, "
              f"{self.edges} near an edge; max |obs err| [{errs}], max |reward err| "
              f"{self.max_reward_err:.1e}; worst {100 * self.max_frac:.1f}% of tolerance")
        for f in self.failures:
            print(f"    MISMATCH {f}" if f else "    ... more mismatches")
        return not self.failures


def set_state(env, case, s):
    env.unwrapped.state = np.asarray(s, dtype=case.state_dtype)


def resync_check(case, trace, policy_steps=400, wide_steps=400):
    rng = np.random.default_rng(2024)
    env = gym.make(case.gym_id).unwrapped
    env.reset(seed=1)
    states, actions, gym_out, pres = [], [], [], []

    def one_step(s32, a):
        extra = case.extra_atol(env, s32, a)
        set_state(env, case, s32)
        obs, reward, term, _, _ = env.step(case.gym_action(a))
        post = np.asarray(env.state, dtype=np.float64).tolist()
        states.append(s32)
        actions.append(a)
        gym_out.append((np.asarray(obs).tolist(), float(reward), bool(term), post, extra))
        return term

    for _ in range(policy_steps):
        s32 = as_f32_list(np.asarray(env.unwrapped.state, dtype=np.float64))
        if one_step(s32, case.policy(s32, rng)):
            env.reset()
    for _ in range(wide_steps):
        env.reset()  # clears per-episode bookkeeping (CartPole's steps_beyond_terminated)
        one_step(as_f32_list(case.wide_state(rng)), case.wide_action(rng))

    ours = run_trace(trace, {"env": case.name, "states": states, "actions": actions,
                             "max_episode_steps": 1 << 30})
    cmp = Comparison(case, "resync", case.obs_tol, case.reward_tol)
    for k, (obs, reward, term, post, extra) in enumerate(gym_out):
        mine = {key: ours[key][k] for key in ("obs", "reward", "terminated")}
        where = f"step {k} from state {states[k]} action {actions[k]}"
        cmp.step(where, mine, obs, reward, term, case.near_edge(states[k], actions[k], post), extra)
    return cmp


def free_check(case, trace, segments=5):
    rng = np.random.default_rng(77)
    env = gym.make(case.gym_id).unwrapped
    cmp = Comparison(case, "free", case.free_tol, case.reward_tol)
    for seg in range(segments):
        env.reset(seed=100 + seg)
        s0 = as_f32_list(np.asarray(env.state, dtype=np.float64))
        set_state(env, case, s0)
        actions, gym_out = [], []
        for _ in range(case.free_horizon):
            pre = np.asarray(env.state, dtype=np.float64).tolist()
            a = case.policy(pre, rng)
            obs, reward, term, _, _ = env.step(case.gym_action(a))
            actions.append(a)
            gym_out.append((np.asarray(obs).tolist(), float(reward), bool(term), pre,
                            np.asarray(env.state, dtype=np.float64).tolist()))
            if term:
                break
        ours = run_trace(trace, {"env": case.name, "state": s0, "actions": actions,
                                 "max_episode_steps": 1 << 30})
        for k, (obs, reward, term, pre, post) in enumerate(gym_out):
            mine = {key: ours[key][k] for key in ("obs", "reward", "terminated")}
            where = f"segment {seg} (reset seed {100 + seg}) step {k}"
            if not cmp.step(where, mine, obs, reward, term, case.near_edge(pre, actions[k], post)):
                break  # the two runs took different sides of an edge: nothing after is comparable
    return cmp


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    trace = sys.argv[1]
    print(f"gymnasium {gym.__version__}, numpy {np.__version__}")
    ok = True
    for case in CASES:
        print(f"{case.name} vs {case.gym_id}:")
        for cmp in (resync_check(case, trace), free_check(case, trace)):
            ok = cmp.report() and ok
            if case.needs_termination and cmp.mode == "resync" and cmp.terminations == 0:
                print("    MISMATCH the policy never terminated: the termination rule went unchecked")
                ok = False
    print("all envs agree with Gymnasium" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
