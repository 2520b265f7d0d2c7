-- pantograph_contact_wall: a stiff wall of the scene's own contact model, felt through the
-- engine-published local model on the observer below one encoder count (docs/haptics.md
-- "A wall of the scene's contact model"). The handle's proxy ball meets a fixed plane through
-- the contact pair proxy_wall (spring_damper, its stiffness and damping the pair's own); after
-- every engine step the engine publishes that contact (frame, law, parameters, history) and
-- the servo evaluates the pair's law each period at the handle's estimated position. With
-- position_scale = force_scale = 1 the pair's stiffness is the stiffness at the handle in N/m.
-- The ball rests on a table (proxy_table, whose normal the device's plane does not feel), as in
-- the other pantograph scenes.
--
-- `issim-bench haptics zwidth --contact-model` sweeps this scene's proxy_wall.stiffness (as
-- --set would) against the simulated P2 in lockstep. The wall is 10 mm from the workspace
-- centre along +x (device x = 0.03 m): the plane at world x = 0.01 + r for the ball's centre,
-- r = 0.01 m. On the bench, with 20 N s/m, the counts hold this wall still up to 3,553 N/m at
-- 1 kHz and the observer up to 10,842 N/m (13,553 at 30 N s/m with the command a period late
-- and the observer a period ahead, as over the simulator's link). The scene keeps 8,674 N/m
-- and 20 N s/m, one grid step below, for margin: the link's timing jitters, the bench's does
-- not (docs/haptics.md).
--
--   issim device sim scenes/pantograph_contact_wall.lua --hand hold:0.035,0.155
--   issim run scenes/pantograph_contact_wall.lua --device sim
local r, m = 0.01, 0.2 -- proxy ball radius (m) and mass (kg)
haptics = {
  proxy = "proxy",
  coupling = { stiffness = 300, damping = 6, position_scale = 1, force_scale = 1,
               origin = {0, 0, r}, stall_timeout = 0.02, fade = 0.02 },
  ["local"] = { enabled = true, hold = 0.004, fade = 0.004, track_hz = 50 },
  -- the simulated P2's model (issim-pantosim --describe); a real P2's must be identified
  observer = { enabled = true, rotor_inertia = 7.379e-4, handle_mass = 0.0765, memory = 0.0095,
               lead = 0.001 },
}
return {
  name = "pantograph_contact_wall",
  description = "A stiff spring_damper wall of the scene's contact model, felt through the engine's local model",
  universe = { gravity = {0, 0, -9.81}, integrator = "rk4", dt = 1e-3, horizon = 0.001 },
  camera = { eye = {0.05, -0.25, 0.15}, target = {0.01, 0, 0}, fov = 45 },
  record = {"proxy.pos.x", "proxy.pos.y"},
  things = {
    { name = "handle", kind = "user", pos = {0, 0, r} },
    { name = "table", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "table" },
    { name = "wall", kind = "obstacle", shape = "plane", normal = {-1, 0, 0}, offset = -(0.01 + r),
      material = "wall" },
    { name = "proxy", kind = "body", shape = "sphere", radius = r, mass = m,
      inertia = {0.4 * m * r ^ 2, 0.4 * m * r ^ 2, 0.4 * m * r ^ 2}, pos = {0, 0, r},
      material = "proxy", color = {0.2, 0.5, 0.9} },
  },
  contacts = {
    { name = "proxy_table", materials = {"proxy", "table"}, model = "spring_damper",
      stiffness = 2e4, restitution = 0.2 },
    { name = "proxy_wall", materials = {"proxy", "wall"}, model = "spring_damper",
      stiffness = 8674, damping_from = "value", damping = 20, clamp_attraction = true },
  },
}
