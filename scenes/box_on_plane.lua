-- box_on_plane: a box dropped flat onto a plane; resting, it stands on four contacts (the
-- collision manager's face manifold), each a spring/damper.
--
-- Properties a sweep usually changes with --set:
--   box.orient             drop attitude {w, x, y, z}
--   box_floor.stiffness    k per contact point, N/m
--   box_floor.restitution  r the damping is chosen for
local m, h = 1.0, 0.05                      -- kg, half side (m)
local i = m * (2 * h) ^ 2 / 6               -- cube: m s^2 / 6
return {
  name = "box_on_plane",
  description = "A 10 cm cube dropped flat on a plane; comes to rest on four contacts",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "bdf",
    dt = 1e-3,
    rtol = 1e-8,
    atol = 1e-10,
    record = "box.pos.z,box.vel.z,universe.energy.total",
    -- the GUI opens with the manifold's points and their forces shown (display only)
    show_contacts = true,
    show_forces = true,
  },
  camera = { eye = {0.3, -0.45, 0.25}, target = {0, 0, 0.04}, fov = 45 },
  things = {
    { name = "box", kind = "body", shape = "box", half_extents = {h, h, h},
      mass = m, inertia = {i, i, i}, pos = {0, 0, 0.2}, material = "box" },
    { name = "floor", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "floor" },
  },
  contacts = {
    { name = "box_floor", materials = {"box", "floor"}, model = "spring_damper",
      stiffness = 1e5, restitution = 0.5 },
  },
}
