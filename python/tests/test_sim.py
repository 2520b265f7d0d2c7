"""issim.open and issim.Sim against the command line: the same runs, the same numbers, the same
messages (docs/python.md)."""
import csv
import os
import threading

import numpy as np
import pytest

import issim
from conftest import scene_path


def read_csv(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = list(csv.reader(lines))
    return rows[0], np.array([[float(x) for x in r] for r in rows[1:]])


def without_wall_time(report):
    return [line for line in report.splitlines() if not line.startswith("simulated")]


def bounce_height(t, z, t_first, t_second):
    """The highest sampled centre of mass between two impacts."""
    return z[(t > t_first) & (t < t_second)].max()


def test_point_drop_bounce_height_equals_the_command_line(cli, tmp_path):
    out = tmp_path / "cli.csv"
    printed = cli("run", "point_drop", "--headless", "--until", "2", "--quiet", "--record",
                  str(out), "--vars", "bar.pos.z").stdout
    names, table = read_csv(out)
    assert names == ["t", "bar.pos.z"]

    sim = issim.open("point_drop")
    t, z = [sim.t], [sim.get("bar.pos.z")]
    while sim.t < 2.0 - 1e-12:
        sim.step()
        t.append(sim.t)
        z.append(sim.get("bar.pos.z"))
    t, z = np.array(t), np.array(z)
    assert len(t) == len(table) == 2001
    assert np.max(np.abs(t - table[:, 0])) <= 1e-12
    assert np.max(np.abs(z - table[:, 1])) <= 1e-12

    impacts = sim.impacts
    assert len(impacts) == 5
    assert impacts[0]["restitution"] == pytest.approx(0.8, abs=2e-4)
    first, second = impacts[0]["t_end"], impacts[1]["t_begin"]
    height = bounce_height(t, z, first, second)
    assert abs(height - bounce_height(table[:, 0], table[:, 1], first, second)) <= 1e-12
    # The sampled top agrees with the ballistic apex the summary prints (0.419936 m) to the
    # height the bar rises in half an output step at its apex.
    assert height == pytest.approx(impacts[0]["apex"], abs=1e-5)
    assert height == pytest.approx(0.419936, abs=1e-5)
    # The printed summary, but for the recording line (this run records nothing).
    assert without_wall_time(sim.report()) == without_wall_time(printed)[:-1]


def test_run_in_pieces_publishes_the_frames_of_one_run():
    whole = issim.open("point_drop")
    whole.run(until=1.0)
    pieces = issim.open("point_drop")
    pieces.run(until=0.25)
    pieces.step(250)
    pieces.run(until=0.6)
    pieces.step()
    pieces.run(until=1.0)
    assert pieces.t == whole.t == 1.0
    assert pieces.summary()["state_hash"] == whole.summary()["state_hash"]
    assert pieces.summary()["output_steps"] == whole.summary()["output_steps"] == 1000
    assert np.array_equal(pieces.bodies, whole.bodies)


def test_params_and_sets_as_the_command_line(cli):
    printed = cli("run", "bar_drop_angle", "--headless", "--until", "3e-4", "--quiet",
                  "--param", "angle_deg=30", "--param", "speed=2",
                  "--set", "bar_foundation.friction_kinetic=0.05").stdout
    sim = issim.open("bar_drop_angle", params={"angle_deg": 30, "speed": 2.0},
                     set={"bar_foundation.friction_kinetic": 0.05})
    sim.run(until=3e-4)
    assert without_wall_time(sim.report()) == without_wall_time(printed)
    assert sim.get("bar_foundation.friction_kinetic") == 0.05
    assert sim.get("universe.gravity").tolist() == [0, 0, 0]


def test_scene_file_path_and_source_text_give_the_same_run():
    path = scene_path("point_drop")
    by_path = issim.open(path)
    with open(path) as f:
        by_source = issim.open(source=f.read(), name=path)
    for sim in (by_path, by_source):
        sim.run(until=0.5)
    assert by_source.scene == path
    assert by_path.summary()["state_hash"] == by_source.summary()["state_hash"]


def test_a_bad_set_raises_the_command_lines_message(cli):
    cli_error = cli("run", "point_drop", "--headless", "--set", "bar.mass=-1",
                    check=False)
    assert cli_error.returncode == 1
    with pytest.raises(issim.Error) as opened:
        issim.open("point_drop", set={"bar.mass": -1})
    assert "issim: " + str(opened.value) == cli_error.stderr.strip()
    assert str(opened.value).startswith("--set bar.mass=-1: bar.mass: -1 kg is out of range")
    assert opened.value.status == "out of range"


def test_a_refused_live_edit_raises_the_guis_reason_and_changes_nothing(cli):
    sim = issim.open("point_drop")
    sim.run(until=0.1)
    before = sim.bodies.copy()
    # The reason the GUI shows after "bar.mass = -1 rejected: " is the --set message's own.
    cli_error = cli("run", "point_drop", "--headless", "--set", "bar.mass=-1",
                    check=False).stderr.strip()
    with pytest.raises(issim.Error) as refused:
        sim.set("bar.mass", -1)
    assert cli_error == "issim: --set bar.mass=-1: " + str(refused.value)
    with pytest.raises(issim.Error, match="universe.dt is fixed during a run"):
        sim.set("universe.dt", 0.01)
    with pytest.raises(issim.Error, match="cannot read '1 2' as a vector"):
        sim.set("bar.pos", "1 2")
    assert np.array_equal(sim.bodies, before)
    assert sim.get("bar.mass") == 1.0


def test_live_edits_change_the_run():
    sim = issim.open("point_drop")
    sim.set("bar.pos", [0.0, 0.0, 1.5])
    sim.set("universe.gravity", (0, 0, -1.62))
    assert sim.get("bar.pos.z") == 1.5
    assert sim.pos[0, 2] == 1.5
    sim.run(until=0.5)
    # Free fall under the Moon's gravity: z = 1.5 - g t^2 / 2 (no contact before 0.5 s).
    assert sim.get("bar.pos.z") == pytest.approx(1.5 - 0.5 * 1.62 * 0.25, abs=1e-9)
    sim.set("bar_floor.model", "internal_friction")
    assert sim.get("bar_floor.model") == "internal_friction"


def test_state_views_are_live_and_read_only():
    sim = issim.open("box_on_plane")
    bodies, pos, vel = sim.bodies, sim.pos, sim.vel
    assert bodies.shape == (1, 13) and pos.shape == (1, 3) and sim.orient.shape == (1, 4)
    assert np.shares_memory(bodies, pos) and np.shares_memory(bodies, sim.values)
    assert not bodies.flags.writeable
    with pytest.raises(ValueError):
        pos[0, 2] = 1.0
    z0 = pos[0, 2]
    sim.step(100)
    assert pos[0, 2] < z0  # the same array, rewritten by the step
    assert pos[0, 2] == sim.get("box.pos.z")
    assert vel[0, 2] == sim.get("box.vel.z")
    assert sim.energy[3] == sim.get("universe.energy.total")
    assert sim.variables[:3] == ["box.pos.x", "box.pos.y", "box.pos.z"]
    assert sim.units[2] == "m"
    del sim  # the views keep the session alive
    assert np.isfinite(bodies).all()


def test_contacts_carry_the_weight_of_a_box_at_rest():
    sim = issim.open("box_on_plane")
    sim.run(until=2.0)
    contacts = sim.contacts()
    mass = sim.get("box.mass")
    g = -sim.get("universe.gravity")[2]
    assert len(contacts) == 4  # the face manifold
    assert (contacts["body_a"] == 0).all() and (contacts["body_b"] == -1).all()
    assert (contacts["obstacle"] == 0).all()
    assert np.allclose(contacts["normal"], [0, 0, 1])
    assert contacts["normal_force"].sum() == pytest.approx(mass * g, rel=1e-3)
    assert len(np.unique(contacts["id"])) == 4


def test_record_csv_matches_the_command_line(cli, tmp_path):
    cli("run", "point_drop", "--headless", "--until", "0.5", "--quiet", "--record",
        str(tmp_path / "cli.csv"))
    sim = issim.open("point_drop")
    sim.record(str(tmp_path / "py.csv"))
    sim.run(until=0.5)
    assert sim.stop_recording() == 501
    cli_names, cli_rows = read_csv(tmp_path / "cli.csv")
    names, rows = read_csv(tmp_path / "py.csv")
    assert names == cli_names
    assert np.array_equal(rows, cli_rows)


def test_record_h5_with_live_edits(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = str(tmp_path / "run.h5")
    sim = issim.open("point_drop", record=path, vars=["bar.pos.z", "bar.vel.z"])
    sim.run(until=0.2)
    sim.set("bar.vel", [0, 0, 1])
    sim.run(until=0.3)
    sim.close()
    with h5py.File(path, "r") as f:
        t, z = f["t"][:], f["bar.pos.z"][:]
        assert len(t) == 301 and t[-1] == pytest.approx(0.3)
        assert z[-1] == sim.get("bar.pos.z")
        assert f["bar.pos.z"].attrs["units"] in (b"m", "m")
        edits = f["edits"]
        assert edits["t"][0] == pytest.approx(0.2)
        assert edits["path"][0] in (b"bar.vel", "bar.vel")


def test_errors_name_what_is_wrong():
    with pytest.raises(issim.Error, match="cannot find scene 'no_such_scene'"):
        issim.open("no_such_scene")
    with pytest.raises(issim.Error, match=r"^mine.lua:2: "):
        issim.open(source="return {\n  universe = ,\n}", name="mine.lua")
    with pytest.raises(issim.Error, match="no scene parameter for 'no_such_param=1'"):
        issim.open("point_drop", params={"no_such_param": 1})
    sim = issim.open("point_drop")
    with pytest.raises(issim.Error, match="neither a state variable"):
        sim.get("bar.pos.w")
    with pytest.raises(TypeError):
        issim.open()
    with pytest.raises(ValueError):
        sim.run(until=float("nan"))
    sim.close()
    with pytest.raises(issim.Error, match="closed"):
        sim.step()
    assert sim.get("bar.pos.z") == 0.6  # still readable


def test_the_engine_runs_without_the_gil():
    sim = issim.open("pile")
    ticks = 0
    done = threading.Event()

    def run():
        sim.run(until=0.3)
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    refused = None
    while not done.is_set():
        ticks += 1
        if refused is None and ticks > 10:
            try:
                sim.step()
            except issim.Error as e:
                refused = str(e)
    worker.join()
    assert ticks > 1000  # this thread kept running Python meanwhile
    assert refused == "this Sim is running in another thread"
    assert sim.t == pytest.approx(0.3)


def test_find_scene_and_data_dir():
    found = issim.find_scene("point_drop")
    assert os.path.realpath(found) == os.path.realpath(scene_path("point_drop"))
    assert os.path.isdir(os.path.join(issim.data_dir(), "scenes"))
