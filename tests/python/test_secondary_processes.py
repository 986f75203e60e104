"""Apps' secondary processes: a process an app binds counts against the ActivityManager's limit
on cached processes with activities while the app is cached, so fewer apps stay cached; the
caching count (the Fleet artifact's) still counts main processes only."""

from __future__ import annotations

from mobmem import session

# Chrome's profile lists two bound secondary processes (its GPU and renderer processes).
SCENARIO = """name = "secondary"
description = "test: five apps used a second each, Chrome third"
device = "pixel3"
seed = 1

[system]
lmkd = "off"

[[apps]]
name = "telegram"
[[apps]]
name = "line"
[[apps]]
name = "chrome"
[[apps]]
name = "spotify"
[[apps]]
name = "twitter"

[[script]]
action = "each"
apps = ["telegram", "line", "chrome", "spotify", "twitter"]
steps = [{ action = "launch", app = "{app}" }, { action = "use", seconds = 1.0 }, { action = "home" }]
"""


def _run(tmp_path, *sets):
    f = tmp_path / "secondary.toml"
    f.write_text(SCENARIO)
    # A limit of 4 processes: 2 cached processes with activities kept besides the app on screen
    # and the previous one. Light apps (half the calibrated sizes), so that only the limit ends apps.
    light = [f"calibration.app_{k}_scale=0.5" for k in ("native", "java", "code")]
    return session.run(str(f), ["system.max_cached_processes=4", *light, *sets])


def test_bound_secondary_processes_take_cached_slots_from_older_apps(tmp_path):
    on = _run(tmp_path)
    off = _run(tmp_path, "system.secondary_processes=false")
    assert "oom (global) (kernel)" not in on["kills_by_reason"] and "oom (global) (kernel)" not in off["kills_by_reason"]
    alive_on = [x["alive_after"] for x in on["launches"]]
    alive_off = [x["alive_after"] for x in off["launches"]]
    # Without them, at the last launch: Twitter on screen, Spotify previous, Chrome and Line
    # cached. With them, Chrome's two bound processes sit just below Chrome in the process list
    # and count as cached: Line goes too.
    assert alive_off[-1] == 4 and alive_on[-1] == 3, (alive_on, alive_off)
    assert alive_on[:-1] == alive_off[:-1]
    sec = on["per_app"]["chrome"]["secondary"]
    assert [p["name"] for p in sec] == ["com.android.chrome:privileged_process0", "com.android.chrome:sandboxed_process0"]
    assert all(p["starts"] == 1 for p in sec)
    # They were counted against the limit: the ActivityManager killed more cached processes.
    cached_kills = lambda r: r["kills_by_reason"].get("too many cached (activity_manager)", 0)  # noqa: E731
    assert cached_kills(on) > cached_kills(off)
    assert off["per_app"]["chrome"]["secondary"] == [] and on["per_app"]["line"]["secondary"] == []
