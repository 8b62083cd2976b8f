"""rltrain.make_vec: Gymnasium's vector-env API on every env, bit-for-bit equality with the C++ VecEnv,
zero-copy views and DLPack, bad arguments with the CLI's messages."""
import subprocess

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium", reason="gymnasium is not installed (tools/setup.sh --test installs it)")
from gymnasium.utils.passive_env_checker import check_action_space, check_observation_space  # noqa: E402
from gymnasium.vector import AutoresetMode, VectorEnv  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402

import rltrain  # noqa: E402
from conftest import SOURCE_DIR, cli_error, tool  # noqa: E402

ENVS = rltrain.envs()
NUM_ENVS = 4


def random_actions(env, rng):
    """Actions of env.action_space's shape drawn by numpy (not the env's own sampler)."""
    space = env.single_action_space
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, size=env.num_envs)
    return rng.uniform(space.low, space.high, size=(env.num_envs, *space.shape)).astype(np.float32)


def short_episodes(name):
    """max_episode_steps=8 where the env has it, so that a few steps cover truncation and autoreset."""
    env = rltrain.make_vec(name, num_envs=1)
    names = [p[0] for p in env.params]
    env.close()
    return {"max_episode_steps": 8} if "max_episode_steps" in names else {}


def test_every_cli_env_is_listed(rltrain_bin):
    out = subprocess.run([rltrain_bin, "envs", "--names"], capture_output=True, text=True, check=True).stdout
    assert ENVS == out.split()


def assert_same_info(got, want, where="info"):
    """got equals want key for key: the same keys, types, dtypes and shapes; object arrays entry by entry."""
    assert isinstance(got, dict) and sorted(got) == sorted(want), (where, sorted(got), sorted(want))
    for key, w in want.items():
        g = got[key]
        if isinstance(w, dict):
            assert_same_info(g, w, f"{where}[{key!r}]")
            continue
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape, (where, key, g, w)
        if w.dtype == object:
            for i, (gi, wi) in enumerate(zip(g, w)):
                assert (gi is None) == (wi is None), (where, key, i)
                if wi is not None:
                    assert gi.dtype == wi.dtype and np.array_equal(gi, wi), (where, key, i, gi, wi)
        else:
            assert np.array_equal(g, w), (where, key, g, w)


def assert_gymnasium_final_keys(env, info, done):
    """info's final_obs/final_info are what Gymnasium's SAME_STEP vector envs build with VectorEnv._add_info
    from each finished env's final observation and final step info (gymnasium/vector/sync_vector_env.py)."""
    want = {}
    for i in np.flatnonzero(done):
        env_info = {"episode_return": info["episode_return"][i], "episode_length": info["episode_length"][i]}
        if "final_critic_obs" in info:
            env_info["critic_obs"] = info["final_critic_obs"][i].copy()
        want = env._add_info(want, {"final_obs": info["final_obs_batch"][i].copy(), "final_info": env_info}, i)
    assert_same_info({k: info[k] for k in want}, want)


def test_final_obs_as_gymnasium_sync_vector_env():
    """CartPole side by side with Gymnasium's own SyncVectorEnv (SAME_STEP) through truncations and a partial
    reset: the same final_obs/final_info keys with the same structure on every step, the rows where they should be."""
    n = 3
    ours = rltrain.make_vec("cartpole", num_envs=n, seed=0, max_episode_steps=5)
    theirs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1", max_episode_steps=5) for _ in range(n)],
                                      autoreset_mode=AutoresetMode.SAME_STEP)
    keys = ("final_obs", "_final_obs", "final_info", "_final_info")
    ours.reset(seed=0)
    theirs.reset(seed=0)
    num_final = 0
    for t in range(13):
        if t == 2:  # env 0 restarts: from now on it ends two steps after the others
            mask = np.array([True, False, False])
            ours.reset(options={"reset_mask": mask})
            theirs.reset(options={"reset_mask": mask})
        actions = np.full(n, t % 2)  # left, right, ...: the pole stays up, episodes end by truncation
        _, _, term, trunc, info = ours.step(actions)
        _, _, t_term, t_trunc, t_info = theirs.step(actions)
        assert np.array_equal(term, t_term) and np.array_equal(trunc, t_trunc), t
        assert sorted(k for k in info if k in keys) == sorted(k for k in t_info if k in keys), t
        if "final_obs" not in t_info:
            continue
        num_final += 1
        done = term | trunc
        assert np.array_equal(info["_final_obs"], t_info["_final_obs"]) and np.array_equal(info["_final_obs"], done)
        assert np.array_equal(info["_final_info"], t_info["_final_info"])
        assert info["final_obs"].dtype == t_info["final_obs"].dtype == object
        assert info["final_obs"].shape == t_info["final_obs"].shape == (n,)
        for i in range(n):
            g, w = info["final_obs"][i], t_info["final_obs"][i]
            assert (g is None) == (w is None), (t, i)
            if w is not None:
                assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
                assert np.array_equal(g, info["final_obs_batch"][i])
        assert isinstance(info["final_info"], dict) and isinstance(t_info["final_info"], dict)
        for key, value in info["final_info"].items():  # ours: each value with its mask, as _add_info keeps them
            assert value.shape[0] == n and (key.startswith("_") or np.array_equal(info["final_info"]["_" + key], done))
        assert_gymnasium_final_keys(ours, info, done)
    assert num_final == 4  # steps 4 and 9 (envs 1 and 2), 6 and 11 (env 0)


@pytest.mark.parametrize("copy", [False, True])
def test_final_obs_rows_are_views_or_copies(copy):
    """final_obs's rows are views of the final-observation buffer (valid until the next step), copies with copy=True;
    a fresh object array every step, as Gymnasium's."""
    env = rltrain.make_vec("cartpole", num_envs=4, seed=0, max_episode_steps=2, copy=copy)
    env.reset()
    env.step(np.zeros(4, np.int64))
    info = env.step(np.ones(4, np.int64))[4]
    assert info["_final_obs"].all()
    rows = [info["final_obs"][i] for i in range(4)]
    for i, row in enumerate(rows):
        assert np.array_equal(row, env.buffers["final_obs"][i])
        assert np.shares_memory(row, env.buffers["final_obs"]) == (not copy)
    env.step(np.zeros(4, np.int64))
    again = env.step(np.ones(4, np.int64))[4]
    assert again["final_obs"] is not info["final_obs"] and again["final_info"] is not info["final_info"]


@pytest.mark.parametrize("copy", [False, True])
def test_gymnasium_info_false_keeps_only_the_batched_keys(copy):
    """gymnasium_info=False: no final_obs/final_info, the same steps, and the batched keys give what Gymnasium's did."""
    def run(gymnasium_info):
        env = rltrain.make_vec("cartpole", num_envs=16, seed=3, copy=copy, gymnasium_info=gymnasium_info)
        env.reset()
        rng, out = np.random.default_rng(5), []
        for _ in range(60):
            obs, reward, term, trunc, info = env.step(random_actions(env, rng))
            done = term | trunc
            assert np.array_equal(info["_episode_return"], done)
            if gymnasium_info:  # what Gymnasium's keys say of the finished envs, read now (views)
                assert ("final_obs" in info) == done.any()
                final = {i: (info["final_obs"][i].copy(), info["final_info"]["episode_length"][i])
                         for i in np.flatnonzero(done)}
            else:
                assert not any(k in info for k in ("final_obs", "_final_obs", "final_info", "_final_info"))
                final = {i: (info["final_obs_batch"][i].copy(), info["episode_length"][i]) for i in np.flatnonzero(done)}
            out.append((obs.copy(), reward.copy(), done, final))
        env.close()
        return out
    finished = 0
    for (obs, reward, done, final), (obs_b, reward_b, done_b, final_b) in zip(run(True), run(False)):
        assert np.array_equal(obs, obs_b) and np.array_equal(reward, reward_b) and np.array_equal(done, done_b)
        assert final.keys() == final_b.keys()
        for i, (row, length) in final.items():
            assert np.array_equal(row, final_b[i][0]) and length == final_b[i][1]
            finished += 1
    assert finished > 10
    with pytest.raises(ValueError, match="gymnasium_info"):
        rltrain.make_vec("cartpole", num_envs=2, gymnasium_info="no")


def object_rows(n, rng):
    """An object array of n distinct float32 rows (as vector.py's views of final_obs), a string and an int among them."""
    rows = np.empty(n, dtype=object)
    for i in range(n):
        rows[i] = rng.standard_normal(3).astype(np.float32)
    rows[1], rows[2] = "text", 12345678901
    return rows


def where_rows(mask, values):
    """What _core.select_rows must return: np.where with the mask over the rows, 0 (None for objects) elsewhere."""
    zero = None if values.dtype == object else values.dtype.type(0)
    return np.where(mask.reshape(-1, *([1] * (values.ndim - 1))), values, zero)


def assert_same_rows(got, want):
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    if want.dtype == object:
        assert all(g is w for g, w in zip(got, want))  # the very objects (no copies), None where masked out
    else:
        assert got.tobytes() == want.tobytes()  # bit for bit: NaN payloads, -0.0


def test_select_rows_is_np_where():
    """_core.select_rows (vector.py's final_info arrays) against np.where on every dtype and shape it meets and more."""
    from rltrain import _core
    rng = np.random.default_rng(4)
    n = 67  # not a multiple of 8
    special = np.array([np.nan, -0.0, np.inf, -np.nan], np.float32).view(np.uint32) | np.uint32(5)  # NaN payloads
    values = [rng.standard_normal(n).astype(np.float32), rng.integers(-9, 9, n).astype(np.int32),
              rng.standard_normal((n, 5)).astype(np.float32), rng.standard_normal((n, 2, 3)),
              rng.integers(0, 2, n).astype(bool), rng.integers(0, 9, (n, 3)).astype(np.uint8),
              np.resize(special.view(np.float32), n), object_rows(n, rng)]
    for mask in [rng.random(n) < 0.3, np.zeros(n, bool), np.ones(n, bool)]:
        for v in values:
            assert_same_rows(_core.select_rows(mask, v), where_rows(mask, v))
    assert _core.select_rows(np.zeros(0, bool), np.zeros(0, np.float32)).shape == (0,)
    with pytest.raises(ValueError, match="mask: expected a C-contiguous 1-D bool array"):
        _core.select_rows(np.zeros(n, np.uint8), values[0])
    with pytest.raises(ValueError, match="values: expected a C-contiguous array of 67 rows"):
        _core.select_rows(np.zeros(n, bool), values[0][:-1])
    with pytest.raises(ValueError, match="values: expected a C-contiguous array"):
        _core.select_rows(np.zeros(n, bool), values[2][:, ::2])
    with pytest.raises(ValueError, match="object arrays must be 1-D"):
        _core.select_rows(np.zeros(n, bool), np.empty((n, 2), object))


def test_object_array_pool_reuses_only_arrays_nobody_holds():
    """_core.ObjectArrayPool (info["final_obs"]): every array it returns is np.where(mask, rows, None); an array
    comes back rewritten only once nobody else holds it (no reference, no weak reference), so one that is held
    never changes; reference counts balance (no leaked or lost references to the rows or to None)."""
    import sys
    import weakref

    from rltrain import _core
    rng = np.random.default_rng(5)
    n = 1000
    rows = object_rows(n, rng)
    counts = [sys.getrefcount(r) for r in rows]
    pool = _core.ObjectArrayPool()

    def select(p=0.05):
        mask = rng.random(n) < p
        out = pool.select_rows(mask, rows)
        assert_same_rows(out, where_rows(mask, rows))
        return out

    # (ids are those of arrays the pool keeps alive, so an id seen again is the same array)
    ids = {id(select(p)) for p in [0.05, 0.5, 0.0, 1.0, 0.05]}  # dropped at once: one array, rewritten
    assert len(ids) == 1
    prev, ids = None, set()
    for _ in range(10):  # `obs, ..., info = env.step(a)`: the previous step's held while the next one runs
        prev = select()
        ids.add(id(prev))
    assert len(ids) == 2
    kept = [(out, out.copy()) for out in (select(0.3) for _ in range(6))]  # all held: six arrays, never rewritten
    assert len({id(out) for out, _ in kept}) == 6
    select(0.9)
    for out, copy in kept:
        assert all(a is b for a, b in zip(out, copy))
    out = select()
    snapshot, weak = out.copy(), weakref.ref(out)
    del out, prev, kept
    for _ in range(4):  # a weak reference alone keeps it from being rewritten
        other = select(0.5)
        assert weak() is None or (other is not weak() and all(a is b for a, b in zip(weak(), snapshot)))
    del other, copy, snapshot, pool
    assert [sys.getrefcount(r) for r in rows] == counts

    # None's count (immortal from 3.12 on): up by the Nones an array gains, down by those it loses or frees
    masks = [rng.random(n) < p for p in (0.05, 0.5, 0.0, 1.0)]
    pool = _core.ObjectArrayPool()
    pool.select_rows(masks[0], rows)
    for k in range(1, 9):
        before = sys.getrefcount(None)
        pool.select_rows(masks[k % 4], rows)  # the pool's one array, rewritten
        _core.select_rows(masks[k % 4], rows)  # a fresh array, freed at once
        change = sys.getrefcount(None) - before  # outside the assert: pytest's rewriting holds Nones of its own
        if sys.version_info < (3, 12):
            assert change == np.count_nonzero(masks[k % 4 - 1]) - np.count_nonzero(masks[k % 4])
    del pool
    assert [sys.getrefcount(r) for r in rows] == counts
    # a reference the pool releases may run a destructor that calls the pool again
    class CallsBack:
        def __del__(self):
            inner.append(pool.select_rows(np.ones(len(letters), bool), letters))  # work space of another size

    letters, inner = np.array([str(i) for i in range(1000)], dtype=object), []
    values = np.array([CallsBack(), "a", "b"], dtype=object)
    pool = _core.ObjectArrayPool()
    pool.select_rows(np.ones(3, bool), values)
    values[0] = None  # the pool's array holds the last reference
    outer = pool.select_rows(np.zeros(3, bool), values)
    assert list(outer) == [None] * 3 and len(inner) == 1 and list(inner[0]) == list(letters)
    with pytest.raises(ValueError, match="expected an object array"):
        _core.ObjectArrayPool().select_rows(np.zeros(3, bool), np.zeros(3))


def test_core_step_counts_finished_envs():
    """_core.step returns how many envs finished (terminated or truncated), what vector.py checks before it builds
    Gymnasium's final keys."""
    env = rltrain.make_vec("cartpole", num_envs=64, seed=1, max_episode_steps=9)
    env.reset()
    counts = []
    for t in range(30):
        num_done = env._core.step(env.sample_actions(t))
        counts.append(num_done)
        assert num_done == np.count_nonzero(env.buffers["terminated"] | env.buffers["truncated"])
    assert min(counts) == 0 and max(counts) > 0


@pytest.mark.parametrize("name", ENVS)
def test_gymnasium_vector_api(name):
    """What Gymnasium's env checker asks of an env (check_env), asked of the vector env."""
    params = short_episodes(name)
    env = rltrain.make_vec(name, num_envs=NUM_ENVS, seed=3, num_threads=1, **params)
    assert isinstance(env, VectorEnv) and env.num_envs == NUM_ENVS
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    check_observation_space(env.single_observation_space)
    check_action_space(env.single_action_space)
    assert env.observation_space == batch_space(env.single_observation_space, NUM_ENVS)
    assert env.action_space == batch_space(env.single_action_space, NUM_ENVS)

    # reset: observations in the space; the same seed gives the same bits, another seed others
    obs, info = env.reset(seed=5)
    assert isinstance(info, dict)
    assert obs in env.observation_space, obs
    first = obs.copy()
    assert np.array_equal(env.reset(seed=5)[0], first)
    assert not np.array_equal(env.reset(seed=6)[0], first)

    # step: types, shapes and dtypes; same-step autoreset with the final observation in info
    rng = np.random.default_rng(0)
    trajectories = []
    for _ in range(2):
        env.reset(seed=5)
        steps = []
        for t in range(20):
            obs, reward, term, trunc, info = env.step(random_actions(env, np.random.default_rng(t)))
            assert obs.shape == (NUM_ENVS, *env.single_observation_space.shape) and obs.dtype == np.float32
            assert reward.shape == (NUM_ENVS,) and np.issubdtype(reward.dtype, np.floating)
            assert term.dtype == np.bool_ and trunc.dtype == np.bool_ and term.shape == trunc.shape == (NUM_ENVS,)
            assert np.all(np.isfinite(obs)) and np.all(np.isfinite(reward))
            done = term | trunc
            assert np.array_equal(info["_episode_length"], done) and info["final_obs_batch"].shape == obs.shape
            assert ("final_obs" in info) == done.any()  # Gymnasium's keys only on a step where some env finished
            if done.any():
                assert_gymnasium_final_keys(env, info, done)
            for i in np.flatnonzero(done):
                assert info["final_obs"][i] in env.single_observation_space
                assert info["episode_length"][i] >= 1
                if trunc[i] and not term[i] and params:
                    assert info["episode_length"][i] == 8
            steps.append((obs.copy(), reward.copy(), term.copy(), trunc.copy()))
        trajectories.append(steps)
    for a, b in zip(*trajectories):  # step determinism
        for x, y in zip(a, b):
            assert np.array_equal(x, y)
    if params:
        assert any(s[3].any() for s in trajectories[0]), "no env was truncated in 20 steps of 8-step episodes"

    # Gymnasium's samplers and wrappers work on it
    env.step(env.action_space.sample())
    wrapped = gym.wrappers.vector.RecordEpisodeStatistics(env)
    wrapped.reset(seed=1)
    for _ in range(10):
        wrapped.step(wrapped.action_space.sample())
    wrapped.close()
    assert env.closed


@pytest.mark.parametrize("name,params", [(n, {}) for n in ENVS] + [
    ("ant", {"dr_friction_min": 0.5, "dr_friction_max": 1.5, "dr_added_mass_min": -0.2, "dr_added_mass_max": 1.0,
             "dr_motor_strength_min": 0.8, "dr_motor_strength_max": 1.2, "obs_noise": 0.05, "push_interval_s": 0.1,
             "push_velocity": 0.5, "max_episode_steps": 30}),
    ("cartpole", {"max_episode_steps": 7, "gravity": 12.0})])
def test_bit_equal_to_cpp_vec_env(name, params, tmp_path):
    """make_vec's steps are the C++ VecEnv's (envs/registry.h, stepped by tests/python/vec_env_trace.cpp), bit for bit."""
    trace = tool("RLTRAIN_VEC_ENV_TRACE")
    n, steps, seed = 16, 40, 11
    env = rltrain.make_vec(name, num_envs=n, seed=seed, num_threads=1, **params)
    rng = np.random.default_rng(1)
    actions = [np.asarray(random_actions(env, rng), dtype=np.float32).reshape(n, -1) for _ in range(steps)]
    np.concatenate(actions).tofile(tmp_path / "actions.bin")
    subprocess.run([trace, name, str(n), str(seed), "1", str(tmp_path / "actions.bin"), str(tmp_path / "out.bin"),
                    *[f"{k}={v}" for k, v in params.items()]], check=True, timeout=120)
    ref = (tmp_path / "out.bin").read_bytes()

    got = [env.reset()[0].tobytes()]
    for a in actions:
        obs, reward, term, trunc, info = env.step(a)
        got += [obs.tobytes(), info["final_obs_batch"].tobytes(), reward.tobytes(), term.astype(np.uint8).tobytes(),
                trunc.astype(np.uint8).tobytes()]
    got = b"".join(got)
    assert len(got) == len(ref)
    assert got == ref, f"first differing byte at {next(i for i in range(len(ref)) if got[i] != ref[i])}"


def test_views_are_zero_copy():
    env = rltrain.make_vec("halfcheetah", num_envs=8, seed=0)
    obs0, _ = env.reset()
    assert obs0.__array_interface__["data"][0] == env._core.obs_address()
    before = obs0.copy()
    obs1, reward, term, trunc, info = env.step(np.zeros((8, 6), np.float32))
    # the same buffer, overwritten in place: the first view now shows the new observation
    assert np.shares_memory(obs0, obs1) and np.shares_memory(obs1, env.buffers["obs"])
    assert np.array_equal(obs0, obs1) and not np.array_equal(before, obs1)
    for key, arr in [("reward", reward), ("terminated", term), ("truncated", trunc), ("final_obs", info["final_obs_batch"])]:
        assert np.shares_memory(arr, env.buffers[key]) and not arr.flags.owndata, key
    # DLPack: numpy's own consumer sees the same memory (torch.from_dlpack reads the same protocol)
    assert np.shares_memory(np.from_dlpack(obs1), obs1)
    # copy=True: fresh arrays every step
    env_c = rltrain.make_vec("halfcheetah", num_envs=8, seed=0, copy=True)
    o0, _ = env_c.reset()
    o1 = env_c.step(np.zeros((8, 6), np.float32))[0]
    assert not np.shares_memory(o0, o1) and np.array_equal(o1, obs1)
    # a view outlives close() safely: the buffers stay until the last view is gone
    env.close()
    del env
    assert np.array_equal(obs1, obs0) and np.all(np.isfinite(obs1))


def test_torch_from_dlpack():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    env = rltrain.make_vec("cartpole", num_envs=8, seed=0)
    obs, _ = env.reset()
    t = torch.from_dlpack(obs)
    assert t.data_ptr() == env._core.obs_address()
    env.step(torch.zeros(8, dtype=torch.float32))
    assert torch.equal(t, torch.from_numpy(obs))


def test_partial_reset_and_seeds():
    env = rltrain.make_vec("pendulum", num_envs=4, seed=9)
    first = env.reset()[0].copy()
    assert np.array_equal(rltrain.make_vec("pendulum", num_envs=4, seed=0).reset(seed=9)[0], first)
    for _ in range(3):
        env.step(np.zeros((4, 1), np.float32))
    moved = env.buffers["obs"].copy()
    obs, _ = env.reset(options={"reset_mask": np.array([False, True, False, False])})
    assert np.array_equal(obs[[0, 2, 3]], moved[[0, 2, 3]]) and not np.array_equal(obs[1], moved[1])
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=[1, 2, 3, 4])


def test_bad_arguments_raise_the_cli_messages(rltrain_bin):
    config = str(SOURCE_DIR / "configs" / "cartpole.toml")

    def same(py_kwargs, cli_args, exc=rltrain.ConfigError):
        with pytest.raises(exc) as e:
            rltrain.make_vec(**py_kwargs)
        py = str(e.value)
        cli = cli_error(rltrain_bin, "train", "--config", config, "--run-dir", "/nonexistent/never", *cli_args)
        # The same message after where it comes from ("make_vec: " here, "--set k=v: " or "--device: " there)
        cli_text = cli.split(": ", 1)[1]
        assert py.startswith("make_vec: ") and "\n" not in py, py
        assert py.endswith(cli_text), (py, cli)

    same(dict(env_id="no_such_env"), ["--set", "env.name=no_such_env"])
    same(dict(env_id="cartpole", num_envs=0), ["--set", "env.num_envs=0"])
    same(dict(env_id="cartpole", gravityy=1.0), ["--set", "env.gravityy=1"])
    same(dict(env_id="ant", dr_friction_mn=1.0), ["--set", "env.name=ant", "--set", "env.dr_friction_mn=1"])
    same(dict(env_id="cartpole", device="gpu"), ["--device", "gpu"])
    with pytest.raises(rltrain.ConfigError, match="make_vec: env.gravity: expected a number or boolean"):
        rltrain.make_vec("cartpole", gravity="high")

    env = rltrain.make_vec("ant", num_envs=2)
    env.reset()
    with pytest.raises(ValueError, match=r"step: actions: expected shape \(2, 8\), got \(2, 7\)"):
        env.step(np.zeros((2, 7), np.float32))
    with pytest.raises(IndexError, match=r"reset_one: env 5 outside \[0, 2\)"):
        env._core.reset_one(5)


@pytest.mark.parametrize("name", ["cartpole", "ant"])
def test_sample_actions_drawn_in_cpp(name):
    env = rltrain.make_vec(name, num_envs=64, seed=2)
    env.reset()
    a = np.array(env.sample_actions(5))
    assert np.array_equal(np.array(env.sample_actions(5)), a)
    assert not np.array_equal(np.array(env.sample_actions(6)), a)
    space = env.single_action_space
    if isinstance(space, gym.spaces.Discrete):
        assert np.array_equal(a[:, 0], np.round(a[:, 0])) and a.min() >= 0 and a.max() < space.n
        assert len(np.unique(a)) == space.n
    else:
        assert a.dtype == np.float32 and a.shape == (64, *space.shape) and np.all(space.low <= a) and np.all(a <= space.high)
    env.step(env.sample_actions(7))  # step takes the view as it is
