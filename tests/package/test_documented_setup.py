"""The local Hub server and the CPU torch wheel have documented ways in."""

import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_local_hub_server_starts_as_documented():
    assert "python -m tests.support.hub_server" in (ROOT / "docs" / "weights.md").read_text()
    server = subprocess.Popen([sys.executable, "-m", "tests.support.hub_server"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline()
        assert first.startswith("serving a local Hub at http://127.0.0.1:")
        url = first.split()[5]
        try:
            urllib.request.urlopen(f"{url}/api/models/nobody/nothing", timeout=10)
        except urllib.error.HTTPError as error:  # an answer from the server: no such repo
            assert error.code in (401, 404)
        else:
            raise AssertionError("an unknown repo was served")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_torch_extra_documents_the_cpu_wheel_index():
    install = (ROOT / "docs" / "install.md").read_text()
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in install
    assert 'pip install -e ".[torch]"' in install
