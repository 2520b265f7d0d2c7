-- pantograph_push: pushing a box around a table through the virtual coupling. The handle is a
-- user thing; a spring/damper couples it to the proxy ball, which the engine simulates with
-- the scene's contact models (ball-table, ball-box, box-table). The device workspace maps to
-- the table with position_scale (16 cm of handle travel -> 80 cm of table) and world forces
-- come back to the hand divided by force_scale. Stiffness and damping respect the limits of
-- docs/haptics.md for a 1 kHz servo.
--
--   issim device sim scenes/pantograph_push.lua --hand circle:0.04,2
local r, m = 0.03, 0.2                       -- proxy ball radius (m) and mass (kg)
local h, mb = 0.05, 0.5                      -- box half side (m) and mass (kg)
haptics = {
  proxy = "proxy",
  coupling = { stiffness = 300, damping = 6, position_scale = 5, force_scale = 5,
               origin = {0, 0, r}, stall_timeout = 0.02, fade = 0.02 },
}
return {
  name = "pantograph_push",
  description = "Push a box across a table with the pantograph through a virtual coupling",
  universe = { gravity = {0, 0, -9.81}, integrator = "bdf", dt = 1e-3, horizon = 0.005 },
  camera = { eye = {0.4, -1.0, 0.7}, target = {0, 0, 0}, fov = 45 },
  record = {"proxy.pos.x", "proxy.pos.y", "box.pos.x", "box.pos.y"},
  things = {
    { name = "handle", kind = "user", pos = {0, 0, r} },
    { name = "table", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "table" },
    { name = "proxy", kind = "body", shape = "sphere", radius = r, mass = m,
      inertia = {0.4 * m * r ^ 2, 0.4 * m * r ^ 2, 0.4 * m * r ^ 2}, pos = {0, 0, r},
      material = "proxy", color = {0.2, 0.5, 0.9} },
    { name = "box", kind = "body", shape = "box", half_extents = {h, h, h}, mass = mb,
      inertia = {mb * (2 * h) ^ 2 / 6, mb * (2 * h) ^ 2 / 6, mb * (2 * h) ^ 2 / 6},
      pos = {0.15, 0, h}, material = "box", color = {0.9, 0.6, 0.2} },
  },
  contacts = {
    { name = "proxy_table", materials = {"proxy", "table"}, model = "spring_damper",
      stiffness = 2e4, restitution = 0.2 },
    -- Coulomb friction on the table: a pushed box slides, slows and stops where it was left,
    -- as a box on a table does (frictionless, one push sent it out of view for good).
    { name = "box_table", materials = {"box", "table"}, model = "spring_damper",
      stiffness = 2e4, restitution = 0.2, friction_static = 0.5, friction_kinetic = 0.4,
      tangent_stiffness = 2e4 },
    { name = "proxy_box", materials = {"proxy", "box"}, model = "spring_damper",
      stiffness = 2e4, restitution = 0.2 },
  },
}
