#!/usr/bin/env python3
"""A Pulumi-protocol client for tests, built on Pulumi's own generated stubs.

Launches a resource plugin as Pulumi's engine does (the engine address as
the last argument; the port read from the first stdout line; plaintext
gRPC), then answers one JSON line per request line on stdin:

    {"method": "Check", "request": {...}}   ->  {"response": {...}}
                                            or  {"error": {"code": "...", "details": "..."}}

Requests and responses are the protobuf messages of Pulumi's
ResourceProvider service (pulumi.runtime.proto, shipped in PyPI's
`pulumi`) in protobuf's JSON mapping with the proto field names. At end of
input it sends SIGINT, as the engine does at shutdown, and prints
{"exit": <code>, "stderr": "..."}.

Run with .venv-pulumi's python (scripts/setup-pulumi).
Usage: pulumi-client.py PLUGIN [ARG...]
"""

import json
import signal
import subprocess
import sys
import threading

import grpc
from google.protobuf import empty_pb2, json_format, message_factory
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc


def main():
    plugin = sys.argv[1:]
    # A made-up engine address: terrane's providers do not call back.
    proc = subprocess.Popen(
        plugin + ["127.0.0.1:1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    err_lines = []
    t = threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True)
    t.start()
    port_line = proc.stdout.readline().strip()
    if not port_line.isdigit():
        proc.kill()
        proc.wait()
        t.join(5)
        out(
            {
                "fatal": f"the plugin printed {port_line!r} instead of a port",
                "stderr": "".join(err_lines),
            }
        )
        return 1
    channel = grpc.insecure_channel(f"127.0.0.1:{port_line}")
    stub = provider_pb2_grpc.ResourceProviderStub(channel)
    service = provider_pb2.DESCRIPTOR.services_by_name["ResourceProvider"]
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        call = json.loads(line)
        method = service.methods_by_name[call["method"]]
        in_class = message_factory.GetMessageClass(method.input_type)
        req = json_format.ParseDict(call.get("request", {}), in_class())
        fn = getattr(stub, call["method"])
        try:
            resp = fn(req, timeout=60)
        except grpc.RpcError as e:
            out({"error": {"code": e.code().name, "details": e.details()}})
            continue
        if isinstance(resp, empty_pb2.Empty):
            out({"response": {}})
        else:
            out(
                {
                    "response": json_format.MessageToDict(
                        resp,
                        preserving_proto_field_name=True,
                        always_print_fields_with_no_presence=True,
                    )
                }
            )
    channel.close()
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = "killed after SIGINT was ignored for 20s"
    t.join(5)
    out({"exit": code, "stderr": "".join(err_lines)})
    return 0


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
