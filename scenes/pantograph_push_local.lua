-- pantograph_push_local: pantograph_push.lua rendered through local models (docs/haptics.md
-- "Local models"). The proxy ball's contacts (with the box, with the table) are published by the
-- engine after every step and evaluated by the servo at its own rate against the handle's
-- newest position, with the pair's own force law: pressing the box's edge the hand meets the
-- proxy_box spring at the handle, k position_scale / force_scale = 1e4 x 5 / 20 = 2,500 N/m,
-- not the 75 N/m the coupling gives at the handle. A rail along the table's far side (x =
-- 0.25 m) stops the box, so the edge can be pressed and felt. The engine's horizon is one step:
-- the engine applies to the proxy the force the hand felt, and a proxy computed 5 ms ahead of
-- the hand rang against the box (docs/haptics.md "Local models").
--
--   issim device sim scenes/pantograph_push_local.lua --rate 4000 --hand hold:0.035,0.155
--   issim run scenes/pantograph_push_local.lua --device sim --device-rate 4000
--
-- 2,500 N/m is within the 1 kHz stability limit of docs/haptics.md (3,553 N/m) but close; the
-- servo at 4 kHz (8,674 N/m) has margin. 5,000 N/m (k = 2e4) left the handle hopping between
-- two encoder counts and now and then tipped the box.
local r, m = 0.03, 0.2                       -- proxy ball radius (m) and mass (kg)
local h, mb = 0.05, 2.0                      -- box half side (m) and mass (kg)
haptics = {
  proxy = "proxy",
  coupling = { stiffness = 300, damping = 6, position_scale = 5, force_scale = 20,
               origin = {0, 0, r}, stall_timeout = 0.02, fade = 0.02 },
  ["local"] = { enabled = true, hold = 0.004, fade = 0.004, track_hz = 50 },
}
return {
  name = "pantograph_push_local",
  description = "Press a box against a rail with the pantograph: the proxy's contacts as local models at the servo rate",
  universe = { gravity = {0, 0, -9.81}, integrator = "bdf", dt = 1e-3, horizon = 0.001 },
  camera = { eye = {0.4, -1.0, 0.7}, target = {0.1, 0, 0}, fov = 45 },
  record = {"proxy.pos.x", "proxy.pos.y", "box.pos.x", "box.pos.y"},
  things = {
    { name = "handle", kind = "user", pos = {0, 0, r} },
    { name = "table", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "table" },
    { name = "rail", kind = "obstacle", shape = "plane", normal = {-1, 0, 0}, offset = -0.25,
      material = "rail" },
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
    { name = "box_table", materials = {"box", "table"}, model = "spring_damper",
      stiffness = 2e4, restitution = 0.2, friction_static = 0.5, friction_kinetic = 0.4,
      tangent_stiffness = 2e4 },
    { name = "box_rail", materials = {"box", "rail"}, model = "spring_damper",
      stiffness = 1e5, restitution = 0.2 },
    { name = "proxy_box", materials = {"proxy", "box"}, model = "spring_damper",
      stiffness = 1e4, restitution = 0.5 },
  },
}
