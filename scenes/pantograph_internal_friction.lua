-- pantograph_internal_friction: two walls of Siira's internal-friction contact (seed 004 4.6 and
-- App. D) felt through local models (docs/haptics.md "Local models"); the servo evaluates each
-- pair's law at every period against the handle.
--
-- The wall at x = 0.10 m is `internal_friction` (k 2000 N/m, r = 0.5, f = (1 - r^2) / (1 + r^2)
-- = 0.6): at the handle (k position_scale / force_scale = 500 N/m) pressing in meets
-- 1.6 x 500 = 800 N/m and easing off only 0.4 x 500 = 200 N/m, so the handle traces the
-- force-depth hysteresis loop, and between the branches it holds still (004 eq. 4.91).
-- The wall at y = -0.10 m is `internal_friction_c0` (the same k, r = 0.8, tilt h = 0.5:
-- f = (1 - r^2) / (1 + r^2 - 2h) = 0.5625): the turn from the pressing to the easing branch is a
-- line over the last half of the deepest depth, so the force never jumps (App. D). The tilt is
-- wide so the line spans several encoder counts (about 0.25 mm each at the handle).
--
--   issim device sim scenes/pantograph_internal_friction.lua --rate 4000 --hand hold:0.044,0.155
--   issim run scenes/pantograph_internal_friction.lua --device sim --device-rate 4000
local r, m = 0.03, 0.2                       -- proxy ball radius (m) and mass (kg)
haptics = {
  proxy = "proxy",
  coupling = { stiffness = 300, damping = 6, position_scale = 5, force_scale = 20,
               origin = {0, 0, r}, stall_timeout = 0.02, fade = 0.02 },
  ["local"] = { enabled = true, hold = 0.004, fade = 0.004, track_hz = 50 },
}
return {
  name = "pantograph_internal_friction",
  description = "Press two walls of internal friction with the pantograph: the force-depth loops "
    .. "in the hand (+x: internal_friction, -y: its C0 variant)",
  -- the horizon is one step: the engine applies to the proxy the force the hand felt. RK4 with a
  -- fixed step: internal friction switches phase at rest, where BDF's error control crawls
  -- (docs/contact-models.md; BDF stopped at 1.45 s with 1e-12 s steps)
  universe = { gravity = {0, 0, -9.81}, integrator = "rk4", dt = 1e-3, horizon = 0.001 },
  -- from above: the walls are tall
  camera = { eye = {0.02, -0.35, 0.95}, target = {0.03, -0.02, 0}, fov = 45 },
  record = {"proxy.pos.x", "proxy.pos.y"},
  things = {
    { name = "handle", kind = "user", pos = {0, 0, r} },
    { name = "table", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "table" },
    -- the walls are boxes (planes would not be drawn standing), faces at x = 0.10 and y = -0.10,
    -- 20 cm thick and high: at the 6 N limit (120 N in the world) the ball goes 6 cm in; a 2 cm
    -- wall let a hard hit push it through, and a 4 cm high one let it climb on top
    { name = "wall", kind = "obstacle", shape = "box", half_extents = {0.10, 0.15, 0.10},
      pos = {0.20, 0, 0.10}, material = "wall", color = {0.8, 0.5, 0.3} },
    { name = "wall_c0", kind = "obstacle", shape = "box", half_extents = {0.11, 0.10, 0.10},
      pos = {-0.04, -0.20, 0.10}, material = "wall_c0", color = {0.3, 0.7, 0.5} },
    { name = "proxy", kind = "body", shape = "sphere", radius = r, mass = m,
      inertia = {0.4 * m * r ^ 2, 0.4 * m * r ^ 2, 0.4 * m * r ^ 2}, pos = {0, 0, r},
      material = "proxy", color = {0.2, 0.5, 0.9} },
  },
  contacts = {
    { name = "proxy_table", materials = {"proxy", "table"}, model = "spring_damper",
      stiffness = 2e4, restitution = 0.2 },
    { name = "proxy_wall", materials = {"proxy", "wall"}, model = "internal_friction",
      stiffness = 2000, restitution = 0.5 },
    { name = "proxy_wall_c0", materials = {"proxy", "wall_c0"}, model = "internal_friction_c0",
      stiffness = 2000, restitution = 0.8, tilt = 0.5 },
  },
}
