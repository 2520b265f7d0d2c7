-- spheres_transient_maps: seed 000 4.3 (Figs. 4.1-4.3, VALIDATION.md V9). Two unit spheres
-- (radius 1 m, mass 1 kg) meet head-on at 2 m/s closing speed. The left one carries a step
-- response with a steady state of 1500 N/m plus a transient 6000 exp(-t / 2 ms) N/m (the family
-- of Fig. 4.1; "responseMapA6000" is its largest member); the right one a flat 1500 N/m map.
-- The transient stores energy in the body's internal modes: the spheres part slower than they
-- met (restitution about 0.84 at peak 6000; 1 without the transient), though nothing in the model
-- is viscous. Energy never rises: the first impulse sample is positive (000 eq. 3.36).
-- The spheres start 0.1 m apart (no overlap). Contact lasts about 80 ms, as in 000 4.3.
--
-- Properties a user usually changes with --set:
--   left.contact_map    "transient K PEAK DECAY [period T] [samples N]", "flat K", or a .map file
--                       e.g. --set "left.contact_map=transient 1500 12000 2e-3 samples 1000"
--   spheres.map_quadrature   trapezoid | endpoint (000 eq. 3.20, first order)
--   spheres.map_convolution  auto | direct | fft
return {
  name = "spheres_transient_maps",
  description = "Unit spheres with a 1500 N/m steady map plus a transient: memory as damping (000 4.3, V9)",
  universe = {
    gravity = {0, 0, 0},
    horizon = 0.01,           -- s: the engine runs at most 10 ms ahead of the display, so the
                              -- contact markers and the map panel follow the impact closely
    integrator = "bdf",       -- the flight; the impact runs at the maps' period (RK4)
    dt = 1e-3,
    rtol = 1e-10,
    atol = 1e-12,
    record = "left.vel.x,right.vel.x,universe.energy.kinetic,universe.energy.total",
    show_contacts = true, -- the GUI opens with the map nodes shown (display only)
    -- the GUI's clock: 1/50 of real time within 0.1 s of the impact at 0.05 s, so the 80 ms
    -- contact lasts 4.0 s on screen and the spheres are seen meeting and parting
    slow_motion = 0.02,
    slow_motion_window = 0.1,
  },
  -- far and wide enough that the spheres, 12 m apart after 5 s, stay in view
  camera = { eye = {0, -16, 2}, target = {0, 0, 0}, fov = 60 },
  things = {
    {
      name = "left", kind = "body", shape = "sphere", radius = 1, mass = 1,
      inertia = {0.4, 0.4, 0.4},
      pos = {-1.05, 0, 0}, vel = {1, 0, 0},
      material = "sphere", color = {0.85, 0.55, 0.25},
      contact_map = "transient 1500 6000 2e-3 period 1e-4 samples 1000",
    },
    {
      name = "right", kind = "body", shape = "sphere", radius = 1, mass = 1,
      inertia = {0.4, 0.4, 0.4},
      pos = {1.05, 0, 0}, vel = {-1, 0, 0},
      material = "sphere", color = {0.3, 0.55, 0.85},
      contact_map = "flat 1500 period 1e-4",
    },
  },
  contacts = {
    {
      name = "spheres", materials = {"sphere", "sphere"},
      model = "contact_map",
      stiffness = 1500,      -- N/m: a body without a map would be a flat map of this stiffness
      damping_from = "value", damping = 0,
    },
  },
}
