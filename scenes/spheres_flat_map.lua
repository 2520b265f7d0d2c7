-- spheres_flat_map: two unit spheres (radius 1 m, mass 1 kg) meet head-on, each carrying a flat
-- (memoryless) contact-response map of 4000 N/m: the consistency test of seed 000 4.2 (Table 4.1,
-- VALIDATION.md V7, V8). Two flat maps in series are a linear spring of 2000 N/m; with the
-- trapezoid quadrature the contact equals that spring exactly, with the published endpoint rule
-- (spheres.map_quadrature = "endpoint") the force error falls in proportion to the period.
-- No gravity; the spheres start 0.1 m apart (no overlap) closing at 2 m/s.
--
-- Properties a user usually changes with --set:
--   left.contact_map, right.contact_map   "flat K period T" (N/m, s), or a .map file
--   spheres.map_quadrature                trapezoid | endpoint
--   spheres.model                         contact_map, or spring_damper for the reference
--   left.vel, right.vel                   m/s
return {
  name = "spheres_flat_map",
  description = "Two unit spheres with flat 4000 N/m contact maps collide head-on (000 4.2, V7-V8)",
  universe = {
    gravity = {0, 0, 0},
    horizon = 0.01,           -- s: the engine runs at most 10 ms ahead of the display, so the
                              -- contact markers and the map panel follow the impact closely
    integrator = "rk4",
    dt = 1e-3,
    record = "left.pos.x,left.vel.x,right.pos.x,right.vel.x,universe.energy.total",
    show_contacts = true, -- the GUI opens with the map nodes shown (display only)
    -- the GUI's clock: 1/50 of real time within 0.1 s of the impact at 0.05 s, so the 50 ms
    -- contact lasts 2.5 s on screen and the spheres are seen meeting and parting
    slow_motion = 0.02,
    slow_motion_window = 0.1,
  },
  -- far and wide enough that the spheres, 12 m apart after 5 s, stay in view
  camera = { eye = {0, -16, 2}, target = {0, 0, 0}, fov = 60 },
  things = {
    {
      name = "left", kind = "body", shape = "sphere", radius = 1, mass = 1,
      inertia = {0.4, 0.4, 0.4},                -- kg m^2: 2/5 m r^2
      pos = {-1.05, 0, 0}, vel = {1, 0, 0},
      material = "sphere", color = {0.85, 0.55, 0.25},
      contact_map = "flat 4000 period 1e-4",
    },
    {
      name = "right", kind = "body", shape = "sphere", radius = 1, mass = 1,
      inertia = {0.4, 0.4, 0.4},
      pos = {1.05, 0, 0}, vel = {-1, 0, 0},
      material = "sphere", color = {0.3, 0.55, 0.85},
      contact_map = "flat 4000 period 1e-4",
    },
  },
  contacts = {
    {
      name = "spheres", materials = {"sphere", "sphere"},
      model = "contact_map",
      stiffness = 2000,           -- N/m: used only by a body without a map (and by the
                                  -- spring_damper reference: the two maps in series)
      damping_from = "value", damping = 0,
    },
  },
}
