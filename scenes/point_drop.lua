-- point_drop: the vertical bar of Siira 1995 (seed 004, section 4.8.2) dropped onto a plane.
-- Only the lower end touches, so the contact is a single vertex: a point mass on a linear
-- spring/damper. Unit mass; the damping is derived from the restitution r = 0.8 for one
-- contact (VALIDATION.md V1).
--
-- Properties a sweep usually changes with --set:
--   bar_floor.model        THE CONTACT MODEL: spring_damper (default, V1) or internal_friction
--                          (V3); also hunt_crossley, hertz, bilinear, bilinear_origin,
--                          internal_friction_c0 (docs/contact-models.md), e.g.
--                          issim run scenes/point_drop.lua --set bar_floor.model=internal_friction
--   bar_floor.stiffness    k, N/m
--   bar_floor.restitution  r the damping is chosen for
--   bar.pos                drop position, m (the lower tip is 0.1 m below it)
-- Scene parameter (--param, issim sweep --grid):
--   drop_height            height of the lower tip above the floor, m (default 0.5: 3.13 m/s)
--   universe.integrator    bdf | adams | rk4
local drop_height = param("drop_height", 0.5) -- m: the lower tip above the floor
return {
  name = "point_drop",
  description = "Vertical bar (one contact vertex) dropped on a plane, spring/damper r = 0.8",
  universe = {
    gravity = {0, 0, -9.81},
    planar = true,            -- the 2D experiment of 004: x-z plane, rotation about y
    integrator = "bdf",
    dt = 1e-3,
    rtol = 1e-10,
    atol = 1e-12,
    record = "bar.pos.z,bar.vel.z,universe.energy.total",
    -- the GUI's clock: 1/2000 of real time within 0.5 ms of each impact, so each 0.32 ms
    -- contact lasts 0.63 s on screen and its 1 ms window 2 s (the 26 bounces over 1 cm/s, in
    -- 2.9 s, take 52 s; untick "slow motion at impacts" or --set universe.slow_motion=0)
    slow_motion = 5e-4,
    slow_motion_window = 5e-4,
  },
  camera = { eye = {0.45, -0.95, 0.45}, target = {0, 0, 0.3}, fov = 45 },
  things = {
    {
      name = "bar", kind = "body",
      mass = 1,                                   -- kg
      inertia = {1/300, 1/300, 1e-5},             -- kg m^2: 0.2 m rod, m L^2 / 12
      pos = {0, 0, drop_height + 0.1},                          -- m: lower tip 0.5 m above the floor
      vertices = {{0, 0, -0.1}, {0, 0, 0.1}},     -- the bar's two ends
      material = "bar",
      color = {0.85, 0.55, 0.25},
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
      stiffness = 1e8,                 -- N/m: stiff enough that gravity during the
                                       -- contact (m g / k) biases r by < 6e-4 at 0.44 m/s
      damping_from = "restitution",    -- b = -2 ln r sqrt(k m) / sqrt(pi^2 + ln^2 r)
      restitution = 0.8,
    },
  },
}
