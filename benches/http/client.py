#!/usr/bin/env python3
"""The anchor of benches/http/run.sh: the same POSTs fcorr's HTTP SUT adapter makes, from
Python's http.client over one kept-alive connection. Usage: client.py PORT CASES."""
import http.client
import json
import sys

port, cases = int(sys.argv[1]), int(sys.argv[2])
tasks = ["list files", "current directory", "count lines", "make directories", "find logs"]
connection = http.client.HTTPConnection("127.0.0.1", port)
for i in range(cases):
    body = json.dumps({"id": f"case-{i:04d}", "prompt": f"task #{i}: {tasks[i % len(tasks)]}"})
    connection.request("POST", "/", body, {"content-type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200 and b"output" in response.read()
