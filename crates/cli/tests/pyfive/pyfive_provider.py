"""A small Terraform provider over plugin protocol 5, written on PyPI's
`inmanta-tfplugin` (generated tfplugin5 messages) and `python-plugin` (a
go-plugin server with AutoMTLS, on grpclib). Nobody on the terrane project
wrote either: terrane's tests launch this file as a plugin process to show
that terrane drives a protocol-5 provider it did not build.

grpclib answers an RPC nobody registered without a content-type, which
hosts report as a broken call, so every RPC of the service is served here:
those of inmanta-tfplugin's protocol 5.2 by their messages, the unary RPCs
later 5.x minors added (Terraform asks GetResourceIdentitySchemas with
every schema) with an empty answer, which means "none" for each of them.

pyfive_note: `text` (required), `tag` (optional), `id` (computed: "note-"
+ text; a new text replaces the note). Import takes the text as the ID.
"""
import msgpack
from google.protobuf import message_factory
from grpclib.const import Cardinality, Handler
from inmanta_tfplugin import tfplugin5_pb2 as pb
from pyplugin import HandshakeConfig, Plugin, ServeConfig, serve

ATTRS = ("id", "tag", "text")
UNKNOWN = msgpack.ExtType(0, b"\x00")


def decode(dv):
    """A DynamicValue as a dict (None for null); unknowns stay ExtType."""
    if dv is None or not dv.msgpack:
        return None
    return msgpack.unpackb(dv.msgpack, raw=False, strict_map_key=False)


def encode(obj):
    if obj is None:
        return pb.DynamicValue(msgpack=msgpack.packb(None))
    return pb.DynamicValue(msgpack=msgpack.packb({k: obj.get(k) for k in ATTRS}))


def string_attr(name, required=False, optional=False, computed=False):
    return pb.Schema.Attribute(
        name=name, type=b'"string"', required=required, optional=optional, computed=computed
    )


NOTE_SCHEMA = pb.Schema(
    version=0,
    block=pb.Schema.Block(
        attributes=[
            string_attr("id", computed=True),
            string_attr("tag", optional=True),
            string_attr("text", required=True),
        ]
    ),
)


class Provider:
    """The tfplugin5.Provider service, every RPC answered."""

    async def GetSchema(self, stream):
        await stream.recv_message()
        await stream.send_message(
            pb.GetProviderSchema.Response(
                provider=pb.Schema(version=0, block=pb.Schema.Block()),
                resource_schemas={"pyfive_note": NOTE_SCHEMA},
            )
        )

    async def PrepareProviderConfig(self, stream):
        r = await stream.recv_message()
        await stream.send_message(pb.PrepareProviderConfig.Response(prepared_config=r.config))

    async def ValidateResourceTypeConfig(self, stream):
        await stream.recv_message()
        await stream.send_message(pb.ValidateResourceTypeConfig.Response())

    async def ValidateDataSourceConfig(self, stream):
        r = await stream.recv_message()
        await stream.send_message(
            pb.ValidateDataSourceConfig.Response(
                diagnostics=[unknown_type("data source", r.type_name)]
            )
        )

    async def UpgradeResourceState(self, stream):
        import json

        r = await stream.recv_message()
        state = json.loads(r.raw_state.json) if r.raw_state.json else None
        await stream.send_message(pb.UpgradeResourceState.Response(upgraded_state=encode(state)))

    async def Configure(self, stream):
        await stream.recv_message()
        await stream.send_message(pb.Configure.Response())

    async def ReadResource(self, stream):
        r = await stream.recv_message()
        await stream.send_message(
            pb.ReadResource.Response(new_state=r.current_state, private=r.private)
        )

    async def PlanResourceChange(self, stream):
        r = await stream.recv_message()
        prior, proposed = decode(r.prior_state), decode(r.proposed_new_state)
        replace = []
        if proposed is not None:
            same = prior is not None and prior.get("text") == proposed.get("text")
            proposed["id"] = prior["id"] if same else UNKNOWN
            if prior is not None and not same:
                replace.append(
                    pb.AttributePath(steps=[pb.AttributePath.Step(attribute_name="text")])
                )
        await stream.send_message(
            pb.PlanResourceChange.Response(
                planned_state=encode(proposed),
                requires_replace=replace,
                planned_private=r.prior_private,
            )
        )

    async def ApplyResourceChange(self, stream):
        r = await stream.recv_message()
        planned = decode(r.planned_state)
        if planned is not None:
            planned["id"] = "note-" + planned["text"]
        await stream.send_message(
            pb.ApplyResourceChange.Response(new_state=encode(planned), private=r.planned_private)
        )

    async def ImportResourceState(self, stream):
        r = await stream.recv_message()
        state = {"id": "note-" + r.id, "tag": None, "text": r.id}
        await stream.send_message(
            pb.ImportResourceState.Response(
                imported_resources=[
                    pb.ImportResourceState.ImportedResource(
                        type_name="pyfive_note", state=encode(state)
                    )
                ]
            )
        )

    async def ReadDataSource(self, stream):
        r = await stream.recv_message()
        await stream.send_message(
            pb.ReadDataSource.Response(diagnostics=[unknown_type("data source", r.type_name)])
        )

    async def Stop(self, stream):
        await stream.recv_message()
        await stream.send_message(pb.Stop.Response())

    async def empty(self, stream):
        await stream.recv_message()
        await stream.send_message(Empty())

    def __mapping__(self):
        service = pb.DESCRIPTOR.services_by_name["Provider"]
        out = {
            f"/{service.full_name}/{name}": Handler(
                self.empty, Cardinality.UNARY_UNARY, Empty, Empty
            )
            for name in LATER_RPCS
        }
        for m in service.methods:
            out[f"/{service.full_name}/{m.name}"] = Handler(
                getattr(self, m.name),
                Cardinality.UNARY_UNARY,
                message_factory.GetMessageClass(m.input_type),
                message_factory.GetMessageClass(m.output_type),
            )
        return out


# Unary RPCs of protocol 5 minors after 5.2 (not in inmanta-tfplugin).
LATER_RPCS = (
    "GetMetadata",
    "GetResourceIdentitySchemas",
    "UpgradeResourceIdentity",
    "MoveResourceState",
    "ValidateEphemeralResourceConfig",
    "OpenEphemeralResource",
    "RenewEphemeralResource",
    "CloseEphemeralResource",
    "ValidateListResourceConfig",
    "GetFunctions",
    "CallFunction",
    "PlanAction",
    "ValidateActionConfig",
)


class Empty:
    """A message with no fields set, whatever its type: any request is
    read as one, and the answer is the empty message."""

    @classmethod
    def FromString(cls, data):
        return cls()

    def SerializeToString(self):
        return b""


def unknown_type(kind, name):
    return pb.Diagnostic(
        severity=pb.Diagnostic.ERROR, summary=f"pyfive has no {kind} {name!r}"
    )


class ProviderPlugin(Plugin):
    def servicers(self, broker):
        return [Provider()]

    def stub(self, broker, channel):
        raise NotImplementedError("this file only serves")


if __name__ == "__main__":
    serve(
        ServeConfig(
            handshake_config=HandshakeConfig(
                protocol_version=5,
                magic_cookie_key="TF_PLUGIN_MAGIC_COOKIE",
                magic_cookie_value="d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
            ),
            plugins={5: {"provider": ProviderPlugin()}},
        )
    )
