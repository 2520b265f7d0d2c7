-- quasi_static_cycle: a block pressed slowly into a plane and released, over and over: the
-- quasi-static load cycle of Siira 1995 (seed 004, 4.6.2, Fig. 4.12; VALIDATION.md V4). One
-- contact vertex at the block's centre of mass, no gravity, so the only load is the force the
-- caller prescribes.
--
-- The block carries the cycle F(t) = F_max (1 - cos(2 pi t / T)) / 2 pushing down as its
-- `force_cycle` / `force_cycle_period` properties: the engine applies it at every step, in the
-- GUI (drawn as an orange arrow; the plots show it against time and the contact force against
-- depth, the hysteresis loop of 004 Fig. 4.12), headless and in sweeps. Tests that apply their
-- own load set block.force_cycle_period = 0 (tests/test_validation_v4_quasi_static.c).
--
-- Properties a sweep usually changes with --set:
--   block_floor.model        THE CONTACT MODEL: internal_friction (default) or spring_damper,
--                            or any of docs/contact-models.md
--   block_floor.stiffness    k, N/m
--   block_floor.restitution  r
--   block.force              constant load, N (world frame; {0, 0, -F} presses)
--   block.force_cycle        the cycle's peak load, N; block.force_cycle_period its period, s
--                            (0: no cycle)
return {
  name = "quasi_static_cycle",
  description = "Block on one contact vertex pressed by a 100 N load cycle every 2 s (004 Fig. "
    .. "4.12): the load, and the contact force against depth, loading above unloading",
  universe = {
    gravity = {0, 0, 0},
    planar = true,
    integrator = "rk4",       -- fixed step: internal friction switches phase at rest (see
    dt = 1e-5,                -- docs/contact-models.md), where BDF's error control crawls
    record = "block.pos.z,block.vel.z,universe.energy.total",
  },
  camera = { eye = {0.05, -0.1, 0.035}, target = {0, 0, 0}, fov = 45 },
  things = {
    {
      name = "block", kind = "body",
      mass = 1,                          -- kg
      inertia = {1e-3, 1e-3, 1e-3},      -- kg m^2
      pos = {0, 0, 0},                   -- the vertex touches the plane
      vertices = {{0, 0, 0}},            -- at the centre of mass: no torque
      display_box = {0.015, 0.015, 0.01}, -- drawn as a block standing on its vertex (no collision)
      force = {0, 0, 0},                 -- N
      force_cycle = {0, 0, -100},        -- N: the load cycle's peak
      force_cycle_period = 2,            -- s
      material = "block",
      color = {0.3, 0.6, 0.85},
    },
    {
      name = "floor", kind = "obstacle",
      shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "floor",
    },
  },
  contacts = {
    {
      name = "block_floor", materials = {"block", "floor"},
      model = "internal_friction",
      stiffness = 1e5,                   -- N/m: a 20 ms period, so a 2 s cycle is slow
      restitution = 0.8,
      damping_from = "restitution",      -- the spring/damper's b when model = spring_damper
    },
  },
}
