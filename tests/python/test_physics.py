"""rltrain.Physics (python/rltrain/physics.py): N copies of an MJCF model from Python.

Against MuJoCo 3.17 (the `mujoco` wheel; those tests skip without it), as the C++ peer tests judge
`rltrain rollout` (tools/mujoco_peer.py, whose functions run MuJoCo here): the same start and
controls, every env's qpos and qvel at every step within 10 x MuJoCo's own spread under 32 random
1e-9 nudges of qpos + 1e-6, MuJoCo given a converged solver budget as there (converge). Each env of
a batch gets controls of its own, so the batch is checked env by env. Also: the batch equals
`rltrain rollout` bit for bit; one forward pass against mj_forward within the peer's 1e-6 relative;
mocap poses driven from Python; keyframe resets; threads; float precision; errors.
"""
import subprocess

import numpy as np
import pytest

import rltrain
from conftest import SOURCE_DIR, mujoco_model

MJCF = SOURCE_DIR / "tests" / "data" / "mjcf"
GO1 = SOURCE_DIR / "envs" / "assets" / "go1" / "scene_mjx_feetonly_flat_terrain.xml"
FACTOR, ATOL = 10.0, 1e-6  # tools/mujoco_peer.py's defaults (tests/CMakeLists.txt keeps them)


def states(phys):
    """(num_envs, 1 + nq + nv): time, qpos, qvel of every env (the peer's row layout)."""
    return np.concatenate([phys.time[:, None], phys.qpos, phys.qvel], axis=1).astype(np.float64)


def random_ctrls(phys, num_envs, steps, seed):
    """(num_envs, steps, nu) controls: env 0 holds the start's ctrl, the others uniform in each
    actuator's range ([-1, 1] where not limited, the peer's random mode), a draw per env and step."""
    lo = np.where(np.isfinite(phys.ctrlrange[:, 0]), phys.ctrlrange[:, 0], -1.0)
    hi = np.where(np.isfinite(phys.ctrlrange[:, 1]), phys.ctrlrange[:, 1], 1.0)
    c = np.random.default_rng(seed).uniform(lo, hi, (num_envs, steps, phys.nu))
    c[0] = phys.ctrl[0]
    return c


def check_against_mujoco(peer, path, key=None, steps=100, num_envs=3, substeps=1, mocaps=None):
    """Steps a batch from `key` with per-env random controls (and the mocap rows `mocaps`,
    (num_envs, steps, 7 nmocap), when given) and checks each env against MuJoCo's run."""
    phys = rltrain.Physics(path, num_envs=num_envs)
    phys.reset(key)
    ctrls = random_ctrls(phys, num_envs, steps, seed=7)
    ours = np.empty((num_envs, steps + 1, 1 + phys.nq + phys.nv))
    ours[:, 0] = states(phys)
    for t in range(steps):
        phys.ctrl = ctrls[:, t]
        if mocaps is not None:
            rows = mocaps[:, t].reshape(num_envs, phys.nmocap, 7)
            phys.mocap_pos, phys.mocap_quat = rows[:, :, :3], rows[:, :, 3:]
        phys.step(substeps)
        ours[:, t + 1] = states(phys)
    m = mujoco_model(peer, path)
    key_id = -1 if key is None else phys.key_id(key)
    for e in range(num_envs):
        mocap = None if mocaps is None else mocaps[e]
        mj, _ = peer.run_mujoco(m, key_id, steps, substeps, ctrls[e], mocap)
        pert = peer.run_mujoco_nudged(m, key_id, steps, substeps, ctrls[e], peer.nudges(m.nq), mocap)
        res = peer.compare(m, None, ours[e], mj, pert, None, None, FACTOR, ATOL)
        assert res["bad_steps"] == 0, (path.name, key, e, res)
        assert res["time_max_diff"] < 1e-12, (path.name, e, res["time_max_diff"])
    return phys


@pytest.mark.parametrize("name", ["constraints_contacts", "act_general_rk4", "act_servos_implicitfast",
                                  "tendon_spatial", "misc/equality_weld", "implicit/chain_damping"])
def test_trajectories_match_mujoco(peer, name):
    check_against_mujoco(peer, MJCF / f"{name}.xml")


def test_go1_from_home_matches_mujoco(peer):
    """Menagerie's Go1 (MuJoCo Playground's flat scene, envs/assets): from the home keyframe, each env
    its own random joint targets, feet on the ground."""
    phys = check_against_mujoco(peer, GO1, key="home", steps=100)
    assert phys.nu == 12 and phys.nq == 19
    assert phys.ncon[0] == 4  # env 0 (the home targets held) stands on its four feet


def mocap_rows(path, phys, num_envs):
    """A mocap script (tests/data/mjcf/mocap/*_path.csv: columns mocap_<body>_x ... _qz) as
    (num_envs, rows, 7 nmocap): env e's path shifted by 0.01 e in y, so that every env moves apart.
    (Not in x: push.xml's paddle 0.02 further along meets the box where rltrain's contact departs
    from MuJoCo's from step 22, `rltrain rollout --mocap` the same: a physics matter, reported.)"""
    data = np.genfromtxt(path, delimiter=",", names=True)
    rows = np.empty((len(data), phys.nmocap, 7))
    phys.reset()
    start = np.concatenate([phys.mocap_pos[0], phys.mocap_quat[0]], axis=1)
    for b in range(phys.nbody):
        k = phys.body_mocapid[b]
        if k < 0:
            continue
        assert hasattr(phys.body(b), "mocap_pos")
        for c, s in enumerate(("x", "y", "z", "qw", "qx", "qy", "qz")):
            col = f"mocap_{phys.body_names[b]}_{s}"
            rows[:, k, c] = data[col] if col in data.dtype.names else start[k, c]
    out = np.repeat(rows.reshape(1, len(data), -1), num_envs, axis=0)
    for e in range(num_envs):
        out[e, :, 1::7] += 0.01 * e
    return out


@pytest.mark.parametrize("name,substeps", [("weld", 1), ("push", 5)])
def test_mocap_driven_from_python_matches_mujoco(peer, name, substeps):
    """The mocap bodies moved from Python (a box welded to a turning target, non-unit quaternions; a
    paddle pushing a box by contact, 5 physics steps per pose) as MuJoCo moves them (d.mocap_pos,
    d.mocap_quat before each step)."""
    path = MJCF / "mocap" / f"{name}.xml"
    phys = rltrain.Physics(path, num_envs=3)
    mocaps = mocap_rows(MJCF / "mocap" / f"{name}_path.csv", phys, 3)
    phys = check_against_mujoco(peer, path, steps=mocaps.shape[1], substeps=substeps, mocaps=mocaps)
    # the mocap bodies are where the last poses put them (xpos of the last step's start state)
    for b in range(phys.nbody):
        k = phys.body_mocapid[b]
        if k >= 0 and phys.body_names[b] != "anchor":  # (anchor sits in a <frame>: its pose is the frame's)
            np.testing.assert_allclose(phys.xpos[:, b], phys.mocap_pos[:, k], atol=1e-12)


def test_forward_matches_mj_forward(peer):
    """One forward pass at a moving state (keyframe qpos, qvel set from Python): body frames, sites,
    sensors and qacc within the peer's 1e-6 relative (floor 1e-3)."""
    import mujoco

    for path, key in ((GO1, "home"), (MJCF / "mocap" / "weld.xml", None)):
        phys = rltrain.Physics(path, num_envs=2)
        phys.reset(key)
        rng = np.random.default_rng(3)
        phys.qvel = rng.uniform(-0.5, 0.5, (2, phys.nv))
        phys.ctrl = phys.ctrl + rng.uniform(-0.1, 0.1, (2, phys.nu))
        phys.forward()
        m = mujoco_model(peer, path)
        d = mujoco.MjData(m)
        for e in range(2):
            peer._start(m, d, -1 if key is None else phys.key_id(key))
            d.qpos[:], d.qvel[:], d.ctrl[:] = phys.qpos[e], phys.qvel[e], phys.ctrl[e]
            mujoco.mj_forward(m, d)
            for name, ours, theirs in (("xpos", phys.xpos[e], d.xpos), ("xquat", phys.xquat[e], d.xquat),
                                       ("site_xpos", phys.site_xpos[e], d.site_xpos),
                                       ("geom_xpos", phys.geom_xpos[e], d.geom_xpos),
                                       ("sensordata", phys.sensordata[e], d.sensordata),
                                       ("qacc", phys.qacc[e], d.qacc), ("qfrc_bias", phys.qfrc_bias[e], d.qfrc_bias),
                                       ("actuator_force", phys.actuator_force[e], d.actuator_force)):
                assert peer._rel(ours, theirs, 1e-3) <= peer.COMPILED_RTOL, (path.name, e, name)
        assert phys.nsensor == m.nsensor and phys.sensor_names == [m.sensor(i).name for i in range(m.nsensor)]
        for i in range(phys.nsensor):
            np.testing.assert_array_equal(phys.sensor(phys.sensor_names[i] or i), phys.sensordata[:, m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]])


def test_keyframe_reset_matches_mujoco(peer):
    """reset(key) gives mj_resetDataKeyframe's state (qpos, qvel, act, ctrl, mocap poses, time), by
    name or index, for the envs asked for only; reset() gives mj_resetData's."""
    import mujoco

    path = MJCF / "mocap" / "keyframe.xml"
    phys = rltrain.Physics(path, num_envs=4)
    m = mujoco_model(peer, path)
    d = mujoco.MjData(m)
    assert phys.key_names == [m.key(i).name for i in range(m.nkey)]
    phys.step(20)
    moved = states(phys)
    phys.reset("raised", envs=[1, 3])
    mujoco.mj_resetDataKeyframe(m, d, m.key("raised").id)
    for e in (1, 3):
        np.testing.assert_allclose(phys.qpos[e], d.qpos, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(phys.qvel[e], d.qvel)
        np.testing.assert_array_equal(phys.ctrl[e], d.ctrl)
        np.testing.assert_allclose(phys.mocap_pos[e], d.mocap_pos, atol=1e-15)
        np.testing.assert_allclose(phys.mocap_quat[e], d.mocap_quat, atol=1e-15)
        assert phys.time[e] == d.time
    np.testing.assert_array_equal(states(phys)[[0, 2]], moved[[0, 2]])  # untouched
    phys.reset(envs=[])
    phys.reset(envs=np.zeros(4, dtype=bool))
    np.testing.assert_array_equal(states(phys)[[0, 2]], moved[[0, 2]])
    phys.reset(m.key("tilted").id, envs=np.array([True, False, False, False]))
    mujoco.mj_resetDataKeyframe(m, d, m.key("tilted").id)
    np.testing.assert_allclose(phys.mocap_quat[0], d.mocap_quat, atol=1e-15)
    phys.reset()
    mujoco.mj_resetData(m, d)
    for e in range(4):
        np.testing.assert_allclose(phys.qpos[e], d.qpos, atol=1e-15)
        np.testing.assert_allclose(phys.mocap_pos[e], d.mocap_pos, atol=1e-15)
        assert phys.time[e] == 0 and not phys.qvel[e].any()
    # activations: a keyframe's act, MuJoCo's na entries
    path = MJCF / "act_general_euler.xml"
    phys, m = rltrain.Physics(path, num_envs=2), mujoco_model(peer, path)
    assert phys.na == m.na and phys.act.shape == (2, m.na)
    d = mujoco.MjData(m)
    for k in range(m.nkey):
        phys.reset(k)
        mujoco.mj_resetDataKeyframe(m, d, k)
        np.testing.assert_allclose(phys.act, np.broadcast_to(d.act, phys.act.shape), atol=1e-15)


def test_batch_equals_rltrain_rollout_bit_for_bit(rltrain_bin, tmp_path):
    """Each env of the batch is `rltrain rollout` (apps/rollout.h) given the same controls: the same
    code in double, so the same bits."""
    path = MJCF / "constraints_contacts.xml"
    out = tmp_path / "rollout.csv"
    subprocess.run([rltrain_bin, "rollout", "--model", str(path), "--steps", "60", "--ctrl", "random", "--seed", "5",
                    "--out", str(out)], check=True, capture_output=True, timeout=120)
    header = out.read_text().splitlines()[0].split(",")
    rows = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
    phys = rltrain.Physics(path, num_envs=2, num_threads=2)
    ctrl_cols = [i for i, h in enumerate(header) if h.startswith("ctrl_")]
    assert len(ctrl_cols) == phys.nu
    for t in range(1, len(rows)):
        phys.ctrl = rows[t, ctrl_cols]
        phys.step()
        np.testing.assert_array_equal(states(phys), np.repeat(rows[t:t + 1, :1 + phys.nq + phys.nv], 2, axis=0))


def test_threads_and_envs_are_independent():
    """The same inputs give the same bits whatever the threads, and an env's neighbours do not
    change it; envs given other controls move apart."""
    path = GO1
    runs = []
    for threads in (1, 2):
        phys = rltrain.Physics(path, num_envs=5, num_threads=threads)
        assert phys.num_threads == threads
        phys.reset("home")
        ctrls = random_ctrls(phys, 5, 30, seed=1)
        ctrls[3] = ctrls[1]
        for t in range(30):
            phys.ctrl = ctrls[:, t]
            phys.step(2)
        runs.append(states(phys))
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0][1], runs[0][3])
    assert np.abs(runs[0][1] - runs[0][2]).max() > 1e-3
    np.testing.assert_allclose(runs[0][:, 0], 60 * phys.timestep, rtol=1e-12)


def test_views_write_through_and_float_precision():
    """Arrays are views of the batch (writes reach the next step; steps show up in arrays read
    before); float precision tracks double over a short horizon."""
    path = MJCF / "cartpole.xml"
    runs = {}
    for precision in ("double", "float"):
        phys = rltrain.Physics(path, num_envs=2, precision=precision)
        assert phys.qpos.dtype == phys.dtype and phys.time.dtype == np.float64
        qpos, xpos = phys.qpos, phys.xpos
        qpos[1, 1] = 0.3  # the pole of env 1 tilted through the view
        phys.ctrl[0] = 0.2
        phys.step(50)
        assert qpos is phys.qpos and np.shares_memory(qpos, phys.qpos)
        assert abs(qpos[1, 1]) > 0.3 and xpos[1].any()
        assert not xpos.flags.writeable and not phys.sensordata.flags.writeable
        with pytest.raises(ValueError):
            xpos[0, 0, 0] = 1.0
        runs[precision] = states(phys)
    np.testing.assert_allclose(runs["float"], runs["double"], atol=1e-4)
    assert not np.array_equal(runs["float"], runs["double"])


def test_named_access():
    phys = rltrain.Physics(GO1, num_envs=2)
    phys.reset("home")
    trunk = phys.body("trunk")
    np.testing.assert_array_equal(trunk.xpos, phys.xpos[:, phys.body_id("trunk")])
    j = phys.joint(phys.joint_names[1])
    assert j.type == "hinge" and j.qpos.shape == (2, 1)
    j.qpos[:] = 0.25  # a view into qpos
    assert (phys.qpos[:, 7] == 0.25).all()  # after the free joint's 7
    free = phys.joint(0)
    assert free.type == "free" and free.qpos.shape == (2, 7) and free.qvel.shape == (2, 6)
    a = phys.actuator(phys.actuator_names[0])
    a.ctrl[:] = 0.5
    assert (phys.ctrl[:, 0] == 0.5).all()
    with pytest.raises(KeyError, match="no body 'nope'"):
        phys.body("nope")
    with pytest.raises(IndexError):
        phys.site(phys.nsite)


def test_errors(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco>\n  <worldbody>\n    <body>\n      <joint type='hinge' bogus='1'/>\n"
                   "    </body>\n  </worldbody>\n</mujoco>\n")
    with pytest.raises(rltrain.MjcfError, match=r"bad\.xml:4: joint"):
        rltrain.Physics(bad)
    with pytest.raises(rltrain.MjcfError, match="missing.xml"):
        rltrain.Physics(tmp_path / "missing.xml")
    with pytest.raises(rltrain.MjcfError, match="<text>:1"):
        rltrain.Physics.from_xml_string("<mujoco><worldbody><geom type='nope'/></worldbody></mujoco>",
                                        source_name="<text>")
    phys = rltrain.Physics.from_xml_string(
        "<mujoco><worldbody><body><joint name='slider' type='slide'/><geom size='0.1'/><body pos='0 0 -0.5'>"
        "<joint type='hinge' axis='0 1 0'/><geom size='0.1'/></body></body></worldbody>"
        "<actuator><motor joint='slider'/></actuator></mujoco>", num_envs=3)
    with pytest.raises(ValueError, match=r"qpos: expected shape \(3, 2\) \(every env\) or \(2,\)"):
        phys.qpos = np.zeros((3, 3))
    with pytest.raises(ValueError, match="ctrl: expected shape"):
        phys.ctrl = np.zeros((2, 1))
    with pytest.raises(ValueError, match="qvel: expected real numbers, got an array of dtype complex128"):
        phys.qvel = np.zeros(2, dtype=complex)
    with pytest.raises(ValueError, match="ctrl: expected real numbers"):
        phys.ctrl = ["a"]
    with pytest.raises(ValueError, match="qpos: expected finite values"):
        phys.qpos = [np.nan, 0]
    with pytest.raises(ValueError, match="mocap_pos: expected shape"):
        phys.mocap_pos = np.zeros((3, 1, 3))  # no mocap body
    with pytest.raises(AttributeError):
        phys.xpos = np.zeros((3, 3, 3))
    with pytest.raises(ValueError, match="nsteps"):
        phys.step(-1)
    with pytest.raises(KeyError, match="no keyframe 'home'"):
        phys.reset("home")
    with pytest.raises(IndexError, match="keyframe 0 outside"):
        phys.reset(0)
    with pytest.raises(IndexError, match="envs: env 3 outside"):
        phys.reset(envs=[3])
    with pytest.raises(ValueError, match="device"):
        rltrain.Physics(MJCF / "cartpole.xml", device="cuda")
    with pytest.raises(ValueError, match="precision"):
        rltrain.Physics(MJCF / "cartpole.xml", precision="half")
    with pytest.raises(ValueError, match="num_envs"):
        rltrain.Physics(MJCF / "cartpole.xml", num_envs=0)
    before = states(phys)
    phys.step(0)
    np.testing.assert_array_equal(states(phys), before)


def test_get_state_set_state_repeats_a_run_bit_for_bit():
    phys = rltrain.Physics(GO1, num_envs=3, precision="float")
    phys.reset("home")
    ctrls = random_ctrls(phys, 3, 20, seed=2)
    saved = phys.get_state()
    first = []
    for t in range(20):
        phys.ctrl = ctrls[:, t]
        phys.step()
        first.append(states(phys))
    phys.set_state(saved)
    for t in range(20):
        phys.ctrl = ctrls[:, t]
        phys.step()
        np.testing.assert_array_equal(states(phys), first[t])
    one = phys.get_state(envs=[2])  # env 2's state into envs 0 and 1
    phys.set_state(one, envs=[0, 1])
    np.testing.assert_array_equal(states(phys)[0], states(phys)[2])
    phys.step(5)
    np.testing.assert_array_equal(phys.xpos[0], phys.xpos[2])
    other = rltrain.Physics(MJCF / "cartpole.xml", precision="float")
    with pytest.raises(ValueError, match="state: taken from"):
        other.set_state(saved)
    with pytest.raises(ValueError, match="state: holds 3 envs"):
        phys.set_state(saved, envs=[0, 1])


def test_steps_from_two_python_threads_take_turns():
    """step releases the GIL; two threads stepping one batch take turns: 2 x 10 steps are 20 steps."""
    import threading

    a = rltrain.Physics(GO1, num_envs=4, num_threads=2)
    b = rltrain.Physics(GO1, num_envs=4, num_threads=2)
    for p in (a, b):
        p.reset("home")
    workers = [threading.Thread(target=a.step, args=(10,)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    b.step(20)
    np.testing.assert_array_equal(states(a), states(b))


def run_mujoco_loop(m, steps, key_id=-1, ctrl=None, qfrc_applied=None):
    """MuJoCo's mj_step loop with ctrl and qfrc_applied held: qpos, qvel and act after `steps`."""
    import mujoco

    d = mujoco.MjData(m)
    if key_id >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key_id)
    if ctrl is not None:
        d.ctrl[:] = ctrl
    if qfrc_applied is not None:
        d.qfrc_applied[:] = qfrc_applied
    for _ in range(steps):
        mujoco.mj_step(m, d)
    return np.array(d.qpos), np.array(d.qvel), np.array(d.act)


def test_qfrc_applied_matches_mujoco(peer):
    """Generalized forces set from Python (a contact-free damped chain: smooth, so a fixed 1e-9 bound)."""
    path = MJCF / "implicit" / "chain_damping.xml"
    phys = rltrain.Physics(path, num_envs=3)
    forces = np.random.default_rng(4).uniform(-1, 1, (3, phys.nv))
    phys.qfrc_applied = forces
    phys.step(200)
    assert (phys.ncon == 0).all()
    m = mujoco_model(peer, path)
    for e in range(3):
        qpos, qvel, _ = run_mujoco_loop(m, 200, qfrc_applied=forces[e])
        np.testing.assert_allclose(phys.qpos[e], qpos, rtol=0, atol=1e-9)
        np.testing.assert_allclose(phys.qvel[e], qvel, rtol=0, atol=1e-9)
    assert np.abs(phys.qvel[0] - phys.qvel[1]).max() > 1e-3  # the forces moved the envs apart


def test_act_of_stateful_actuators_apart(peer):
    """act is MuJoCo's na columns also when the stateful actuators are not consecutive (a copy then,
    written through on assignment)."""
    xml = ("<mujoco><worldbody><body><joint name='a' type='hinge' damping='0.1'/><geom type='capsule' size='0.05' fromto='0 0 0 0.3 0 0'/>"
           "<body pos='0.3 0 0'><joint name='b' type='hinge' axis='0 1 0' damping='0.1'/>"
           "<geom type='capsule' size='0.05' fromto='0 0 0 0.3 0 0'/></body></body></worldbody>"
           "<actuator><general joint='a' dyntype='filter' dynprm='0.05'/><motor joint='b'/>"
           "<general joint='b' dyntype='integrator' gainprm='0.5'/></actuator></mujoco>")
    import mujoco

    phys = rltrain.Physics.from_xml_string(xml, num_envs=2)
    m = mujoco.MjModel.from_xml_string(xml)
    assert phys.na == m.na == 2 and phys.act.shape == (2, 2)
    assert not np.shares_memory(phys.act, phys.qpos)  # (a copy: actuators 0 and 2)
    phys.ctrl = [0.7, -0.2, 0.4]
    phys.step(100)
    _, qvel, act = run_mujoco_loop(m, 100, ctrl=[0.7, -0.2, 0.4])
    np.testing.assert_allclose(phys.act, np.broadcast_to(act, (2, 2)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(phys.qvel[0], qvel, rtol=0, atol=1e-10)
    phys.act = [[0.1, 0.2], [0.3, 0.4]]
    np.testing.assert_array_equal(phys.act, [[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match=r"act: expected shape \(2, 2\)"):
        phys.act = [1.0, 2.0, 3.0]
