-- equilibrium_lists: the scenario of Siira 1995, Appendix E (seed 004, Fig. E.24-E.25): bodies A
-- and B rest on a plank C, C rests on the fixed obstacle G (the floor), and D rests on G too, apart
-- from C. With internal-friction contacts every body comes to an equilibrium and sleeps; each
-- sleeping body's equilibrium list holds the bodies it shares constraint forces with (A: C,
-- B: C, C: A and B, D: none), and the floor never propagates (App. E.3.2). Later a ball E falls
-- onto D: D wakes, and nothing on C's side does, because D and C touch only through G.
--
-- Properties a sweep usually changes with --set:
--   contact.model          internal_friction (bodies sleep) or spring_damper (they never do)
--   contact.restitution    r of the internal friction factor f = (1 - r^2) / (1 + r^2)
--   E.pos                  where the ball starts (6 m up: it lands on D after about 1.1 s)
--   C.angvel               set it while running to turn C: A, B and C wake, D does not
local half = 0.05                       -- half size of the small boxes A, B, D, m
local box_mass = 1.0                    -- kg
local box_inertia = box_mass * (2 * half) ^ 2 / 6
local plank = {0.3, 0.1, 0.02}          -- C's half extents, m
local plank_mass = 2.0
local function box_inertia_of(m, h)
  return {m * ((2 * h[2]) ^ 2 + (2 * h[3]) ^ 2) / 12, m * ((2 * h[1]) ^ 2 + (2 * h[3]) ^ 2) / 12,
          m * ((2 * h[1]) ^ 2 + (2 * h[2]) ^ 2) / 12}
end
local gap = 1e-4                        -- each body starts this far above its support, m
local c_top = 2 * plank[3] + gap
local function small_box(name, x, z, color)
  return { name = name, kind = "body", shape = "box", half_extents = {half, half, half},
           mass = box_mass, inertia = {box_inertia, box_inertia, box_inertia},
           pos = {x, 0, z + half}, material = "body", color = color }
end
return {
  name = "equilibrium_lists",
  description = "Siira App. E: A and B on plank C on the floor G, D on G; ball E hits D later",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",
    dt = 1e-4,
    record = "A.pos.z,C.pos.z,D.pos.z,E.pos.z,universe.energy.kinetic",
  },
  camera = { eye = {0.6, -2.2, 1.0}, target = {0.3, 0, 0.1}, fov = 45 },
  things = {
    { name = "G", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
      material = "floor" },
    { name = "C", kind = "body", shape = "box", half_extents = plank, mass = plank_mass,
      inertia = box_inertia_of(plank_mass, plank), pos = {0, 0, plank[3] + gap},
      material = "body", color = {0.55, 0.45, 0.35} },
    small_box("A", -0.18, c_top + plank[3] * 0 + gap, {0.85, 0.3, 0.25}),
    small_box("B", 0.18, c_top + gap, {0.25, 0.5, 0.85}),
    small_box("D", 0.8, gap, {0.3, 0.7, 0.35}),
    { name = "E", kind = "body", shape = "sphere", radius = 0.04, mass = 0.5,
      inertia = {0.4 * 0.5 * 0.04 ^ 2, 0.4 * 0.5 * 0.04 ^ 2, 0.4 * 0.5 * 0.04 ^ 2},
      pos = {0.8, 0, 6.0}, material = "body", color = {0.9, 0.8, 0.2} },
  },
  contacts = {
    -- velocity_tolerance: the speed under which a contact (and a body) counts as still (004
    -- Fig. 4.15); it must exceed RK4's tremble in the equilibrium band, 2 f g dt = 1.2 mm/s here
    { name = "contact", materials = {"body", "body"}, model = "internal_friction",
      stiffness = 1e5, restitution = 0.5, velocity_tolerance = 0.01 },
    { name = "floor_contact", materials = {"body", "floor"}, model = "internal_friction",
      stiffness = 1e5, restitution = 0.5, velocity_tolerance = 0.01 },
  },
}
