-- pantograph_stiff_wall: a stiff PD wall rendered on the observer below one encoder count
-- (docs/haptics.md "Below one count"). In the Z-width bench (lockstep, the command applied at
-- once) the simulated P2 holds a PD wall still up to 3,553 N/m at 1 kHz from the counts whatever
-- its damping, and 10,842 N/m with 20 N s/m on the observer. Over the simulator's real link the
-- command waits for the device's next frame, and there 10,842 N/m bounces (2.9 mm over the last
-- second); this scene keeps 5,551 N/m, which rests within about 0.47 mm there (the counts' 3,553
-- N/m: 0.86 mm). The observer needs the device's model: these are the simulated P2's
-- (issim-pantosim --describe); a real P2's must be identified first.
--
--   issim device sim scenes/pantograph_stiff_wall.lua --hand hold:0.02,0.145
--   issim run scenes/pantograph_stiff_wall.lua --device sim
haptics = {
  observer = { enabled = true, rotor_inertia = 7.379e-4, handle_mass = 0.0765, memory = 0.0095 },
  surfaces = {
    { kind = "wall", point = {0.02, 0.15}, normal = {0, 1}, stiffness = 5551, damping = 20 },
  },
}
return {
  name = "pantograph_stiff_wall",
  description = "A 5.6 kN/m PD wall at 1 kHz on the observer below one encoder count",
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
