-- pantograph_edge: a straight edge with normal constraint, Coulomb friction and texture (seed
-- 004 3.6 "A Straight Edge with Normal and Lateral Texture Forces"). The wall is the half plane
-- y < 0.15 m of the device frame, rendered locally by the servo as a PD spring/damper (004 3.4:
-- PD control for the constraint force; not the internal-friction C0 variant of App. D, which
-- belongs to the contact models), with Coulomb friction on that normal force and correlated
-- normal/tangential texture (set diagonal = true for the independent variant the thesis found
-- indistinguishable).
--
--   issim device sim scenes/pantograph_edge.lua --hand hold:0.02,0.145
local k = 1500         -- N/m: below the 1 kHz stability limit for the P2 (docs/haptics.md)
haptics = {
  surfaces = {
    { kind = "wall", point = {0.02, 0.15}, normal = {0, 1}, stiffness = k, damping = 3,
      friction = 0.3, friction_speed = 0.01,
      texture = { cov = {0.0625, 0.012, 0.012, 0.0144},   -- N^2: sigma 0.25 t, 0.12 n, rho 0.4
                  epsilon = 0.005, diagonal = false, rate_speed_ref = 0 } },
  },
}
return {
  name = "pantograph_edge",
  description = "Straight edge: PD normal constraint, Coulomb friction and correlated texture (004 3.6)",
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
