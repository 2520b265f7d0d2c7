-- bar_drop_map: the steel bar drop of seed 000 ch. 6 with the contact-map model (000 6.5,
-- VALIDATION.md V11's map part): the same 0.2 m rod as bar_drop_angle.lua, falling without spin
-- onto a massive foundation, but the contact force is the convolution of the bar's indentation
-- history with its contact-response map (assets/maps/steel_bar.map: issim-mapgen's plane-strain
-- step responses at the nodes of impact angles 18, 30, ..., 90 degrees on both rounded ends,
-- T = 1 us, 1 ms of memory; docs/contact-map-generator.md). The map is of the bar's deformation
-- only (--deformation-only: its rigid-body modes removed, since the engine moves the bar as a
-- rigid body itself); the free body's map, which counts that motion twice, is
-- assets/maps/steel_bar_free.map (--set bar.contact_map=assets/maps/steel_bar_free.map). With
-- it the energy lost peaks near the critical angle, 66 degrees, as in 000 Fig. 6.8
-- (docs/contact-models.md). The foundation has no map: as in
-- 000 6.5 it is a flat step response of Table 6.1's K = 5.5e7 N/m (the pair's stiffness), which
-- has no damping: energy is lost only to the bar's elastic waves and to friction
-- (mu_s 0.1, mu_k 0.075).
--
-- Scene parameters (--param NAME=VALUE; issim sweep --grid NAME=...):
--   angle_deg   the impact angle, degrees: the map's node angles 18, 30, 42, 54, 66, 78, 90
--               (000 6.5 "only calculated collisions at the nodal points")
--   speed       the impact speed, m/s, straight down
-- In the GUI: the flight runs on the scene's integrator (BDF), the impact at the map's T.
local angle = math.rad(param("angle_deg", 66))   -- impact angle, rad
local speed = param("speed", 3.0)                 -- m/s
local length, diameter, density = 0.2, 0.0125, 7876.74   -- the V10 rod
local mass = density * math.pi * diameter ^ 2 / 4 * length
local i_centre = mass * length ^ 2 / 12                   -- uniform bar about its centre
local half = length / 2
return {
  name = "bar_drop_map",
  description = "Steel bar (0.2 m) striking a foundation with its contact-response map, 000 6.5",
  universe = {
    gravity = {0, 0, 0},      -- eq. 6.3-6.5: the impact without gravity
    planar = true,            -- x-z plane, rotation about y (the map's outline plane)
    integrator = "bdf",
    dt = 1e-4,                -- s: output interval (the impact itself runs at the map's T = 1 us)
    rtol = 1e-9,
    atol = 1e-12,
    horizon = 0.002,          -- s: the display follows the 0.2 ms impact closely
    record = "bar.pos.z,bar.vel.x,bar.vel.z,bar.angvel.y,universe.energy.kinetic",
    show_contacts = true, -- the GUI opens with the map nodes shown (display only)
    -- the GUI's clock: a tenth of real time, and 1/5000 within 0.5 ms of the impact (its
    -- 0.2 ms last 1 s on screen)
    playback_speed = 0.1,
    slow_motion = 2e-4,
    slow_motion_window = 5e-4,
  },
  -- Without gravity the bar leaves the foundation for good after the impact (with the
  -- deformation map it keeps more of its energy than it did with the free-body one): the camera
  -- follows it, as in bar_drop_angle.lua.
  camera = { eye = {0.3, -0.6, 0.15}, target = {0, 0, 0.05}, fov = 45, follow = "bar" },
  things = {
    {
      name = "bar", kind = "body",
      mass = mass,                                   -- kg (0.193)
      inertia = {i_centre, i_centre, 1e-6},          -- kg m^2: about y, the planar axis
      -- the lower (+x) end 1 um above the foundation
      pos = {0, 0, half * math.sin(angle) + 1e-6},
      orient = {math.cos(angle / 2), 0, math.sin(angle / 2), 0},
      vel = {0, 0, -speed},
      vertices = {{-half, 0, 0}, {half, 0, 0}},      -- the bar's two ends
      material = "steel",
      color = {0.6, 0.6, 0.65},
      contact_map = "assets/maps/steel_bar.map",
    },
    {
      name = "foundation", kind = "obstacle",
      shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "foundation",
    },
  },
  contacts = {
    {
      name = "bar_foundation", materials = {"steel", "foundation"},
      model = "contact_map",
      stiffness = 5.5e7,                -- K, N/m: the foundation's flat map (000 6.5)
      friction_static = 0.1,
      friction_kinetic = 0.075,
      tangent_stiffness = 1e10,         -- N/m: Goyal's tangential spring, stiff (sticks < 1 um)
    },
  },
}
