"""What the tests and the benchmarks share to run svc for real: the service as `make run`
starts it (service.py), an HTTPS webhook receiver on 127.0.0.1 (receiver.py), Debian's headless
Chromium (browser.py) and the common steps through the API of an app in this process
(client.py). It imports svc and nothing of tests/ or bench/ (tests/test_layers.py)."""
