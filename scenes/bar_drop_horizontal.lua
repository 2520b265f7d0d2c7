-- bar_drop_horizontal: the bar of Siira 1995 (seed 004, section 4.8.3) dropped horizontally, so
-- both ends touch at once and no torque acts. Each end has the same spring/damper as the point
-- drop (k, and b derived for r = 0.8 with the unit mass); two in parallel give
-- zeta_2 = sqrt(2) zeta_1 and a measured restitution of 0.729 (004 eq. 4.93, VALIDATION.md V2),
-- with a contact about sqrt(2) shorter.
--
-- Properties a sweep usually changes with --set:
--   bar_floor.model        THE CONTACT MODEL: spring_damper (default, r = 0.729, V2) or
--                          internal_friction (r = 0.8 with two vertices too, V3); also
--                          hunt_crossley, hertz, bilinear, bilinear_origin, internal_friction_c0
--                          (docs/contact-models.md), e.g.
--                          issim run scenes/bar_drop_horizontal.lua --set bar_floor.model=internal_friction
--   bar_floor.stiffness, bar_floor.restitution, bar.pos, universe.integrator
return {
  name = "bar_drop_horizontal",
  description = "Horizontal bar (two contact vertices) dropped on a plane, spring/damper",
  universe = {
    gravity = {0, 0, -9.81},
    planar = true,
    integrator = "bdf",
    dt = 1e-3,
    rtol = 1e-10,
    atol = 1e-12,
    record = "bar.pos.z,bar.vel.z,bar.angvel.y,universe.energy.total",
    -- the GUI's clock: 1/2000 of real time within 0.5 ms of each impact, so each 0.22 ms
    -- contact lasts 0.45 s on screen and its 1 ms window 2 s (the 18 bounces over 1 cm/s take
    -- 36 s; untick "slow motion at impacts" or --set universe.slow_motion=0)
    slow_motion = 5e-4,
    slow_motion_window = 5e-4,
  },
  camera = { eye = {0.45, -0.95, 0.45}, target = {0, 0, 0.3}, fov = 45 },
  things = {
    {
      name = "bar", kind = "body",
      mass = 1,
      inertia = {1e-5, 1/300, 1/300},             -- rod along x
      pos = {0, 0, 0.5},
      vertices = {{-0.1, 0, 0}, {0.1, 0, 0}},
      material = "bar",
    },
    {
      name = "floor", kind = "obstacle",
      shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "floor",
    },
  },
  contacts = {
    {
      name = "bar_floor", materials = {"bar", "floor"},
      model = "spring_damper",
      stiffness = 1e8,
      damping_from = "restitution",
      restitution = 0.8,
    },
  },
}
