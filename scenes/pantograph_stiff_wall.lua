-- pantograph_stiff_wall: a stiff PD wall rendered on the observer below one encoder count
-- (docs/haptics.md "Below one count"). Over the simulator's link a command reaches the motors
-- at the device's next frame, a period late; in the Z-width bench with that delay the simulated
-- P2 holds a PD wall still up to 2,274 N/m at 1 kHz from the counts, and up to 13,553 N/m with
-- 20 N s/m on the observer rendering one period ahead (lead). This scene keeps 8,674 N/m for
-- margin: the link's timing jitters, the bench's does not. The observer needs the device's
-- model: these are the simulated P2's (issim-pantosim --describe); a real P2's must be
-- identified first.
--
--   issim device sim scenes/pantograph_stiff_wall.lua --hand hold:0.02,0.145
--   issim run scenes/pantograph_stiff_wall.lua --device sim
haptics = {
  observer = { enabled = true, rotor_inertia = 7.379e-4, handle_mass = 0.0765, memory = 0.0095,
               lead = 0.001 },
  surfaces = {
    { kind = "wall", point = {0.02, 0.15}, normal = {0, 1}, stiffness = 8674, damping = 20 },
  },
}
return {
  name = "pantograph_stiff_wall",
  description = "An 8.7 kN/m PD wall at 1 kHz on the observer below one encoder count",
  universe = { gravity = {0, 0, -9.81}, integrator = "bdf", dt = 1e-3, horizon = 0.01 },
  camera = { eye = {0.3, -0.5, 0.4}, target = {0, 0, 0}, fov = 45 },
  things = {
    { name = "handle", kind = "user" },
    { name = "table", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "table" },
    { name = "puck", kind = "body", shape = "sphere", radius = 0.02, mass = 0.1,
      inertia = {1.6e-5, 1.6e-5, 1.6e-5}, pos = {0, 0, 0.02}, material = "puck" },
  },
  contacts = {
    { name = "puck_table", materials = {"puck", "table"}, model = "spring_damper",
      stiffness = 1e4, restitution = 0.3 },
  },
}
