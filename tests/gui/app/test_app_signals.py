"""SIGTERM (a logout, `kill`) closes the app like the window's close button: exit 0, the
running marker removed, so the next start does not offer to restore a 'crashed' session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def test_sigterm_is_a_clean_exit(tmp_path, example_pair):
    state, config = tmp_path / "state", tmp_path / "config"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TQI_STATE_DIR": str(state), "XDG_CONFIG_HOME": str(config)}
    fa, fb = (str(p) for p in example_pair)
    p = subprocess.Popen([sys.executable, "-m", "inspector", "gui", fa, fb], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not list(state.glob("running-*.json")):  # the window is up and recovery armed
            assert p.poll() is None, p.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 0
    assert not list(state.glob("running-*.json"))
