-- pile_internal_friction: 200 mixed shapes (capsules, boxes, octahedra) poured into a box and
-- coming to rest on Siira's internal-friction contacts (004 4.6) with Coulomb friction, so that
-- the bodies fall asleep one island at a time (004 4.8.5, App. E): the sleeping benchmark of
-- issue 3 (`issim-bench dynamics pile`). The layout is pile.lua's without the spheres: a sphere
-- spinning about the vertical has no friction torque to stop it (point contacts), so it would
-- never reach equilibrium.
--
-- Properties a sweep usually changes with --set: pile_pile.* and pile_wall.* (model
-- internal_friction or spring_damper, stiffness, restitution, friction_static,
-- friction_kinetic, velocity_tolerance (0: derived from the band), phase_ramp_time). The count
-- is computed below (edit `count`).
local count = 200          -- bodies
local r = 0.025            -- characteristic half size, m
local density = 1000       -- kg/m^3
local things = {
  { name = "floor", kind = "obstacle", shape = "plane", normal = {0, 0, 1}, offset = 0,
    material = "wall" },
  -- the container: four walls 0.4 m apart
  { name = "wall_xp", kind = "obstacle", shape = "plane", normal = {-1, 0, 0}, offset = -0.2,
    material = "wall" },
  { name = "wall_xn", kind = "obstacle", shape = "plane", normal = {1, 0, 0}, offset = -0.2,
    material = "wall" },
  { name = "wall_yp", kind = "obstacle", shape = "plane", normal = {0, -1, 0}, offset = -0.2,
    material = "wall" },
  { name = "wall_yn", kind = "obstacle", shape = "plane", normal = {0, 1, 0}, offset = -0.2,
    material = "wall" },
}
-- The pour starts without overlap: a 4 x 4 grid 9 cm apart, layers 8.5 cm apart, and no body
-- reaches further than 4 cm from its centre (the capsule's tip), so with the 4 mm jitter any
-- two bounding spheres are at least 2 mm apart, the walls 2 cm away and the floor 1 cm below:
-- the largest initial depth is none (the engine warns when a scene starts overlapping; the old
-- 6 x 6 grid at 6-7 cm started 24.9 mm deep with 101 J of elastic energy, an explosion).
local per_layer, spacing, layer_height = 16, 0.09, 0.085
for n = 0, count - 1 do
  local layer, k = n // per_layer, n % per_layer
  local x = -1.5 * spacing + spacing * (k % 4) + 0.004 * math.sin(n)
  local y = -1.5 * spacing + spacing * (k // 4) + 0.004 * math.cos(n)
  local z = 0.05 + layer_height * layer
  local kind = 1 + n % 3     -- capsule, box, octahedron (no spheres: see the top)
  local body = { name = "b" .. n, kind = "body", pos = {x, y, z}, material = "pile",
                 orient = {math.cos(n), math.sin(n) * 0.6, math.sin(n) * 0.8, 0} }
  if kind == 0 then
    body.shape, body.radius = "sphere", r
    local m = density * 4 / 3 * math.pi * r ^ 3
    body.mass, body.inertia = m, {0.4 * m * r ^ 2, 0.4 * m * r ^ 2, 0.4 * m * r ^ 2}
  elseif kind == 1 then
    body.shape, body.radius, body.half_length = "capsule", 0.6 * r, r
    local m = density * (math.pi * (0.6 * r) ^ 2 * 2 * r + 4 / 3 * math.pi * (0.6 * r) ^ 3)
    local ia = 0.5 * m * (0.6 * r) ^ 2
    local it = m * ((2 * r) ^ 2 / 12 + (0.6 * r) ^ 2 / 4) + m * (r / 2) ^ 2
    body.mass, body.inertia = m, {it, it, ia}
  elseif kind == 2 then
    body.shape, body.half_extents = "box", {r, 0.8 * r, 0.6 * r}
    local m = density * 8 * r * 0.8 * r * 0.6 * r
    local a, b, c = 2 * r, 1.6 * r, 1.2 * r
    body.mass = m
    body.inertia = {m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12}
  else
    body.shape, body.hull_file = "hull", "assets/octahedron_small.obj"
    local m = density * 4 / 3 * 0.03 ^ 3   -- octahedron of circumradius 0.03 m
    local i = m * 0.03 ^ 2 / 5
    body.mass, body.inertia = m, {i, i, i}
  end
  things[#things + 1] = body
end
-- Sleeping from physics (004 4.8.5, issue 11): velocity_tolerance = 0 derives each contact's
-- tolerance from its equilibrium band (eq. 4.91: its App. C load, stiffness, f and effective
-- mass; about 1 cm/s for a box on four contacts), and phase_ramp_time spreads internal
-- friction's jump at dg/dt = 0, which RK4 cannot integrate across (the jump made resting bodies
-- tremble at a few cm/s and the energy rise while they landed), over tau = 0.2 ms, one step:
-- its damping rate near rest, 1 / (2 tau) = 2500/s per contact, stays inside RK4's stability
-- with several contacts on one body. The price: landings (about 35 steps per contact period)
-- lose less than r = 0.3 says (a single 15 g contact bounces at 0.37), since the turning
-- point's dissipation is spread. tangent_damping 10 N s/m: 40 damped the light bodies' rotation
-- (I ~ 1e-5 kg m^2, arms of 2-4 cm) at about 4000/s per contact, past RK4's stability with a
-- few contacts, and the pile never stopped trembling (docs/performance.md).
local ramp = 2e-4          -- s
return {
  name = "pile_internal_friction",
  description = "200 capsules, boxes and octahedra settling on internal-friction contacts",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",      -- hundreds of bodies: dense BDF would factor a 3000 x 3000 matrix
    dt = 2e-4,
    history = 2,
    record = "b0.pos.z,b1.pos.z,universe.energy.kinetic",
  },
  camera = { eye = {0.9, -1.2, 0.8}, target = {0, 0, 0.15}, fov = 45 },
  things = things,
  contacts = {
    { name = "pile_pile", materials = {"pile", "pile"}, model = "internal_friction",
      stiffness = 1e4, restitution = 0.3, friction_static = 0.5, friction_kinetic = 0.4,
      tangent_stiffness = 1e4, tangent_damping = 10, velocity_tolerance = 0,
      phase_ramp_time = ramp },
    { name = "pile_wall", materials = {"pile", "wall"}, model = "internal_friction",
      stiffness = 1e4, restitution = 0.3, friction_static = 0.5, friction_kinetic = 0.4,
      tangent_stiffness = 1e4, tangent_damping = 10, velocity_tolerance = 0,
      phase_ramp_time = ramp },
  },
}
