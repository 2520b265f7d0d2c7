"""issim.sweep against `issim sweep`: the same runs, rows and values, and the same refusals."""
import csv

import numpy as np
import pytest

import issim


def cli_table(cli, tmp_path, *args):
    out = tmp_path / "table.csv"
    cli("sweep", *args, "--threads", "1", "--quiet", "--out", str(out))
    with open(out) as f:
        return list(csv.DictReader(f))


def test_grid_table_equals_the_command_lines(cli, tmp_path):
    table = issim.sweep("bar_drop_angle", grid={"angle_deg": [30, 60, 90], "speed": "2,3"},
                        until=3e-4, at=["bar.vel.z@end"], threads=2)
    rows = cli_table(cli, tmp_path, "bar_drop_angle", "--grid", "angle_deg=30,60,90", "--grid",
                     "speed=2,3", "--until", "3e-4", "--at", "bar.vel.z@end")
    assert len(table) == len(rows) == 6
    assert table.dtype.names == (
        "run", "angle_deg", "speed", "status", "ok", "impacts", "t_impact", "v_in", "v_out",
        "restitution", "duration", "kinetic_end", "bar.vel.z@end", "wall_s")
    assert table["run"].tolist() == list(range(6))
    assert table["angle_deg"].tolist() == [30, 30, 60, 60, 90, 90]  # the last axis fastest
    assert table["speed"].tolist() == [2, 3] * 3
    assert table["ok"].all() and (table["status"] == "ok").all()
    for mine, theirs in zip(table, rows):
        assert mine["impacts"] == int(theirs["impacts"])
        for name in ("t_impact", "v_in", "v_out", "restitution", "duration", "kinetic_end",
                     "bar.vel.z@end"):
            # The CSV prints 10 significant digits.
            assert mine[name] == pytest.approx(float(theirs[name]), rel=1e-9, abs=1e-15)
    # The centre of mass still falls after the impact below the critical angle (V11), rises
    # above it.
    assert (table["v_out"][table["angle_deg"] <= 60] < 0).all()
    assert (table["v_out"][table["angle_deg"] == 90] > 0).all()


def test_a_run_of_the_sweep_is_the_run_of_issim_open():
    table = issim.sweep("bar_drop_angle", grid={"angle_deg": [45.5]}, until=3e-4, threads=1)
    sim = issim.open("bar_drop_angle", params={"angle_deg": 45.5})
    sim.run(until=3e-4)
    first = sim.impacts[0]
    assert table["v_out"][0] == first["v_out"]
    assert table["restitution"][0] == first["restitution"]
    assert table["duration"][0] == first["t_end"] - first["t_begin"]
    assert table["kinetic_end"][0] == sim.get("universe.energy.kinetic")


def test_string_axes_sets_and_failed_runs():
    table = issim.sweep("point_drop",
                        grid={"bar_floor.model": ["spring_damper", "internal_friction"],
                              "drop_height": "log:0.01:1:3"},
                        set={"bar.mass": 2}, until=0.5, threads=2)
    assert len(table) == 6
    assert table.dtype["bar_floor.model"].kind == "U"
    assert table["bar_floor.model"].tolist() == ["spring_damper"] * 3 + ["internal_friction"] * 3
    assert table["drop_height"][:3] == pytest.approx([0.01, 0.1, 1.0])
    # Both models are set for r = 0.8 (004 4.7).
    assert table["restitution"] == pytest.approx(0.8, abs=5e-3)


def test_random_sampling_matches_the_command_line(cli, tmp_path):
    table = issim.sweep("bar_drop_angle", grid={"angle_deg": (20, 80), "speed": "log:0.5:4"},
                        random=5, seed=7, until=3e-4, threads=1)
    rows = cli_table(cli, tmp_path, "bar_drop_angle", "--grid", "angle_deg=20:80", "--grid",
                     "speed=log:0.5:4", "--random", "5", "--seed", "7", "--until", "3e-4")
    assert len(table) == 5
    for mine, theirs in zip(table, rows):
        assert mine["angle_deg"] == pytest.approx(float(theirs["angle_deg"]), rel=1e-11)
        assert mine["v_out"] == pytest.approx(float(theirs["v_out"]), rel=1e-9)
    assert ((table["angle_deg"] >= 20) & (table["angle_deg"] <= 80)).all()


def test_refusals_carry_the_command_lines_messages(cli):
    refused = cli("sweep", "bar_drop_angle", "--grid", "angle_deg=30,abc", check=False)
    assert refused.returncode == 2
    with pytest.raises(issim.Error) as e:
        issim.sweep("bar_drop_angle", grid={"angle_deg": [30, "abc"]})
    assert refused.stderr.splitlines()[0] == "issim sweep: " + str(e.value) + " (nothing was run)"
    with pytest.raises(issim.Error, match=r"--grid bar.mass=0: bar.mass: 0 kg is out of range"):
        issim.sweep("point_drop", grid={"bar.mass": "1:0:3"})
    with pytest.raises(issim.Error, match="the range is empty"):
        issim.sweep("point_drop", grid={"bar.mass": "1:1:3"})
    with pytest.raises(issim.Error, match="over the limit"):
        issim.sweep("point_drop", grid={"bar.mass": "1:2:400", "drop_height": "0.1:1:400"})
    with pytest.raises(TypeError):
        issim.sweep("point_drop", grid=[1, 2])
