"""A Pulumi resource provider written with Pulumi's official Python SDK
(pulumi.provider.experimental), for terrane's Pulumi-hosting tests.

Package `echo`:
  * echo:index:Item   value (required), size (number, default 1, changing it
                      replaces), password (secret), tags (map of string) ->
                      the inputs plus upperValue (known at preview when value
                      is), serial (unknown until created), digest (secret),
                      whisper (a string the schema does not mark secret,
                      returned as a secret: a per-value secret).
  * echo:index:Slot   name (changing it replaces, delete before create).
  * echo:index:Bundle source (an asset), code (an archive), files (an
                      archive) -> the same and serial; the Check request's raw hashes
                      are journaled as RawCheck (the SDK drops them).
  * echo:index:getGreeting(name) -> greeting   (a function: a data source)

Objects live in the JSON file $ECHO_STORE; every call is journaled as one
JSON line in $ECHO_JOURNAL so tests can assert what the engine asked.
$ECHO_CRASH_ON_CREATE=<value>: the process dies in a real Create of that
value (a crash mid-apply). $ECHO_SLOW_CREATE=<seconds>: a real Create
takes that long (an interrupt arrives meanwhile).
$ECHO_DIFFCONFIG: how DiffConfig answers a change of `prefix`:
  replace  -> replacement (`replaces`, `changes` left unset: this SDK
              sends `changes=True` as DIFF_NONE);
  detailed -> replacement with a detailed diff (this SDK version fails
              to convert it: the call answers UNKNOWN);
  unset    -> the SDK's default (no replacement).
"""

import asyncio
import json
import os
import sys

import grpc
import pulumi
from pulumi.provider.experimental.property_value import PropertyValue, Computed
from pulumi.provider.experimental.provider import (
    CheckFailure,
    CheckResponse,
    ConfigureResponse,
    CreateResponse,
    DiffResponse,
    GetSchemaResponse,
    InvokeResponse,
    PropertyDiff,
    PropertyDiffKind,
    Provider,
    ReadResponse,
    UpdateResponse,
)
from pulumi.provider.experimental.server import ProviderServicer, main
from google.protobuf import json_format
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

STRING = {"type": "string"}
ITEM_INPUTS = {
    "value": STRING,
    "size": {"type": "number"},
    "password": {"type": "string", "secret": True},
    "tags": {"type": "object", "additionalProperties": STRING},
}
SCHEMA = {
    "name": "echo",
    "version": "0.1.0",
    "config": {"variables": {"prefix": STRING}},
    "provider": {"inputProperties": {"prefix": STRING}},
    "resources": {
        "echo:index:Item": {
            "inputProperties": ITEM_INPUTS,
            "requiredInputs": ["value"],
            "properties": dict(
                ITEM_INPUTS,
                upperValue=STRING,
                serial={"type": "number"},
                digest={"type": "string", "secret": True},
                whisper=STRING,
            ),
            "required": ["value", "size", "upperValue", "serial"],
        },
        "echo:index:Bundle": {
            "inputProperties": {
                "source": {"$ref": "pulumi.json#/Asset"},
                "code": {"$ref": "pulumi.json#/Archive"},
                "files": {"$ref": "pulumi.json#/Archive"},
            },
            "properties": {
                "source": {"$ref": "pulumi.json#/Asset"},
                "code": {"$ref": "pulumi.json#/Archive"},
                "files": {"$ref": "pulumi.json#/Archive"},
                "serial": {"type": "number"},
            },
        },
        "echo:index:Slot": {
            "inputProperties": {"name": STRING},
            "requiredInputs": ["name"],
            "properties": {"name": STRING, "serial": {"type": "number"}},
            "required": ["name", "serial"],
        },
    },
    "functions": {
        "echo:index:getGreeting": {
            "inputs": {"properties": {"name": STRING}, "required": ["name"]},
            "outputs": {"properties": {"greeting": STRING}, "required": ["greeting"]},
        }
    },
}


def plain(v):
    """A PropertyValue as JSON for the journal (secrets and unknowns marked)."""
    if isinstance(v, PropertyValue):
        inner = plain(v.value)
        return {"secret": inner} if v.is_secret else inner
    if isinstance(v, Computed) or v == UNKNOWN:
        return "<unknown>"
    if isinstance(v, (pulumi.Asset, pulumi.Archive)):
        tag = "asset" if isinstance(v, pulumi.Asset) else "archive"
        for kind in ("text", "path", "uri", "assets"):
            if hasattr(v, kind):
                return {tag: {kind: plain(getattr(v, kind))}}
    if isinstance(v, (dict,)) or hasattr(v, "items"):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def journal(op, **fields):
    path = os.environ.get("ECHO_JOURNAL")
    if not path:
        return
    entry = {"op": op}
    for k, v in fields.items():
        entry[k] = plain(v)
    with open(path, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


def load():
    path = os.environ.get("ECHO_STORE")
    if not path or not os.path.exists(path):
        return {"next": 1, "objects": {}}
    with open(path) as f:
        return json.load(f)


def save(store):
    path = os.environ.get("ECHO_STORE")
    if path:
        with open(path, "w") as f:
            json.dump(store, f, sort_keys=True)


def token(urn):
    return urn.split("::")[2].split("$")[-1]


# This SDK version hands the engine's unknown (the UNKNOWN string of the
# protocol) to the provider as that string.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def known(v):
    return (
        isinstance(v, PropertyValue)
        and not isinstance(v.value, Computed)
        and v.value != UNKNOWN
    )


def outputs(tok, inputs, serial, preview):
    """The state of an object. In a preview, what is not known yet is left
    out (the SDK cannot marshal an unknown; the guide: an omitted
    top-level property is unknown)."""
    out = {k: v for k, v in inputs.items() if known(v)}
    if tok == "echo:index:Item":
        value = inputs.get("value")
        if known(value):
            out["upperValue"] = PropertyValue(value.value.upper(), is_secret=value.is_secret)
            # A secret the schema does not mark secret (a per-value secret).
            out["whisper"] = PropertyValue(f"whisper-{value.value}", is_secret=True)
        if not preview:
            out["serial"] = PropertyValue(float(serial))
            out["digest"] = PropertyValue(f"sha-{serial}", is_secret=True)
    else:
        if not preview:
            out["serial"] = PropertyValue(float(serial))
    return out


def to_store(props):
    return {k: plain(v) for k, v in props.items()}


def blob_back(tag, body):
    """An asset or archive from its stored form (see plain)."""
    (kind, x), = body.items()
    if tag == "asset":
        return {"text": pulumi.StringAsset, "path": pulumi.FileAsset, "uri": pulumi.RemoteAsset}[kind](x)
    if kind == "assets":
        return pulumi.AssetArchive({k: blob_back(*next(iter(m.items()))) for k, m in x.items()})
    return {"path": pulumi.FileArchive, "uri": pulumi.RemoteArchive}[kind](x)


def from_store(obj):
    def back(v):
        if isinstance(v, dict) and len(v) == 1 and set(v) <= {"asset", "archive"}:
            (tag, body), = v.items()
            return PropertyValue(blob_back(tag, body))
        if isinstance(v, dict) and set(v) == {"secret"}:
            return PropertyValue(back(v["secret"]).value, is_secret=True)
        if isinstance(v, dict):
            return PropertyValue({k: back(x) for k, x in v.items()})
        if isinstance(v, list):
            return PropertyValue([back(x) for x in v])
        if isinstance(v, int) and not isinstance(v, bool):
            return PropertyValue(float(v))
        return PropertyValue(v)

    return {k: back(v) for k, v in obj.items()}


class Echo(Provider):
    def __init__(self, engine_address):
        self.engine_address = engine_address
        self.prefix = ""

    def log(self, message):
        with grpc.insecure_channel(self.engine_address) as ch:
            engine_pb2_grpc.EngineStub(ch).Log(
                engine_pb2.LogRequest(severity=engine_pb2.INFO, message=message)
            )

    async def get_schema(self, request):
        journal("GetSchema")
        return GetSchemaResponse(schema=json.dumps(SCHEMA))

    async def check_config(self, request):
        journal("CheckConfig", news=request.new_inputs)
        return CheckResponse(inputs=request.new_inputs)

    async def diff_config(self, request):
        journal("DiffConfig", olds=request.old_state, news=request.new_inputs)
        mode = os.environ.get("ECHO_DIFFCONFIG")
        changed = request.old_state.get("prefix") != request.new_inputs.get("prefix")
        if mode == "replace" and changed:
            return DiffResponse(replaces=["prefix"])
        if mode == "detailed" and changed:
            return DiffResponse(
                changes=True,
                detailed_diff={"prefix": PropertyDiff(PropertyDiffKind.UPDATE_REPLACE, False)},
            )
        return await super().diff_config(request)

    async def configure(self, request):
        journal("Configure", args=request.args)
        prefix = request.args.get("prefix")
        self.prefix = prefix.value if known(prefix) and prefix.value else ""
        self.log(f"echo configured (prefix {self.prefix!r})")
        return ConfigureResponse(
            accept_secrets=True, supports_preview=True, accept_outputs=True, accept_resources=True
        )

    async def check(self, request):
        journal("Check", urn=request.urn, olds=request.old_inputs, news=request.new_inputs)
        news = dict(request.new_inputs)
        value = news.get("value")
        if known(value) and value.value == "bad":
            return CheckResponse(
                failures=[CheckFailure("value", 'value must not be "bad"')]
            )
        tags = news.get("tags")
        if known(tags) and hasattr(tags.value, "items"):
            for k, v in tags.value.items():
                if known(v) and v.value == "bad":
                    return CheckResponse(
                        failures=[CheckFailure(f"tags.{k}", 'tag values must not be "bad"')]
                    )
        if token(request.urn) == "echo:index:Item" and "size" not in news:
            news["size"] = PropertyValue(1.0)
        return CheckResponse(inputs=news)

    async def diff(self, request):
        journal("Diff", urn=request.urn, id=request.resource_id, olds=request.old_state, news=request.new_inputs)
        tok = token(request.urn)
        detailed = {}
        replaces = []
        for key, new in request.new_inputs.items():
            old = request.old_state.get(key)
            if old is None:
                detailed[key] = PropertyDiff(PropertyDiffKind.ADD, True)
            elif plain(old) != plain(new):
                if key in ("size", "name"):
                    detailed[key] = PropertyDiff(PropertyDiffKind.UPDATE_REPLACE, True)
                    replaces.append(key)
                else:
                    detailed[key] = PropertyDiff(PropertyDiffKind.UPDATE, True)
        inputs = set(SCHEMA["resources"][tok]["inputProperties"])
        for key in request.old_state:
            if key in inputs and key not in request.new_inputs:
                detailed[key] = PropertyDiff(PropertyDiffKind.DELETE, True)
        return DiffResponse(
            changes=bool(detailed),
            replaces=replaces,
            delete_before_replace=tok == "echo:index:Slot" and bool(replaces),
            detailed_diff=detailed,
        )

    async def create(self, request):
        journal("Create", urn=request.urn, preview=request.preview, properties=request.properties, timeout=request.timeout)
        tok = token(request.urn)
        if request.preview:
            return CreateResponse(resource_id="", properties=outputs(tok, request.properties, 0, True))
        slow = float(os.environ.get("ECHO_SLOW_CREATE") or 0)
        if slow:
            await asyncio.sleep(slow)
        crash = os.environ.get("ECHO_CRASH_ON_CREATE")
        value = request.properties.get("value")
        if crash and known(value) and value.value == crash:
            os._exit(3)
        store = load()
        serial = store["next"]
        store["next"] = serial + 1
        rid = f"{tok.split(':')[-1].lower()}-{serial}"
        props = outputs(tok, request.properties, serial, False)
        store["objects"][rid] = to_store(props)
        save(store)
        return CreateResponse(resource_id=rid, properties=props)

    async def update(self, request):
        journal("Update", urn=request.urn, id=request.resource_id, preview=request.preview, olds=request.olds, news=request.news, timeout=request.timeout)
        tok = token(request.urn)
        serial = request.olds.get("serial")
        serial = serial.value if known(serial) else 0
        props = outputs(tok, request.news, int(serial), False)
        if request.preview:
            return UpdateResponse(properties=props)
        store = load()
        store["objects"][request.resource_id] = to_store(props)
        save(store)
        return UpdateResponse(properties=props)

    async def delete(self, request):
        journal("Delete", urn=request.urn, id=request.resource_id, properties=request.properties, timeout=request.timeout)
        store = load()
        store["objects"].pop(request.resource_id, None)
        save(store)

    async def read(self, request):
        journal("Read", urn=request.urn, id=request.resource_id, properties=request.properties, inputs=request.inputs)
        obj = load()["objects"].get(request.resource_id)
        if obj is None:
            return ReadResponse(resource_id="")
        props = from_store(obj)
        tok = token(request.urn)
        inputs = {k: v for k, v in props.items() if k in SCHEMA["resources"][tok]["inputProperties"]}
        return ReadResponse(resource_id=request.resource_id, properties=props, inputs=inputs)

    async def invoke(self, request):
        journal("Invoke", tok=request.tok, args=request.args)
        name = request.args.get("name")
        greeting = f"{self.prefix}hello {name.value}" if known(name) else None
        return InvokeResponse(return_value={"greeting": PropertyValue(greeting)})

    async def cancel(self):
        journal("Cancel")


# The SDK does not hand Update's old_inputs to the provider: record them
# from the request as it arrives, before the SDK's server converts it.
_sdk_update = ProviderServicer.Update


async def _update_with_old_inputs(self, request, context):
    old = json_format.MessageToDict(request.old_inputs) if request.HasField("old_inputs") else None
    journal("UpdateOldInputs", preview=request.preview, old_inputs=old)
    return await _sdk_update(self, request, context)


ProviderServicer.Update = _update_with_old_inputs

# The SDK drops the hashes of assets and archives it is sent: record them
# for Bundle as Check receives them.
_sdk_check = ProviderServicer.Check


def _hashes(v):
    if isinstance(v, dict):
        if "hash" in v:
            return v["hash"]
        return {k: _hashes(x) for k, x in v.items() if isinstance(x, dict)}
    return None


async def _check_with_hashes(self, request, context):
    if token(request.urn) == "echo:index:Bundle":
        news = json_format.MessageToDict(request.news)
        journal("RawCheck", hashes={k: _hashes(v) for k, v in news.items()})
    return await _sdk_check(self, request, context)


ProviderServicer.Check = _check_with_hashes


if __name__ == "__main__":
    main(sys.argv[1:], "0.1.0", Echo(sys.argv[-1]))
