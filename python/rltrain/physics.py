"""rltrain.Physics: N copies of any MJCF model, stepped in rltrain's C++ physics, state as NumPy arrays.

MuJoCo's ``(model, data)`` with a batch dimension in front (as MJX's batched ``mjx.Data``), on the CPU
threads::

    import rltrain
    phys = rltrain.Physics("scene.xml", num_envs=64)    # compiles the file once (sim/mjcf.h)
    phys.qpos[:, 0] += 0.1                              # arrays are views: write in place ...
    phys.ctrl = np.zeros(phys.nu)                       # ... or assign (checked, broadcast to every env)
    phys.step(10)                                       # 10 x mj_step on every env, threaded
    phys.xpos[:, phys.body_id("torso")]                 # (64, 3) body positions
    phys.reset(key="home")                              # mj_resetDataKeyframe (+ mj_forward)

Arrays (shape ``(num_envs, ...)``, dtype float32 with ``precision="float"``, float64 with ``"double"``):

====================  ==================  ======================================================
name                  shape after N       what (MuJoCo's field of the same name unless said)
====================  ==================  ======================================================
qpos                  (nq,)               joint positions                               view, rw
qvel                  (nv,)               joint velocities                              view, rw
act                   (na,)               activations of the stateful actuators         view, rw [1]
ctrl                  (nu,)               controls                                      view, rw
mocap_pos             (nmocap, 3)         mocap bodies' positions                       view, rw
mocap_quat            (nmocap, 4)         their orientations (w, x, y, z)               view, rw
qfrc_applied          (nv,)               user-applied generalized forces               view, rw
xfrc_applied          (nbody, 6)          force (3) then torque (3) on each body at its view, rw
                                          centre of mass, world frame [4]
time                  ()                  simulation time, s (always float64)           view, rw
qacc                  (nv,)               acceleration [2]                              view, ro
qfrc_bias, qfrc_passive, qfrc_actuator, qfrc_constraint   (nv,)                     view, ro
actuator_force        (nu,)               scalar actuator forces                        view, ro
xpos, xquat, xmat     (nbody, 3 / 4 / 9)  body frames, world                            view, ro
xipos, ximat          (nbody, 3 / 9)      body inertial frames, world                   view, ro
xanchor, xaxis        (njnt, 3)           joint anchors and axes, world                 view, ro
geom_xpos, geom_xmat  (ngeom, 3 / 9)      geom frames                                   view, ro
site_xpos, site_xmat  (nsite, 3 / 9)      site frames                                   view, ro
sensordata            (nsensordata,)      sensor outputs (``sensor(name)``: one sensor)  view, ro
ten_length, ten_velocity  (ntendon,)      tendon lengths and rates                      view, ro
ncon                  ()                  contacts that pushed in the last step (int32) view, ro [3]
====================  ==================  ======================================================

Views alias the batch's memory: they change with every ``step``/``forward``/``reset`` (copy them to
keep a value) and stay valid while any of them lives. The derived arrays are read-only; after
``step`` they are those of the last physics step, as after MuJoCo's ``mj_step`` (positions of the
state at that step's start, sensors of it); ``forward()`` recomputes them for the current state.
[1] A view when the stateful actuators are consecutive (always in practice: MuJoCo's files put
them last); otherwise ``act`` returns a copy and assigning to it writes through.
[2] After ``forward()`` and ``reset()``: MuJoCo's ``d.qacc``; after ``step()``: the acceleration the
last step integrated (with Euler's implicit joint damping).
[3] MuJoCo's ``d.ncon`` counts every contact within the margin; this counts those with force.
[4] Turned into generalized forces every physics step (and by ``forward()``) as MuJoCo's
mj_xfrcAccumulate does: J^T of each body's centre of mass; they do not show in ``qfrc_applied``,
which holds only what the caller wrote, as in MuJoCo. Force and torque sensors see them as
MuJoCo's do (its cfrc_ext starts from them).

Per-env model parameters (domain randomization, as MJX users batch models): ``set_param(name,
values, envs=None)`` gives the fields of ``param_names`` other values in some envs, ``get_param(name)``
returns a copy of every env's ``(num_envs, ...)``:

====================  ==============  ===========================================================
name                  shape per env   what (MuJoCo's field; rltrain's compiled model)
====================  ==============  ===========================================================
body_mass             (nbody,)        kg, >= 0 (body_inertia is not scaled with it: set both)
body_inertia          (nbody, 3)      principal moments, >= 0
geom_friction         (ngeom, 3)      sliding, torsional, rolling, >= 0
geom_solref           (ngeom, 2)      contact solref (mixed per pair as MuJoCo does)
geom_solimp           (ngeom, 5)      contact solimp
dof_damping           (nv,)           >= 0
dof_armature          (nv,)           >= 0
dof_frictionloss      (nv,)           >= 0
actuator_gear         (nu,)           a joint or tendon transmission's gear
actuator_kp           (nu,)           <position> actuators' kp (MuJoCo: gainprm[0], -biasprm[1])
actuator_kv           (nu,)           <position> kv (-biasprm[2]); <velocity> kv (gainprm[0])
actuator_gainprm      (nu, 10)        <general> actuators' gain parameters
actuator_biasprm      (nu, 10)        <general> actuators' bias parameters
====================  ==============  ===========================================================

Changing body_mass, body_inertia or dof_armature recomputes that env's constants as MuJoCo's
mj_setConst does at qpos0: body_invweight0, dof_invweight0, tendon_invweight0 (the soft
constraints' regularization); the mass matrix is built from the fields every step. Not recomputed:
actuator_acc0 (muscles' force scale). rltrain compiles <position>, <velocity> and <motor>
actuators to kp, kv and gear (their gainprm/biasprm are unused); <general> ones read gainprm and
biasprm. Parameters persist through ``reset()`` and are not part of ``get_state()``. Until the first
``set_param`` every env shares the compiled model (no copy, no cost).

Assigning (``phys.qpos = a``) takes an array of the full shape ``(num_envs, ...)`` or of one env's
shape (broadcast to every env), of real numbers, all finite; anything else raises ValueError naming
the field. A file the compiler refuses raises rltrain.MjcfError with its ``file:line`` message.
"""
import os

import numpy as np

from . import _core

__all__ = ["Physics", "PhysicsState", "Named"]

_INTEGRATORS = ("Euler", "RK4", "implicitfast", "implicit")
_JOINT_TYPES = ("free", "ball", "slide", "hinge")
_STATE = ("qpos", "qvel", "ctrl", "mocap_pos", "mocap_quat", "qfrc_applied", "xfrc_applied", "time")
_DERIVED = ("qacc", "qfrc_bias", "qfrc_passive", "qfrc_actuator", "qfrc_constraint", "actuator_force", "xpos",
            "xquat", "xmat", "xipos", "ximat", "xanchor", "xaxis", "geom_xpos", "geom_xmat", "site_xpos",
            "site_xmat", "sensordata", "ten_length", "ten_velocity", "ncon")


class PhysicsState:
    """Physics.get_state's copy (``rows``: the envs' physics rows, ``ctrl``, ``time``); ``len()`` envs."""

    def __init__(self, source, precision, rows, ctrl, time):
        self.source, self.precision, self.rows, self.ctrl, self.time = source, precision, rows, ctrl, time

    def __len__(self):
        return len(self.rows)


class Named:
    """One named element's views (``phys.joint("hip").qpos``): attributes as listed by ``fields``."""

    def __init__(self, kind, name, index, **views):
        self.kind, self.name, self.id = kind, name, index
        self.fields = tuple(views)
        for k, v in views.items():
            setattr(self, k, v)

    def __repr__(self):
        return f"<{self.kind} {self.name!r} (id {self.id}): {', '.join(self.fields)}>"


def _state_property(name, doc):
    def get(self):
        return self._v[name]

    def set(self, value):
        self._assign(name, self._v[name], value)

    return property(get, set, doc=doc)


def _derived_property(name):
    return property(lambda self: self._v[name], doc=f"{name} (read-only view; see the module's table)")


class Physics:
    """``num_envs`` copies of the MJCF model ``model`` (a file path; ``Physics.from_xml_string`` for text).

    device: ``cpu`` (``auto`` means cpu; the CUDA executor is not offered here yet); num_threads: CPU
    threads stepping the envs (0: one per core); precision: ``double`` (MuJoCo's, the default: the
    constraint solver runs to convergence and results agree with MuJoCo's, run converged, to its own
    sensitivity) or ``float`` (rltrain's envs' precision, faster; where the file sets a solver budget,
    option ``iterations`` below 50 as MuJoCo Playground's scenes do, the solve stops there from
    MuJoCo's warm start, as MuJoCo run as the file says: docs/MJCF.md).
    Every env starts at the model's qpos0 at rest (``reset()``).
    """

    def __init__(self, model, num_envs=1, device="cpu", num_threads=0, precision="double", *, _text=None):
        if device not in ("cpu", "auto"):
            raise ValueError(f"device: rltrain.Physics steps on the CPU ('cpu' or 'auto'); got {device!r} "
                             "(the CUDA batch of `rltrain bench --model` is not exposed to Python yet)")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs: expected a positive integer, got {num_envs!r}")
        if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)) or num_threads < 0:
            raise ValueError(f"num_threads: expected 0 (one per core) or a positive integer, got {num_threads!r}")
        if precision not in ("float", "double"):
            raise ValueError(f"precision: expected 'float' or 'double', got {precision!r}")
        if _text is None:
            source, is_text, name = os.fspath(model), False, ""
        else:
            source, is_text, name = _text, True, str(model)
        self._core = _core.Physics(source, is_text, name, int(num_envs), int(num_threads), precision)
        info = self._core.model_info()
        self._info = info
        self._param_fields = self._core.param_fields()  # (name, count, width, non_negative, doc)
        self._v = self._core.views()
        for k in ("nq", "nv", "nu", "nbody", "njnt", "ngeom", "nsite", "nkey", "nmocap", "nsensor", "nsensordata",
                  "ntendon", "neq"):
            setattr(self, k, int(info[k]))
        self.timestep = float(info["timestep"])
        self.integrator = _INTEGRATORS[info["integrator"]]
        self.body_names, self.joint_names, self.geom_names = info["body_names"], info["joint_names"], info["geom_names"]
        self.site_names, self.actuator_names = info["site_names"], info["actuator_names"]
        self.sensor_names, self.tendon_names, self.key_names = info["sensor_names"], info["tendon_names"], info["key_names"]
        self.qpos0 = np.array(info["qpos0"], dtype=np.float64)
        self.qpos0.setflags(write=False)
        self.body_mocapid = np.array(info["body_mocapid"], dtype=np.int32)  # (nbody) mocap index, -1 if none
        self.body_mocapid.setflags(write=False)
        self._stateful = list(info["stateful_actuators"])
        self.na = len(self._stateful)
        s = self._stateful
        if not s or s == list(range(s[0], s[0] + len(s))):  # consecutive: a strided view
            self._act = self._v["act_nu"][:, s[0]:s[0] + len(s)] if s else self._v["act_nu"][:, 0:0]
        else:
            self._act = None
        ctrlrange = np.array(info["actuator_ctrlrange"], dtype=np.float64).reshape(self.nu, 2)
        limited = np.array(info["actuator_ctrllimited"], dtype=bool)
        self.ctrlrange = np.where(limited[:, None], ctrlrange, [-np.inf, np.inf])
        self.ctrlrange.setflags(write=False)

    @classmethod
    def from_xml_string(cls, xml, num_envs=1, device="cpu", num_threads=0, precision="double",
                        source_name="<string>"):
        """As ``Physics(path, ...)`` from MJCF text (``source_name`` in error messages; relative asset
        and include paths are taken from the working directory)."""
        return cls(source_name, num_envs, device, num_threads, precision, _text=xml)

    # ---- sizes and settings --------------------------------------------------------------------------
    @property
    def num_envs(self):
        return self._core.num_envs

    @property
    def num_threads(self):
        return self._core.num_threads

    @property
    def precision(self):
        return self._core.precision

    @property
    def dtype(self):
        return np.dtype(np.float64 if self.precision == "double" else np.float32)

    @property
    def source(self):
        """The model's file (or from_xml_string's source_name)."""
        return self._core.source

    def __repr__(self):
        return (f"rltrain.Physics({self.source!r}, num_envs={self.num_envs}, precision={self.precision!r}: nq {self.nq}, "
                f"nv {self.nv}, nu {self.nu}, nbody {self.nbody}, {self.integrator}, timestep {self.timestep:g} s)")

    # ---- the state (read-write views) ---------------------------------------------------------------
    qpos = _state_property("qpos", "joint positions (num_envs, nq), a view")
    qvel = _state_property("qvel", "joint velocities (num_envs, nv), a view")
    ctrl = _state_property("ctrl", "controls (num_envs, nu), a view")
    mocap_pos = _state_property("mocap_pos", "mocap bodies' positions (num_envs, nmocap, 3), a view")
    mocap_quat = _state_property("mocap_quat", "mocap bodies' orientations (num_envs, nmocap, 4), w x y z, a view")
    qfrc_applied = _state_property("qfrc_applied", "user-applied generalized forces (num_envs, nv), a view")
    xfrc_applied = _state_property("xfrc_applied", "force and torque on each body's centre of mass, world "
                                   "(num_envs, nbody, 6), a view")
    time = _state_property("time", "simulation time (num_envs,), float64, a view")

    @property
    def act(self):
        """Activations of the stateful actuators (num_envs, na): a view, or a copy when those actuators
        are not consecutive (then assign to write)."""
        if self._act is not None:
            return self._act
        return self._v["act_nu"][:, self._stateful]

    @act.setter
    def act(self, value):
        if self._act is not None:
            self._assign("act", self._act, value)
            return
        tmp = np.array(self._v["act_nu"][:, self._stateful])
        self._assign("act", tmp, value)
        self._v["act_nu"][:, self._stateful] = tmp

    def _assign(self, name, target, value):
        a = np.asarray(value)
        if a.dtype.kind not in "fiu":
            raise ValueError(f"{name}: expected real numbers, got an array of dtype {a.dtype}")
        full, one = target.shape, target.shape[1:]
        if a.shape != full and a.shape != one:
            raise ValueError(f"{name}: expected shape {full} (every env) or {one} (one env's, given to every env), "
                             f"got {a.shape}")
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: expected finite values, got {a.size - np.count_nonzero(np.isfinite(a))} "
                             "NaN or infinite")
        target[...] = a

    # ---- stepping -----------------------------------------------------------------------------------
    def step(self, nsteps=1):
        """``nsteps`` physics steps of every env (MuJoCo's mj_step, nsteps times: the model's timestep
        and integrator), ctrl, mocap poses, qfrc_applied and xfrc_applied held; the GIL is released
        meanwhile."""
        if isinstance(nsteps, bool) or not isinstance(nsteps, (int, np.integer)) or nsteps < 0:
            raise ValueError(f"nsteps: expected a non-negative integer, got {nsteps!r}")
        self._core.step(int(nsteps))

    def forward(self):
        """MuJoCo's mj_forward on every env: kinematics, forces, the constrained qacc and sensors of the
        current state and ctrl (the state is not advanced)."""
        self._core.forward()

    def reset(self, key=None, envs=None):
        """Envs back to the start: qpos0 at rest (key None, as mj_resetData) or keyframe ``key`` (a name
        or an index, as mj_resetDataKeyframe: its qpos, qvel, act, ctrl, mocap poses and time); every
        other input (qfrc_applied, xfrc_applied) zeroed; then forward(). Model parameters (set_param)
        are kept. envs: every env (None), an index, a list of indices or a boolean mask of num_envs."""
        self._core.reset(self.key_id(key) if key is not None else -1, self._env_indices(envs))

    def key_id(self, key):
        """The index of keyframe ``key`` (a name, or an index that is checked)."""
        if isinstance(key, str):
            if key not in self.key_names:
                named = [k for k in self.key_names if k]
                raise KeyError(f"key: no keyframe {key!r} in {self.source} "
                               f"(it has {', '.join(repr(k) for k in named) if named else 'no named keyframe'}; "
                               f"{self.nkey} in all)")
            return self.key_names.index(key)
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise ValueError(f"key: expected a keyframe name or index, got {key!r}")
        if not 0 <= key < self.nkey:
            raise IndexError(f"key: keyframe {key} outside [0, {self.nkey}) of {self.source}")
        return int(key)

    def _env_indices(self, envs):
        if envs is None:
            return None
        a = np.asarray(envs)
        if a.dtype == bool:
            if a.shape != (self.num_envs,):
                raise ValueError(f"envs: a mask needs shape ({self.num_envs},), got {a.shape}")
            a = np.nonzero(a)[0]
        if a.size == 0 and a.ndim == 1:  # no env ([] is float64 to numpy)
            return []
        if a.dtype.kind not in "iu" or a.ndim > 1:
            raise ValueError(f"envs: expected an index, a list of indices or a boolean mask, got {envs!r}")
        a = a.reshape(-1)
        bad = a[(a < 0) | (a >= self.num_envs)]
        if bad.size:
            raise IndexError(f"envs: env {int(bad[0])} outside [0, {self.num_envs})")
        return [int(i) for i in a]

    # ---- per-env model parameters (the module's second table) -------------------------------------
    @property
    def param_names(self):
        """The model fields that can differ between envs (set_param)."""
        return tuple(f[0] for f in self._param_fields)

    def _param(self, name):
        for f in self._param_fields:
            if f[0] == name:
                count, width = f[1], f[2]
                return f, (count,) if width == 1 else (count, width)
        raise ValueError(f"model parameter {name!r}: not one that can differ between envs (those are: "
                         f"{', '.join(self.param_names)})")

    def set_param(self, name, values, envs=None):
        """Model field ``name`` (one of param_names) takes ``values`` in envs ``envs`` (every env: None;
        an index, a list of indices or a boolean mask): an array of shape ``(len(envs), *shape)``, one
        env's values each, or ``shape`` (given to each), the field's shape in the module's table.
        Finite values, and >= 0 where the table says so, else ValueError naming the field. Takes
        effect from the next step/forward; the envs' state is left as it is."""
        f, shape = self._param(name)
        idx = None if envs is None else self._env_indices(envs)
        n = self.num_envs if idx is None else len(idx)
        a = np.asarray(values)
        if a.dtype.kind not in "fiu":
            raise ValueError(f"{name}: expected real numbers, got an array of dtype {a.dtype}")
        if a.shape == shape:
            a = np.broadcast_to(a, (n,) + shape)
        elif a.shape != (n,) + shape:
            raise ValueError(f"{name}: expected shape {(n,) + shape} (one row per env) or {shape} (one env's, given "
                             f"to each), got {a.shape}")
        a = np.ascontiguousarray(a, dtype=np.float64)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: expected finite values, got {a.size - np.count_nonzero(np.isfinite(a))} "
                             "NaN or infinite")
        if f[3] and np.any(a < 0):
            raise ValueError(f"{name}: expected values >= 0, got {a.min()}")
        self._core.set_param(name, a, idx)

    def get_param(self, name):
        """A copy of model field ``name`` (one of param_names) in every env: (num_envs, *shape) float64."""
        _, shape = self._param(name)
        return self._core.get_param(name).reshape((self.num_envs,) + shape)

    # ---- saving and restoring --------------------------------------------------------------------
    def get_state(self, envs=None):
        """A copy of the envs' whole physics state (every env, or those of ``envs``): their rows (state,
        inputs and derived values), ctrl and time, which ``set_state`` puts back exactly, so that a run
        restored from it repeats bit for bit (rltrain's solver starts cold: nothing else carries over)."""
        idx = slice(None) if envs is None else self._env_indices(envs)
        return PhysicsState(self.source, self.precision, self._v["rows"][idx].copy(), self._v["ctrl"][idx].copy(),
                            self._v["time"][idx].copy())

    def set_state(self, state, envs=None):
        """Puts a get_state copy back: into every env (a state of num_envs envs, or of one env, given
        to each), or into the envs ``envs`` (one state row each, or one for all)."""
        if not isinstance(state, PhysicsState):
            raise ValueError(f"state: expected what get_state returned, got {type(state).__name__}")
        if state.source != self.source or state.precision != self.precision or \
                state.rows.shape[1:] != self._v["rows"].shape[1:]:
            raise ValueError(f"state: taken from {state.source!r} in {state.precision}, not this model "
                             f"({self.source!r} in {self.precision})")
        idx = slice(None) if envs is None else self._env_indices(envs)
        count = self.num_envs if envs is None else len(idx)
        if len(state.rows) not in (1, count):
            raise ValueError(f"state: holds {len(state.rows)} envs, expected 1 or {count}")
        self._v["rows"][idx] = state.rows
        self._v["ctrl"][idx] = state.ctrl
        self._v["time"][idx] = state.time

    # ---- names --------------------------------------------------------------------------------------
    def _id(self, kind, names, name):
        if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
            if not 0 <= name < len(names):
                raise IndexError(f"{kind} {name} outside [0, {len(names)})")
            return int(name)
        if name not in names or not name:
            named = [n for n in names if n]
            shown = ", ".join(repr(n) for n in named[:20]) + (", ..." if len(named) > 20 else "")
            raise KeyError(f"no {kind} {name!r} in {self.source} (named: {shown or 'none'})")
        return names.index(name)

    def body_id(self, name):
        return self._id("body", self.body_names, name)

    def joint_id(self, name):
        return self._id("joint", self.joint_names, name)

    def geom_id(self, name):
        return self._id("geom", self.geom_names, name)

    def site_id(self, name):
        return self._id("site", self.site_names, name)

    def actuator_id(self, name):
        return self._id("actuator", self.actuator_names, name)

    def sensor_id(self, name):
        return self._id("sensor", self.sensor_names, name)

    def sensor_slice(self, name):
        """The columns of sensor ``name`` (or index) in sensordata."""
        i = self.sensor_id(name)
        adr, dim = self._info["sensor_adr"][i], self._info["sensor_dim"][i]
        return slice(adr, adr + dim)

    def sensor(self, name):
        """Sensor ``name``'s outputs (num_envs, dim): a read-only view of sensordata's columns."""
        return self._v["sensordata"][:, self.sensor_slice(name)]

    def joint(self, name):
        """Joint ``name``'s qpos and qvel (num_envs, 7/4/1 and 6/3/1): views; ``type`` free/ball/slide/hinge."""
        j = self.joint_id(name)
        t = self._info["jnt_type"][j]
        nq, nv = (7, 6) if t == 0 else (4, 3) if t == 1 else (1, 1)
        qa, va = self._info["jnt_qposadr"][j], self._info["jnt_dofadr"][j]
        n = Named("joint", self.joint_names[j], j, qpos=self.qpos[:, qa:qa + nq], qvel=self.qvel[:, va:va + nv],
                  qfrc_applied=self.qfrc_applied[:, va:va + nv])
        n.type = _JOINT_TYPES[t]
        return n

    def body(self, name):
        """Body ``name``'s frame (xpos, xquat, xmat, xipos: read-only views (num_envs, ...)); a mocap
        body also has its mocap_pos and mocap_quat (writable views)."""
        b = self.body_id(name)
        views = dict(xpos=self.xpos[:, b], xquat=self.xquat[:, b], xmat=self.xmat[:, b], xipos=self.xipos[:, b])
        mocap = self.body_mocapid[b]
        if mocap >= 0:
            views.update(mocap_pos=self.mocap_pos[:, mocap], mocap_quat=self.mocap_quat[:, mocap])
        return Named("body", self.body_names[b], b, **views)

    def site(self, name):
        """Site ``name``'s frame (xpos, xmat: read-only views (num_envs, 3 / 9))."""
        s = self.site_id(name)
        return Named("site", self.site_names[s], s, xpos=self.site_xpos[:, s], xmat=self.site_xmat[:, s])

    def actuator(self, name):
        """Actuator ``name``'s ctrl (writable) and force (read-only): views (num_envs,)."""
        u = self.actuator_id(name)
        return Named("actuator", self.actuator_names[u], u, ctrl=self.ctrl[:, u], force=self.actuator_force[:, u])


for _name in _DERIVED:  # the read-only views of the module's table
    setattr(Physics, _name, _derived_property(_name))
del _name
