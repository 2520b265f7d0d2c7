-- pile: a few hundred mixed shapes (spheres, capsules, boxes, octahedra) poured into a box
-- and settling: the collision manager's broad and narrow phase at work.
--
-- Properties a sweep usually changes with --set: the contact pairs' stiffness and restitution
-- (pile_pile.*, pile_wall.*). The count and layout are computed below (edit `count`).
-- Resolver switch: `resolver` below sets both pairs; from the command line (also live)
--   --set pile_pile.resolver=complementarity --set pile_wall.resolver=complementarity
-- resolves the pile as complementarity contact (PGS with friction: `issim-bench pile`).
-- Friction (mu_s 0.5, mu_k 0.4) lets the pile come to rest and sleep; in the penalty path it is
-- Goyal's tangential spring, as stiff as the normal one, stretched by what its pinned material
-- points moved. dt = 5e-4: the pile's impacts rebound within 0.6% (median; 10.5% at worst) of
-- the converged restitution and the total energy never rises (10 s); 1e-3 does not hold that
-- (light bodies turning on several springs pass RK4's limit dt omega < 1.96;
-- docs/performance.md, "Round 2 session 8").
local resolver = "force_law"   -- force_law | complementarity
local count = 240          -- bodies
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
-- 6 x 6 grid at 6-7 cm started 16.9 mm deep with 39 J of elastic energy, an explosion).
local per_layer, spacing, layer_height = 16, 0.09, 0.085
for n = 0, count - 1 do
  local layer, k = n // per_layer, n % per_layer
  local x = -1.5 * spacing + spacing * (k % 4) + 0.004 * math.sin(n)
  local y = -1.5 * spacing + spacing * (k // 4) + 0.004 * math.cos(n)
  local z = 0.05 + layer_height * layer
  local kind = n % 4
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
return {
  name = "pile",
  description = "240 mixed shapes poured into a 0.4 m box, settling",
  universe = {
    gravity = {0, 0, -9.81},
    integrator = "rk4",      -- hundreds of bodies: dense BDF would factor a 3000 x 3000 matrix
    dt = 5e-4,
    history = 2,
    -- spring/damper contacts report no equilibrium (004 4.8.5): without this the settled pile
    -- is integrated for ever; "still" puts a body to sleep once under 1 mm/s for 20 ms
    sleep = "still",
    record = "b0.pos.z,b1.pos.z,universe.energy.kinetic",
  },
  camera = { eye = {0.9, -1.2, 0.8}, target = {0, 0, 0.15}, fov = 45 },
  things = things,
  contacts = {
    { name = "pile_pile", materials = {"pile", "pile"}, model = "spring_damper",
      stiffness = 1e4, restitution = 0.3, clamp_attraction = true, resolver = resolver,
      friction_static = 0.5, friction_kinetic = 0.4, tangent_stiffness = 1e4 },
    { name = "pile_wall", materials = {"pile", "wall"}, model = "spring_damper",
      stiffness = 1e4, restitution = 0.3, clamp_attraction = true, resolver = resolver,
      friction_static = 0.5, friction_kinetic = 0.4, tangent_stiffness = 1e4 },
  },
}
