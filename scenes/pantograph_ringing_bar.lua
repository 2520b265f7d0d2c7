-- pantograph_ringing_bar: the handle is a bar that rings (issue 30 item 6): the proxy, the bar
-- the hand holds, strikes a foundation at x = 0.10 m under the contact-map model (seed 000
-- ch. 3, its steel bar striking a foundation), felt through local models (docs/haptics.md
-- "Local models"): the servo evaluates the bar's map convolution at every period against the
-- handle's depth, so the map's transient, the bar's 40 Hz ringing, reaches the hand at the
-- servo's rate and not through the engine's 1 ms frames.
--
-- The bar's map (assets/maps/haptic_bar.map) is synthetic: h(t) = 2000 + 3000 exp(-t / 25 ms)
-- cos(2 pi 40 Hz t) N/m, sampled at T = 250 us, the 4 kHz servo's period (the servo's copy
-- takes one map sample per period). At the handle (x position_scale 5 / force_scale 20) the bar
-- is 1,240 N/m at the first touch and 500 N/m at rest. The steel bar's own map
-- (assets/maps/steel_bar.map, T = 1 us) rings at tens of kHz, beyond what any servo renders.
--
--   issim device sim scenes/pantograph_ringing_bar.lua --rate 4000 --hand hold:0.040,0.155
--   issim run scenes/pantograph_ringing_bar.lua --device sim --device-rate 4000
local r, m = 0.03, 0.2                       -- proxy ball radius (m) and mass (kg)
haptics = {
  proxy = "bar",
  coupling = { stiffness = 300, damping = 6, position_scale = 5, force_scale = 20,
               origin = {0, 0, r}, stall_timeout = 0.02, fade = 0.02 },
  ["local"] = { enabled = true, hold = 0.004, fade = 0.004, track_hz = 50 },
}
return {
  name = "pantograph_ringing_bar",
  description = "Tap a ringing bar with the pantograph: a contact map's transient in the hand",
  -- the horizon is one step: the engine applies to the proxy the force the hand felt; the map
  -- contact itself steps at the map's T (docs/contact-models.md)
  universe = { gravity = {0, 0, -9.81}, integrator = "bdf", dt = 1e-3, horizon = 0.001 },
  -- from above: the walls are tall
  camera = { eye = {0.02, -0.35, 0.95}, target = {0.03, -0.02, 0}, fov = 45 },
  record = {"bar.pos.x", "bar.pos.y"},
  things = {
    { name = "handle", kind = "user", pos = {0, 0, r} },
    { name = "table", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "table" },
    -- a box (a plane would not be drawn standing): its face at x = 0.10; 20 cm thick and high,
    -- so the hardest hit (6 cm in at the 6 N limit) can neither push the bar through nor over
    { name = "foundation", kind = "obstacle", shape = "box", half_extents = {0.10, 0.15, 0.10},
      pos = {0.20, 0, 0.10}, material = "foundation", color = {0.5, 0.5, 0.5} },
    -- the bar's tip: a ball, so the depth is the handle's along x wherever it strikes
    { name = "bar", kind = "body", shape = "sphere", radius = r, mass = m,
      inertia = {0.4 * m * r ^ 2, 0.4 * m * r ^ 2, 0.4 * m * r ^ 2}, pos = {0, 0, r},
      material = "bar", color = {0.6, 0.6, 0.65}, contact_map = "assets/maps/haptic_bar.map" },
  },
  contacts = {
    { name = "bar_table", materials = {"bar", "table"}, model = "spring_damper",
      stiffness = 2e4, restitution = 0.2 },
    -- the foundation, without a map, is a flat 1e6 N/m in series with the bar's map: the bar's
    -- response to 0.5 %
    { name = "bar_foundation", materials = {"bar", "foundation"}, model = "contact_map",
      stiffness = 1e6, map_convolution = "direct", damping_from = "value", damping = 0 },
  },
}
