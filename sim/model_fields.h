// The model's array fields, each declared once (MuJoCo's names, grouped by the object they describe):
// X(type, name, count, need, doc) with
//   type   real (double in Model, ModelReal<T> in ModelView: T, float for a lane type) or int
//   count  its length, from the sizes nq, nv, nbody, njnt, ngeom, nsite, nu, nsensor, nmesh, nmeshvert,
//          nmeshgraph, nmeshpoly, nmeshpolyvert, nmeshface, nhfield, nhfielddata, ntendon, nwrap, ncam (the shape, row-major)
//   need   required (exactly count elements) or optional (a Model built in code may leave it empty:
//          absent, zeros in the view's block; HostModel::check says which groups go together)
//   doc    what it holds
// From these lists come Model's std::vector members (sim/model.h) and, in sim/model_view.h, the
// offsets of each field in the two flat blocks (model_offsets), ModelView's pointer members and
// bind(), HostModel's copy from a Model and its size checks. Adding a field is one line here plus
// the code that fills it (the MJCF compiler, sim/mjcf.cpp) and the code that reads it.
#pragma once

// The element type of a field of each type in Model (host, double) and in ModelView<T> (T).
#define RLT_FIELD_HOST_TYPE_real double
#define RLT_FIELD_HOST_TYPE_int int
#define RLT_FIELD_VIEW_TYPE_real ModelReal<T>
#define RLT_FIELD_VIEW_TYPE_int int

// Copied from the compiled Model (sim/model.h) into the view.
#define RLT_MODEL_FIELDS(X)                                                                                            \
  /* bodies; body 0 is the world */                                                                                    \
  X(int, body_parentid, nbody, required, "parent body (tree order: body_parentid[b] < b)")                             \
  X(real, body_pos, 3 * nbody, required, "frame position in the parent frame")                                         \
  X(real, body_quat, 4 * nbody, required, "frame orientation in the parent frame")                                     \
  X(real, body_ipos, 3 * nbody, required, "center of mass in the body frame")                                          \
  X(real, body_iquat, 4 * nbody, required, "principal axes of inertia in the body frame")                              \
  X(real, body_mass, nbody, required, "kg")                                                                            \
  X(real, body_inertia, 3 * nbody, required, "diagonal inertia in the principal frame (principal moments)")            \
  X(int, body_jntadr, nbody, required, "first joint of the body, -1 if none")                                          \
  X(int, body_jntnum, nbody, required, "joints of the body")                                                           \
  X(int, body_dofadr, nbody, required, "first dof of the body, -1 if none")                                            \
  X(int, body_dofnum, nbody, required, "dofs of the body")                                                             \
  X(int, body_sameframe, nbody, optional,                                                                              \
    "SameFrame of the inertial frame: none, body or body rotation (absent: none)")                                     \
  X(int, body_mocapid, nbody, optional,                                                                                \
    "the body's row in DataView::mocap_pos/mocap_quat, -1 if not a mocap body (absent: nmocap = 0)")                    \
  /* joints */                                                                                                         \
  X(int, jnt_type, njnt, required, "JointType")                                                                        \
  X(int, jnt_bodyid, njnt, required, "body the joint moves")                                                           \
  X(int, jnt_qposadr, njnt, required, "first qpos entry of the joint")                                                 \
  X(int, jnt_dofadr, njnt, required, "first dof of the joint")                                                         \
  X(real, jnt_pos, 3 * njnt, required, "anchor in the body frame")                                                     \
  X(real, jnt_axis, 3 * njnt, required, "unit axis in the body frame (hinge, slide)")                                  \
  X(real, jnt_stiffness, njnt, required,                                                                               \
    "joint spring, N m/rad (hinge, ball, free rotation) or N/m (slide, free translation); 0: no spring")               \
  X(int, jnt_limited, njnt, optional, "0/1 (hinge and slide only; given with jnt_range)")                              \
  X(real, jnt_range, 2 * njnt, optional, "rad or m, in qpos units (hinge, slide)")                                     \
  /* dofs */                                                                                                           \
  X(int, dof_bodyid, nv, required, "body the dof moves")                                                               \
  X(int, dof_parentid, nv, required, "previous dof in the kinematic tree, -1 at a root")                               \
  X(real, dof_damping, nv, required, "N m s/rad (or N s/m), integrated implicitly (eulerdamp)")                        \
  X(real, dof_armature, nv, required, "added diagonal inertia")                                                        \
  /* geoms: poses (kinematics places them), then shapes and contact parameters */                                      \
  X(int, geom_bodyid, ngeom, required, "body the geom is fixed to")                                                    \
  X(real, geom_pos, 3 * ngeom, required, "position in the body frame")                                                 \
  X(real, geom_quat, 4 * ngeom, required, "orientation in the body frame")                                             \
  X(int, geom_sameframe, ngeom, optional, "SameFrame: the body frame or inertial frame it equals (absent: none)")      \
  X(int, geom_type, ngeom, optional, "GeomType")                                                                       \
  X(real, geom_size, 3 * ngeom, optional, "MuJoCo's meaning per type")                                                 \
  X(real, geom_friction, 3 * ngeom, optional, "sliding, torsional (condim 4, 6), rolling (condim 6)")                  \
  X(int, geom_contype, ngeom, optional, "contact type bits (absent: no contacts)")                                     \
  X(int, geom_conaffinity, ngeom, optional, "contact affinity bits (absent: no contacts)")                             \
  X(int, geom_condim, ngeom, optional, "1, 3 sliding, 4 torsional, 6 rolling; a pair takes the larger (absent: 3)")    \
  X(real, geom_margin, ngeom, optional, "m, MuJoCo's meaning: a pair's contact acts from max(both) apart (absent: 0)") \
  /* sites */                                                                                                          \
  X(int, site_bodyid, nsite, required, "body the site is fixed to")                                                    \
  X(real, site_pos, 3 * nsite, required, "position in the body frame")                                                 \
  X(real, site_quat, 4 * nsite, required, "orientation in the body frame")                                             \
  X(int, site_sameframe, nsite, optional, "SameFrame: the body frame or inertial frame it equals (absent: none)")      \
  /* actuators, each driving a transmission (actuator_trntype, below; sim/actuators.h, sim/transmission.h) */          \
  X(int, actuator_kind, nu, required, "ActuatorKind")                                                                  \
  X(int, actuator_trnid, nu, required, "joint, tendon, site (slider-crank: the crank site) or body id")                \
  X(real, actuator_gear, nu, required, "force = gear * (gain term + bias term)")                                       \
  X(int, actuator_ctrllimited, nu, required, "0/1")                                                                    \
  X(real, actuator_ctrlrange, 2 * nu, required, "control range (when ctrllimited)")                                    \
  X(int, actuator_forcelimited, nu, required, "0/1")                                                                   \
  X(real, actuator_forcerange, 2 * nu, required, "force range (when forcelimited)")                                    \
  X(real, actuator_kp, nu, required, "position servo gain")                                                            \
  X(real, actuator_kv, nu, required, "velocity gain (velocity servo; damping of a position servo)")                    \
  /* actuators: MuJoCo's general form (kActGeneral; optional, zeros for the other kinds) */                            \
  X(int, actuator_dyntype, nu, optional, "ActuatorDyn: none, integrator, filter, filterexact, muscle")                 \
  X(int, actuator_gaintype, nu, optional, "ActuatorGain: fixed, affine, muscle")                                       \
  X(int, actuator_biastype, nu, optional, "ActuatorBias: none, affine, muscle")                                        \
  X(real, actuator_dynprm, 3 * nu, optional,                                                                           \
    "dynamics parameters (filter: time constant first; muscle: tau_act, tau_deact, tausmooth)")                       \
  X(real, actuator_gainprm, 10 * nu, optional,                                                                         \
    "gain (kNumGainPrm each): fixed prm[0]; affine prm[0] + prm[1] length + prm[2] velocity; muscle: range[2], "      \
    "force, scale, lmin, lmax, vmax, fpmax, fvmax")                                                                    \
  X(real, actuator_biasprm, 10 * nu, optional,                                                                         \
    "bias (kNumGainPrm each): affine prm[0] + prm[1] length + prm[2] velocity; muscle: as gainprm")                  \
  X(int, actuator_actlimited, nu, optional, "0/1: activation clamped to actrange after each step")                     \
  X(real, actuator_actrange, 2 * nu, optional, "activation range (when actlimited)")                                   \
  X(int, actuator_actearly, nu, optional, "0/1: the force uses the next step's activation")                            \
  X(real, actuator_lengthrange, 2 * nu, optional,                                                                      \
    "the muscle's length range (MuJoCo's, from the compiler's lengthrange step, sim/mjcf_lengthrange.cpp)")            \
  X(real, actuator_acc0, nu, optional,                                                                                 \
    "|M^-1 moment| at qpos0 (MuJoCo's mj_setConst); a muscle with force < 0 exerts scale / acc0")                    \
  /* configurations */                                                                                                 \
  X(real, qpos0, nq, required, "reference configuration (hinge/slide angles are qpos - qpos0)")                        \
  X(real, qpos_spring, nq, required,                                                                                   \
    "rest configuration of the joint springs (MuJoCo's qpos_spring): springref for hinge/slide, qpos0 for free/ball")  \
  /* constraint parameters (sim/constraints.h; absent: MuJoCo's defaults, HostModel fills them) */                     \
  X(real, jnt_solref, 2 * njnt, optional, "limit solref (timeconst, dampratio; or -stiffness, -damping)")              \
  X(real, jnt_solimp, 5 * njnt, optional, "limit solimp (dmin, dmax, width, midpoint, power)")                         \
  X(real, jnt_margin, njnt, optional, "a limit acts from this far inside its range (rad or m)")                        \
  X(int, jnt_actfrclimited, njnt, optional, "0/1: qfrc_actuator at the joint's dofs clamped to jnt_actfrcrange")       \
  X(real, jnt_actfrcrange, 2 * njnt, optional, "actuator force range at the joint (MuJoCo's actuatorfrcrange)")        \
  X(real, dof_frictionloss, nv, optional, "dry friction of the dof: a friction-loss row bounded by it (N m or N)")     \
  X(real, dof_solref, 2 * nv, optional, "friction-loss solref (joint solreffriction)")                                 \
  X(real, dof_solimp, 5 * nv, optional, "friction-loss solimp (joint solimpfriction)")                                 \
  X(real, geom_solref, 2 * ngeom, optional, "contact solref, mixed per pair (MuJoCo's mj_contactParam)")               \
  X(real, geom_solimp, 5 * ngeom, optional, "contact solimp, mixed per pair")                                          \
  X(real, geom_solmix, ngeom, optional, "weight of this geom's solref/solimp in a pair of equal priority")             \
  X(int, geom_priority, ngeom, optional, "the geom of higher priority gives the pair its condim, friction, sol*")      \
  X(real, geom_gap, ngeom, optional, "m: MuJoCo 3 lists contacts up to margin + gap apart, excluded: no force")        \
  X(int, body_exclude, nbody* nbody, optional,                                                                         \
    "1 where <contact><exclude> removes the contacts of two bodies' geoms (symmetric; absent: none)")                  \
  /* equality constraints (sim/constraints.h; MJCF <equality>) */                                                      \
  X(int, eq_type, neq, required, "EqualityType: connect (3 rows), weld (6), joint or tendon (1 row)")                  \
  X(int, eq_obj1id, neq, required,                                                                                     \
    "connect, weld: body 1 (weld with sites: site 1); joint: joint 1; tendon: tendon 1")                               \
  X(int, eq_obj2id, neq, required,                                                                                     \
    "connect, weld: body 2 (0: the world; weld with sites: site 2); joint, tendon: the second, -1 if none")            \
  X(int, eq_objtype, neq, optional, "EqualityObj: a weld's objects, bodies or sites (absent: bodies)")                 \
  X(int, eq_active, neq, required, "0/1: whether the constraint acts")                                                 \
  X(real, eq_data, 11 * neq, required,                                                                                 \
    "connect: anchor in body 1's frame, then in body 2's (at qpos0); weld: anchor in body 2's frame, the point of "    \
    "body 1 kept on it, relpose quaternion (body 2's orientation in body 1's frame), torquescale (sites: only "        \
    "torquescale); joint, tendon: polycoef (5)")                                                                       \
  X(real, eq_solref, 2 * neq, required, "solref")                                                                      \
  X(real, eq_solimp, 5 * neq, required, "solimp")                                                                      \
  /* sensors (sim/sensors.h, sim/mjcf_sensors.cpp); site shapes for touch sensors */                                   \
  X(int, site_type, nsite, optional, "GeomType of the site's zone (touch sensors; absent: sphere)")                    \
  X(real, site_size, 3 * nsite, optional, "size of the site's zone, MuJoCo's meaning per type (touch sensors)")        \
  X(int, sensor_type, nsensor, required, "SensorType (sim/sensors.h)")                                                 \
  X(int, sensor_objtype, nsensor, required, "SensorObj of the sensed object")                                          \
  X(int, sensor_objid, nsensor, required, "id of the sensed object")                                                   \
  X(int, sensor_reftype, nsensor, required, "SensorObj of the reference frame (frame sensors), kSensObjNone")          \
  X(int, sensor_refid, nsensor, required, "id of the reference frame's object, -1 if none; rangefinder: data bits")   \
  X(int, sensor_dim, nsensor, required, "scalars of the sensor's output")                                              \
  X(int, sensor_adr, nsensor, required, "first scalar of the sensor's output in sensordata")                           \
  X(real, sensor_cutoff, nsensor, required, "clamp |value| (touch: value) to it when > 0, as MuJoCo; 0: none")         \
  X(int, sensor_intprm, 2 * nsensor, optional,                                                                         \
    "contact sensors: the data fields (ContactData bits), the reduction (ContactReduce); 0 0 for the others")          \
  X(int, cam_bodyid, ncam, optional, "body the camera is fixed to (frame sensors read its frame)")                     \
  X(real, cam_pos, 3 * ncam, optional, "camera position in the body frame")                                            \
  X(real, cam_quat, 4 * ncam, optional, "camera orientation in the body frame (it looks along -z, as MuJoCo's)")       \
  X(int, cam_mode, ncam, optional, "CameraMode: fixed, track, trackcom, targetbody, targetbodycom (MuJoCo's)")         \
  X(int, cam_targetbodyid, ncam, optional, "body a targetbody(com) camera looks at, -1 if none")                       \
  X(real, cam_pos0, 3 * ncam, optional, "world offset of the camera from its body's frame at qpos0 (track)")           \
  X(real, cam_poscom0, 3 * ncam, optional,                                                                             \
    "world offset of the camera from the subtree com at qpos0 of its target body, else its body (trackcom)")           \
  X(real, cam_mat0, 9 * ncam, optional, "world orientation of the camera at qpos0 (track, trackcom)")                  \
  X(int, cam_resolution, 2 * ncam, optional, "pixels, width and height (camprojection sensors)")                       \
  X(real, cam_fovy, ncam, optional, "vertical field of view, degrees (from sensorsize and focal when given)")          \
  X(real, cam_intrinsic, 4 * ncam, optional, "focal length x y, principal point x y, m (float-rounded, as MuJoCo)")    \
  X(real, cam_sensorsize, 2 * ncam, optional, "sensor width and height, m; 0 0: fovy defines the optics")              \
  X(real, cam_ipd, ncam, optional, "inter-pupillary distance, m (MuJoCo's; no effect on the physics)")                 \
  /* meshes (sim/mjcf_mesh.cpp, sim/convex.h) */                                                                       \
  X(int, geom_dataid, ngeom, optional, "mesh or hfield id of the geom, -1 if none")                                    \
  X(int, mesh_vertadr, nmesh, optional, "first vertex of the mesh in mesh_vert")                                       \
  X(int, mesh_vertnum, nmesh, optional, "vertices of the mesh")                                                        \
  X(real, mesh_vert, 3 * nmeshvert, optional,                                                                          \
    "vertices in the mesh frame (centre of mass, principal axes), rounded to float as MuJoCo's")                       \
  X(int, mesh_graphadr, nmesh, optional, "first int of the mesh's convex hull in mesh_graph, -1 if none")              \
  X(int, mesh_graph, nmeshgraph, optional,                                                                             \
    "convex hulls, MuJoCo's layout: nvert, nface, vert_edgeadr[nvert], vert_globalid[nvert], "                         \
    "edge_localid[nvert + 3 nface] (-1 ends a vertex's neighbours), face_globalid[3 nface]")                           \
  X(int, mesh_extrema, 27 * nmesh, optional,                                                                          \
    "per mesh the hull vertex (local id) furthest along each direction of (-1, 0, 1)^3, x slowest (the seeds "        \
    "of MuJoCo's hill-climbing support search)")                                                                       \
  X(int, mesh_polyadr, nmesh, optional, "first polygon of the mesh (MuJoCo's merged coplanar hull faces)")             \
  X(int, mesh_polynum, nmesh, optional, "polygons of the mesh (0 without a hull)")                                     \
  X(int, mesh_polyvertadr, nmeshpoly, optional, "first vertex of the polygon in mesh_polyvert")                        \
  X(int, mesh_polyvertnum, nmeshpoly, optional, "vertices of the polygon")                                             \
  X(real, mesh_polynormal, 3 * nmeshpoly, optional, "unit outward normal of the polygon, mesh frame")                  \
  X(int, mesh_polyvert, nmeshpolyvert, optional, "the polygons' vertex cycles: vertex ids within the mesh")            \
  X(int, mesh_polymapadr, nmeshvert, optional, "first entry of the vertex in mesh_polymap")                            \
  X(int, mesh_polymapnum, nmeshvert, optional, "polygons through the vertex")                                          \
  X(int, mesh_polymap, nmeshpolyvert, optional, "the polygons through each vertex: polygon ids within the mesh")       \
  X(int, mesh_faceadr, nmesh, optional, "first triangle of the mesh in mesh_face")                                    \
  X(int, mesh_facenum, nmesh, optional, "triangles of the mesh (sim/ray.h casts rays on them; the viewer draws them)") \
  X(int, mesh_face, 3 * nmeshface, optional, "triangles: vertex ids within the mesh")                                 \
  X(int, geom_invisible, ngeom, optional,                                                                              \
    "1 where MuJoCo's mj_ray skips the geom (sim/ray.h): its material's alpha is 0, or it has no material and its "    \
    "rgba alpha is 0 (absent: none)")                                                                                  \
  /* height fields (sim/hfield.h) */                                                                                   \
  X(real, hfield_size, 4 * nhfield, optional, "radius_x, radius_y, elevation_z, base_z (MuJoCo's hfield size)")        \
  X(int, hfield_nrow, nhfield, optional, "grid rows (along y)")                                                        \
  X(int, hfield_ncol, nhfield, optional, "grid columns (along x)")                                                     \
  X(int, hfield_adr, nhfield, optional, "first element of the hfield in hfield_data")                                  \
  X(real, hfield_data, nhfielddata, optional, "elevations in [0, 1], row-major, row 0 at y = -radius_y")               \
  /* tendons (sim/tendon.h, sim/mjcf_tendons.cpp): a tendon is wraps tendon_adr .. + tendon_num */                     \
  X(int, tendon_adr, ntendon, required, "first wrap of the tendon")                                                    \
  X(int, tendon_num, ntendon, required, "its wraps (fixed: joints; spatial: sites, geoms, pulleys)")                   \
  X(int, tendon_limited, ntendon, required, "0/1: a limit row keeps the length in tendon_range")                       \
  X(real, tendon_range, 2 * ntendon, required, "length range (when limited)")                                          \
  X(real, tendon_margin, ntendon, required, "a limit acts from this far inside its range")                             \
  X(real, tendon_solref_lim, 2 * ntendon, required, "limit solref")                                                    \
  X(real, tendon_solimp_lim, 5 * ntendon, required, "limit solimp")                                                    \
  X(real, tendon_frictionloss, ntendon, required, "dry friction: a friction-loss row bounded by it (0: none)")         \
  X(real, tendon_solref_fri, 2 * ntendon, required, "friction-loss solref")                                            \
  X(real, tendon_solimp_fri, 5 * ntendon, required, "friction-loss solimp")                                            \
  X(real, tendon_stiffness, ntendon, required, "spring, force per length outside tendon_lengthspring")                 \
  X(real, tendon_damping, ntendon, required, "damper, force per length velocity (explicit, as MuJoCo)")                \
  X(real, tendon_lengthspring, 2 * ntendon, required,                                                                  \
    "spring deadband [lo, hi] (MuJoCo 3's springlength); -1 -1: the length at qpos_spring (HostModel fills it)")       \
  X(int, wrap_type, nwrap, required, "WrapType (sim/tendon.h)")                                                        \
  X(int, wrap_objid, nwrap, required, "joint, site or geom id (-1 for a pulley)")                                      \
  X(real, wrap_prm, nwrap, required, "joint: coef; pulley: divisor; geom: side site id, -1 if none")                   \
  X(int, actuator_trntype, nu, optional, "TransmissionType: joint, tendon, site, slider-crank, body (absent: joints)") \
  X(int, actuator_trnid2, nu, optional,                                                                                \
    "site: the refsite, -1 if none; slider-crank: the slider site; unused for joints and tendons (MuJoCo's trnid[1])") \
  X(real, actuator_gear6, 6 * nu, optional,                                                                            \
    "MuJoCo's 6D gear: site: the wrench (force, then torque) in the site's frame (refsite's with one); ball "          \
    "joint: the torque (3); free joint: the wrench (6); the others take actuator_gear, its first entry")               \
  X(real, actuator_cranklength, nu, optional, "slider-crank: the rod's length (m); 0 for the others")                  \
  /* misc: pairs, equality, gravcomp, fluid (sim/contact.h, sim/constraints.h, sim/passive.h) */                       \
  X(int, pair_geom1, npair, required, "explicit contact pair (<contact><pair>): first geom")                           \
  X(int, pair_geom2, npair, required,                                                                                  \
    "second geom (a pair collides whatever the filters; no other contact of the two)")                                 \
  X(int, pair_condim, npair, required, "the pair's condim (1, 3; 4 and 6 as the geoms')")                              \
  X(real, pair_friction, 5 * npair, required, "sliding (2), torsional, rolling (2) friction of the pair")              \
  X(real, pair_solref, 2 * npair, required, "the pair's solref")                                                       \
  X(real, pair_solreffriction, 2 * npair, required, "solref of the friction directions (elliptic cones; 0 0: solref)") \
  X(real, pair_solimp, 5 * npair, required, "the pair's solimp")                                                       \
  X(real, pair_margin, npair, required, "m: the pair's contact acts from this distance on")                            \
  X(real, pair_gap, npair, required, "m: contacts listed up to margin + gap, not acting beyond margin")                \
  X(real, body_gravcomp, nbody, optional, "gravity compensation: -gravity * mass * gravcomp at the com (absent: 0)")

// Computed by HostModel from the Model (constants of the compiled model, as MuJoCo's mj_setConst):
// in the view, not in Model.
#define RLT_MODEL_DERIVED_FIELDS(X)                                                                                  \
  X(int, body_rootid, nbody, required, "the ancestor that is a child of the world (0 for the world)")                \
  X(real, body_invweight0, nbody, required,                                                                          \
    "translational inverse weight at qpos0 (scales soft-constraint R): mean diagonal of J M^-1 J^T at the com")      \
  X(real, body_invweight0_rot, nbody, required,                                                                      \
    "rotational inverse weight at qpos0 (MuJoCo's body_invweight0[2b+1]; weld rows): mean diagonal of Jr M^-1 Jr^T") \
  X(real, dof_invweight0, nv, required, "MuJoCo's dof inverse weight at qpos0: diagonal of M^-1 (free/ball: means)") \
  /* contacts (sim/contact.h) */                                                                                     \
  X(int, geom_collide, ngeom*(ngeom - 1) / 2, required,                                                              \
    "the geom pairs detect_contacts tries, g1 << 16 | g2 (g1 its geom 1: the lower type number; kGeomCollideShift), " \
    "in the order of the loop over geom ids i < j; the first ncollide used")                                          \
  X(int, geom_collider, ngeom, required,                                                                             \
    "the geoms of geom_collide's pairs, ascending, each once (geom_bounds computes their bounds); the first ncollider") \
  X(int, geom_substep, ngeom, required,                                                                              \
    "the geoms whose pose a substep reads (colliders, tendon wrapping geoms), ascending; the first ngeom_substep "    \
    "(kinematics' inner substeps place these alone)")                                                                 \
  X(int, site_substep, nsite, required,                                                                              \
    "the sites whose pose a substep reads (tendon paths, site and slider-crank transmissions, site equalities), "     \
    "ascending; the first nsite_substep")                                                                             \
  /* tendons (sim/tendon.h) */                                                                                       \
  X(real, tendon_length0, ntendon, required, "tendon length at qpos0 (tendon equality constraints)")                 \
  X(real, tendon_invweight0, ntendon, required, "J M^-1 J^T of the tendon at qpos0 (its rows' diagApprox)") \
  /* the dof tree (sim/dynamics.h tree_ltdl_factor) */                                                                \
  X(int, dof_treestart, nv, required,                                                                                \
    "the first dof of dof i's tree (the root of its chain, no parent): a chain lies in dof_treestart[i]..i")          \
  X(int, jnt_at_origin, njnt, required,                                                                              \
    "1 where jnt_pos is (+0, +0, +0) (the joint at its body's origin): kinematics skips its anchor's rotations")      \
  X(int, dof_subtreeend, nv, required,                                                                               \
    "the last dof of dof i's subtree: its descendants are i+1..dof_subtreeend[i] (dofs in tree order; CRBA's columns)") \
  X(int, dof_depth, nv, required,                                                                                    \
    "dof i's chain length, i and its ancestors (newton_solve's costs of a rank-one update along it and of a factorization)") \
  /* implicitfast (sim/physics_step.h) */                                                                            \
  X(int, dof_simple, nv, required,                                                                                   \
    "1 for a dof of a MuJoCo \"simple\" body (body_simple, model_body_simple): implicitfast keeps only its diagonal") \
  X(int, body_freebody, nbody, required,                                                                             \
    "1 for a standalone free body (MuJoCo's mj_isFreeBody: one free joint, no dofs or mass below it)")
